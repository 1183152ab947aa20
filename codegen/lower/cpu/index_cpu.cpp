// The steps of the indexed ops on the CPU: FillStep, GatherStep (get_at), ScatterAddStep
// (add_at) and CrossEntropyStep (plan.hpp's contract).
//   gather        a loop nest over dst, src and the indices in dst's order; a row along which
//                 the index does not change is one copy of contiguous table elements
//   scatter-add   threads split the dims along which the accumulator moves (the table's own
//                 dims), so no two threads add into one element; each thread walks every
//                 index in order (the sum of repeated indices is the same on any thread count)
//   cross-entropy one row of the logits at a time: the row's max and sum of exp (vec_math's
//                 row kernel, in f32 or f64), lse = max + log(sum); backward writes
//                 dY·exp(x - lse) and subtracts dY at the target, reading the row from cache
// Every index is checked before anything is written: the first one outside [0, length) is an
// IndexError naming the operand, its position among the indices and its value.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <cstring>
#include <vector>

#include "einexpr/runtime/parallel.hpp"
#include "einexpr/runtime/strided.hpp"

#include "cpu_kernels.hpp"
#include "element.hpp"
#include "prefetch.hpp"
#include "strided_loop.hpp"
#include "vec_math.hpp"

namespace einexpr::cpu {

namespace {

constexpr std::int64_t stream_bytes = std::int64_t{8} << 20;  // as map_cpu.cpp

template <class I>
std::int64_t index_at(const std::byte* base, std::int64_t offset) {
  return static_cast<std::int64_t>(reinterpret_cast<const I*>(base)[offset]);
}

std::int64_t read_index(const std::byte* base, std::int64_t offset, DType dtype) {
  return dtype == DType::i32 ? index_at<std::int32_t>(base, offset) : index_at<std::int64_t>(base, offset);
}

/// The index view without its stride-0 dims (each distinct index once), as a shape and strides.
struct Distinct {
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;
};
Distinct distinct(const Layout& l) {
  Distinct d;
  d.offset = l.offset;
  for (std::size_t i = 0; i < l.shape.size(); ++i)
    if (l.strides[i] != 0 || l.shape[i] == 0) {
      d.shape.push_back(l.shape[i]);
      d.strides.push_back(l.strides[i]);
    }
  return d;
}

/// Throws IndexError for the first index of `view` (distinct elements, row-major order) that is
/// outside [0, length) and is not `allowed` (cross_entropy's ignore_index).
void check_indices(const std::byte* base, const Layout& view, DType dtype, std::int64_t length,
                   const std::string& what, std::optional<std::int64_t> allowed = std::nullopt) {
  const Distinct d = distinct(view);
  const std::int64_t n = checked_numel(d.shape);
  if (n == 0) return;
  const Nest<1> nest = Nest<1>::make(d.shape, {d.strides});
  auto bad = [&](std::int64_t v) { return (v < 0 || v >= length) && !(allowed && v == *allowed); };
  // A fast pass over every index (min and max per piece), then, only on failure, the first bad one.
  std::atomic<bool> found{false};
  parallel_pieces(nest, 4096, [&](const std::array<std::int64_t, 1>& off, std::int64_t len) {
    const std::int64_t s = nest.row_stride(0);
    bool any = false;
    if (dtype == DType::i32) {
      const auto* p = reinterpret_cast<const std::int32_t*>(base) + d.offset + off[0];
      for (std::int64_t k = 0; k < len; ++k) any |= bad(p[k * s]);
    } else {
      const auto* p = reinterpret_cast<const std::int64_t*>(base) + d.offset + off[0];
      for (std::int64_t k = 0; k < len; ++k) any |= bad(p[k * s]);
    }
    if (any) found.store(true, std::memory_order_relaxed);
  });
  if (!found.load()) return;
  std::vector<std::int64_t> index(d.shape.size(), 0);
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t off = d.offset;
    for (std::size_t i = 0; i < index.size(); ++i) off += index[i] * d.strides[i];
    const std::int64_t v = read_index(base, off, dtype);
    if (bad(v)) {
      std::string pos;
      for (std::size_t i = 0; i < index.size(); ++i) pos += (i ? ", " : "") + std::to_string(index[i]);
      throw IndexError(what + ": index " + std::to_string(v) + " at position [" + pos + "] is out of range [0, " +
                       std::to_string(length) + ")" + (v < 0 ? " (negative indices do not count from the end)" : "") +
                       "; nothing was written");
    }
    for (std::size_t i = index.size(); i-- > 0;)
      if (++index[i] < d.shape[i]) break;
      else index[i] = 0;
  }
  throw InternalError("check_indices: a bad index found and lost", __FILE__, __LINE__);
}

/// Copies `len` elements of `es` bytes from src (stride ss) to dst (stride ds), in elements.
inline void copy_row(std::byte* dst, std::int64_t ds, const std::byte* src, std::int64_t ss, std::int64_t len,
                     std::size_t es) {
  if (ds == 1 && ss == 1) {
    std::memcpy(dst, src, static_cast<std::size_t>(len) * es);
    return;
  }
  auto go = [&](auto tag) {
    using T = decltype(tag);
    auto* d = reinterpret_cast<T*>(dst);
    const auto* s = reinterpret_cast<const T*>(src);
    for (std::int64_t k = 0; k < len; ++k) d[k * ds] = s[k * ss];
  };
  switch (es) {
    case 1: go(std::uint8_t{}); break;
    case 2: go(std::uint16_t{}); break;
    case 4: go(std::uint32_t{}); break;
    default: go(std::uint64_t{}); break;
  }
}

}  // namespace

