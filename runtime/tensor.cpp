#include "einexpr/runtime/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "backend.hpp"
#include "einexpr/runtime/strided.hpp"
#include "einexpr/runtime/parallel.hpp"
#include "einexpr/runtime/threads.hpp"

namespace einexpr {

namespace {

int wrap_dim(int dim, int rank, const char* what) {
  const int d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    throw ShapeError(std::string(what) + ": dim " + std::to_string(dim) + " is out of range for a tensor of " +
                     std::to_string(rank) + " dims");
  return d;
}

/// Views and copies of an undefined tensor say so (rather than "dim 0 is out of range" or
/// "null storage").
void require_defined(const std::shared_ptr<Storage>& storage, const char* what) {
  if (!storage) throw Error(std::string(what) + ": the tensor is undefined");
}

std::size_t checked_bytes(std::int64_t numel, DType dtype) {
  return static_cast<std::size_t>(checked_mul(numel, static_cast<std::int64_t>(element_size(dtype))));
}

// splitmix64: a tiny, well-mixed generator; each chunk of randn is seeded independently,
// so results do not depend on the number of threads.
std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double uniform01(std::uint64_t& state) {  // in (0, 1)
  return (static_cast<double>(splitmix(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

}  // namespace

Tensor::Tensor(std::shared_ptr<Storage> storage, Layout layout, DType dtype)
    : storage_(std::move(storage)), layout_(std::move(layout)), dtype_(dtype) {
  if (!storage_) throw Error("Tensor: null storage");
  if (layout_.shape.size() != layout_.strides.size())
    throw ShapeError("Tensor: shape " + shape_str(layout_.shape) + " and strides " +
                     shape_str(layout_.strides) + " differ in rank");
  for (std::int64_t s : layout_.strides)
    if (s < 0) throw ShapeError("Tensor: negative strides are not supported: " + shape_str(layout_.strides));
  if (layout_.offset < 0) throw ShapeError("Tensor: negative storage offset");
  const std::int64_t extent = layout_.extent();
  if (checked_bytes(extent, dtype_) > storage_->nbytes())
    throw ShapeError("Tensor: a view of shape " + shape_str(layout_.shape) + ", strides " +
                     shape_str(layout_.strides) + " and offset " + std::to_string(layout_.offset) +
                     " reaches past the end of its storage of " + std::to_string(storage_->nbytes()) +
                     " bytes");
}

// ---- factories ----

Tensor Tensor::empty(Shape shape, DType dtype, Device device) {
  Layout layout = Layout::contiguous(std::move(shape));
  const std::size_t bytes = checked_bytes(layout.numel(), dtype);
  return Tensor(Storage::allocate(bytes, device), std::move(layout), dtype);
}

Tensor Tensor::zeros(Shape shape, DType dtype, Device device) {
  Tensor t = empty(std::move(shape), dtype, device);
  if (device.is_cpu()) {
    std::memset(t.storage_->data(), 0, t.nbytes());
  } else {
    t.fill(0.0);
  }
  return t;
}

Tensor Tensor::ones(Shape shape, DType dtype, Device device) { return full(std::move(shape), 1.0, dtype, device); }

Tensor Tensor::full(Shape shape, double value, DType dtype, Device device) {
  Tensor t = empty(std::move(shape), dtype, device);
  t.fill(value);
  return t;
}

Tensor Tensor::arange(std::int64_t n, DType dtype, Device device) {
  if (n < 0) throw ShapeError("arange: n must be >= 0 (got " + std::to_string(n) + ")");
  Tensor t = empty({n}, dtype);  // checks the size before anything is allocated
  // Converted in chunks: no second buffer of n int64s (which could be 8/element_size times
  // larger than the tensor itself).
  constexpr std::int64_t chunk = 4096;
  std::int64_t values[chunk];
  auto* out = static_cast<std::byte*>(t.data_ptr());
  for (std::int64_t begin = 0; begin < n; begin += chunk) {
    const std::int64_t count = std::min(chunk, n - begin);
    std::iota(values, values + count, begin);
    convert(values, DType::i64, out + begin * static_cast<std::int64_t>(t.element_size()), dtype,
            static_cast<std::size_t>(count));
  }
  return device.is_cpu() ? t : t.to(device);
}

Tensor Tensor::randn(Shape shape, DType dtype, std::uint64_t seed, Device device) {
  Tensor t = empty(std::move(shape), dtype);
  const std::int64_t n = t.numel();
  constexpr std::int64_t chunk = 1 << 14;
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  auto* out = static_cast<std::byte*>(t.data_ptr());
  const auto es = static_cast<std::int64_t>(t.element_size());
  const auto fill = [&](std::int64_t, std::int64_t first, std::int64_t last) {
    for (std::int64_t c = first; c < last; ++c) {
      std::uint64_t state = seed * 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(c) + 1) * 0xD1B54A32D192ED03ull;
      const std::int64_t begin = c * chunk, end = std::min(n, begin + chunk);
      double buf[chunk];
      for (std::int64_t i = begin; i < end; ++i) {
        double v;
        if (is_floating(dtype)) {
          const double u1 = uniform01(state), u2 = uniform01(state);
          v = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
        } else if (dtype == DType::boolean) {
          v = static_cast<double>(splitmix(state) & 1u);
        } else {
          v = static_cast<double>(static_cast<std::int64_t>(splitmix(state) % 201u) - 100);
        }
        buf[i - begin] = v;
      }
      convert(buf, DType::f64, out + begin * es, dtype, static_cast<std::size_t>(end - begin));
    }
  };
  parallel_for(chunks, chunks > 4 ? pieces_for(chunks, 1) : 1, fill);
  return device.is_cpu() ? t : t.to(device);
}

Tensor Tensor::from_doubles(const std::vector<double>& values, Shape shape, DType dtype) {
  Tensor t = from_vector(values, std::move(shape));
  return t.to(dtype);
}

// ---- metadata ----

std::int64_t Tensor::stride(int dim) const { return layout_.strides[static_cast<std::size_t>(wrap_dim(dim, this->dim(), "stride"))]; }
std::int64_t Tensor::size(int dim) const { return layout_.shape[static_cast<std::size_t>(wrap_dim(dim, this->dim(), "size"))]; }
std::int64_t Tensor::numel() const { return layout_.numel(); }
std::size_t Tensor::nbytes() const { return checked_bytes(numel(), dtype_); }
Device Tensor::device() const { return storage_ ? storage_->device() : Device::cpu(); }

bool Tensor::same_storage(const Tensor& other) const noexcept {
  return storage_ != nullptr && storage_ == other.storage_;
}

void* Tensor::data_ptr() const noexcept {
  if (!storage_) return nullptr;
  return storage_->data() + layout_.offset * static_cast<std::int64_t>(element_size());
}

void Tensor::check_cpu(const char* what) const {
  if (!storage_) throw Error(std::string(what) + ": the tensor is undefined");
  if (!device().is_cpu())
    throw DeviceError(std::string(what) + " needs a CPU tensor; this one is on " + device().str() +
                      " (use .to(Device::cpu()))");
}

// ---- views ----

Tensor Tensor::view(Shape shape) const {
  require_defined(storage_, "view");
  const Shape target = infer_shape(shape, numel());
  auto strides = try_view_strides(layout_.shape, layout_.strides, target);
  if (!strides) {
    // Name the first two neighbouring dims (length-1 dims skipped) that do not follow on.
    std::string which;
    const Shape& sh = layout_.shape;
    const Strides& st = layout_.strides;
    for (std::size_t d = 0, next = 0; d < sh.size() && which.empty(); d = next) {
      next = d + 1;
      while (next < sh.size() && sh[next] == 1) ++next;
      if (sh[d] == 1 || next == sh.size() || st[d] == st[next] * sh[next]) continue;
      which = "; dims " + std::to_string(d) + " and " + std::to_string(next) +
              " are not contiguous with each other (stride " + std::to_string(st[d]) + " != " +
              std::to_string(st[next]) + " * " + std::to_string(sh[next]) + ")";
    }
    throw ShapeError("view size is not compatible with input tensor's size and stride: view " +
                     shape_str(target) + " of a tensor of shape " + shape_str(layout_.shape) +
                     " and strides " + shape_str(layout_.strides) + which +
                     "; use reshape() or contiguous() first");
  }
  return Tensor(storage_, Layout{target, std::move(*strides), layout_.offset}, dtype_);
}

Tensor Tensor::reshape(Shape shape) const {
  require_defined(storage_, "reshape");
  const Shape target = infer_shape(shape, numel());
  if (auto strides = try_view_strides(layout_.shape, layout_.strides, target))
    return Tensor(storage_, Layout{target, std::move(*strides), layout_.offset}, dtype_);
  return clone().view(target);
}

Tensor Tensor::transpose(int dim0, int dim1) const {
  require_defined(storage_, "transpose");
  const int a = wrap_dim(dim0, dim(), "transpose"), b = wrap_dim(dim1, dim(), "transpose");
  Layout l = layout_;
  std::swap(l.shape[static_cast<std::size_t>(a)], l.shape[static_cast<std::size_t>(b)]);
  std::swap(l.strides[static_cast<std::size_t>(a)], l.strides[static_cast<std::size_t>(b)]);
  return Tensor(storage_, std::move(l), dtype_);
}

Tensor Tensor::permute(std::vector<int> dims) const {
  require_defined(storage_, "permute");
  if (static_cast<int>(dims.size()) != dim())
    throw ShapeError("permute: " + std::to_string(dims.size()) + " dims given for a tensor of " +
                     std::to_string(dim()) + " dims");
  std::vector<bool> seen(dims.size(), false);
  Layout l;
  l.offset = layout_.offset;
  for (int d : dims) {
    const int w = wrap_dim(d, dim(), "permute");
    if (seen[static_cast<std::size_t>(w)]) throw ShapeError("permute: dim " + std::to_string(d) + " appears twice");
    seen[static_cast<std::size_t>(w)] = true;
    l.shape.push_back(layout_.shape[static_cast<std::size_t>(w)]);
    l.strides.push_back(layout_.strides[static_cast<std::size_t>(w)]);
  }
  return Tensor(storage_, std::move(l), dtype_);
}

Tensor Tensor::select(int dim, std::int64_t index) const {
  require_defined(storage_, "select");
  const auto d = static_cast<std::size_t>(wrap_dim(dim, this->dim(), "select"));
  const std::int64_t len = layout_.shape[d];
  const std::int64_t i = index < 0 ? index + len : index;
  if (i < 0 || i >= len)
    throw ShapeError("select: index " + std::to_string(index) + " is out of range for dim " +
                     std::to_string(dim) + " of length " + std::to_string(len));
  Layout l = layout_;
  l.offset += i * l.strides[d];
  l.shape.erase(l.shape.begin() + static_cast<std::ptrdiff_t>(d));
  l.strides.erase(l.strides.begin() + static_cast<std::ptrdiff_t>(d));
  return Tensor(storage_, std::move(l), dtype_);
}

Tensor Tensor::slice(int dim, std::int64_t begin, std::int64_t end, std::int64_t step) const {
  require_defined(storage_, "slice");
  const auto d = static_cast<std::size_t>(wrap_dim(dim, this->dim(), "slice"));
  if (step <= 0) throw ShapeError("slice: step must be positive (got " + std::to_string(step) + ")");
  const std::int64_t len = layout_.shape[d];
  auto clamp = [len](std::int64_t i) {
    if (i < 0) i += len;
    return std::clamp<std::int64_t>(i, 0, len);
  };
  const std::int64_t b = clamp(begin), e = std::max(clamp(end), clamp(begin));
  Layout l = layout_;
  l.offset += b * l.strides[d];
  l.shape[d] = e > b ? (e - b - 1) / step + 1 : 0;  // no overflow, whatever the step
  // stride * step fits whenever two or more elements remain (they lie inside the storage);
  // with one or none the stride is never used, so keep it rather than overflow.
  if (l.shape[d] > 1) l.strides[d] = checked_mul(l.strides[d], step);
  return Tensor(storage_, std::move(l), dtype_);
}

Tensor Tensor::as_strided(Shape shape, Strides strides, std::int64_t offset) const {
  require_defined(storage_, "as_strided");
  return Tensor(storage_, Layout{std::move(shape), std::move(strides), offset}, dtype_);
}

// ---- copies ----

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  require_defined(storage_, "clone");
  Tensor out = empty(layout_.shape, dtype_, device());
  out.copy_from(*this);
  return out;
}

Tensor Tensor::to(DType dtype) const {
  require_defined(storage_, "to");
  if (dtype == dtype_) return *this;
  Tensor out = empty(layout_.shape, dtype, device());
  out.copy_from(*this);
  return out;
}

Tensor Tensor::to(Device device) const {
  require_defined(storage_, "to");
  if (device == this->device()) return *this;
  const Tensor src = contiguous();
  Tensor out = empty(layout_.shape, dtype_, device);
  copy_bytes(out.data_ptr(), device, src.data_ptr(), src.device(), src.nbytes());
  return out;
}

void Tensor::copy_from(const Tensor& src) {
  if (!storage_ || !src.storage_) throw Error("copy_from: undefined tensor");
  check_writable("copy_from");
  if (src.shape() != shape())
    throw ShapeError("copy_from: source of shape " + shape_str(src.shape()) + " into a tensor of shape " +
                     shape_str(shape()));
  if (src.device() != device()) {
    copy_from(src.to(device()));
    return;
  }
  if (device().is_cpu()) {
    if (src.dtype_ == dtype_)
      copy_strided(storage_->data(), layout_, src.storage_->data(), src.layout_, element_size());
    else
      convert_strided(storage_->data(), layout_, dtype_, src.storage_->data(), src.layout_, src.dtype_);
  } else if (src.dtype_ == dtype_) {
    backend::cuda_copy_strided(device().index, storage_->data(), layout_, src.storage_->data(), src.layout_,
                               element_size());
  } else {
    backend::cuda_convert_strided(device().index, storage_->data(), layout_, dtype_, src.storage_->data(),
                                  src.layout_, src.dtype_);
  }
}

void Tensor::fill(double value) {
  if (!storage_) throw Error("fill: undefined tensor");
  check_writable("fill");
  std::byte element[16] = {};
  store_from_double(value, element, dtype_);
  if (device().is_cpu()) {
    const Layout broadcast{layout_.shape, Strides(layout_.shape.size(), 0), 0};
    copy_strided(storage_->data(), layout_, element, broadcast, element_size());
  } else if (is_contiguous()) {
    backend::cuda_fill(device().index, data_ptr(), element, element_size(), static_cast<std::size_t>(numel()));
  } else {
    Tensor tmp = full(layout_.shape, value, dtype_, device());
    copy_from(tmp);
  }
}

// ---- element access ----

std::int64_t Tensor::element_offset(std::initializer_list<std::int64_t> index) const {
  if (static_cast<int>(index.size()) != dim())
    throw ShapeError("index has " + std::to_string(index.size()) + " entries for a tensor of " +
                     std::to_string(dim()) + " dims (shape " + shape_str(shape()) + ")");
  std::int64_t off = layout_.offset;
  std::size_t d = 0;
  for (std::int64_t i : index) {
    const std::int64_t len = layout_.shape[d];
    const std::int64_t w = i < 0 ? i + len : i;
    if (w < 0 || w >= len)
      throw ShapeError("index " + std::to_string(i) + " is out of bounds for dim " + std::to_string(d) +
                       " of length " + std::to_string(len));
    off += w * layout_.strides[d];
    ++d;
  }
  return off;
}

void Tensor::set(std::initializer_list<std::int64_t> index, double value) {
  check_cpu("set");
  check_writable("set");
  const std::int64_t off = element_offset(index);
  store_from_double(value, storage_->data() + off * static_cast<std::int64_t>(element_size()), dtype_);
}

void Tensor::read_elements(void* out, DType out_dtype) const {
  const Layout dst = Layout::contiguous(layout_.shape);
  convert_strided(static_cast<std::byte*>(out), dst, out_dtype, storage_->data(), layout_, dtype_);
}

}  // namespace einexpr
