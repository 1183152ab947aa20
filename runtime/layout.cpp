#include "einexpr/runtime/layout.hpp"

#include <limits>
#include <string>

#include "einexpr/runtime/error.hpp"

namespace einexpr {

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw ShapeError("size overflows 64 bits: " + std::to_string(a) + " * " + std::to_string(b));
  return r;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw ShapeError("size overflows 64 bits: " + std::to_string(a) + " + " + std::to_string(b));
  return r;
}

std::string shape_str(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::int64_t checked_numel(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (std::int64_t len : shape)
    if (len < 0) throw ShapeError("negative length " + std::to_string(len) + " in shape " + shape_str(shape));
  // numpy's rule (PyArray_NewFromDescr): the product of the nonzero lengths must fit, even
  // where a zero length makes the tensor empty, so that the answer does not hang on the
  // order of the dims and no partial product a kernel forms (a reduce's count, a loop's
  // outer count) can wrap.
  bool empty = false;
  for (std::int64_t len : shape) {
    if (len == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(n, len, &n))
      throw ShapeError("the number of elements of shape " + shape_str(shape) + " overflows 64 bits");
  }
  return empty ? 0 : n;
}

Strides contiguous_strides(std::span<const std::int64_t> shape) {
  Strides strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s = checked_mul(s, std::max<std::int64_t>(shape[i], 1));
  }
  return strides;
}

Layout Layout::contiguous(Shape shape) {
  checked_numel(shape);
  Strides strides = contiguous_strides(shape);
  return Layout{std::move(shape), std::move(strides), 0};
}

std::int64_t Layout::numel() const { return checked_numel(shape); }

bool Layout::is_contiguous() const noexcept {
  for (std::int64_t len : shape)
    if (len == 0) return true;  // no elements: any strides will do (as torch)
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

std::int64_t Layout::extent() const {
  std::int64_t last = offset;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return 0;
    last = checked_add(last, checked_mul(shape[i] - 1, strides[i]));
  }
  return checked_add(last, 1);
}

std::optional<Strides> try_view_strides(std::span<const std::int64_t> shape,
                                        std::span<const std::int64_t> strides,
                                        std::span<const std::int64_t> new_shape) {
  // torch's computeStride: walk the old dims from the innermost, in chunks of dims that
  // are contiguous with each other; each chunk must be exactly covered by new dims.
  const std::int64_t numel = checked_numel(shape);
  if (checked_numel(new_shape) != numel) return std::nullopt;
  Strides new_strides(new_shape.size(), 1);
  if (shape.empty()) return new_strides;
  if (numel == 0) {
    if (std::equal(shape.begin(), shape.end(), new_shape.begin(), new_shape.end()))
      return Strides(strides.begin(), strides.end());
    return contiguous_strides(new_shape);
  }
  std::int64_t view_d = static_cast<std::int64_t>(new_shape.size()) - 1;
  std::int64_t chunk_base_stride = strides.back();
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (std::int64_t d = static_cast<std::int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    if (d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

Shape infer_shape(std::span<const std::int64_t> shape, std::int64_t numel) {
  Shape out(shape.begin(), shape.end());
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) throw ShapeError("only one dimension can be -1 in shape " + shape_str(shape));
      infer = static_cast<int>(i);
    } else if (out[i] < 0) {
      throw ShapeError("invalid length " + std::to_string(out[i]) + " in shape " + shape_str(shape));
    } else {
      known = checked_mul(known, out[i]);
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      throw ShapeError("shape " + shape_str(shape) + " is invalid for " + std::to_string(numel) +
                       " elements");
    out[static_cast<std::size_t>(infer)] = numel / known;
  } else if (known != numel) {
    throw ShapeError("shape " + shape_str(shape) + " is invalid for " + std::to_string(numel) +
                     " elements");
  }
  return out;
}

}  // namespace einexpr