Kernel fill_kernel(const Operand& dst, double value, DType dtype) {
  Kernel k;
  k.name = "fill " + std::string(name(dtype)) + " " + layout_str(dst.layout);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S v = Element<S>::store(static_cast<compute_t<S>>(value));
    const Nest<1> nest = Nest<1>::make(dst.layout.shape, {dst.layout.strides});
    // a large contiguous output (add_at's fresh table) is filled with streaming stores: no read
    // for ownership of lines written whole
    const bool stream = nest.row_stride(0) == 1 &&
                        checked_mul(checked_numel(dst.layout.shape), static_cast<std::int64_t>(sizeof(S))) >= stream_output_bytes;
    k.run = [dst, v, nest, stream](const Workspace& ws) {
      S* base = buffer_ptr<S>(ws, dst.buffer) + dst.layout.offset;
      parallel_pieces(nest, 1 << 14, [&](const std::array<std::int64_t, 1>& off, std::int64_t len) {
        const std::int64_t s = nest.row_stride(0);
        S* p = base + off[0];
        if (stream) {
          fill_streamed(reinterpret_cast<std::byte*>(p), reinterpret_cast<const std::byte*>(&v), sizeof(S),
                        static_cast<std::size_t>(len));
          streamed_fence();
          return;
        }
        for (std::int64_t i = 0; i < len; ++i) p[i * s] = v;
      });
    };
  });
  return k;
}

