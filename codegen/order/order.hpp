#pragma once
// Private to codegen: the order in which an einsum's operands are contracted pairwise
// (README.md in this folder). Axes are integer ids; the cost is the one FLOP convention of
// cost/convention.hpp, counted exactly (SatCount).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/axes.hpp"
#include "einexpr/codegen/order_options.hpp"
#include "order/sat_count.hpp"

namespace einexpr::order {

/// What the search minimizes (order_options.hpp's OrderObjective).
using Objective = OrderObjective;

/// An einsum as the search sees it: each operand's distinct axis ids, the ids the result
/// keeps, every id's length. An axis one operand holds and nothing else needs is summed
/// inside that operand's first step (plan/contract.cpp sums those before it asks).
struct Problem {
  std::vector<std::vector<AxisId>> operands;
  std::vector<AxisId> output;
  std::vector<std::int64_t> lengths;  // by axis id, >= 0
};

struct Options {
  /// optimal: an exact search up to `exact_limit` operands (matrix-chain, exhaustive or
  /// connected-subset dynamic programming), the heuristic beyond it or past the budget;
  /// greedy: opt_einsum's greedy alone; naive: left to right.
  ContractionOrder method = ContractionOrder::optimal;
  Objective objective = Objective::flops;
  double alpha = 0;        // flops_and_bytes: FLOPs charged per byte written (>= 0)
  int element_bytes = 4;   // flops_and_bytes: bytes per element
  /// No intermediate may hold more elements (the result itself is exempt). A limit no
  /// order meets throws ShapeError naming the smallest peak the search achieves.
  std::optional<SatCount> memory_limit;
  /// Seconds the search may take; < 0: by the operand count (README). Within it the result
  /// does not depend on the machine's speed; past it the best order found so far is taken.
  double time_budget_s = -1;
  int exact_limit = 30;    // the most operands the exponential exact searches take
  /// When not empty: past `exact_limit`, this tree or opt_einsum's greedy, whichever scores
  /// better, instead of the heuristic (the gradients give their forward's order,
  /// backpropagated); `given_method` names it in the Path.
  std::vector<std::pair<int, int>> given;
  std::string given_method = "given";
  /// The candidates the connected-subset program may look at before it gives way to the
  /// heuristic (a fixed amount of work: the answer is the same on any machine).
  std::size_t exact_work = 8'000'000;
  std::uint64_t seed = 1;  // of the random-greedy restarts
};

struct Path {
  /// Pairs of node ids: 0..n-1 the operands, n, n+1, ... the results in order.
  std::vector<std::pair<int, int>> steps;
  SatCount flops;                 // the steps' FLOPs, convention::pairwise_flops each
  SatCount largest_intermediate;  // elements of the largest result but the last
  SatCount elements_written;      // elements of all the steps' results
  std::string method;             // which search found it ("dynamic programming", ...)
  bool exact = false;             // the optimum of the objective, proven
  double seconds = 0;             // the search's wall time
  std::string text;               // "((1 2) 3)", operands numbered from 1
};

/// The order for `problem`; validates it (InternalError on a malformed problem).
Path find_path(const Problem& problem, const Options& options = {});

/// The counts of a given order (steps as in Path); InternalError if they are not one.
Path evaluate(const Problem& problem, const std::vector<std::pair<int, int>>& steps);

}  // namespace einexpr::order
