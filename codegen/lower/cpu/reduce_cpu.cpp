// ReduceStep on the CPU. The src's dims are ordered by decreasing stride (broadcast dims
// outermost) and collapsed, then split into kept and reduced dims. Two loop shapes:
//   inner reduced  the innermost (smallest-stride) dim is reduced: each output folds rows
//                  of contiguous elements with a vectorized fold (omp simd);
//   inner kept     the innermost dim is kept: each block of outputs along it has an
//                  accumulator row, and every reduced index adds a src row into it.
// Accumulation: double for f64 (a run's sum in compensated blocks), f32 and the reduced
// floats (rounded once at the end), int64 for integers (wrapping), 0/1 bytes for bool (any =
// max, all = min); var and std fold (count, mean, m2) in double, logsumexp (max in the
// compute type, the sum of exp in double) (reduce_fold.hpp). Large
// reductions share their outputs among threads (parallel.hpp), or, when there are too few
// outputs, split the reduced range into pieces and fold the pieces' partials in piece order.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu_kernels.hpp"
#include "element.hpp"
#include "reduce_fold.hpp"
#include "strided_loop.hpp"

namespace einexpr::cpu {

namespace {

/// The reduction's loop nest: kept dims ({src, dst} strides) and reduced dims ({src}).
struct ReduceGeometry {
  Shape kept_shape;
  std::array<Strides, 2> kept_strides;
  Shape red_shape;
  std::array<Strides, 1> red_strides;
  bool inner_reduced = false;
  std::int64_t count = 1;  // reduced elements per output: mean's divisor
  std::int64_t correction = 1;  // var / std: divide by count - correction
};

std::int64_t product(const Shape& shape) {
  std::int64_t p = 1;
  for (std::int64_t n : shape) p *= n;
  return p;
}

ReduceGeometry make_geometry(const Layout& src, const Layout& dst, const std::vector<int>& axes) {
  ReduceGeometry g;
  std::vector<bool> reduced(src.shape.size(), false);
  for (int a : axes) {
    EINEXPR_ASSERT(a >= 0 && a < src.dim() && !reduced[static_cast<std::size_t>(a)], "reduce: bad axis");
    reduced[static_cast<std::size_t>(a)] = true;
    g.count *= src.shape[static_cast<std::size_t>(a)];
  }
  Strides dst_full(src.shape.size(), 0);
  for (std::size_t d = 0, j = 0; d < src.shape.size(); ++d) {
    if (reduced[d]) continue;
    EINEXPR_ASSERT(j < dst.shape.size() && dst.shape[j] == src.shape[d], "reduce: dst shape mismatch");
    dst_full[d] = dst.strides[j++];
  }
  const std::vector<int> order = order_by_stride(src.strides);
  const Strides src_s = permuted(src.strides, order), dst_s = permuted(dst_full, order);
  const CollapsedDims c = collapse_dims(permuted(src.shape, order), {&src_s, &dst_s});
  for (std::size_t d = 0; d < c.shape.size(); ++d) {
    const bool kept = c.strides[1][d] != 0;
    if (kept) {
      g.kept_shape.push_back(c.shape[d]);
      g.kept_strides[0].push_back(c.strides[0][d]);
      g.kept_strides[1].push_back(c.strides[1][d]);
    } else {
      g.red_shape.push_back(c.shape[d]);
      g.red_strides[0].push_back(c.strides[0][d]);
    }
    g.inner_reduced = !kept;
  }
  if (g.kept_shape.empty()) g.kept_shape = {1}, g.kept_strides = {Strides{0}, Strides{0}};
  if (g.red_shape.empty()) g.red_shape = {1}, g.red_strides = {Strides{0}};
  return g;
}

/// One thread's state in the inner-reduced loop: odometers over kept and reduced dims.
struct InnerCursor {
  const ReduceGeometry& g;
  Odometer<2> kept{g.kept_shape, g.kept_strides, g.kept_shape.size()};
  Odometer<1> red{g.red_shape, g.red_strides, g.red_shape.size() - 1};
};

/// Folds the reduced elements [b, e) (row-major over the reduced dims) at src + base.
template <class F, class S>
typename F::A fold_range(InnerCursor& cur, const S* src, std::int64_t b, std::int64_t e) {
  typename F::A acc = F::identity();
  const std::int64_t length = cur.g.red_shape.back(), stride = cur.g.red_strides[0].back();
  if (b >= e) return acc;
  cur.red.seek(b / length);
  for (std::int64_t pos = b, col = b % length; pos < e; col = 0) {
    const std::int64_t n = std::min(length - col, e - pos);
    acc = F::combine(acc, fold_run<F>(src + cur.red.offsets()[0] + col * stride, n, stride));
    pos += n;
    cur.red.next();
  }
  return acc;
}

template <class F, class S>
void fold_outputs(const ReduceGeometry& g, S* dst, const S* src, std::int64_t b, std::int64_t e) {
  InnerCursor cur{g};
  const std::int64_t per = product(g.red_shape);
  cur.kept.seek(b);
  for (std::int64_t o = b; o < e; ++o, cur.kept.next()) {
    const auto& off = cur.kept.offsets();
    dst[off[1]] = Element<S>::store(F::finish(fold_range<F>(cur, src + off[0], 0, per), g.count, g.correction));
  }
}

template <class F, class S>
void reduce_inner(const ReduceGeometry& g, S* dst, const S* src) {
  const std::int64_t outputs = product(g.kept_shape), per = product(g.red_shape);
  const int threads = num_threads();
  if (threads <= 1 || outputs * per < parallel_threshold) return fold_outputs<F>(g, dst, src, 0, outputs);
  if (outputs >= threads) {
    const std::int64_t grain = std::max<std::int64_t>(1, parallel_threshold / 4 / std::max<std::int64_t>(per, 1));
    parallel_for(outputs, pieces_for(outputs, grain),
                 [&](std::int64_t, std::int64_t b, std::int64_t e) { fold_outputs<F>(g, dst, src, b, e); });
    return;
  }
  // Few outputs: each one's reduced range in pieces, their partial folds combined in piece
  // order (the same result whichever thread ran which piece).
  InnerCursor cur{g};
  const std::int64_t pieces = pieces_for(per, parallel_threshold / 4);
  for (std::int64_t o = 0; o < outputs; ++o, cur.kept.next()) {
    std::vector<typename F::A> partial(static_cast<std::size_t>(pieces), F::identity());
    const auto& off = cur.kept.offsets();
    parallel_for(per, pieces, [&](std::int64_t piece, std::int64_t b, std::int64_t e) {
      InnerCursor mine{g};
      partial[static_cast<std::size_t>(piece)] = fold_range<F>(mine, src + off[0], b, e);
    });
    typename F::A acc = F::identity();
    for (const auto& p : partial) acc = F::combine(acc, p);
    dst[off[1]] = Element<S>::store(F::finish(acc, g.count, g.correction));
  }
}

/// Accumulator rows along the innermost kept dim are at most this long.
constexpr std::int64_t tile_block = 1024;

/// Loads and stores whose addresses agree in their low 12 bits look dependent to the CPU
/// ("4K aliasing"): an accumulator row at the same offset within a page as the source rows
/// stalls every store-then-load. The accumulators go half a page away from the source.
constexpr std::size_t page = 4096;
template <class A, class S>
A* apart_from(A* buffer, const S* src) {
  const auto want = (reinterpret_cast<std::uintptr_t>(src) + page / 2) % page;
  const auto have = reinterpret_cast<std::uintptr_t>(buffer) % page;
  const std::size_t shift = (want + page - have) % page / sizeof(A) * sizeof(A);
  return reinterpret_cast<A*>(reinterpret_cast<std::byte*>(buffer) + shift);
}

/// One thread's state in the inner-kept loop: odometers over the outer kept dims (all but
/// the innermost) and over every reduced dim.
struct OuterCursor {
  const ReduceGeometry& g;
  Odometer<2> kept{g.kept_shape, g.kept_strides, g.kept_shape.size() - 1};
  Odometer<1> red{g.red_shape, g.red_strides, g.red_shape.size()};
  std::int64_t length() const { return g.kept_shape.back(); }
  std::int64_t tiles_per_row() const { return (length() + tile_block - 1) / tile_block; }
};

/// A block of outputs along the innermost kept dim: src and dst offsets of its first, length.
struct Tile {
  std::int64_t src = 0, dst = 0, n = 0;
};

Tile locate(OuterCursor& cur, std::int64_t t) {
  cur.kept.seek(t / cur.tiles_per_row());
  const std::int64_t j0 = (t % cur.tiles_per_row()) * tile_block;
  const auto& off = cur.kept.offsets();
  return {off[0] + j0 * cur.g.kept_strides[0].back(), off[1] + j0 * cur.g.kept_strides[1].back(),
          std::min(tile_block, cur.length() - j0)};
}

/// acc[0..tile.n) = the fold of the tile's outputs over reduced elements [b, e).
template <class F, class S>
void accumulate_tile(OuterCursor& cur, const S* src, const Tile& tile, std::int64_t b, std::int64_t e,
                     typename F::A* acc) {
  std::fill(acc, acc + tile.n, F::identity());
  if (b >= e) return;
  const std::int64_t stride = cur.g.kept_strides[0].back();
  cur.red.seek(b);
  if constexpr (F::float_blocks && std::is_same_v<S, typename F::Compute>) {
    alignas(64) float part[tile_block];
    for (std::int64_t r = b; r < e;) {
      const std::int64_t end = std::min(e, r + F::block_rows);
      for (const std::int64_t first = r; r < end; ++r, cur.red.next())
        F::block_add(part, src + tile.src + cur.red.offsets()[0], tile.n, stride, r == first);
      F::block_flush(acc, part, tile.n);
    }
    return;
  }
  for (std::int64_t r = b; r < e; ++r, cur.red.next())
    accumulate_run<F>(acc, src + tile.src + cur.red.offsets()[0], tile.n, stride);
}

template <class F, class S>
void store_tile(const ReduceGeometry& g, S* dst, const Tile& tile, const typename F::A* acc) {
  const std::int64_t stride = g.kept_strides[1].back();
  for (std::int64_t j = 0; j < tile.n; ++j)
    dst[tile.dst + j * stride] = Element<S>::store(F::finish(acc[j], g.count, g.correction));
}

template <class F, class S>
void fold_tiles(const ReduceGeometry& g, S* dst, const S* src, std::int64_t b, std::int64_t e) {
  using A = typename F::A;
  OuterCursor cur{g};
  std::vector<A> buffer(static_cast<std::size_t>(tile_block) + 2 * page / sizeof(A));
  const std::int64_t per = product(g.red_shape);
  for (std::int64_t t = b; t < e; ++t) {
    const Tile tile = locate(cur, t);
    A* acc = apart_from(buffer.data(), src + tile.src);
    accumulate_tile<F>(cur, src, tile, 0, per, acc);
    store_tile<F>(g, dst, tile, acc);
  }
}

template <class F, class S>
void reduce_outer(const ReduceGeometry& g, S* dst, const S* src) {
  const std::int64_t tiles = product(g.kept_shape) / g.kept_shape.back() * OuterCursor{g}.tiles_per_row();
  const std::int64_t per = product(g.red_shape);
  const int threads = num_threads();
  if (threads <= 1 || product(g.kept_shape) * per < parallel_threshold) return fold_tiles<F>(g, dst, src, 0, tiles);
  if (tiles >= threads) {
    parallel_for(tiles, pieces_for(tiles, 1),
                 [&](std::int64_t, std::int64_t b, std::int64_t e) { fold_tiles<F>(g, dst, src, b, e); });
    return;
  }
  // Few tiles: each one's reduced rows in pieces, the pieces' accumulator rows combined in
  // piece order.
  using A = typename F::A;
  const std::int64_t pieces = pieces_for(per, 8);
  std::vector<A> partial(static_cast<std::size_t>(pieces * tile_block));
  OuterCursor cur{g};
  for (std::int64_t t = 0; t < tiles; ++t) {
    const Tile tile = locate(cur, t);
    std::fill(partial.begin(), partial.end(), F::identity());
    parallel_for(per, pieces, [&](std::int64_t i, std::int64_t b, std::int64_t e) {
      OuterCursor mine{g};
      accumulate_tile<F>(mine, src, tile, b, e, partial.data() + i * tile_block);
    });
    for (std::int64_t i = 1; i < pieces; ++i)
      for (std::int64_t j = 0; j < tile.n; ++j) partial[j] = F::combine(partial[j], partial[i * tile_block + j]);
    store_tile<F>(g, dst, tile, partial.data());
  }
}

template <Reduction R, class S>
void run_reduce(const ReduceGeometry& g, S* dst, const S* src) {
  using F = Fold<R, compute_t<S>>;
  if (product(g.kept_shape) == 0) return;
  if (g.inner_reduced) reduce_inner<F>(g, dst, src);
  else reduce_outer<F>(g, dst, src);
}

template <class Fn>
void with_reduction(Reduction op, Fn&& fn) {
  using R = Reduction;
  switch (op) {
    case R::sum: return fn(std::integral_constant<R, R::sum>{});
    case R::mean: return fn(std::integral_constant<R, R::mean>{});
    case R::max: return fn(std::integral_constant<R, R::max>{});
    case R::min: return fn(std::integral_constant<R, R::min>{});
    case R::prod: return fn(std::integral_constant<R, R::prod>{});
    case R::var: return fn(std::integral_constant<R, R::var>{});
    case R::std: return fn(std::integral_constant<R, R::std>{});
    case R::logsumexp: return fn(std::integral_constant<R, R::logsumexp>{});
    default: throw InternalError("reduce: any/all reach the kernel as max/min", __FILE__, __LINE__);
  }
}

/// Throws DTypeError for what plan.hpp says the planner rejects; any/all become max/min.
Reduction kernel_reduction(Reduction op, DType dtype) {
  const bool logical = op == Reduction::any || op == Reduction::all;
  if (dtype == DType::boolean) {
    if (op != Reduction::max && op != Reduction::min && !logical)
      throw DTypeError(std::string("the reduction '") + name(op) + "' is not defined on bool");
  } else if (logical) {
    throw DTypeError(std::string("the reduction '") + name(op) + "' needs bool, not " + std::string(name(dtype)));
  } else if ((op == Reduction::mean || op == Reduction::var || op == Reduction::std || op == Reduction::logsumexp) &&
             is_integer(dtype)) {
    throw DTypeError(std::string("the reduction '") + name(op) + "' is not defined on " + std::string(name(dtype)));
  }
  if (op == Reduction::any) return Reduction::max;
  if (op == Reduction::all) return Reduction::min;
  return op;
}

}  // namespace

Kernel reduce_kernel(const ReduceStep& step, const Operand& src, const Operand& dst, DType dtype) {
  const Reduction op = kernel_reduction(step.op, dtype);
  ReduceGeometry g = make_geometry(src.layout, dst.layout, step.axes);
  g.correction = step.correction;
  Kernel kernel;
  kernel.name = std::string("reduce ") + name(step.op) + " " + std::string(name(dtype)) + " " +
                layout_str(src.layout) + " -> " + layout_str(dst.layout);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    with_reduction(op, [&](auto r) {
      constexpr Reduction R = decltype(r)::value;
      constexpr bool is_bool = std::is_same_v<S, bool_t>;
      constexpr bool arithmetic = R == Reduction::sum || R == Reduction::mean || R == Reduction::prod;
      constexpr bool float_only = R == Reduction::var || R == Reduction::std || R == Reduction::logsumexp;
      if constexpr (!(is_bool && arithmetic) && !(float_only && !std::is_floating_point_v<compute_t<S>>)) {
        kernel.run = [g, src, dst](const Workspace& ws) {
          run_reduce<R, S>(g, buffer_ptr<S>(ws, dst.buffer) + dst.layout.offset,
                           buffer_ptr<const S>(ws, src.buffer) + src.layout.offset);
        };
      }
    });
  });
  return kernel;
}

}  // namespace einexpr::cpu
