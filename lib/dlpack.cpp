// to_dlpack and from_dlpack: einexpr tensors as DLPack tensors and back, sharing memory.
#include "einexpr/dlpack.hpp"

#include <dlpack/dlpack.h>

#include <memory>
#include <string>
#include <vector>

namespace einexpr {

namespace {

// kDLBool (code 6) arrived in DLPack 0.8; DLPack 1.0 versions itself by major and minor.
#if defined(DLPACK_MAJOR_VERSION) || (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80)
constexpr bool dlpack_has_bool = true;
constexpr std::uint8_t dl_bool_code = kDLBool;
#else
constexpr bool dlpack_has_bool = false;
constexpr std::uint8_t dl_bool_code = 6;  // never produced or accepted without kDLBool
#endif

DLDataType dl_dtype(DType dtype) {
  const auto bits = static_cast<std::uint8_t>(8 * element_size(dtype));
  switch (dtype) {
    case DType::f64:
    case DType::f32:
    case DType::f16:
      return {kDLFloat, bits, 1};
    case DType::bf16:
      return {kDLBfloat, bits, 1};
    case DType::i64:
    case DType::i32:
      return {kDLInt, bits, 1};
    case DType::boolean:
      if (dlpack_has_bool) return {dl_bool_code, 8, 1};
      break;
    case DType::f8_e4m3:
    case DType::f8_e5m2:
      break;
  }
  throw DTypeError("to_dlpack: DLPack " + std::string(dlpack_has_bool ? "" : "0.6 ") + "has no type for " +
                   std::string(name(dtype)) + " (it has f64, f32, f16, bf16, i64, i32" +
                   (dlpack_has_bool ? ", bool" : "") + "); convert with .to() first");
}

std::string dl_dtype_text(DLDataType t) {
  const char* code = t.code == kDLInt      ? "int"
                     : t.code == kDLUInt   ? "uint"
                     : t.code == kDLFloat  ? "float"
                     : t.code == kDLBfloat ? "bfloat"
                     : t.code == kDLComplex ? "complex"
                     : t.code == dl_bool_code ? "bool"
                     : "code ";
  std::string text = code;
  if (text == "code ") text += std::to_string(t.code) + " ";
  text += std::to_string(t.bits);
  if (t.lanes != 1) text += "x" + std::to_string(t.lanes);
  return text;
}

DType from_dl_dtype(DLDataType t) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 64) return DType::f64;
    if (t.code == kDLFloat && t.bits == 32) return DType::f32;
    if (t.code == kDLFloat && t.bits == 16) return DType::f16;
    if (t.code == kDLBfloat && t.bits == 16) return DType::bf16;
    if (t.code == kDLInt && t.bits == 64) return DType::i64;
    if (t.code == kDLInt && t.bits == 32) return DType::i32;
    if (dlpack_has_bool && t.code == dl_bool_code && t.bits == 8) return DType::boolean;
  }
  throw DTypeError("from_dlpack: DLPack dtype " + dl_dtype_text(t) +
                   " has no einexpr dtype (einexpr takes float64, float32, float16, bfloat16, int64, int32" +
                   (dlpack_has_bool ? ", bool" : "") + ")");
}

Device from_dl_device(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      return Device::cpu();
    case kDLCUDA:
      return Device::cuda(d.device_id);
    default:
      throw DeviceError("from_dlpack: DLPack device type " + std::to_string(static_cast<int>(d.device_type)) +
                        " (device " + std::to_string(d.device_id) +
                        ") is not supported (einexpr takes kDLCPU, kDLCUDAHost and kDLCUDA)");
  }
}

/// What a DLManagedTensor from to_dlpack owns: the tensor (so its storage stays alive)
/// and the shape and strides its DLTensor points into.
struct Exported {
  DLManagedTensor managed{};
  Tensor tensor;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
};

Tensor view_of(const DLTensor& t, const std::function<void()>& release) {
  if (t.ndim < 0) throw ShapeError("from_dlpack: ndim is " + std::to_string(t.ndim));
  if (t.ndim > 0 && t.shape == nullptr) throw ShapeError("from_dlpack: ndim is " + std::to_string(t.ndim) +
                                                         " but shape is null");
  const DType dtype = from_dl_dtype(t.dtype);
  const Device device = from_dl_device(t.device);
  const auto n = static_cast<std::size_t>(t.ndim);
  Shape shape(t.shape, t.shape + n);
  Strides strides;  // null strides: compact row-major (DLPack 0.6)
  if (t.strides != nullptr) strides.assign(t.strides, t.strides + n);
  if (checked_numel(shape) == 0 && t.data == nullptr) {
    // An empty tensor may have no memory at all (torch gives null): nothing to share.
    Tensor empty = Tensor::empty(std::move(shape), dtype, device);
    release();
    return empty;
  }
  const void* data = t.data == nullptr ? nullptr : static_cast<const std::byte*>(t.data) + t.byte_offset;
  return Tensor::from_blob(const_cast<void*>(data), std::move(shape), std::move(strides), dtype, device, release);
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) {
  if (!t.defined()) throw Error("to_dlpack: the tensor is undefined");
  const DLDataType dtype = dl_dtype(t.dtype());
  auto e = std::make_unique<Exported>();
  e->tensor = t;
  e->shape = t.shape();
  e->strides = t.strides();
  DLTensor& d = e->managed.dl_tensor;
  d.data = t.data_ptr();
  d.device = t.device().is_cpu() ? DLDevice{kDLCPU, 0} : DLDevice{kDLCUDA, t.device().index};
  d.ndim = t.dim();
  d.dtype = dtype;
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = [](DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); };
  return &e.release()->managed;
}

Tensor from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) throw Error("from_dlpack: the DLManagedTensor is null");
  const auto release = [managed] {
    if (managed->deleter != nullptr) managed->deleter(managed);
  };
  // from_blob never runs `release` when it throws, so on any error ownership is still ours.
  try {
    return view_of(managed->dl_tensor, release);
  } catch (Error& e) {
    release();
    e.add_context("in from_dlpack");
    throw;
  } catch (...) {
    release();
    throw;
  }
}

}  // namespace einexpr
