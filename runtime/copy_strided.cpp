// copy_strided: dst = src over any strides (strided.hpp). The dims are ordered by
// decreasing dst stride and collapsed; then:
//   permute    the dst and the src each have a unit stride, on different dims: panels of
//              register-transposed blocks (copy_permute.cpp)
// or the innermost dim (the dst's smallest stride) decides the loop:
//   rows       src is contiguous along it too: memcpy of row pieces
//   broadcast  src has stride 0 along it: fills
//   gather     otherwise: strided rows
// Outputs of 8 MiB and more are written with streaming stores (no read for ownership, no
// eviction of the inputs). The work is cut into pieces (row pieces, or slabs of panels in
// copy_permute.cpp), a few contiguous ranges of them per thread, each range claimed by whichever
// of einexpr's threads comes free (parallel.hpp), so each range writes one contiguous part of
// the output.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "copy_permute.hpp"
#include "copy_simd.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/parallel.hpp"
#include "einexpr/runtime/strided.hpp"
#include "einexpr/runtime/threads.hpp"

namespace einexpr {

namespace {

constexpr std::int64_t parallel_bytes = std::int64_t{1} << 20;  // smaller copies run on one thread
constexpr std::int64_t piece_bytes = std::int64_t{64} << 10;    // rows are cut into pieces this long
// Outputs from this size on are written with streaming stores (strided.hpp says why a constant).
constexpr std::int64_t stream_bytes = stream_output_bytes;

enum class Kind { rows, broadcast, gather };

/// The loop nest: collapsed dims by decreasing dst stride (the last is the innermost), and
/// the outer dims whose index a piece's position runs over (all but the inner).
struct CopyNest {
  Shape shape;
  Strides dst, src;
  Kind kind = Kind::rows;
  std::size_t inner = 0;
  Shape outer_shape;
  Strides outer_dst, outer_src;
  std::int64_t piece = 0;                  // elements per piece
  std::int64_t pieces_per_outer = 1;
  std::int64_t outer_count = 1;
  bool stream = false;
  std::int64_t items() const { return outer_count * pieces_per_outer; }
};

CopyNest order_and_collapse(const Layout& dst, const Layout& src) {
  std::vector<std::size_t> order(dst.shape.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return dst.strides[a] > dst.strides[b]; });
  Shape shape;
  Strides ds, ss;
  for (std::size_t d : order) {
    shape.push_back(dst.shape[d]);
    ds.push_back(dst.strides[d]);
    ss.push_back(src.strides[d]);
  }
  CollapsedDims c = collapse_dims(shape, {&ds, &ss});
  CopyNest n;
  n.shape = std::move(c.shape);
  n.dst = std::move(c.strides[0]);
  n.src = std::move(c.strides[1]);
  if (n.shape.empty()) n.shape = {1}, n.dst = {1}, n.src = {1};
  return n;
}

void classify(CopyNest& n, std::int64_t es) {
  const std::size_t in = n.shape.size() - 1;
  n.inner = in;
  if (n.src[in] == 1 && n.dst[in] == 1) n.kind = Kind::rows;
  else if (n.src[in] == 0) n.kind = Kind::broadcast;
  else n.kind = Kind::gather;
  for (std::size_t d = 0; d < in; ++d) {
    n.outer_shape.push_back(n.shape[d]);
    n.outer_dst.push_back(n.dst[d]);
    n.outer_src.push_back(n.src[d]);
    n.outer_count *= n.shape[d];
  }
  n.piece = std::max<std::int64_t>(1, piece_bytes / es);
  n.pieces_per_outer = (n.shape[in] + n.piece - 1) / n.piece;
}

/// Walks the outer dims in row-major order, keeping the dst and src offsets.
class Walker {
 public:
  Walker(const CopyNest& n, std::int64_t flat) : n_(n), index_(n.outer_shape.size(), 0) {
    for (std::size_t d = index_.size(); d-- > 0;) {
      index_[d] = flat % n.outer_shape[d];
      flat /= n.outer_shape[d];
      dst += index_[d] * n.outer_dst[d];
      src += index_[d] * n.outer_src[d];
    }
  }
  void next() {
    for (std::size_t d = index_.size(); d-- > 0;) {
      dst += n_.outer_dst[d];
      src += n_.outer_src[d];
      if (++index_[d] < n_.outer_shape[d]) return;
      dst -= n_.outer_dst[d] * n_.outer_shape[d];
      src -= n_.outer_src[d] * n_.outer_shape[d];
      index_[d] = 0;
    }
  }
  std::int64_t dst = 0, src = 0;

