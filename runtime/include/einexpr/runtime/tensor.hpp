#pragma once
// Tensor = shared storage + dtype + layout (shape, strides in elements, offset) + device.
// Views (select, slice, view, transpose, permute, reshape when it can) share storage;
// same_storage() tells which tensors do. Tensor::from_blob wraps memory the caller owns,
// without copying; from a const pointer the tensor is read-only (is_read_only()).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "einexpr/runtime/device.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/storage.hpp"

namespace einexpr {

class Tensor {
 public:
  /// An undefined tensor (defined() is false).
  Tensor() = default;
  Tensor(std::shared_ptr<Storage> storage, Layout layout, DType dtype);

  // ---- factories ----
  static Tensor empty(Shape shape, DType dtype = DType::f32, Device device = Device::cpu());
  static Tensor zeros(Shape shape, DType dtype = DType::f32, Device device = Device::cpu());
  static Tensor ones(Shape shape, DType dtype = DType::f32, Device device = Device::cpu());
  static Tensor full(Shape shape, double value, DType dtype = DType::f32,
                     Device device = Device::cpu());
  /// 0, 1, ..., n-1.
  static Tensor arange(std::int64_t n, DType dtype = DType::f32, Device device = Device::cpu());
  /// Standard normal samples (integers: uniform in [-100, 100]; bool: fair coin), reproducible by seed.
  static Tensor randn(Shape shape, DType dtype = DType::f32, std::uint64_t seed = 0,
                      Device device = Device::cpu());
  /// Copies `values` (row-major) into a new CPU tensor of `shape`; the dtype is T's.
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, Shape shape);
  /// As from_vector, converting each value to `dtype`.
  static Tensor from_doubles(const std::vector<double>& values, Shape shape,
                             DType dtype = DType::f32);

  // ---- the caller's memory, not copied ----
  /// A tensor over memory the caller owns: element i of dim d is `strides[d]` elements
  /// apart (strides empty: row-major). `release` runs when the last tensor (views
  /// included) lets go; if from_blob throws, it never runs and the memory stays the
  /// caller's. Errors: a null pointer or one not aligned to the element size (Error);
  /// a negative length or stride, a rank mismatch, or sizes that overflow (ShapeError);
  /// a CUDA device this build or machine does not have (DeviceError).
  static Tensor from_blob(void* data, Shape shape, Strides strides, DType dtype,
                          Device device = Device::cpu(), std::function<void()> release = {});
  /// The same over memory einexpr may only read: the tensor and every view of it are
  /// read-only, so writing into them (copy_from, fill, set, data<T>() with a non-const T,
  /// an op's *_into output) throws Error saying so. Computing from them works.
  static Tensor from_blob(const void* data, Shape shape, Strides strides, DType dtype,
                          Device device = Device::cpu(), std::function<void()> release = {});

  // ---- metadata ----
  bool defined() const noexcept { return storage_ != nullptr; }
  const Shape& shape() const noexcept { return layout_.shape; }
  const Strides& strides() const noexcept { return layout_.strides; }
  /// Negative dims count from the end, as in torch.
  std::int64_t stride(int dim) const;
  std::int64_t size(int dim) const;
  int dim() const noexcept { return layout_.dim(); }
  std::int64_t numel() const;
  std::size_t element_size() const noexcept { return einexpr::element_size(dtype_); }
  /// numel() * element_size(): the seeds' get_memory_usage.
  std::size_t nbytes() const;
  DType dtype() const noexcept { return dtype_; }
  Device device() const;
  std::int64_t storage_offset() const noexcept { return layout_.offset; }
  const Layout& layout() const noexcept { return layout_; }
  const std::shared_ptr<Storage>& storage() const noexcept { return storage_; }
  bool is_contiguous() const noexcept { return layout_.is_contiguous(); }
  bool same_storage(const Tensor& other) const noexcept;
  /// Address of element [0, ..., 0].
  void* data_ptr() const noexcept;
  /// True when the storage was wrapped from a const pointer (from_blob(const void*, ...)).
  bool is_read_only() const noexcept { return storage_ != nullptr && storage_->read_only(); }
  /// Typed address of element [0, ..., 0]; T must be the dtype's C++ type (dtype_of, e.g.
  /// float for f32, bfloat16_t for bf16), else DTypeError. A non-const T on a read-only
  /// tensor throws Error; data<const T>() and data<T>() on a const Tensor give const T*.
  template <class T>
  T* data();
  template <class T>
  const std::remove_const_t<T>* data() const;

  // ---- views: share storage ----
  /// The view with the new shape (one -1 allowed); ShapeError naming the dimensions when
  /// the strides do not allow it ("use reshape() or contiguous()").
  Tensor view(Shape shape) const;
  /// A view when possible, else a contiguous copy.
  Tensor reshape(Shape shape) const;
  Tensor transpose(int dim0, int dim1) const;
  Tensor permute(std::vector<int> dims) const;
  /// x[..., i, ...] along `dim`: one dim fewer.
  Tensor select(int dim, std::int64_t index) const;
  /// x[..., begin:end:step, ...] (end clamped like Python; step > 0).
  Tensor slice(int dim, std::int64_t begin, std::int64_t end, std::int64_t step = 1) const;
  /// Any shape and strides over this tensor's storage (offset relative to storage start).
  Tensor as_strided(Shape shape, Strides strides, std::int64_t offset) const;