Kernel gather_kernel(const GatherStep& step, const Operand& src, const Operand& index, const Operand& dst, DType dtype,
                     DType index_dtype) {
  const std::size_t es = element_size(dtype);
  // dst's dims in its own order (innermost fastest), collapsed where all three views allow.
  const Nest<3> nest =
      Nest<3>::make_ordered(dst.layout.shape, {dst.layout.strides, src.layout.strides, index.layout.strides}, 0);
  const std::int64_t length = step.length, stride = step.stride;
  // a device's part of the table (AxisPart): indices checked against the whole axis, a row
  // outside the part read as zeros
  const AxisPart part = step.part;
  const std::int64_t checked = part.split() ? part.total : length;
  Kernel k;
  k.name = "gather " + std::string(name(dtype)) + " " + layout_str(src.layout) + " at " + std::string(name(index_dtype)) +
           " " + layout_str(index.layout) + " -> " + layout_str(dst.layout) +
           (part.split() ? " (rows " + std::to_string(part.first) + "+ of " + std::to_string(part.total) + ")" : "");
  // An embedding lookup: whole contiguous rows of the table, one index each, into contiguous
  // rows of dst. Each thread walks its piece's rows with the row eight ahead prefetched (a
  // gathered row starts where no hardware prefetcher looks; 1, 2, 4 and 8 rows ahead of a 3 KB
  // row measured 1.69, 1.69, 1.12 and 1.10 ms for GPT-2's lookup against a 1.14 ms memcpy), the
  // first eight at the piece's start and none past its end (those rows are another piece's,
  // maybe another thread's; in a probe with its calls in random order the two ran within noise
  // of each other); a large output is written with streaming stores (no read for ownership of
  // lines written whole).
  const bool rows = nest.shape.size() == 2 && nest.strides[0][1] == 1 && nest.strides[1][1] == 1 &&
                    nest.strides[2][1] == 0 && nest.strides[1][0] == 0;
  if (rows) {
    const std::int64_t count = nest.shape[0], n = nest.shape[1];
    const std::int64_t dstep = nest.strides[0][0], istep = nest.strides[2][0];
    const auto row_bytes = static_cast<std::size_t>(n) * es;
    const bool stream = checked_mul(checked_mul(count, n), static_cast<std::int64_t>(es)) >= stream_output_bytes;
    k.name += stream ? " (rows, streamed)" : " (rows)";
    k.run = [=](const Workspace& ws) {
      const std::byte* idx = buffer_ptr<const std::byte>(ws, index.buffer);
      check_indices(idx, index.layout, index_dtype, checked, "get_at's indices (operand 2)");
      std::byte* out = buffer_ptr<std::byte>(ws, dst.buffer) + dst.layout.offset * static_cast<std::int64_t>(es);
      const std::byte* table = buffer_ptr<const std::byte>(ws, src.buffer) + src.layout.offset * static_cast<std::int64_t>(es);
      const auto e = static_cast<std::int64_t>(es);
      // the row of index r, or null for one outside this device's part
      auto row = [&](std::int64_t r) -> const std::byte* {
        const std::int64_t i = read_index(idx, index.layout.offset + r * istep, index_dtype) - part.first;
        return i >= 0 && i < length ? table + i * stride * e : nullptr;
      };
      auto fetch = [&](std::int64_t r) {
        if (const std::byte* from = row(r))
          for (std::size_t b = 0; b < row_bytes; b += 64) prefetch_line(from + b);
      };
      auto run = [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end && r < begin + 8; ++r) fetch(r);
        for (std::int64_t r = begin; r < end; ++r) {
          if (r + 8 < end) fetch(r + 8);
          std::byte* d = out + r * dstep * e;
          const std::byte* from = row(r);
          if (from == nullptr) std::memset(d, 0, row_bytes);
          else if (stream) copy_bytes_streamed(d, from, row_bytes);
          else std::memcpy(d, from, row_bytes);
        }
        if (stream) streamed_fence();
      };
      if (num_threads() <= 1 || count <= 1 || count * n < parallel_threshold) {
        run(0, count);
        return;
      }
      const std::int64_t grain = std::max<std::int64_t>(1, parallel_threshold / 4 / std::max<std::int64_t>(n, 1));
      parallel_for(count, pieces_for(count, grain), [&](std::int64_t, std::int64_t b, std::int64_t end) { run(b, end); });
    };
    return k;
  }
  k.run = [=](const Workspace& ws) {
    const std::byte* idx = buffer_ptr<const std::byte>(ws, index.buffer);
    check_indices(idx, index.layout, index_dtype, checked, "get_at's indices (operand 2)");
    std::byte* out = buffer_ptr<std::byte>(ws, dst.buffer);
    const std::byte* table = buffer_ptr<const std::byte>(ws, src.buffer);
    const auto e = static_cast<std::int64_t>(es);
    parallel_pieces(nest, 1 << 14, [&](const std::array<std::int64_t, 3>& off, std::int64_t len) {
      const std::int64_t ds = nest.row_stride(0), ss = nest.row_stride(1), is = nest.row_stride(2);
      std::byte* d = out + (dst.layout.offset + off[0]) * e;
      const std::byte* s = table + (src.layout.offset + off[1]) * e;
      const std::int64_t i0 = index.layout.offset + off[2];
      auto zero = [&](std::byte* at, std::int64_t step, std::int64_t n) {
        for (std::int64_t k = 0; k < n; ++k) std::memset(at + k * step * e, 0, es);
      };
      if (is == 0) {  // one index for the whole row: a row of the table
        const std::int64_t i = read_index(idx, i0, index_dtype) - part.first;
        if (i < 0 || i >= length) zero(d, ds, len);
        else copy_row(d, ds, s + i * stride * e, ss, len, es);
        return;
      }
      for (std::int64_t k = 0; k < len; ++k) {
        const std::int64_t i = read_index(idx, i0 + k * is, index_dtype) - part.first;
        if (i < 0 || i >= length) zero(d + k * ds * e, 1, 1);
        else copy_row(d + k * ds * e, 1, s + (k * ss + i * stride) * e, 1, 1, es);
      }
    });
  };
  return k;
}

