#pragma once
// What the copy tests share (test_copy_strided.cpp, test_copy_permute.cpp): pattern bytes,
// layouts stored in a given dim order, and the element-by-element reference copy, which also
// proves that nothing outside the destination changed.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "einexpr/runtime/layout.hpp"

namespace copy_test {

using Bytes = std::vector<std::byte>;

/// Strides of `shape` stored in the dim order `storage` (outermost first), times `step`.
inline einexpr::Strides strides_in_order(const einexpr::Shape& shape, const std::vector<int>& storage,
                                         std::int64_t step = 1) {
  einexpr::Strides s(shape.size(), 0);
  std::int64_t stride = step;
  for (auto it = storage.rbegin(); it != storage.rend(); ++it) {
    s[static_cast<std::size_t>(*it)] = stride;
    stride *= shape[static_cast<std::size_t>(*it)];
  }
  return s;
}

/// Elements a buffer needs to hold every element of `l` (strides >= 0).
inline std::size_t extent(const einexpr::Layout& l) {
  std::int64_t last = l.offset;
  for (std::size_t d = 0; d < l.shape.size(); ++d) {
    if (l.shape[d] == 0) return static_cast<std::size_t>(l.offset);
    last += (l.shape[d] - 1) * l.strides[d];
  }
  return static_cast<std::size_t>(last + 1);
}

inline Bytes pattern_bytes(std::size_t n, unsigned seed) {
  Bytes b(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& v : b) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<std::byte>(x >> 24);
  }
  return b;
}

/// dst as a copy must leave it: every element of the view copied, the rest untouched.
inline Bytes reference(Bytes dst, const einexpr::Layout& dl, const Bytes& src, const einexpr::Layout& sl,
                       std::size_t es) {
  const std::int64_t n = einexpr::checked_numel(dl.shape);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t rem = i, d_off = dl.offset, s_off = sl.offset;
    for (std::size_t d = dl.shape.size(); d-- > 0;) {
      const std::int64_t idx = rem % dl.shape[d];
      rem /= dl.shape[d];
      d_off += idx * dl.strides[d];
      s_off += idx * sl.strides[d];
    }
    std::memcpy(dst.data() + d_off * static_cast<std::int64_t>(es),
                src.data() + s_off * static_cast<std::int64_t>(es), es);
  }
  return dst;
}

/// The first byte where a and b differ, or -1 (a cheap failure message, unlike a == b's).
inline std::int64_t first_difference(const Bytes& a, const Bytes& b) {
  if (a.size() != b.size()) return static_cast<std::int64_t>(a.size() < b.size() ? a.size() : b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return static_cast<std::int64_t>(i);
  return -1;
}

}  // namespace copy_test