 private:
  const CopyNest& n_;
  std::vector<std::int64_t> index_;
};

/// One piece of a row: elements [first, first + count) of the inner dim.
template <class T>
void copy_piece(const CopyNest& n, T* d, const T* s, std::int64_t count) {
  const std::int64_t ds = n.dst[n.inner], ss = n.src[n.inner];
  const auto bytes = static_cast<std::size_t>(count) * sizeof(T);
  if (n.kind == Kind::rows) {
    if (n.stream) simd::stream_copy(reinterpret_cast<std::byte*>(d), reinterpret_cast<const std::byte*>(s), bytes);
    else std::memcpy(d, s, bytes);
  } else if (n.kind == Kind::broadcast && ds == 1 && n.stream) {
    simd::stream_fill(reinterpret_cast<std::byte*>(d), reinterpret_cast<const std::byte*>(s), sizeof(T),
                      static_cast<std::size_t>(count));
  } else if (n.kind == Kind::broadcast) {
    const T v = *s;
    for (std::int64_t i = 0; i < count; ++i) d[i * ds] = v;
  } else {
    for (std::int64_t i = 0; i < count; ++i) d[i * ds] = s[i * ss];
  }
}

/// Runs pieces [begin, end) in order.
template <class T>
void run_pieces(const CopyNest& n, T* dst, const T* src, std::int64_t begin, std::int64_t end) {
  if (begin >= end) return;
  Walker w(n, begin / n.pieces_per_outer);
  std::int64_t sub = begin % n.pieces_per_outer;
  const std::int64_t len_i = n.shape[n.inner];
  for (std::int64_t p = begin; p < end; ++p) {
    const std::int64_t first = sub * n.piece;
    copy_piece(n, dst + w.dst + first * n.dst[n.inner], src + w.src + first * n.src[n.inner],
               std::min(n.piece, len_i - first));
    if (++sub == n.pieces_per_outer) {
      sub = 0;
      w.next();
    }
  }
  if (n.stream) simd::store_fence();
}

struct Bytes16 {
  unsigned char b[16];
};

template <class T>
void copy_typed(const CopyNest& n, std::byte* dst, const std::byte* src, std::int64_t bytes) {
  auto* d = reinterpret_cast<T*>(dst);
  const auto* s = reinterpret_cast<const T*>(src);
  const std::int64_t items = n.items();
  if (num_threads() <= 1 || items <= 1 || bytes < parallel_bytes) return run_pieces(n, d, s, 0, items);
  // A few ranges per thread, each taken by whichever thread is free (parallel.hpp).
  parallel_for(items, pieces_for(items, 1),
               [&](std::int64_t, std::int64_t b, std::int64_t e) { run_pieces(n, d, s, b, e); });
}

}  // namespace

