// 230 einsum patterns (tests/lib/einsum_table.inc: opt_einsum's and numpy's test patterns,
// compositions, random equations of 3-8 operands with diagonals and private axes), each
// checked end to end: it runs and matches a naive f64 loop; it is costed, its steps' FLOPs
// add up to the total, its naive count is numpy's and numpy's model of its path is no more
// than numpy's own optimal path; every gradient is derived, costed, runs and matches the
// naive f64 gradient. numpy's numbers were computed once by einsum_table.py.
#include <catch2/catch.hpp>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/einexpr.hpp"
#include "count_printing.hpp"
#include "reference.hpp"

using namespace einexpr;

namespace {

struct Row {
  const char* pattern;
  std::vector<Shape> shapes;
  const char* lengths;      // "h=2" or ""
  long long numpy_naive;    // einsum_path's naive count; -1: numpy cannot write the pattern
  long long numpy_optimal;  // the sum of its optimal path's steps (it prints this + 1)
  long long numpy_path_in_einexpr;  // numpy's optimal path in einexpr's convention (-1: n/a)
  const char* source;
};

const Row rows[] = {
#include "einsum_table.inc"
};

AxisLengths lengths_of(const std::string& text) {
  AxisLengths out;
  if (text.empty()) return out;
  const auto eq = text.find('=');
  out.emplace_back(text.substr(0, eq), std::stoll(text.substr(eq + 1)));
  return out;
}

/// Inputs in f64, stored three ways in turn so the plans see non-contiguous operands too.
std::vector<Tensor> inputs_for(const Row& r, std::size_t row) {
  const reference::Layout layouts[] = {reference::Layout::contiguous, reference::Layout::transposed,
                                       reference::Layout::sliced};
  std::vector<Tensor> xs;
  for (std::size_t i = 0; i < r.shapes.size(); ++i)
    xs.push_back(reference::make_input(r.shapes[i], DType::f64, layouts[(row + i) % 3], 1000 * row + i));
  return xs;
}

bool sums_early(const Plan& plan) {
  for (const Step& s : plan.steps)
    if (std::holds_alternative<ReduceStep>(s)) return true;
  return false;
}

Count count(long long v) { return Count(static_cast<std::uint64_t>(v)); }

Count steps_flops(const Cost& c) {
  Count sum;
  for (const StepCost& s : c.steps) sum += s.flops;
  return sum;
}

}  // namespace

TEST_CASE("the einsum table: runs, costs and gradients of 230 patterns against f64 and numpy", "[einsum][table]") {
  REQUIRE(std::size(rows) >= 200);
  std::size_t with_numpy = 0, numpy_model_checked = 0;
  for (std::size_t i = 0; i < std::size(rows); ++i) {
    const Row& r = rows[i];
    CAPTURE(i, r.pattern, r.source);
    const AxisLengths lengths = lengths_of(r.lengths);
    const std::vector<Tensor> xs = inputs_for(r, i);
    // Runs, and matches the naive loop.
    const Tensor y = einsum(xs, r.pattern, lengths);
    CHECK(reference::max_rel_error(y, reference::einsum(xs, r.pattern, lengths)) < 1e-10);
    // Costed: the steps add up; numpy's naive count; numpy's model of our path.
    const Compiled compiled = compile_einsum(r.pattern, lengths);
    const Plan& plan = compiled.plan(xs);
    const Cost c = cost(plan);
    CHECK(steps_flops(c) == c.flops);
    if (r.numpy_naive >= 0) {
      ++with_numpy;
      CHECK(c.naive_flops == count(r.numpy_naive));
      // What runs is never more than numpy's best path as numpy counts it...
      CHECK(c.flops <= count(r.numpy_optimal));
      // ...nor than numpy's best path counted the way einexpr counts (apples to apples).
      if (r.numpy_path_in_einexpr >= 0) CHECK(c.flops <= count(r.numpy_path_in_einexpr));
      // numpy's model of einexpr's path: no more than numpy's optimum wherever the plan is
      // made of the steps numpy's model counts. Where einexpr sums an axis only one operand
      // holds before contracting, numpy's model charges it at the contraction's full size,
      // and the path cheapest in einexpr's convention may be dearer in numpy's.
      if (!sums_early(plan)) {
        ++numpy_model_checked;
        CHECK(c.flops_numpy <= count(r.numpy_optimal));
      }
    }
    // Every gradient: derived (once), costed, run, and equal to the naive gradient.
    const std::vector<Gradient> grads = gradients(plan);
    const BackwardCost back = backward_cost(grads);
    CHECK(back.gradients.size() == xs.size());
    const Tensor dy = Tensor::randn(y.shape(), DType::f64, 7 + i);
    const std::vector<Tensor> dxs = run_gradients(plan, grads, xs, y, dy);
    const std::vector<reference::Result> want = reference::einsum_gradients(xs, r.pattern, dy.to_vector<double>(), lengths);
    REQUIRE(dxs.size() == want.size());
    for (std::size_t k = 0; k < dxs.size(); ++k) {
      CAPTURE(k);
      CHECK(reference::max_rel_error(dxs[k], want[k]) < 1e-10);
    }
  }
  CHECK(with_numpy >= 200);
  CHECK(numpy_model_checked >= 150);  // 173 when written: most plans sum nothing early
}
