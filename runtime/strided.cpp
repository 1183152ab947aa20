// collapse_dims and convert_strided; copy_strided lives in copy_strided.cpp.
#include "einexpr/runtime/strided.hpp"

#include "einexpr/runtime/error.hpp"

namespace einexpr {

CollapsedDims collapse_dims(const Shape& shape, const std::vector<const Strides*>& strides) {
  CollapsedDims out;
  out.strides.resize(strides.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const bool mergeable = !out.shape.empty() && [&] {
      for (std::size_t v = 0; v < strides.size(); ++v) {
        std::int64_t outer = 0;  // a stride times its length may overflow: then no merge
        if (__builtin_mul_overflow((*strides[v])[d], shape[d], &outer) || out.strides[v].back() != outer)
          return false;
      }
      return true;
    }();
    if (mergeable) {
      out.shape.back() *= shape[d];
      for (std::size_t v = 0; v < strides.size(); ++v) out.strides[v].back() = (*strides[v])[d];
    } else {
      out.shape.push_back(shape[d]);
      for (std::size_t v = 0; v < strides.size(); ++v) out.strides[v].push_back((*strides[v])[d]);
    }
  }
  return out;
}

namespace {

// Runs body(dst_offset, src_offset, inner_length) for each innermost row of the collapsed
// nest, over outer rows [begin, end) in row-major order.
template <class Body>
void for_each_row(const CollapsedDims& c, std::int64_t begin, std::int64_t end, Body&& body) {
  const std::size_t rank = c.shape.size();
  const std::int64_t inner = rank ? c.shape.back() : 1;
  std::vector<std::int64_t> index(rank > 0 ? rank - 1 : 0, 0);
  // Position the odometer at row `begin`.
  std::int64_t rem = begin;
  for (std::size_t d = index.size(); d-- > 0;) {
    index[d] = rem % c.shape[d];
    rem /= c.shape[d];
  }
  for (std::int64_t row = begin; row < end; ++row) {
    std::int64_t od = 0, os = 0;
    for (std::size_t d = 0; d < index.size(); ++d) {
      od += index[d] * c.strides[0][d];
      os += index[d] * c.strides[1][d];
    }
    body(od, os, inner);
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < c.shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

void convert_strided(std::byte* dst, const Layout& dst_layout, DType dst_dtype, const std::byte* src,
                     const Layout& src_layout, DType src_dtype) {
  EINEXPR_ASSERT(dst_layout.shape == src_layout.shape, "convert_strided: shapes differ");
  if (checked_numel(dst_layout.shape) == 0) return;
  const CollapsedDims c = collapse_dims(dst_layout.shape, {&dst_layout.strides, &src_layout.strides});
  const auto des = static_cast<std::int64_t>(element_size(dst_dtype));
  const auto ses = static_cast<std::int64_t>(element_size(src_dtype));
  std::byte* d0 = dst + dst_layout.offset * des;
  const std::byte* s0 = src + src_layout.offset * ses;
  std::int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < c.shape.size(); ++d) rows *= c.shape[d];
  const std::int64_t ds = c.shape.empty() ? 1 : c.strides[0].back();
  const std::int64_t ss = c.shape.empty() ? 1 : c.strides[1].back();
  for_each_row(c, 0, rows, [&](std::int64_t od, std::int64_t os, std::int64_t n) {
    if (ds == 1 && ss == 1) {
      convert(s0 + os * ses, src_dtype, d0 + od * des, dst_dtype, static_cast<std::size_t>(n));
    } else {
      for (std::int64_t i = 0; i < n; ++i)
        convert(s0 + (os + i * ss) * ses, src_dtype, d0 + (od + i * ds) * des, dst_dtype, 1);
    }
  });
}

}  // namespace einexpr