Kernel scatter_add_kernel(const ScatterAddStep& step, const Operand& acc, const Operand& index, const Operand& updates,
                          DType dtype, DType index_dtype) {
  // Parallel dims: the accumulator moves along them (distinct elements per index); serial
  // dims: the accumulator stays (stride 0), so positions along them may add into one element.
  Shape pshape, sshape;
  std::array<Strides, 3> pstr{}, sstr{};
  for (std::size_t d = 0; d < acc.layout.shape.size(); ++d) {
    const bool parallel = acc.layout.strides[d] != 0;
    (parallel ? pshape : sshape).push_back(acc.layout.shape[d]);
    for (std::size_t v = 0; v < 3; ++v) {
      const Layout& l = v == 0 ? acc.layout : v == 1 ? index.layout : updates.layout;
      (parallel ? pstr : sstr)[v].push_back(l.strides[d]);
    }
  }
  const Nest<3> pnest = Nest<3>::make_ordered(pshape, pstr, 0);
  const std::int64_t serial = checked_numel(sshape);
  const std::int64_t length = step.length, stride = step.stride;
  // a device's part of the table (AxisPart): indices checked against the whole axis, an
  // update at a row outside the part added on another device
  const AxisPart part = step.part;
  const std::int64_t checked = part.split() ? part.total : length;
  Kernel k;
  k.name = "scatter_add " + std::string(name(dtype)) + " " + layout_str(updates.layout) + " at " +
           std::string(name(index_dtype)) + " " + layout_str(index.layout) + " into " + layout_str(acc.layout);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = compute_t<S>;
    if constexpr (std::is_same_v<S, bool_t>) {
      throw DTypeError("add_at on bool tensors is not defined");
    } else {
      k.run = [=](const Workspace& ws) {
        const std::byte* idx = buffer_ptr<const std::byte>(ws, index.buffer);
        check_indices(idx, index.layout, index_dtype, checked, "add_at's indices (operand 2)");
        S* a = buffer_ptr<S>(ws, acc.buffer) + acc.layout.offset;
        const S* u = buffer_ptr<const S>(ws, updates.buffer) + updates.layout.offset;
        const std::int64_t i_base = index.layout.offset;
        if (serial == 0 || pnest.numel() == 0) return;
        const std::int64_t prow = pnest.row_length(), prows = pnest.rows();
        const std::int64_t as = pnest.row_stride(0), is = pnest.row_stride(1), us = pnest.row_stride(2);
        // One thread's share: rows [begin, end) of the parallel nest, over every serial position.
        auto run = [&](std::int64_t begin, std::int64_t end) {
          Odometer<3> sodo(sshape, sstr, sshape.size());
          for (std::int64_t sp = 0; sp < serial; ++sp, sodo.next()) {
            const auto& so = sodo.offsets();  // the serial position's offsets (acc's is 0)
            Odometer<3> podo(pnest.shape, pnest.strides, pnest.shape.size() - 1);
            podo.seek(begin);
            for (std::int64_t r = begin; r < end; ++r, podo.next()) {
              const auto& po = podo.offsets();
              S* ar = a + po[0];
              const S* ur = u + so[2] + po[2];
              const std::int64_t ir = i_base + so[1] + po[1];
              if (is == 0) {
                const std::int64_t i = read_index(idx, ir, index_dtype) - part.first;
                if (i < 0 || i >= length) continue;  // another device's row
                S* row = ar + i * stride;
                if constexpr (std::is_same_v<S, C> && std::is_floating_point_v<C>) {
                  if (as == 1 && us == 1) {
#pragma omp simd
                    for (std::int64_t k = 0; k < prow; ++k) row[k] += ur[k];
                    continue;
                  }
                }
                for (std::int64_t k = 0; k < prow; ++k)
                  row[k * as] = Element<S>::store(static_cast<C>(
                      static_cast<accumulate_t<C>>(Element<S>::load(row[k * as])) +
                      static_cast<accumulate_t<C>>(Element<S>::load(ur[k * us]))));
              } else {
                for (std::int64_t k = 0; k < prow; ++k) {
                  const std::int64_t i = read_index(idx, ir + k * is, index_dtype) - part.first;
                  if (i < 0 || i >= length) continue;  // another device's row
                  S* e = ar + k * as + i * stride;
                  *e = Element<S>::store(static_cast<C>(static_cast<accumulate_t<C>>(Element<S>::load(*e)) +
                                                        static_cast<accumulate_t<C>>(Element<S>::load(ur[k * us]))));
                }
              }
            }
          }
        };
        if (num_threads() <= 1 || prows <= 1 || pnest.numel() * serial < parallel_threshold) {
          run(0, prows);
          return;
        }
        // Ranges of the table's rows, each taken by whichever of einexpr's threads is free
        // (parallel.hpp): no two pieces add into one element.
        const std::int64_t per_row = std::max<std::int64_t>(1, pnest.numel() / prows * serial);
        const std::int64_t grain = std::max<std::int64_t>(1, parallel_threshold / 4 / per_row);
        parallel_for(prows, pieces_for(prows, grain), [&](std::int64_t, std::int64_t b, std::int64_t e) { run(b, e); });
      };
    }
  });
  return k;
}

