#pragma once
// Loop nests over several same-shaped strided views, shared by the CPU kernels: dims put in
// a cache-friendly order and collapsed (runtime collapse_dims), walked row by row (a row is
// the innermost dim), optionally split into pieces that einexpr's threads share (parallel.hpp).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/parallel.hpp"
#include "einexpr/runtime/strided.hpp"
#include "einexpr/runtime/threads.hpp"

namespace einexpr::cpu {

/// Below this many elements of work a kernel runs on one thread.
inline constexpr std::int64_t parallel_threshold = std::int64_t{1} << 16;

/// The dims of `strides` ordered by decreasing stride (stable), stride-0 dims first: the
/// order in which the innermost loop walks the smallest stride.
inline std::vector<int> order_by_stride(const Strides& strides) {
  std::vector<int> order(strides.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](int d) {
    const std::int64_t s = strides[static_cast<std::size_t>(d)];
    return s == 0 ? INT64_MAX : s;
  };
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return key(x) > key(y); });
  return order;
}

template <class V>
V permuted(const V& v, const std::vector<int>& order) {
  V out(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[static_cast<std::size_t>(order[i])];
  return out;
}

/// A loop nest over N views: at least one dim; the last is the row.
template <std::size_t N>
struct Nest {
  Shape shape;
  std::array<Strides, N> strides;

  /// Collapses the dims (length-1 dims dropped, neighbours merged where every view allows).
  static Nest make(const Shape& shape, const std::array<Strides, N>& strides) {
    std::vector<const Strides*> ptrs;
    for (const Strides& s : strides) ptrs.push_back(&s);
    CollapsedDims c = collapse_dims(shape, ptrs);
    Nest nest;
    nest.shape = std::move(c.shape);
    for (std::size_t v = 0; v < N; ++v) nest.strides[v] = std::move(c.strides[v]);
    if (nest.shape.empty()) {
      nest.shape.push_back(1);
      for (Strides& s : nest.strides) s.push_back(0);
    }
    return nest;
  }
  /// As make, with the dims first ordered by view `by`'s strides (order_by_stride).
  static Nest make_ordered(const Shape& shape, const std::array<Strides, N>& strides, std::size_t by) {
    const std::vector<int> order = order_by_stride(strides[by]);
    std::array<Strides, N> p;
    for (std::size_t v = 0; v < N; ++v) p[v] = permuted(strides[v], order);
    return make(permuted(shape, order), p);
  }
  std::int64_t row_length() const { return shape.back(); }
  std::int64_t row_stride(std::size_t v) const { return strides[v].back(); }
  std::int64_t rows() const {
    std::int64_t r = 1;
    for (std::size_t d = 0; d + 1 < shape.size(); ++d) r *= shape[d];
    return r;
  }
  std::int64_t numel() const { return rows() * row_length(); }
};

/// Walks the first `dims` dims of (shape, strides) in row-major order, keeping each view's
/// element offset.
template <std::size_t N>
class Odometer {
 public:
  Odometer(const Shape& shape, const std::array<Strides, N>& strides, std::size_t dims)
      : shape_(&shape), strides_(&strides), index_(dims, 0) {
    offsets_.fill(0);
  }
  void seek(std::int64_t flat) {
    offsets_.fill(0);
    for (std::size_t d = index_.size(); d-- > 0;) {
      const std::int64_t n = std::max<std::int64_t>((*shape_)[d], 1);  // empty nests seek to 0
      index_[d] = flat % n;
      flat /= n;
      for (std::size_t v = 0; v < N; ++v) offsets_[v] += index_[d] * (*strides_)[v][d];
    }
  }
  void next() {
    for (std::size_t d = index_.size(); d-- > 0;) {
      for (std::size_t v = 0; v < N; ++v) offsets_[v] += (*strides_)[v][d];
      if (++index_[d] < (*shape_)[d]) return;
      for (std::size_t v = 0; v < N; ++v) offsets_[v] -= (*strides_)[v][d] * (*shape_)[d];
      index_[d] = 0;
    }
  }
  const std::array<std::int64_t, N>& offsets() const { return offsets_; }

 private:
  const Shape* shape_;
  const std::array<Strides, N>* strides_;
  std::vector<std::int64_t> index_;
  std::array<std::int64_t, N> offsets_;
};

/// Calls body(offsets, length) for pieces [begin, end) of the nest: each row split into
/// pieces of at most `block` elements; offsets are each view's element offset of the piece.
template <std::size_t N, class Body>
void for_pieces(const Nest<N>& nest, std::int64_t block, std::int64_t begin, std::int64_t end, Body& body) {
  const std::int64_t length = nest.row_length();
  const std::int64_t per_row = std::max<std::int64_t>(1, (length + block - 1) / block);
  Odometer<N> odo(nest.shape, nest.strides, nest.shape.size() - 1);
  odo.seek(begin / per_row);
  std::int64_t piece = begin % per_row;
  for (std::int64_t p = begin; p < end; ++p) {
    std::array<std::int64_t, N> offsets = odo.offsets();
    const std::int64_t first = piece * block;
    for (std::size_t v = 0; v < N; ++v) offsets[v] += first * nest.row_stride(v);
    body(offsets, std::min(block, length - first));
    if (++piece == per_row) {
      piece = 0;
      odo.next();
    }
  }
}

/// Runs body over every piece of the nest, shared among einexpr's threads (parallel.hpp:
/// a few ranges of pieces per thread, each taken by whichever thread is free) when the nest
/// has at least parallel_threshold elements; each range works on its own copy of body.
template <std::size_t N, class Body>
void parallel_pieces(const Nest<N>& nest, std::int64_t block, Body body) {
  const std::int64_t length = nest.row_length();
  if (length == 0 || nest.rows() == 0) return;
  const std::int64_t pieces = nest.rows() * ((length + block - 1) / block);
  if (num_threads() <= 1 || pieces <= 1 || nest.numel() < parallel_threshold) {
    for_pieces(nest, block, 0, pieces, body);
    return;
  }
  const std::int64_t per_piece = nest.numel() / pieces;  // elements
  parallel_for(pieces, pieces_for(pieces, std::max<std::int64_t>(1, parallel_threshold / 4 / std::max<std::int64_t>(per_piece, 1))),
               [&](std::int64_t, std::int64_t b, std::int64_t e) {
                 Body local = body;
                 for_pieces(nest, block, b, e, local);
               });
}

}  // namespace einexpr::cpu
