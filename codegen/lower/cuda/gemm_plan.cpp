// plan_gemm(): row-major batched contractions as column-major cuBLAS calls.
//
// A row-major C[m, n] is a column-major C^T[n, m], so where C has unit stride along n we
// compute C^T = B^T A^T; where it has unit stride along m, C = A B directly. Each operand
// is then used in place if one of its two matrix dims has unit stride (op N or T, with
// the other stride as leading dimension); only an operand with neither (or a broadcast,
// stride-0 matrix dim) is staged contiguously by a copy.
//
// Batch dims: length-1 dims are dropped and neighbours whose strides nest in all three
// operands are merged. One dim left: one strided-batched call. Several: either loop over
// all but the longest (one call each), or stage the operands whose batch dims do not nest
// so that everything merges into one call. We take the cheaper by a two-number model: a
// call costs ~5 us (launch, heuristics, tail), a staging copy moves its bytes twice (read
// + write) at ~2 TB/s. E.g. 64 x 128 batches of 256^2 f32 matrices that do not nest:
// looping is 64 calls = 320 us; staging one 32 MiB operand is ~34 us: stage.
#include "gemm_plan.hpp"
#include "plan/matrix_map.hpp"

#include <algorithm>
#include <optional>

#include "einexpr/runtime/error.hpp"

namespace einexpr::gpu {

namespace {

constexpr double kCallSeconds = 5e-6;
constexpr double kCopyBytesPerSecond = 2e12;

struct Mat {
  std::int64_t rows, cols, sr, sc;
};
Mat matrix_of(const Layout& l) {
  const auto n = l.shape.size();
  return {l.shape[n - 2], l.shape[n - 1], l.strides[n - 2], l.strides[n - 1]};
}

/// The in-place map of x (plan/matrix_map.hpp: the planner's and the CPU GEMM's test too).
std::optional<detail::MatrixMap> map_of(const Mat& x, detail::Major prefer) {
  return detail::fit_matrix(x.rows, x.cols, x.sr, x.sc, prefer);
}

std::size_t batch_rank(const Layout& l) { return l.shape.size() - 2; }

// Drops length-1 batch dims of the three operands and merges neighbours that nest in all.
void simplify_batch(Layout& a, Layout& b, Layout& c) {
  Layout* ls[3] = {&a, &b, &c};
  for (std::size_t d = batch_rank(c); d-- > 0;) {
    const bool unit = c.shape[d] == 1;
    const bool merge = !unit && d + 1 < batch_rank(c) && std::all_of(ls, ls + 3, [&](const Layout* l) {
      return l->strides[d] == l->strides[d + 1] * l->shape[d + 1];
    });
    if (!unit && !merge) continue;
    for (Layout* l : ls) {
      if (merge) l->shape[d + 1] *= l->shape[d];
      l->shape.erase(l->shape.begin() + static_cast<std::ptrdiff_t>(d));
      l->strides.erase(l->strides.begin() + static_cast<std::ptrdiff_t>(d));
    }
  }
}

bool batch_nests(const Layout& l) {
  for (std::size_t d = 0; d + 1 < batch_rank(l); ++d)
    if (l.strides[d] != l.strides[d + 1] * l.shape[d + 1]) return false;
  return true;
}

// Which of a, b, c to stage so the batch dims merge, if that is cheaper than a loop of calls.
std::array<bool, 3> batch_staging(const Layout* ops[3], const std::size_t sizes[3]) {
  const Shape& batch = ops[2]->shape;
  const std::size_t nb = batch_rank(*ops[2]);
  if (nb < 2) return {false, false, false};
  std::int64_t calls = 1, longest = 1;
  for (std::size_t d = 0; d < nb; ++d) {
    calls *= batch[d];
    longest = std::max(longest, batch[d]);
  }
  calls /= longest;
  std::array<bool, 3> stage{};
  double bytes = 0;
  int copies = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    stage[i] = !batch_nests(*ops[i]);
    if (!stage[i]) continue;
    bytes += 2.0 * static_cast<double>(checked_numel(ops[i]->shape)) * static_cast<double>(sizes[i]);
    ++copies;
  }
  const double loop_s = static_cast<double>(calls) * kCallSeconds;
  const double stage_s = bytes / kCopyBytesPerSecond + (copies + 1) * kCallSeconds;
  if (stage_s < loop_s) return stage;
  return {false, false, false};
}

/// A matrix argument as the column-major call sees it: op T where it is row-major there.
MatrixArg arg_of(Source source, const Layout& l, const detail::MatrixMap& seen) {
  const auto nb = static_cast<std::ptrdiff_t>(batch_rank(l));
  return MatrixArg{source, l.offset, seen.row_major, seen.outer, Strides(l.strides.begin(), l.strides.begin() + nb)};
}

}  // namespace

