// copy_permute (copy_permute.hpp): permutations as panels of register-transposed blocks.
//
// A copy whose dst and src are each contiguous along different dims is cut three ways:
//   P      the dst's innermost dims, contiguous in dst: a dst line (block_p elements) is
//          block_p consecutive positions of P, wherever they fall in the src (src_off[p]);
//   Q      the src's innermost dims, contiguous in src: block_q consecutive positions of Q
//          are one vector load, wherever they land in dst (dst_off[q]);
//   outer  the rest, walked in dst order.
// One panel is one dst line of P across a chunk of Q: block_p src runs read front to back (at
// most 4 KiB each, the length the prefetchers follow) and whole dst lines written, streamed
// where the output is large. P takes more dims than the dst's unit-stride one only while a P
// row is shorter than a line or not a whole number of lines, so that dst lines stay aligned;
// Q takes every src-contiguous dim P did not, so src runs are as long as the layout allows.
// Short dims thus never shrink the blocks: a block may span several rows of either side.
#include "copy_permute.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>
#include <vector>

#include "copy_simd.hpp"
#include "einexpr/runtime/threads.hpp"

namespace einexpr::detail {

namespace {

using i64 = std::int64_t;

constexpr i64 line_bytes = 64;
constexpr i64 run_bytes = 4096;            // a Q chunk: at most this much src per P row
constexpr i64 max_chunk = 1024;            // and at most this many elements (dst_off's size)
constexpr i64 item_bytes = i64{32} << 10;  // panels are grouped into items of about this much
constexpr i64 max_p_width = i64{64} << 10;  // P grows for alignment up to this many bytes
constexpr i64 max_row_bytes = 1024;         // rows contiguous on both sides shorter than this are
                                            // moved as units by the panels (longer ones by rows)

std::atomic<int>& forced() {  // 0: best, 1: avx512, 2: avx2, 3: scalar
  static std::atomic<int> f{0};
  return f;
}

struct PanelPlan {
  std::vector<i64> p_len, p_src;  // P dims, innermost first: lengths, src strides
  std::vector<i64> q_len, q_dst;  // Q dims, innermost first: lengths, dst strides
  std::vector<i64> o_len, o_dst, o_src;  // outer dims, outermost first
  std::vector<std::size_t> p_dims, q_dims, o_dims;  // positions in the nest, for describe
  i64 np = 1, nq = 1, outer = 1;
  i64 unit = 1;  // elements moved as one: a row contiguous on both sides, or 1
  i64 chunk = 0, chunks = 0, bp = 0, blocks = 0, group = 0, groups = 0;
  simd::PanelKernel kernel;
  i64 items() const { return outer * chunks * groups; }
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

/// P, Q and the outer dims of the nest, or false where panels do not apply. Where one dim
/// has unit stride on both sides and is shorter than max_row_bytes, its rows are the unit
/// moved and P and Q are found among the other dims (strides counted in rows).
bool plan_panels(PanelPlan& pl, const Shape& shape, const Strides& ds, const Strides& ss, std::size_t es) {
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
    if (to_p) {
      pl.p_len.push_back(shape[d]);
      pl.p_src.push_back(ss[d]);
      pl.np *= shape[d];
    } else {
      pl.q_len.push_back(shape[d]);
      pl.q_dst.push_back(ds[d]);
      pl.nq *= shape[d];
    }
  };
  const i64 unit_bytes = pl.unit * e;
  take(d1, true);
  used[s1] = true;  // Q's first dim stays out of P
  while (pl.np * unit_bytes < line_bytes || (pl.np * unit_bytes) % line_bytes != 0) {
    const std::size_t d = with_stride(ds, pl.np * pl.unit);
    if (d == rank || pl.np * unit_bytes >= max_p_width) break;
    take(d, true);
  }
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
  if (pl.unit == 1) {
    pl.kernel = choose_kernel(es);
    pl.bp = pl.kernel.run ? pl.kernel.block_p : std::max<i64>(1, line_bytes / e);
  } else {
    pl.bp = std::max<i64>(1, max_row_bytes / unit_bytes);  // a dst run of about 1 KiB
  }
  pl.chunk = std::min(pl.nq, std::max<i64>(1, std::min(max_chunk, run_bytes / unit_bytes)));
  pl.chunks = (pl.nq + pl.chunk - 1) / pl.chunk;
  pl.blocks = (pl.np + pl.bp - 1) / pl.bp;
  pl.group = std::clamp<i64>(item_bytes / (pl.bp * pl.chunk * unit_bytes), 1, pl.blocks);
  pl.groups = (pl.blocks + pl.group - 1) / pl.group;
  return true;
}

/// A panel of rows: dst[doff[q] + p * unit + r] = src[so[p] + q * unit + r], r < unit.
void row_panel(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq, i64 unit,
               i64 es, bool stream) {
  const auto bytes = static_cast<std::size_t>(unit * es);
  for (i64 q = 0; q < nq; ++q) {
    std::byte* d = dst + doff[q] * es;
    const std::byte* s = src + q * unit * es;
    for (int p = 0; p < np; ++p, d += bytes) {
      if (stream) simd::stream_copy(d, s + so[p] * es, bytes);
      else std::memcpy(d, s + so[p] * es, bytes);
    }
  }
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

void run_loop(std::size_t es, const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq) {
  switch (es) {
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

/// Items [begin, end): item = (outer index, Q chunk, group of P blocks), in that order.
void run_items(const PanelPlan& pl, std::size_t es, std::byte* dst, const std::byte* src, i64 begin, i64 end,
               bool stream) {
  if (begin >= end) return;
  const auto e = static_cast<i64>(es);
  std::vector<i64> doff(static_cast<std::size_t>(pl.chunk));
  std::vector<i64> soff(static_cast<std::size_t>(pl.bp), 0);
  i64 have = -1;  // the (outer, chunk) doff holds
  i64 o_dst = 0, o_src = 0;
  for (i64 it = begin; it < end; ++it) {
    const i64 oc = it / pl.groups, g = it % pl.groups;
    const i64 o = oc / pl.chunks, c = oc % pl.chunks;
    const i64 q0 = c * pl.chunk, nq = std::min(pl.chunk, pl.nq - q0);
    if (oc != have) {
      o_dst = o_src = 0;
      for (std::size_t d = pl.o_len.size(), rest = static_cast<std::size_t>(o); d-- > 0;) {
        const i64 i = static_cast<i64>(rest) % pl.o_len[d];
        rest /= static_cast<std::size_t>(pl.o_len[d]);
        o_dst += i * pl.o_dst[d];
        o_src += i * pl.o_src[d];
      }
      Odometer q(pl.q_len, pl.q_dst, q0);
      for (i64 k = 0; k < nq; ++k, q.next()) doff[static_cast<std::size_t>(k)] = q.offset;
      have = oc;
    }
    const i64 b0 = g * pl.group, b1 = std::min(pl.blocks, b0 + pl.group);
    Odometer p(pl.p_len, pl.p_src, b0 * pl.bp);
    for (i64 b = b0; b < b1; ++b) {
      const i64 p0 = b * pl.bp;
      const int np = static_cast<int>(std::min(pl.bp, pl.np - p0));
      for (int k = 0; k < np; ++k, p.next()) soff[static_cast<std::size_t>(k)] = p.offset;
      const std::byte* s = src + (o_src + q0 * pl.unit) * e;
      std::byte* d = dst + (o_dst + p0 * pl.unit) * e;
      if (pl.unit > 1) row_panel(s, soff.data(), np, d, doff.data(), nq, pl.unit, e, stream);
      else if (pl.kernel.run) pl.kernel.run(s, soff.data(), np, d, doff.data(), nq, stream);
      else run_loop(es, s, soff.data(), np, d, doff.data(), nq);
    }
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
  PanelPlan pl;
  if (!plan_panels(pl, shape, dst_strides, src_strides, element_size)) return false;
  const i64 items = pl.items();
  const int threads = parallel ? static_cast<int>(std::min<i64>(num_threads(), items)) : 1;
  if (threads <= 1) {
    run_items(pl, element_size, dst, src, 0, items, stream);
    return true;
  }
#pragma omp parallel num_threads(threads)
  {
    const i64 t = omp_get_thread_num(), nt = omp_get_num_threads();
    run_items(pl, element_size, dst, src, items * t / nt, items * (t + 1) / nt, stream);
  }
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
  PanelPlan pl;
  if (!plan_panels(pl, shape, dst_strides, src_strides, element_size)) return "";
  std::ostringstream os;
  os << "P " << dims_str(pl.p_dims, shape) << " Q " << dims_str(pl.q_dims, shape) << " outer "
     << dims_str(pl.o_dims, shape) << " panel " << pl.bp << "x" << pl.chunk << " ("
     << (pl.unit > 1 ? "rows of " + std::to_string(pl.unit) : pl.kernel.run ? pl.kernel.isa : "scalar") << ")";
  return os.str();
}

}  // namespace einexpr::detail