namespace {

/// The geometry of a cross-entropy: the rows (every dim but the classes') of the logits, the
/// targets and the per-row tensor (loss or dY), and the classes' dim of the logits (and of
/// dlogits).
struct XentRows {
  Nest<5> rows;                 // views: logits, targets, per-row (loss or dY), dlogits, the loss (backward)
  std::int64_t classes = 0;
  std::int64_t x_stride = 0;    // the logits' stride along the classes
  std::int64_t dx_stride = 0;   // dlogits'
};

XentRows xent_rows(const CrossEntropyStep& step, const Layout& logits, const Layout& targets, const Layout& per_row,
                   const Layout* dlogits, const Layout* loss) {
  XentRows g;
  Shape shape;
  std::array<Strides, 5> strides{};
  std::size_t r = 0;
  for (std::size_t d = 0; d < logits.shape.size(); ++d) {
    if (static_cast<int>(d) == step.axis) {
      g.classes = logits.shape[d];
      g.x_stride = logits.strides[d];
      g.dx_stride = dlogits ? dlogits->strides[d] : 0;
      continue;
    }
    shape.push_back(logits.shape[d]);
    strides[0].push_back(logits.strides[d]);
    strides[1].push_back(targets.strides[r]);
    strides[2].push_back(per_row.strides[r]);
    strides[3].push_back(dlogits ? dlogits->strides[d] : 0);
    strides[4].push_back(loss ? loss->strides[r] : 0);
    ++r;
  }
  // Unit rows: a Nest needs at least one dim; make() adds one of length 1 when none is left.
  g.rows = Nest<5>::make(shape, strides);
  return g;
}

template <class C>
const vec::RowKernels<C>& row_kernels() {
  const vec::Table& t = vec::best_table();
  if constexpr (std::is_same_v<C, float>) return t.rows_f32;
  else return t.rows_f64;
}

/// A row of logits (n classes from xr, `g.x_stride` apart) as contiguous C: in place where it
/// already is, else loaded into `row` (n elements).
template <class S, class C>
const C* logits_row(const S* xr, const XentRows& g, std::vector<C>& row) {
  if (std::is_same_v<S, C> && g.x_stride == 1) return reinterpret_cast<const C*>(xr);
  for (std::int64_t c = 0; c < g.classes; ++c) row[static_cast<std::size_t>(c)] = Element<S>::load(xr[c * g.x_stride]);
  return row.data();
}

/// run(begin, end) over the rows of a cross-entropy of n classes: on einexpr's threads where
/// there is enough work.
template <class F>
void over_rows(std::int64_t rows, std::int64_t n, const F& run) {
  if (num_threads() <= 1 || rows <= 1 || rows * n < parallel_threshold) {
    run(0, rows);
    return;
  }
  const std::int64_t grain = std::max<std::int64_t>(1, parallel_threshold / 4 / std::max<std::int64_t>(n, 1));
  parallel_for(rows, pieces_for(rows, grain), [&](std::int64_t, std::int64_t b, std::int64_t e) { run(b, e); });
}

/// A cross_entropy on one device's part of the classes (AxisPart): each row's statistics are
/// completed over the devices by Workspace::collectives, in the order the mesh's cost lists
/// them. Forward: each row's log-sum-exp over the part (its max M over the devices, a max;
/// then the row's target logit, held by one device, and the sum of exp(part's − M), sums):
/// loss = M + log(sum) − target logit. Backward: the row's log-sum-exp again, from the loss
/// and the target logit (a sum) where the loss holds it (f32, f64), else as forward; then
/// dlogits = dY·(exp(x − lse) − one-hot) on the part. Rows are done in parallel between the
/// collectives; the targets are checked against the whole axis.
template <class S, class C>
void part_cross_entropy(const Workspace& ws, const CrossEntropyStep& step, const XentRows& g, const Operand& logits,
                        const Operand& targets, const std::vector<Operand>& srcs, const Operand& dst, DType index_dtype,
                        const Operand* loss) {
  const AxisPart part = step.part;
  const bool backward = step.backward;
  const std::int64_t ignore = step.ignore_index, n = g.classes, rows = g.rows.numel();
  const std::byte* tbase = buffer_ptr<const std::byte>(ws, targets.buffer);
  check_indices(tbase, targets.layout, index_dtype, part.total, "cross_entropy's targets (operand 2)", ignore);
  if (ws.collectives == nullptr)
    throw InternalError("a cross_entropy on a part of its classes without a mesh's collectives", __FILE__, __LINE__);
  const S* x = buffer_ptr<const S>(ws, logits.buffer) + logits.layout.offset;
  S* out = buffer_ptr<S>(ws, dst.buffer) + dst.layout.offset;
  const S* dy = backward ? buffer_ptr<const S>(ws, srcs[0].buffer) + srcs[0].layout.offset : nullptr;
  const S* lossp = loss != nullptr && std::is_same_v<S, C> ? buffer_ptr<const S>(ws, loss->buffer) + loss->layout.offset : nullptr;
  const DType stats = std::is_same_v<C, double> ? DType::f64 : DType::f32;
  const vec::RowKernels<C>& rk = row_kernels<C>();
  const std::int64_t t0 = targets.layout.offset;
  // runs f(r, offsets, this row's logits (as C, contiguous)) over every row, in parallel
  auto each_row = [&](auto&& f) {
    over_rows(rows, n, [&](std::int64_t begin, std::int64_t end) {
      std::vector<C> row(static_cast<std::size_t>(n));
      Odometer<5> odo(g.rows.shape, g.rows.strides, g.rows.shape.size());
      odo.seek(begin);
      for (std::int64_t r = begin; r < end; ++r, odo.next()) {
        const auto& o = odo.offsets();
        f(r, o, logits_row<S, C>(x + o[0], g, row));
      }
    });
  };
  auto target_of = [&](const auto& o) { return read_index(tbase, t0 + o[1], index_dtype); };
  const auto urows = static_cast<std::size_t>(rows);
  std::vector<C> lse(urows, C(0)), target(urows, C(0));
  // each row's log-sum-exp over the devices: the parts' max, then the sum of exp(part's − max)
  auto whole_lse = [&](std::vector<C>& part_lse) {
    std::vector<C> m = part_lse;
    ws.collectives->all_reduce(part.tag, m.data(), rows, stats, true);
    for (std::size_t r = 0; r < urows; ++r)
      part_lse[r] = std::isinf(m[r]) && m[r] < 0 ? C(0) : std::exp(part_lse[r] - m[r]);
    return m;
  };
  const bool need_lse = !backward || lossp == nullptr;
  const bool far = n * rows * static_cast<std::int64_t>(sizeof(S)) >= stream_bytes;  // the logits from memory
  each_row([&](std::int64_t r, const auto& o, const C* xc) {
    const std::int64_t t = target_of(o);
    const auto ur = static_cast<std::size_t>(r);
    if (need_lse) lse[ur] = rk.logsumexp(xc, n, far);
    if (t != ignore && t - part.first >= 0 && t - part.first < n) target[ur] = xc[t - part.first];
  });
  if (!backward) {
    const std::vector<C> m = whole_lse(lse);  // lse now holds exp(part's − max)
    ws.collectives->all_reduce(part.tag, target.data(), rows, stats, false);
    ws.collectives->all_reduce(part.tag, lse.data(), rows, stats, false);
    each_row([&](std::int64_t r, const auto& o, const C*) {
      const auto ur = static_cast<std::size_t>(r);
      out[o[2]] = Element<S>::store(target_of(o) == ignore ? C(0) : m[ur] + std::log(lse[ur]) - target[ur]);
    });
    return;
  }
  if (lossp != nullptr) {
    ws.collectives->all_reduce(part.tag, target.data(), rows, stats, false);
  } else {
    const std::vector<C> m = whole_lse(lse);
    ws.collectives->all_reduce(part.tag, lse.data(), rows, stats, false);
    for (std::size_t r = 0; r < urows; ++r) lse[r] = m[r] + std::log(lse[r]);
  }
  each_row([&](std::int64_t r, const auto& o, const C* xc) {
    const auto ur = static_cast<std::size_t>(r);
    const std::int64_t t = target_of(o);
    S* dxr = out + o[3];
    if (t == ignore) {
      for (std::int64_t c = 0; c < n; ++c) dxr[c * g.dx_stride] = Element<S>::store(C(0));
      return;
    }
    const C scale = Element<S>::load(dy[o[2]]);
    const C row_lse = lossp != nullptr ? Element<S>::load(lossp[o[4]]) + target[ur] : lse[ur];
    if (std::is_same_v<S, C> && g.dx_stride == 1) {
      C* gr = reinterpret_cast<C*>(dxr);
      rk.scaled_exp(xc, gr, n, row_lse, scale, false);
      if (t - part.first >= 0 && t - part.first < n) gr[t - part.first] -= scale;
      return;
    }
    for (std::int64_t c = 0; c < n; ++c) {
      C v = scale * std::exp(xc[c] - row_lse);
      if (c == t - part.first) v -= scale;
      dxr[c * g.dx_stride] = Element<S>::store(v);
    }
  });
}

}  // namespace

