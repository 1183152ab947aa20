#pragma once
// Strided host arrays for the CPU emulations of the CUDA lowering's plans.
#include <cstdint>
#include <random>
#include <vector>

#include "einexpr/runtime/layout.hpp"

namespace einexpr::test {

/// Element offset of a logical index in a layout.
inline std::int64_t offset_of(const Layout& l, const std::vector<std::int64_t>& index) {
  std::int64_t o = l.offset;
  for (std::size_t d = 0; d < index.size(); ++d) o += index[d] * l.strides[d];
  return o;
}

/// Calls fn(index) for every index of `shape` in row-major order.
template <class Fn>
void for_each_index(const Shape& shape, Fn&& fn) {
  for (std::int64_t len : shape)
    if (len == 0) return;
  std::vector<std::int64_t> index(shape.size(), 0);
  while (true) {
    fn(index);
    std::size_t d = shape.size();
    while (d-- > 0) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
    if (d == static_cast<std::size_t>(-1)) return;
  }
}

/// A random layout of `shape`: dims laid out in a random memory order, optionally padded
/// (every stride doubled) and offset.
inline Layout random_layout(const Shape& shape, std::mt19937& rng, bool allow_padding = true) {
  std::vector<std::size_t> order(shape.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  const std::int64_t pad = allow_padding && rng() % 4 == 0 ? 2 : 1;
  Layout l;
  l.shape = shape;
  l.strides.assign(shape.size(), 0);
  std::int64_t s = pad;
  for (std::size_t i = order.size(); i-- > 0;) {
    l.strides[order[i]] = s;
    s *= std::max<std::int64_t>(shape[order[i]], 1);
  }
  l.offset = rng() % 3;
  return l;
}

}  // namespace einexpr::test
