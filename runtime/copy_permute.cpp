// copy_permute (copy_permute.hpp): permutations as slabs of register-transposed blocks.
//
// A copy whose dst and src are each contiguous along different dims is cut three ways:
//   P      the dst's innermost dims, contiguous in dst: a dst line (block_p elements) is
//          block_p consecutive positions of P, wherever they fall in the src (src_off[p]);
//   Q      the src's innermost dims, contiguous in src: block_q consecutive positions of Q
//          are one vector load, wherever they land in dst (dst_off[q]);
//   outer  the rest, walked in dst order.
// P takes the dst's unit-stride dim and more until a P row is a whole number of lines (so
// dst lines stay aligned and stream); Q's first 16 KiB of src dims are then kept for Q; P
// grows to 1 KiB with what is left, and Q takes every src-contiguous dim P did not. Short
// dims thus never shrink the blocks: a block may span several rows of either side. Where
// one dim is contiguous on both sides (a permutation that keeps the last dim), its rows,
// up to 64 KiB, are the unit moved, and P and Q are found among the other dims.
//
// The work is walked in slabs: a run of P rows across a chunk of Q (at most 16 KiB of src a
// row, 4 KiB where Q's dst lines alias: plan_slabs), about 128 KiB of src or one block of P
// rows, which stays in L2. A slab goes Q block by Q block, every P block of the slab at each:
// its dst rows are written front to back in runs as long as the slab is wide, with whole,
// streamed lines. While one slab is transposed, the next one's src is prefetched into L2 row
// by row in address order, so memory sees long runs on both sides and the transposes read
// from L2. (Measured in bench/RESULTS.md: without the prefetch, sixteen 4 KiB src runs read
// at once and single lines written per dst row cost ~30% against a streaming copy on the Zen
// 4 this was built on, with no shuffle at all.) Where what a block writes is one run of dst
// that does not start and end on lines (rows, or P rows, that are not whole lines), the block
// is gathered in an L1 buffer and the run streamed: a partial line written in place is a
// plain store that misses and holds back the streamed stores behind it.
#include "copy_permute.hpp"


#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>
#include <sstream>
#include <vector>

#include "copy_simd.hpp"
#include "einexpr/runtime/parallel.hpp"
#include "einexpr/runtime/threads.hpp"

