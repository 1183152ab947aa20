// Python objects <-> einexpr tensors without copying (see convert.hpp).
#include "convert.hpp"

#include <dlpack/dlpack.h>

#include <memory>
#include <string>

#include "einexpr/dlpack.hpp"

namespace einexpr::python {

namespace {

/// The numpy name of a struct-module format numpy arrays use, for messages.
std::string format_name(std::string_view f) {
  if (f == "B") return "uint8";
  if (f == "b") return "int8";
  if (f == "h") return "int16";
  if (f == "H") return "uint16";
  if (f == "I") return "uint32";
  if (f == "L" || f == "Q") return "uint64";
  if (f == "g") return "float128";
  if (f == "Zf") return "complex64";
  if (f == "Zd") return "complex128";
  return "buffer format '" + std::string(f) + "'";
}

/// The dtype of a buffer's format and item size (native byte order, checked before).
DType format_dtype(std::string_view f, py::ssize_t itemsize) {
  if (f.size() == 1) {
    const char c = f[0];
    if (c == 'd' && itemsize == 8) return DType::f64;
    if (c == 'f' && itemsize == 4) return DType::f32;
    if (c == 'e' && itemsize == 2) return DType::f16;
    if (c == '?' && itemsize == 1) return DType::boolean;
    if ((c == 'i' || c == 'l' || c == 'q') && itemsize == 8) return DType::i64;
    if ((c == 'i' || c == 'l' || c == 'q') && itemsize == 4) return DType::i32;
  }
  throw DTypeError("einexpr takes float64, float32, float16, int64, int32 and bool arrays (bfloat16 through "
                   "DLPack), not " + format_name(f));
}

using HeldBuffer = std::shared_ptr<Py_buffer>;

HeldBuffer get_buffer(py::handle obj) {
  auto view = std::make_unique<Py_buffer>();
  if (PyObject_GetBuffer(obj.ptr(), view.get(), PyBUF_RECORDS_RO) != 0) throw py::error_already_set();
  return HeldBuffer(view.release(), [](Py_buffer* v) {
    py::gil_scoped_acquire gil;  // the last view may let go on a thread without it
    PyBuffer_Release(v);
    delete v;
  });
}

}  // namespace

std::optional<Tensor> from_buffer(py::handle obj) {
  HeldBuffer view = get_buffer(obj);
  std::string_view format = view->format != nullptr ? view->format : "B";
  if (!format.empty() && (format[0] == '>' || format[0] == '!')) return std::nullopt;  // byte-swapped
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) format.remove_prefix(1);
  const DType dtype = format_dtype(format, view->itemsize);
  const auto n = static_cast<std::size_t>(view->ndim);
  Shape shape(view->shape, view->shape + n);
  Strides strides(n);
  const bool empty = checked_numel(shape) == 0;
  for (std::size_t d = 0; d < n; ++d) {
    const py::ssize_t s = view->strides[d];
    const bool usable = s >= 0 && s % view->itemsize == 0;
    if (!usable && shape[d] > 1 && !empty) return std::nullopt;
    strides[d] = usable ? s / view->itemsize : 0;  // a length-0 or -1 dim's stride is never used
  }
  if (empty) return Tensor::empty(std::move(shape), dtype);  // nothing to share
  if (reinterpret_cast<std::uintptr_t>(view->buf) % static_cast<std::uintptr_t>(view->itemsize) != 0)
    return std::nullopt;
  void* data = view->buf;
  const bool read_only = view->readonly != 0;
  auto release = [view = std::move(view)]() mutable { view.reset(); };
  if (read_only)
    return Tensor::from_blob(static_cast<const void*>(data), std::move(shape), std::move(strides), dtype,
                             Device::cpu(), std::move(release));
  return Tensor::from_blob(data, std::move(shape), std::move(strides), dtype, Device::cpu(), std::move(release));
}

Tensor from_capsule(py::handle capsule) {
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
    throw Error("from_dlpack: expected an unused DLPack capsule named \"dltensor\" (__dlpack__() gives one; each "
                "can be consumed once)");
  auto* producer = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  // The producer's deleter may touch Python objects (numpy's does): run it with the GIL.
  auto* wrapper = new DLManagedTensor{producer->dl_tensor, producer, [](DLManagedTensor* self) {
                                        auto* original = static_cast<DLManagedTensor*>(self->manager_ctx);
                                        if (original->deleter != nullptr) {
                                          py::gil_scoped_acquire gil;
                                          original->deleter(original);
                                        }
                                        delete self;
                                      }};
  // Renamed, the capsule no longer frees the tensor: from here it is ours.
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) {
    delete wrapper;
    throw py::error_already_set();
  }
  return from_dlpack(wrapper);  // runs the deleter itself when it refuses the tensor
}

py::capsule to_capsule(const Tensor& t) {
  synchronize(t.device());  // a consumer on another stream sees the finished result
  DLManagedTensor* managed = to_dlpack(t);
  PyObject* capsule = PyCapsule_New(managed, "dltensor", [](PyObject* self) {
    // Still named "dltensor": no consumer took it, so it is ours to free.
    if (PyCapsule_IsValid(self, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(self, "dltensor"));
      m->deleter(m);
    }
  });
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

py::buffer_info buffer_of(const Tensor& t) {
  if (!t.defined()) throw Error("the tensor is undefined");
  if (!t.device().is_cpu())
    throw DeviceError("a tensor on " + t.device().str() + " has no buffer for numpy; use __dlpack__ (torch) or move it");
  std::string format;
  switch (t.dtype()) {
    case DType::f64: format = "d"; break;
    case DType::f32: format = "f"; break;
    case DType::f16: format = "e"; break;
    case DType::i64: format = sizeof(long) == 8 ? "l" : "q"; break;  // numpy's int64 is 'l' where long has 64 bits
    case DType::i32: format = "i"; break;
    case DType::boolean: format = "?"; break;
    default:
      throw DTypeError("numpy has no " + std::string(name(t.dtype())) +
                       ": convert the tensor (a torch input gives a torch result) or cast its input first");
  }
  const auto es = static_cast<py::ssize_t>(t.element_size());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  std::vector<py::ssize_t> strides;
  for (std::int64_t s : t.strides()) strides.push_back(static_cast<py::ssize_t>(s) * es);
  return py::buffer_info(t.data_ptr(), es, format, t.dim(), std::move(shape), std::move(strides), t.is_read_only());
}

}  // namespace einexpr::python