GemmPlan plan_gemm(Layout a, Layout b, Layout c, std::size_t ab_size, std::size_t c_size) {
  EINEXPR_ASSERT(a.dim() >= 2 && a.dim() == b.dim() && a.dim() == c.dim(), "plan_gemm: ranks differ");
  GemmPlan g;
  {  // what to stage, judged on the simplified batch dims
    Layout sa = a, sb = b, sc = c;
    simplify_batch(sa, sb, sc);
    const Layout* ops[3] = {&sa, &sb, &sc};
    const std::size_t sizes[3] = {ab_size, ab_size, c_size};
    const std::array<bool, 3> merge = batch_staging(ops, sizes);
    g.stage_a = merge[0] || !map_of(matrix_of(sa), detail::Major::row);
    g.stage_b = merge[1] || !map_of(matrix_of(sb), detail::Major::row);
    g.stage_c = merge[2] || !map_of(matrix_of(sc), detail::Major::row);
  }
  // staged copies have the operands' own shapes (the copy kernels need them equal)
  if (g.stage_a) a = g.staged_a = Layout::contiguous(a.shape);
  if (g.stage_b) b = g.staged_b = Layout::contiguous(b.shape);
  if (g.stage_c) c = g.staged_c = Layout::contiguous(c.shape);
  simplify_batch(a, b, c);
  const Source sa = g.stage_a ? Source::staged_a : Source::a;
  const Source sb = g.stage_b ? Source::staged_b : Source::b;
  const Source sc = g.stage_c ? Source::staged_c : Source::c;
  // D = C = A B where C can be column-major, else D = C^T = B^T A^T (column_major_call); A
  // and B are then read without a transpose wherever they allow it.
  const auto cm = map_of(matrix_of(c), detail::Major::column);
  const detail::Major ab = cm.value().row_major ? detail::Major::row : detail::Major::column;
  const detail::ColumnMajorCall call =
      detail::column_major_call(map_of(matrix_of(a), ab).value(), map_of(matrix_of(b), ab).value(), *cm);
  g.p = arg_of(call.swapped ? sb : sa, call.swapped ? b : a, call.first);
  g.q = arg_of(call.swapped ? sa : sb, call.swapped ? a : b, call.second);
  g.d = arg_of(sc, c, call.out);
  g.m = call.out.rows;
  g.n = call.out.cols;
  g.k = call.first.cols;
  g.batch.assign(c.shape.begin(), c.shape.end() - 2);
  if (!g.batch.empty())
    g.batched = static_cast<std::size_t>(std::max_element(g.batch.begin(), g.batch.end()) - g.batch.begin());
  return g;
}

void for_each_gemm_call(const GemmPlan& g,
                        const std::function<void(std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                                 std::int64_t, std::int64_t)>& fn) {
  const std::size_t nb = g.batch.size(), big = g.batched;
  const std::int64_t count = nb == 0 ? 1 : g.batch[big];
  const std::int64_t sp = nb == 0 ? 0 : g.p.batch[big], sq = nb == 0 ? 0 : g.q.batch[big],
                     sd = nb == 0 ? 0 : g.d.batch[big];
  std::vector<std::int64_t> index(nb, 0);
  while (true) {
    std::int64_t op = g.p.offset, oq = g.q.offset, od = g.d.offset;
    for (std::size_t i = 0; i < nb; ++i) {
      if (i == big) continue;
      op += index[i] * g.p.batch[i];
      oq += index[i] * g.q.batch[i];
      od += index[i] * g.d.batch[i];
    }
    fn(op, oq, od, count, sp, sq, sd);
    std::size_t i = nb;  // the next index, skipping cuBLAS's batch dim
    bool carried = true;
    while (carried && i-- > 0) {
      if (i == big) continue;
      carried = ++index[i] == g.batch[i];
      if (carried) index[i] = 0;
    }
    if (carried) return;
  }
}

}  // namespace einexpr::gpu