  // ---- copies ----
  /// This tensor if already contiguous, else a contiguous copy.
  Tensor contiguous() const;
  /// A contiguous copy, always.
  Tensor clone() const;
  /// A copy converted to `dtype` (this tensor if the dtype is the same).
  Tensor to(DType dtype) const;
  /// A copy on `device` (this tensor if already there).
  Tensor to(Device device) const;
  /// Writes `src`'s values (same shape; converted to this dtype) into this tensor's elements.
  void copy_from(const Tensor& src);
  /// Sets every element to `value`.
  void fill(double value);

  // ---- element access (CPU tensors) ----
  /// Every element in logical (row-major) order, converted to T.
  template <class T>
  std::vector<T> to_vector() const;
  /// One element, converted to T.
  template <class T>
  T at(std::initializer_list<std::int64_t> index) const;
  /// Writes one element (converted to this dtype).
  void set(std::initializer_list<std::int64_t> index, double value);
  /// The element offset (in storage elements) of `index`, bounds-checked.
  std::int64_t element_offset(std::initializer_list<std::int64_t> index) const;

  /// torch-like text: values, then shape and dtype.
  std::string str() const;

 private:
  void check_cpu(const char* what) const;
  /// Error when the tensor is undefined or read-only (`what` names the write).
  void check_writable(const char* what) const;
  void check_data_dtype(DType requested) const;
  void read_elements(void* out, DType out_dtype) const;

  std::shared_ptr<Storage> storage_;
  Layout layout_;
  DType dtype_ = DType::f32;
};

/// A list of tensors that neither owns nor copies them: a span of Tensors, or of pointers to
/// Tensors. einsum(x, y, pattern) passes its operands this way: copying a Tensor copies its
/// shape and strides (two allocations), a fifth of a small cached call.
class TensorRefs {
 public:
  TensorRefs() = default;
  TensorRefs(std::span<const Tensor> tensors) noexcept : tensors_(tensors.data()), size_(tensors.size()) {}
  TensorRefs(std::span<const Tensor* const> pointers) noexcept : pointers_(pointers.data()), size_(pointers.size()) {}

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const Tensor& operator[](std::size_t i) const noexcept { return pointers_ != nullptr ? *pointers_[i] : tensors_[i]; }

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Tensor;
    using difference_type = std::ptrdiff_t;
    using pointer = const Tensor*;
    using reference = const Tensor&;
    iterator() = default;
    iterator(const TensorRefs* refs, std::size_t i) noexcept : refs_(refs), i_(i) {}
    const Tensor& operator*() const noexcept { return (*refs_)[i_]; }
    const Tensor* operator->() const noexcept { return &(*refs_)[i_]; }
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const iterator& o) const noexcept { return i_ == o.i_; }

   private:
    const TensorRefs* refs_ = nullptr;
    std::size_t i_ = 0;
  };
  iterator begin() const noexcept { return {this, 0}; }
  iterator end() const noexcept { return {this, size_}; }

 private:
  const Tensor* tensors_ = nullptr;
  const Tensor* const* pointers_ = nullptr;
  std::size_t size_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

inline bool same_storage(const Tensor& a, const Tensor& b) noexcept { return a.same_storage(b); }

// ---- templates ----
template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values, Shape shape) {
  Tensor t = empty(std::move(shape), dtype_of_v<T>);
  if (static_cast<std::int64_t>(values.size()) != t.numel())
    throw ShapeError("from_vector: " + std::to_string(values.size()) + " values for shape " +
                     shape_str(t.shape()) + " of " + std::to_string(t.numel()) + " elements");
  if constexpr (std::is_same_v<T, bool>) {
    auto* dst = static_cast<bool*>(t.data_ptr());
    for (std::size_t i = 0; i < values.size(); ++i) dst[i] = values[i];
  } else {
    convert(values.data(), dtype_of_v<T>, t.data_ptr(), dtype_of_v<T>, values.size());
  }
  return t;
}

template <class T>
T* Tensor::data() {
  check_data_dtype(dtype_of_v<std::remove_const_t<T>>);
  if constexpr (!std::is_const_v<T>) check_writable("data<T>() with a non-const T");
  return static_cast<T*>(data_ptr());
}

template <class T>
const std::remove_const_t<T>* Tensor::data() const {
  check_data_dtype(dtype_of_v<std::remove_const_t<T>>);
  return static_cast<const std::remove_const_t<T>*>(data_ptr());
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  check_cpu("to_vector");
  const auto n = static_cast<std::size_t>(numel());
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<unsigned char> bytes(n);
    read_elements(bytes.data(), DType::boolean);
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else {
    std::vector<T> out(n);
    read_elements(out.data(), dtype_of_v<T>);
    return out;
  }
}

template <class T>
T Tensor::at(std::initializer_list<std::int64_t> index) const {
  check_cpu("at");
  const std::int64_t off = element_offset(index);
  const std::byte* p = storage_->data() + off * static_cast<std::int64_t>(element_size());
  if constexpr (std::is_same_v<T, bool>) {
    unsigned char b = 0;
    convert(p, dtype_, &b, DType::boolean, 1);
    return b != 0;
  } else {
    T out{};
    convert(p, dtype_, &out, dtype_of_v<T>, 1);
    return out;
  }
}

}  // namespace einexpr
