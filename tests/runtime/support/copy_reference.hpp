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

// The helpers below walk raw pointers, not vector iterators, and compare with memcmp: in the
// Debug sanitizer build (-O0) the copies they check take a tenth of the test's time, and
// iterator calls, a division per dim per element and byte-wise == took the rest.
inline Bytes pattern_bytes(std::size_t n, unsigned seed) {
  Bytes b(n);
  std::byte* p = b.data();
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] = static_cast<std::byte>(x >> 24);
  }
  return b;
}

/// dst as a copy must leave it: every element of the view copied, the rest untouched. The
/// elements in dl's row-major order, an odometer over the dims (the innermost a plain loop).
inline Bytes reference(Bytes dst, const einexpr::Layout& dl, const Bytes& src, const einexpr::Layout& sl,
                       std::size_t es) {
  const std::size_t r = dl.shape.size();
  for (std::int64_t len : dl.shape)
    if (len == 0) return dst;
  const auto e = static_cast<std::int64_t>(es);
  std::byte* const d = dst.data();
  const std::byte* const s = src.data();
  const std::int64_t inner = r == 0 ? 1 : dl.shape[r - 1];
  const std::int64_t dstep = r == 0 ? 0 : dl.strides[r - 1] * e, sstep = r == 0 ? 0 : sl.strides[r - 1] * e;
  std::vector<std::int64_t> index(r, 0);
  std::int64_t d_off = dl.offset * e, s_off = sl.offset * e;
  for (;;) {
    std::byte* dp = d + d_off;
    const std::byte* sp = s + s_off;
    for (std::int64_t i = 0; i < inner; ++i, dp += dstep, sp += sstep) std::memcpy(dp, sp, es);
    std::size_t k = r == 0 ? 0 : r - 1;  // the next index over the outer dims
    for (;;) {
      if (k == 0) return dst;
      --k;
      if (++index[k] < dl.shape[k]) {
        d_off += dl.strides[k] * e;
        s_off += sl.strides[k] * e;
        break;
      }
      d_off -= (dl.shape[k] - 1) * dl.strides[k] * e;
      s_off -= (dl.shape[k] - 1) * sl.strides[k] * e;
      index[k] = 0;
    }
  }
}

/// The first byte where a and b differ, or -1 (a cheap failure message, unlike a == b's).
inline std::int64_t first_difference(const Bytes& a, const Bytes& b) {
  if (a.size() != b.size()) return static_cast<std::int64_t>(a.size() < b.size() ? a.size() : b.size());
  if (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0) return -1;
  const std::byte* pa = a.data();
  const std::byte* pb = b.data();
  for (std::size_t i = 0;; ++i)
    if (pa[i] != pb[i]) return static_cast<std::int64_t>(i);
}

}  // namespace copy_test