Kernel cross_entropy_kernel(const CrossEntropyStep& step, const std::vector<Operand>& srcs, const Operand& dst,
                            DType dtype, DType index_dtype) {
  const bool backward = step.backward;
  const Operand logits = srcs[backward ? 1 : 0], targets = srcs[backward ? 2 : 1];
  const Operand per_row = backward ? srcs[0] : dst;
  // The backward's 4th source, when the plan gives it, is the forward's loss: the row's
  // log-sum-exp is loss + x[target] again, so dlogits take one pass (one exp a logit).
  const bool has_loss = backward && srcs.size() > 3;
  const Operand loss = has_loss ? srcs[3] : dst;
  const XentRows g = xent_rows(step, logits.layout, targets.layout, per_row.layout, backward ? &dst.layout : nullptr,
                               has_loss ? &loss.layout : nullptr);
  const std::int64_t ignore = step.ignore_index;
  const AxisPart part = step.part;
  Kernel k;
  k.name = std::string(backward ? "d." : "") + "cross_entropy " + std::string(name(dtype)) + " " +
           layout_str(logits.layout) + " along dim " + std::to_string(step.axis) +
           (part.split() ? " (classes " + std::to_string(part.first) + "+ of " + std::to_string(part.total) + ")" : "");
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = compute_t<S>;
    if constexpr (!std::is_floating_point_v<C>) {
      throw DTypeError("cross_entropy needs floating logits, not " + std::string(name(dtype)));
    } else {
      k.run = [=](const Workspace& ws) {
        const std::byte* tbase = buffer_ptr<const std::byte>(ws, targets.buffer);
        if (part.split()) {
          part_cross_entropy<S, C>(ws, step, g, logits, targets, srcs, dst, index_dtype, has_loss ? &loss : nullptr);
          return;
        }
        check_indices(tbase, targets.layout, index_dtype, g.classes, "cross_entropy's targets (operand 2)", ignore);
        const S* x = buffer_ptr<const S>(ws, logits.buffer) + logits.layout.offset;
        const std::int64_t t0 = targets.layout.offset;
        S* out = buffer_ptr<S>(ws, dst.buffer) + dst.layout.offset;
        const S* dy = backward ? buffer_ptr<const S>(ws, srcs[0].buffer) + srcs[0].layout.offset : nullptr;
        // A reduced-float loss holds too few bits to give the log-sum-exp back: recomputed.
        const S* lossp = has_loss && std::is_same_v<S, C> ? buffer_ptr<const S>(ws, loss.buffer) + loss.layout.offset
                                                          : nullptr;
        const std::int64_t n = g.classes, rows = g.rows.numel();
        const vec::RowKernels<C>& rk = row_kernels<C>();
        const bool in_place = std::is_same_v<S, C> && g.x_stride == 1;
        const bool out_direct = std::is_same_v<S, C> && g.dx_stride == 1;
        // dlogits larger than the caches are written with streaming stores (fenced per row,
        // before the target's element is corrected with an ordinary store).
        const bool far = n * rows * static_cast<std::int64_t>(sizeof(S)) >= stream_bytes;  // the logits from memory
        const bool stream = backward && out_direct && far;
        auto run = [&](std::int64_t begin, std::int64_t end) {
          std::vector<C> row(in_place ? 0 : static_cast<std::size_t>(n));
          std::vector<C> grad(backward && !out_direct ? static_cast<std::size_t>(n) : 0);
          std::vector<C> scratch(backward ? static_cast<std::size_t>(n) : 0);
          Odometer<5> odo(g.rows.shape, g.rows.strides, g.rows.shape.size());
          odo.seek(begin);
          for (std::int64_t r = begin; r < end; ++r, odo.next()) {
            const auto& o = odo.offsets();
            const C* xc = logits_row<S, C>(x + o[0], g, row);
            const std::int64_t t = read_index(tbase, t0 + o[1], index_dtype);
            const bool ignored = t == ignore;
            if (!backward) {
              C loss = 0;
              if (!ignored) loss = rk.logsumexp(xc, n, far) - xc[t];
              out[o[2]] = Element<S>::store(loss);
              continue;
            }
            S* dxr = out + o[3];
            const C scale = ignored ? C(0) : Element<S>::load(dy[o[2]]);
            C* gr = out_direct ? reinterpret_cast<C*>(dxr) : grad.data();
            // lse from the loss where it is finite (a row of -inf logits, or an infinite
            // loss, takes the two-pass softmax)
            const C lse = lossp && !ignored ? Element<S>::load(lossp[o[4]]) + xc[t] : C(0);
            if (ignored) {
              std::fill(gr, gr + n, C(0));
            } else if (lossp && std::isfinite(lse)) {
              rk.scaled_exp(xc, gr, n, lse, scale, stream && gr == reinterpret_cast<C*>(dxr));
              if (stream) rk.fence();
              gr[t] -= scale;
            } else {
              rk.scaled_softmax(xc, gr, n, scale, stream && gr == reinterpret_cast<C*>(dxr), scratch.data());
              if (stream) rk.fence();
              gr[t] -= scale;
            }
            if (!out_direct)
              for (std::int64_t c = 0; c < n; ++c) dxr[c * g.dx_stride] = Element<S>::store(gr[static_cast<std::size_t>(c)]);
          }
        };
        over_rows(rows, n, run);
      };
    }
  });
  return k;
}

}  // namespace einexpr::cpu