namespace einexpr::detail {

namespace {

using i64 = std::int64_t;

constexpr i64 line_bytes = 64;
constexpr i64 run_bytes = 16384;             // a Q chunk: at most this much src per P row
constexpr i64 max_chunk = 4096;              // and at most this many elements (dst_off's size);
constexpr i64 aliased_run_bytes = 4096;      // these where Q's dst lines alias (plan_slabs)
constexpr i64 aliased_max_chunk = 1024;
constexpr i64 alias_bytes = 512;             // Q's dst stride a multiple of this: aliased
constexpr i64 slab_bytes = i64{128} << 10;   // src a slab reads (and the next one prefetched)
constexpr i64 p_row_bytes = 1024;            // P grows to a row this long, in whole lines,
constexpr i64 max_p_width = i64{64} << 10;   // but no longer than this
constexpr i64 stage_bytes = i64{8} << 10;     // at most this much of a block gathered in L1
constexpr i64 max_row_bytes = i64{64} << 10;  // rows contiguous on both sides shorter than this
                                              // are the unit moved (longer ones go by rows)

std::atomic<int>& forced() {  // 0: best, 1: avx512, 2: avx2, 3: scalar
  static std::atomic<int> f{0};
  return f;
}

struct SlabPlan {
  std::vector<i64> p_len, p_src;         // P dims, innermost first: lengths, src strides
  std::vector<i64> q_len, q_dst;         // Q dims, innermost first: lengths, dst strides
  std::vector<i64> o_len, o_dst, o_src;  // outer dims, outermost first
  std::vector<std::size_t> p_dims, q_dims, o_dims;  // positions in the nest, for describe
  i64 np = 1, nq = 1, outer = 1;
  i64 unit = 1;  // elements moved as one: a row contiguous on both sides, or 1
  bool stage = false;  // rows, or P rows of panels, not whole lines: gathered in L1, then streamed
  simd::PanelKernel kernel;
  i64 bp = 0, bq = 0;             // P and Q per block
  i64 chunk = 0, chunks = 0;      // Q per chunk
  i64 slab = 0, slabs = 0;        // P rows per slab (a multiple of bp)
  i64 items() const { return outer * chunks * slabs; }
};

simd::PanelKernel choose_kernel(std::size_t es) {
  const int f = forced().load(std::memory_order_relaxed);
  if (f == 3) return {};
  simd::PanelKernel k[2];
  const int n = simd::panel_kernels(es, k);
  for (int i = 0; i < n; ++i)
    if (f == 0 || (f == 1 && std::strcmp(k[i].isa, "avx512") == 0) || (f == 2 && std::strcmp(k[i].isa, "avx2") == 0))
      return k[i];
  return {};
}

/// P, Q and the outer dims of the nest, or false where slabs do not apply. Where one dim has
/// unit stride on both sides and is shorter than max_row_bytes, its rows are the unit moved
/// and P and Q are found among the other dims (strides counted in rows).
bool plan_slabs(SlabPlan& pl, const Shape& shape, const Strides& ds, const Strides& ss, std::size_t es) {
  const std::size_t rank = shape.size();
  const auto e = static_cast<i64>(es);
  std::vector<bool> used(rank, false);
  auto with_stride = [&](const Strides& st, i64 stride) {
    for (std::size_t d = 0; d < rank; ++d)
      if (!used[d] && st[d] == stride) return d;
    return rank;
  };
  for (std::size_t d = 0; d < rank; ++d)
    if (ds[d] <= 0 || ss[d] < 0 || shape[d] < 2) return false;
  if (const std::size_t c = with_stride(ds, 1); c != rank && ss[c] == 1) {
    if (shape[c] * e >= max_row_bytes) return false;
    pl.unit = shape[c];
    used[c] = true;
  }
  const std::size_t d1 = with_stride(ds, pl.unit), s1 = with_stride(ss, pl.unit);
  if (d1 == rank || s1 == rank || d1 == s1) return false;
  auto take = [&](std::size_t d, bool to_p) {
    used[d] = true;
    (to_p ? pl.p_dims : pl.q_dims).push_back(d);
    (to_p ? pl.p_len : pl.q_len).push_back(shape[d]);
    (to_p ? pl.p_src : pl.q_dst).push_back(to_p ? ss[d] : ds[d]);
    (to_p ? pl.np : pl.nq) *= shape[d];
  };
  const i64 unit_bytes = pl.unit * e;
  auto whole_lines = [&] { return pl.np * unit_bytes >= line_bytes && (pl.np * unit_bytes) % line_bytes == 0; };
  // 1. P: at least a line, in whole lines where the dst allows (Q's first dim kept out)
  used[s1] = true;
  take(d1, true);
  for (std::size_t d; !whole_lines() && pl.np * unit_bytes < max_p_width &&
                      (d = with_stride(ds, pl.np * pl.unit)) != rank;)
    take(d, true);
  // 2. Q's first run_bytes of src dims are kept from P
  std::vector<std::size_t> q_first{s1};
  for (i64 n = shape[s1]; n * unit_bytes < run_bytes;) {
    const std::size_t d = with_stride(ss, n * pl.unit);
    if (d == rank) break;
    q_first.push_back(d);
    used[d] = true;
    n *= shape[d];
  }
  // 3. P grows to p_row_bytes with what is left (whole lines stay whole)
  for (std::size_t d; whole_lines() && pl.np * unit_bytes < p_row_bytes &&
                      (d = with_stride(ds, pl.np * pl.unit)) != rank;)
    take(d, true);
  // 4. Q: every src-contiguous dim P did not take
  for (std::size_t d : q_first) used[d] = false;
  take(s1, false);
  for (std::size_t d; (d = with_stride(ss, pl.nq * pl.unit)) != rank;) take(d, false);
  for (std::size_t d = 0; d < rank; ++d)
    if (!used[d]) pl.o_dims.push_back(d);
  std::stable_sort(pl.o_dims.begin(), pl.o_dims.end(), [&](std::size_t a, std::size_t b) { return ds[a] > ds[b]; });
  for (std::size_t d : pl.o_dims) {
    pl.o_len.push_back(shape[d]);
    pl.o_dst.push_back(ds[d]);
    pl.o_src.push_back(ss[d]);
    pl.outer *= shape[d];
  }
  if (pl.unit == 1) pl.kernel = choose_kernel(es);
  if (pl.kernel.run) {
    pl.bp = pl.kernel.block_p;
    pl.bq = pl.kernel.block_q;
  } else if (pl.unit == 1) {  // the element loop
    pl.bp = std::max<i64>(1, line_bytes / e);
    pl.bq = 16;
  } else {  // rows: a dst run of about p_row_bytes per Q position
    pl.bp = std::max<i64>(1, p_row_bytes / unit_bytes);
    pl.bq = 1;
    // Rows that are not a whole number of lines: copied one by one, each row's partial end
    // lines took plain stores that missed, and a store that misses holds back the streamed
    // ones behind it: 736-byte rows ran at 0.2-0.35 of 768-byte ones (bench/RESULTS.md). So a
    // block takes rows enough to end on a line (`whole` of them make whole lines), gathers
    // them in L1 and streams the run: plain stores only where the run's ends are not aligned.
    const i64 whole = line_bytes / std::gcd(unit_bytes, line_bytes);
    if (whole > 1 && whole * unit_bytes <= stage_bytes) {
      pl.bp = std::min((pl.bp + whole - 1) / whole * whole, stage_bytes / unit_bytes / whole * whole);
      pl.stage = true;
    }
  }
  // Q chunks of at most run_bytes a row, as even as whole blocks allow. Where one element's
  // step along Q moves the dst by a multiple of alias_bytes, the single lines a slab writes
  // per Q position fall on few of the memory's banks: there a long chunk (thousands of such
  // lines a slab) ran at 0.53-0.72 of a streaming copy on Zen 5 where 4 KiB chunks ran at
  // 0.74-0.93, while everywhere else 16 KiB chunks gained up to 0.3 (bench/RESULTS.md).
  const bool aliased = pl.unit == 1 && pl.q_dst[0] * e % alias_bytes == 0;
  i64 most = std::max<i64>(1, aliased ? std::min(aliased_max_chunk, aliased_run_bytes / unit_bytes)
                                      : std::min(max_chunk, run_bytes / unit_bytes));
  // P rows that are not a whole number of lines, with Q's first dim next to them in dst: a
  // block's Q positions are one contiguous run of P rows, and the panel's line stores fall
  // across lines, go out as plain stores and stall as unaligned rows do (bf16 P rows of 96
  // bytes ran at 0.38 of a streaming copy where f32's 192 ran at 0.82). There a block's
  // panels write into an L1 buffer laid out as the dst and the run is streamed; a slab then
  // holds every P row (its chunk cut to keep it near 256 KiB).
  const bool stage_panels = pl.unit == 1 && pl.kernel.run && pl.np * e % line_bytes != 0 && pl.q_dst[0] == pl.np &&
                            pl.bq * pl.np * e <= stage_bytes;
  if (stage_panels) most = std::max<i64>(pl.bq, std::min(most, 2 * slab_bytes / (pl.np * e)));
  pl.chunks = (pl.nq + most - 1) / most;
  pl.chunk = std::min(pl.nq, ((pl.nq + pl.chunks - 1) / pl.chunks + pl.bq - 1) / pl.bq * pl.bq);
  pl.chunks = (pl.nq + pl.chunk - 1) / pl.chunk;
  const i64 blocks = (pl.np + pl.bp - 1) / pl.bp;
  pl.slab = std::clamp<i64>(slab_bytes / (pl.chunk * unit_bytes) / pl.bp, 1, blocks) * pl.bp;
  if (stage_panels) {
    pl.stage = true;
    pl.slab = blocks * pl.bp;
  }
  pl.slabs = (pl.np + pl.slab - 1) / pl.slab;
  return true;
}

/// The element loop standing in for a panel kernel.
template <class T>
void panel_loop(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq) {
  const auto* s = reinterpret_cast<const T*>(src);
  auto* d = reinterpret_cast<T*>(dst);
  for (i64 q = 0; q < nq; ++q)
    for (int p = 0; p < np; ++p) d[doff[q] + p] = s[so[p] + q];
}

struct Bytes16 {
  unsigned char b[16];
};

/// A line-aligned buffer a block is gathered in (plan_slabs' staging): the block's run of
/// dst starts `line_offset(at)` bytes into it, so the streamed copy's stores meet aligned loads.
struct Stage {
  alignas(64) std::byte buf[stage_bytes + line_bytes];
  static std::size_t line_offset(const std::byte* at) {
    return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(at) % line_bytes);
  }
};

/// One block (np P rows, nq Q positions): the kernel, the rows' copies or the element loop.
/// Staged rows are gathered in `stage` (run_slabs' one buffer).
void run_block(const SlabPlan& pl, i64 e, const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff,
               i64 nq, bool stream, Stage& stage) {
  if (pl.kernel.run) return pl.kernel.run(src, so, np, dst, doff, nq, stream);
  if (pl.unit > 1) {  // dst[doff[q] + p * unit + r] = src[so[p] + q * unit + r], r < unit
    const auto bytes = static_cast<std::size_t>(pl.unit * e);
    if (stream && pl.stage) {  // the block's rows, contiguous in dst, gathered line-aligned
      for (i64 q = 0; q < nq; ++q) {
        std::byte* d = dst + doff[q] * e;
        std::byte* buf = stage.buf;
        const std::size_t off = Stage::line_offset(d);
        const std::byte* s = src + q * pl.unit * e;
        for (int p = 0; p < np; ++p) std::memcpy(buf + off + static_cast<std::size_t>(p) * bytes, s + so[p] * e, bytes);
        simd::stream_copy(d, buf + off, static_cast<std::size_t>(np) * bytes);
      }
      return;
    }
    for (i64 q = 0; q < nq; ++q) {
      std::byte* d = dst + doff[q] * e;
      const std::byte* s = src + q * pl.unit * e;
      for (int p = 0; p < np; ++p, d += bytes) {
        if (stream) simd::stream_copy(d, s + so[p] * e, bytes);
        else std::memcpy(d, s + so[p] * e, bytes);
      }
    }
    return;
  }
  switch (e) {
    case 1: return panel_loop<std::uint8_t>(src, so, np, dst, doff, nq);
    case 2: return panel_loop<std::uint16_t>(src, so, np, dst, doff, nq);
    case 4: return panel_loop<std::uint32_t>(src, so, np, dst, doff, nq);
    case 8: return panel_loop<std::uint64_t>(src, so, np, dst, doff, nq);
    default: return panel_loop<Bytes16>(src, so, np, dst, doff, nq);
  }
}

/// Offsets along a flattened run of dims (innermost first), stepped one position at a time.
class Odometer {
 public:
  Odometer(const std::vector<i64>& len, const std::vector<i64>& stride, i64 start)
      : len_(len), stride_(stride), idx_(len.size(), 0) {
    for (std::size_t d = 0; d < len.size(); ++d) {
      idx_[d] = start % len[d];
      start /= len[d];
      offset += idx_[d] * stride[d];
    }
  }
  void next() {
    for (std::size_t d = 0; d < len_.size(); ++d) {
      offset += stride_[d];
      if (++idx_[d] < len_[d]) return;
      offset -= stride_[d] * len_[d];
      idx_[d] = 0;
    }
  }
  i64 offset = 0;

