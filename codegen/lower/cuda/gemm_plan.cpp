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
Mat transposed(const Mat& x) { return {x.cols, x.rows, x.sc, x.sr}; }

struct ColMajor {
  bool transpose;
  std::int64_t ld;
};
// op(stored) == x with `stored` column-major (element (r, c) at r + c * ld), if possible.
std::optional<ColMajor> as_colmajor(const Mat& x, bool allow_transpose = true) {
  if (x.sr == 1 || x.rows == 1) {  // x itself is column-major
    const std::int64_t ld = x.cols == 1 ? std::max<std::int64_t>(x.rows, 1) : x.sc;
    if (ld >= std::max<std::int64_t>(x.rows, 1)) return ColMajor{false, ld};
  }
  if (allow_transpose && (x.sc == 1 || x.cols == 1)) {  // x is the transpose of a column-major matrix
    const std::int64_t ld = x.rows == 1 ? std::max<std::int64_t>(x.cols, 1) : x.sr;
    if (ld >= std::max<std::int64_t>(x.cols, 1)) return ColMajor{true, ld};
  }
  return std::nullopt;
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

MatrixArg arg_of(Source source, const Layout& l, const ColMajor& cm) {
  const auto nb = static_cast<std::ptrdiff_t>(batch_rank(l));
  return MatrixArg{source, l.offset, cm.transpose, cm.ld, Strides(l.strides.begin(), l.strides.begin() + nb)};
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
    g.stage_a = merge[0] || !as_colmajor(matrix_of(sa));
    g.stage_b = merge[1] || !as_colmajor(matrix_of(sb));
    g.stage_c = merge[2] || !(as_colmajor(matrix_of(sc), false) || as_colmajor(transposed(matrix_of(sc)), false));
  }
  // staged copies have the operands' own shapes (the copy kernels need them equal)
  if (g.stage_a) a = g.staged_a = Layout::contiguous(a.shape);
  if (g.stage_b) b = g.staged_b = Layout::contiguous(b.shape);
  if (g.stage_c) c = g.staged_c = Layout::contiguous(c.shape);
  simplify_batch(a, b, c);
  const Source sa = g.stage_a ? Source::staged_a : Source::a;
  const Source sb = g.stage_b ? Source::staged_b : Source::b;
  const Source sc = g.stage_c ? Source::staged_c : Source::c;
  const Mat am = matrix_of(a), bm = matrix_of(b), cm = matrix_of(c);
  const bool direct = as_colmajor(cm, false).has_value();  // D = C = A B, else D = C^T = B^T A^T
  const Mat pm = direct ? am : transposed(bm), qm = direct ? bm : transposed(am), dm = direct ? cm : transposed(cm);
  g.p = arg_of(direct ? sa : sb, direct ? a : b, as_colmajor(pm).value());
  g.q = arg_of(direct ? sb : sa, direct ? b : a, as_colmajor(qm).value());
  g.d = arg_of(sc, c, as_colmajor(dm, false).value());
  g.m = dm.rows;
  g.n = dm.cols;
  g.k = pm.cols;
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
