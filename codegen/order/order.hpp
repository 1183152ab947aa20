#pragma once
// Private to codegen: the order in which an einsum of n operands is contracted pairwise.
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/axes.hpp"
#include "einexpr/codegen/planner.hpp"

namespace einexpr::detail {

struct ContractionPath {
  /// Pairs of node ids: ids 0..n-1 are the operands, n, n+1, ... the results in order.
  std::vector<std::pair<int, int>> steps;
  long double flops = 0;  // cost/convention.hpp's FLOPs, summed over the steps (approximate above 2^64)
  std::string text;       // "((1 2) 3)", operands numbered from 1
};

/// The path for operands with these axes (distinct in each), keeping `output`'s axes to
/// the end; lengths from `axes`. optimal: exhaustive (dynamic programming over subsets) up
/// to 8 operands, greedy beyond.
ContractionPath find_path(const std::vector<std::vector<AxisId>>& operands, const std::vector<AxisId>& output,
                          const AxisTable& axes, ContractionOrder order);

}  // namespace einexpr::detail
