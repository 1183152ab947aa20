// Tensors over the caller's memory (Tensor::from_blob), read-only tensors, and the typed
// data<T>() accessors' checks.
#include <cstdint>
#include <string>

#include "einexpr/config.hpp"
#include "einexpr/runtime/tensor.hpp"

namespace einexpr {

namespace {

/// A CUDA device must exist in this build and on this machine before its memory is trusted.
void check_blob_device(Device device) {
  if (device.is_cpu()) return;
  if (!has_cuda) throw DeviceError("from_blob: memory on " + device.str() + ", but einexpr was built without CUDA");
  const int n = cuda_device_count();
  if (device.index < 0 || device.index >= n)
    throw DeviceError("from_blob: memory on " + device.str() + ", but " + std::to_string(n) +
                      " CUDA device(s) are visible");
}

/// Checks everything about (data, shape, strides, dtype) and returns the layout and the
/// bytes the view reaches. Nothing is wrapped until this has passed.
std::pair<Layout, std::size_t> checked_blob(const void* data, Shape shape, Strides strides, DType dtype,
                                            Device device) {
  if (data == nullptr) throw Error("from_blob: the data pointer is null");
  const auto es = element_size(dtype);
  const auto address = reinterpret_cast<std::uintptr_t>(data);
  if (address % es != 0)
    throw Error("from_blob: the data pointer (address " + std::to_string(address) + ") is not aligned to the " +
                std::to_string(es) + "-byte elements of " + std::string(name(dtype)));
  checked_numel(shape);  // negative lengths and overflowing products name the shape
  if (strides.empty() && !shape.empty()) strides = contiguous_strides(shape);
  if (strides.size() != shape.size())
    throw ShapeError("from_blob: shape " + shape_str(shape) + " and strides " + shape_str(strides) +
                     " differ in rank");
  for (std::int64_t s : strides)
    if (s < 0) throw ShapeError("from_blob: negative strides are not supported: " + shape_str(strides));
  check_blob_device(device);
  Layout layout{std::move(shape), std::move(strides), 0};
  std::int64_t bytes = 0;
  try {
    bytes = checked_mul(layout.extent(), static_cast<std::int64_t>(es));
  } catch (const ShapeError&) {
    throw ShapeError("from_blob: shape " + shape_str(layout.shape) + " with strides " + shape_str(layout.strides) +
                     " reaches beyond 2^63 bytes (the strides overflow)");
  }
  return {std::move(layout), static_cast<std::size_t>(bytes)};
}

template <class Pointer>
Tensor make_blob(Pointer data, Shape shape, Strides strides, DType dtype, Device device,
                 std::function<void()> release) {
  auto [layout, bytes] = checked_blob(data, std::move(shape), std::move(strides), dtype, device);
  std::function<void(void*)> on_release;
  if (release) on_release = [r = std::move(release)](void*) { r(); };
  // From here only a failed allocation can throw; the release callback then never runs.
  return Tensor(Storage::wrap(data, bytes, device, std::move(on_release)), std::move(layout), dtype);
}

}  // namespace

Tensor Tensor::from_blob(void* data, Shape shape, Strides strides, DType dtype, Device device,
                         std::function<void()> release) {
  return make_blob(data, std::move(shape), std::move(strides), dtype, device, std::move(release));
}

Tensor Tensor::from_blob(const void* data, Shape shape, Strides strides, DType dtype, Device device,
                         std::function<void()> release) {
  return make_blob(data, std::move(shape), std::move(strides), dtype, device, std::move(release));
}

void Tensor::check_writable(const char* what) const {
  if (!storage_) throw Error(std::string(what) + ": the tensor is undefined");
  if (storage_->read_only())
    throw Error(std::string(what) +
                ": the tensor is read-only (it views memory given to einexpr as const, "
                "Tensor::from_blob(const void*, ...)); write into a writable tensor");
}

void Tensor::check_data_dtype(DType requested) const {
  if (!storage_) throw Error("data<T>(): the tensor is undefined");
  if (requested != dtype_)
    throw DTypeError("data<T>(): T is the element type of " + std::string(name(requested)) + " but the tensor is " +
                     std::string(name(dtype_)));
}

}  // namespace einexpr
