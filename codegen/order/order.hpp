#pragma once
// Private to codegen: the order in which an einsum of n operands is contracted pairwise.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/planner.hpp"

namespace einexpr::detail {

struct ContractionPath {
  /// Pairs of node ids: ids 0..n-1 are the operands, n, n+1, ... the results in order.
  std::vector<std::pair<int, int>> steps;
  long double flops = 0;  // 2 per multiply-add, summed over the steps (approximate above 2^64)
  std::string text;       // "((1 2) 3)", operands numbered from 1
};

/// The path for operands with these atoms, keeping `output`'s atoms to the end.
/// optimal: exhaustive (dynamic programming over subsets) up to 8 operands, greedy beyond.
ContractionPath find_path(const std::vector<std::vector<std::string>>& operands,
                          const std::vector<std::string>& output,
                          const std::map<std::string, std::int64_t, std::less<>>& lengths,
                          ContractionOrder order);

}  // namespace einexpr::detail
