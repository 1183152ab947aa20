#pragma once
// The one FLOP convention (README, "What the counts mean"), written once and used by the
// contraction-order search (order/) and by cost() (cost/cost.cpp) alike, so a plan's FLOPs
// are exactly what the search minimized. N is the number type: Count (exact, throws on
// overflow) in cost(), a saturating 128-bit count in the search.
//
//   a step that sums          2 per multiply-add: 2 · outputs · k
//   a step that only multiplies (outer, Hadamard: no summed axis)
//                             1 per output element: outputs
//   a reduction               one operation per element folded in: n_in - n_out
//                             (+ n_out for mean: the division)
//   var, logsumexp            4 per input element: 4 · n_in (std: + n_out square roots)
//   softmax, log_softmax      5 per element + 1 (2) per row; layer_norm 5 + 3; rms_norm 3 + 3
//                             (normalization_flops); their backward passes 4, 4, 11 + 4, 8 + 3
//   an exp, log, tanh, erf, sqrt  1 (elementwise_flops.cpp)
//   cross_entropy             forward 4 per logit (as logsumexp) + 1 per row (lse - x[t]);
//                             backward dY · softmax(x) - dY at the target in one pass, the
//                             row's lse given back by the loss (loss + x[t]): 3 per logit
//                             (x - lse, exp, · dY) + 2 per row (loss + x[t], the target's - dY)
//   scatter-add (add_at)      1 per update element (its add)
//   views, copies, fills, gathers (get_at), joins  0
//
// A pairwise contraction of x and y in an einsum (plan/contract.cpp) first sums the axes
// only one of them holds and nothing later needs (a reduction each), then contracts over the
// union of what is left; pairwise_flops() is that whole pairwise step (what the order search,
// ../order, minimizes).
namespace einexpr::convention {

/// A contraction step: `outputs` = |batch|·m·n elements written, each the sum of `k`
/// products; `sums` = some axis is summed (else it is an outer or Hadamard product, k = 1).
template <class N>
constexpr N contraction_flops(N outputs, N k, bool sums) {
  return sums ? N(2) * outputs * k : outputs * k;
}

/// A reduction folding n_in elements into n_out (n_out <= n_in; an empty reduced axis folds
/// nothing: 0).
template <class N>
constexpr N fold_flops(N n_in, N n_out) {
  return n_out < n_in ? n_in - n_out : N(0);
}

/// var, std and logsumexp folding n_in elements into n_out. var: the mean (n_in - n_out adds,
/// n_out divides), each deviation subtracted, squared and added (3·n_in - n_out), the
/// division by n - correction (n_out): 4·n_in; std: + n_out square roots. logsumexp: the
/// max (n_in - n_out compares), each x - m and its exp (2·n_in, an exp counting 1), the sum
/// (n_in - n_out), log and + m (2·n_out): 4·n_in.
template <class N>
constexpr N statistic_flops(N n_in, N n_out, bool square_root) {
  return N(4) * n_in + (square_root ? n_out : N(0));
}

/// A normalization of n elements in `rows` rows (n / rows along each), forward or backward.
/// An exp, log, sqrt or division counts 1, as everywhere in this convention.
///   softmax      max, x - m, exp, the sum, · 1/s: 5 per element; 1/s: 1 per row
///   log_softmax  max, x - m, exp, the sum, x - (m + log s): 5; log s and m + log s: 2 per row
///   layer_norm   sum, x - mean, square, sum, (x - mean) · r: 5; the mean's and the
///                variance's divisions, + eps and 1/sqrt: 3 per row (the sqrt and its
///                reciprocal one rsqrt)
///   rms_norm     square, sum, x · r: 3; the division, + eps, 1/sqrt: 3 per row
/// backward (dX from dY and Y or X):
///   softmax      dY · y, sum, dY - s, · y: 4;  log_softmax  sum dY, exp(y), · s, dY - : 4
///   layer_norm   the forward's statistics again (4), x̂ (1), dY · x̂ and the two sums (3),
///                dY - a - x̂ · b and · r (3): 11; 4 per row
///   rms_norm     square, sum, x̂, dY · x̂, its sum, dY - x̂ · b, · r: 8; 3 per row
template <class N>
constexpr N normalization_flops(int kind, bool backward, N n, N rows) {
  // kind: 0 softmax, 1 log_softmax, 2 layer_norm, 3 rms_norm (plan.hpp's Normalization)
  constexpr int per_element[2][4] = {{5, 5, 5, 3}, {4, 4, 11, 8}};
  constexpr int per_row[2][4] = {{1, 2, 3, 3}, {0, 0, 4, 3}};
  const int b = backward ? 1 : 0;
  return N(per_element[b][kind]) * n + N(per_row[b][kind]) * rows;
}

/// cross_entropy over n logits in `rows` rows, forward or backward (above).
template <class N>
constexpr N cross_entropy_flops(bool backward, N n, N rows) {
  return backward ? N(3) * n + N(2) * rows : N(4) * n + rows;
}

/// One pairwise step of an einsum: `x_all`, `y_all` the sizes (products of axis lengths)
/// of the two operands as they come; `x_kept`, `y_kept` after summing their private axes
/// (equal to the *_all when there are none); `union_kept` the product over the union of the
/// kept axes of both; `sums` whether that union has an axis the result drops.
template <class N>
constexpr N pairwise_flops(N x_all, N x_kept, N y_all, N y_kept, N union_kept, bool sums) {
  return fold_flops(x_all, x_kept) + fold_flops(y_all, y_kept) + contraction_flops(union_kept, N(1), sums);
}

}  // namespace einexpr::convention