 private:
  const std::vector<i64>& len_;
  const std::vector<i64>& stride_;
  std::vector<i64> idx_;
};

/// Where slab `item` (outer index, Q chunk, P rows) reads and writes.
struct Slab {
  std::vector<i64> src_off;  // its P rows' src offsets
  i64 o_src = 0, o_dst = 0;  // the outer index's offsets
  i64 oc = 0, q0 = 0, nq = 0, p0 = 0, rows = 0;
};

void locate(const SlabPlan& pl, i64 item, Slab& s) {
  s.oc = item / pl.slabs;
  const i64 o = s.oc / pl.chunks;
  s.q0 = s.oc % pl.chunks * pl.chunk;
  s.nq = std::min(pl.chunk, pl.nq - s.q0);
  s.p0 = item % pl.slabs * pl.slab;
  s.rows = std::min(pl.slab, pl.np - s.p0);
  s.o_dst = s.o_src = 0;
  i64 rest = o;
  for (std::size_t d = pl.o_len.size(); d-- > 0;) {
    const i64 i = rest % pl.o_len[d];
    rest /= pl.o_len[d];
    s.o_dst += i * pl.o_dst[d];
    s.o_src += i * pl.o_src[d];
  }
  s.src_off.resize(static_cast<std::size_t>(pl.slab));
  Odometer p(pl.p_len, pl.p_src, s.p0);
  for (i64 k = 0; k < s.rows; ++k, p.next()) s.src_off[static_cast<std::size_t>(k)] = p.offset;
}

/// Slabs [begin, end) in order, the next one's src prefetched while one is transposed.
void run_slabs(const SlabPlan& pl, std::size_t es, std::byte* dst, const std::byte* src, i64 begin, i64 end,
               bool stream) {
  if (begin >= end) return;
  const auto e = static_cast<i64>(es);
  const i64 ue = pl.unit * e;  // bytes per P row per Q position
  std::vector<i64> dst_off(static_cast<std::size_t>(pl.chunk));
  i64 have = -1;  // the (outer, chunk) dst_off holds
  const bool staged = stream && pl.stage && pl.unit == 1;  // staged panels (rows: run_block)
  Stage stage;
  std::vector<i64> staged_off(staged ? static_cast<std::size_t>(pl.bq) : 0);
  for (std::size_t k = 0; k < staged_off.size(); ++k) staged_off[k] = static_cast<i64>(k) * pl.np;
  Slab cur, next;
  locate(pl, begin, cur);
  for (i64 it = begin; it < end; ++it) {
    if (cur.oc != have) {
      Odometer q(pl.q_len, pl.q_dst, cur.q0);
      for (i64 k = 0; k < cur.nq; ++k, q.next()) dst_off[static_cast<std::size_t>(k)] = q.offset;
      have = cur.oc;
    }
    const bool ahead = it + 1 < end;
    if (ahead) locate(pl, it + 1, next);
    // the next slab's src lines, row by row in address order, spread over this slab's blocks
    const i64 blocks = (cur.nq + pl.bq - 1) / pl.bq * ((cur.rows + pl.bp - 1) / pl.bp);
    const i64 run = ahead ? next.nq * ue : 0;
    const i64 per_block = ahead ? (next.rows * (run / line_bytes + 2) + blocks - 1) / blocks : 0;
    // (The walk in plain locals and prefetcht0: the median of HPTT's 57 cases 0.77 -> 0.80 of
    // a streaming copy on Zen 5 against a lambda's captures and prefetcht1; bench/RESULTS.md.)
    const std::byte* next_src = src + (next.o_src + next.q0 * pl.unit) * e;
    const i64* next_off = next.src_off.data();
    const i64 next_rows = ahead ? next.rows : 0;
    i64 pf_row = 0;
    std::uintptr_t pf_at = 0, pf_end = 0;
    auto start_row = [&](i64 r) {  // the run of next's row r, from its first line
      const auto row = reinterpret_cast<std::uintptr_t>(next_src + next_off[r] * e);
      pf_at = row / line_bytes * line_bytes;
      pf_end = row + static_cast<std::uintptr_t>(run);
    };
    if (next_rows > 0) start_row(0);
    const std::byte* s = src + (cur.o_src + cur.q0 * pl.unit) * e;
    std::byte* d = dst + (cur.o_dst + cur.p0 * pl.unit) * e;
    for (i64 q = 0; q < cur.nq; q += pl.bq) {
      const i64 nq = std::min(pl.bq, cur.nq - q);
      // staged panels (plan_slabs): where this block's Q positions are one run of P rows in
      // dst, the panels write it into `stage` and the run is streamed after them
      const i64* doff = dst_off.data() + q;
      std::byte* to = d;
      std::byte* run_at = nullptr;
      std::size_t at = 0;
      if (staged) {
        bool contiguous = true;
        for (i64 k = 1; k < nq && contiguous; ++k) contiguous = doff[k] == doff[0] + k * pl.np;
        if (contiguous) {
          run_at = d + doff[0] * e;
          at = Stage::line_offset(run_at);
          to = stage.buf + at;
          doff = staged_off.data();
        }
      }
      for (i64 b = 0; b < cur.rows; b += pl.bp) {
        run_block(pl, e, s + q * ue, cur.src_off.data() + b, static_cast<int>(std::min(pl.bp, cur.rows - b)),
                  to + b * ue, doff, nq, stream && run_at == nullptr, stage);
        for (i64 n = per_block; n > 0 && pf_row < next_rows; --n) {
          __builtin_prefetch(reinterpret_cast<const void*>(pf_at), 0, 3);
          pf_at += line_bytes;
          if (pf_at >= pf_end && ++pf_row < next_rows) start_row(pf_row);
        }
      }
      if (run_at != nullptr) simd::stream_copy(run_at, stage.buf + at, static_cast<std::size_t>(nq * pl.np * e));
    }
    std::swap(cur, next);
  }
  if (stream) simd::store_fence();
}

std::string dims_str(const std::vector<std::size_t>& dims, const Shape& shape) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < dims.size(); ++i) os << (i ? " " : "") << "d" << dims[i] << "=" << shape[dims[i]];
  os << "]";
  return os.str();
}

}  // namespace