void copy_strided(std::byte* dst, const Layout& dst_layout, const std::byte* src, const Layout& src_layout,
                  std::size_t element_size) {
  EINEXPR_ASSERT(dst_layout.shape == src_layout.shape, "copy_strided: shapes differ");
  const std::int64_t numel = checked_numel(dst_layout.shape);
  if (numel == 0) return;
  const auto es = static_cast<std::int64_t>(element_size);
  CopyNest n = order_and_collapse(dst_layout, src_layout);
  const std::int64_t bytes = numel * es;
  std::byte* d = dst + dst_layout.offset * es;
  const std::byte* s = src + src_layout.offset * es;
  if (detail::copy_permute(d, s, n.shape, n.dst, n.src, element_size, bytes >= stream_bytes, bytes >= parallel_bytes))
    return;
  classify(n, es);
  n.stream = bytes >= stream_bytes && n.dst[n.inner] == 1;
  switch (element_size) {
    case 1: return copy_typed<std::uint8_t>(n, d, s, bytes);
    case 2: return copy_typed<std::uint16_t>(n, d, s, bytes);
    case 4: return copy_typed<std::uint32_t>(n, d, s, bytes);
    case 8: return copy_typed<std::uint64_t>(n, d, s, bytes);
    case 16: return copy_typed<Bytes16>(n, d, s, bytes);
    default: EINEXPR_ASSERT(false, "copy_strided: unsupported element size");
  }
}

std::optional<RowCopy> as_rows(std::byte* dst, const Layout& dst_layout, const std::byte* src, const Layout& src_layout,
                               std::size_t element_size) {
  EINEXPR_ASSERT(dst_layout.shape == src_layout.shape, "as_rows: shapes differ");
  const auto es = static_cast<std::int64_t>(element_size);
  RowCopy r{dst + dst_layout.offset * es, src + src_layout.offset * es, 1, 1, 0, 0};
  if (checked_numel(dst_layout.shape) == 0) {
    r.rows = 0;
    return r;
  }
  const CollapsedDims c = collapse_dims(dst_layout.shape, {&dst_layout.strides, &src_layout.strides});
  const std::size_t rank = c.shape.size();
  if (rank == 0) return r;  // one element
  if (rank == 1 && (c.strides[0][0] != 1 || c.strides[1][0] != 1)) {  // rows of one element
    r.rows = c.shape[0];
    r.dst_step = c.strides[0][0];
    r.src_step = c.strides[1][0];
    return r;
  }
  if (rank > 2 || c.strides[0][rank - 1] != 1 || c.strides[1][rank - 1] != 1) return std::nullopt;
  r.length = c.shape[rank - 1];
  if (rank == 2) {
    r.rows = c.shape[0];
    r.dst_step = c.strides[0][0];
    r.src_step = c.strides[1][0];
  }
  return r;
}

void copy_rows_together(std::span<const RowCopy> copies, std::size_t element_size) {
  if (copies.empty()) return;
  const std::int64_t rows = copies[0].rows;
  const auto es = static_cast<std::int64_t>(element_size);
  std::int64_t row_bytes = 0;  // of all the copies together
  for (const RowCopy& c : copies) {
    EINEXPR_ASSERT(c.rows == rows, "copy_rows_together: the copies' row counts differ");
    row_bytes = checked_add(row_bytes, checked_mul(c.length, es));
  }
  if (rows == 0 || row_bytes == 0) return;
  const std::int64_t bytes = checked_mul(rows, row_bytes);
  const bool stream = bytes >= stream_bytes;
  auto run = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      for (const RowCopy& c : copies) {
        std::byte* d = c.dst + r * c.dst_step * es;
        const std::byte* s = c.src + r * c.src_step * es;
        const auto n = static_cast<std::size_t>(c.length * es);
        if (stream)
          simd::stream_copy(d, s, n);
        else
          std::memcpy(d, s, n);
      }
    if (stream) simd::store_fence();
  };
  if (num_threads() <= 1 || rows <= 1 || bytes < parallel_bytes) return run(0, rows);
  const std::int64_t grain = std::max<std::int64_t>(1, piece_bytes / row_bytes);
  parallel_for(rows, pieces_for(rows, grain), [&](std::int64_t, std::int64_t b, std::int64_t e) { run(b, e); });
}

void copy_bytes_streamed(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
  simd::stream_copy(dst, src, bytes);
}

void fill_streamed(std::byte* dst, const std::byte* value, std::size_t element_size, std::size_t count) noexcept {
  simd::stream_fill(dst, value, element_size, count);
}

void streamed_fence() noexcept { simd::store_fence(); }

}  // namespace einexpr
