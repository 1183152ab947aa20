#pragma once
// What an einsum's contraction order minimizes and how it is searched: the options the
// planner takes (planner.hpp's EinsumOptions) and the order search reads (codegen/order/),
// in a header of their own so that the search needs nothing of the planner's.
#include <cstdint>
#include <optional>

namespace einexpr {

/// How an einsum of 3 or more operands is ordered into pairwise contractions
/// (codegen/order/README.md says what each search does and how far it is exact).
enum class ContractionOrder : unsigned char {
  optimal,  // fewest FLOPs: exact searches up to 30 operands, a heuristic beyond (codegen/order)
  greedy,   // opt_einsum's greedy: repeatedly the pair that shrinks the memory most
  naive,    // left to right, as written
};

/// What the einsum's contraction order minimizes (ContractionOrder::optimal and greedy).
enum class OrderObjective : unsigned char {
  flops,                 // the FLOPs of the contractions (default)
  largest_intermediate,  // the largest intermediate (elements), then the FLOPs within it
  flops_and_bytes,       // FLOPs + alpha * bytes the contractions write
};

/// The objective of the order search and the memory its intermediates may take.
struct OrderGoal {
  OrderObjective objective = OrderObjective::flops;
  double alpha = 0;  // flops_and_bytes: FLOPs charged per byte written, finite and >= 0
  /// The most elements one intermediate may hold (the result itself is exempt). An order
  /// within it is found, or planning throws ShapeError naming the smallest peak there is.
  std::optional<std::int64_t> memory_limit;
  friend bool operator==(const OrderGoal&, const OrderGoal&) = default;
};

}  // namespace einexpr