bool copy_permute(std::byte* dst, const std::byte* src, const Shape& shape, const Strides& dst_strides,
                  const Strides& src_strides, std::size_t element_size, bool stream, bool parallel) {
  SlabPlan pl;
  if (!plan_slabs(pl, shape, dst_strides, src_strides, element_size)) return false;
  const i64 items = pl.items();
  if (!parallel || num_threads() <= 1 || items <= 1) {
    run_slabs(pl, element_size, dst, src, 0, items, stream);
    return true;
  }
  // A few ranges of slabs per thread, each taken by whichever thread is free (parallel.hpp).
  parallel_for(items, pieces_for(items, 1), [&](i64, i64 begin, i64 end) {
    run_slabs(pl, element_size, dst, src, begin, end, stream);
  });
  return true;
}

bool force_panel_isa(const std::string& isa) {
  const int code = isa.empty() ? 0 : isa == "avx512" ? 1 : isa == "avx2" ? 2 : isa == "scalar" ? 3 : -1;
  if (code < 0) return false;
  if (code == 1 || code == 2) {
    simd::PanelKernel k[2];
    const int n = simd::panel_kernels(4, k);
    if (std::none_of(k, k + n, [&](const simd::PanelKernel& x) { return isa == x.isa; })) return false;
  }
  forced().store(code);
  return true;
}

std::string describe_permute(const Shape& shape, const Strides& dst_strides, const Strides& src_strides,
                             std::size_t element_size) {
  SlabPlan pl;
  if (!plan_slabs(pl, shape, dst_strides, src_strides, element_size)) return "";
  std::ostringstream os;
  os << "P " << dims_str(pl.p_dims, shape) << " Q " << dims_str(pl.q_dims, shape) << " outer "
     << dims_str(pl.o_dims, shape) << " slab " << pl.slab << "x" << pl.chunk << " block " << pl.bp << "x" << pl.bq
     << " (" << (pl.unit > 1 ? "rows of " + std::to_string(pl.unit) : pl.kernel.run ? pl.kernel.isa : "scalar") << ")"
     << (pl.stage ? " staged" : "");
  return os.str();
}

}  // namespace einexpr::detail
