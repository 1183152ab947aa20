#pragma once
// Private to codegen: the einsum core over atom views (contract.cpp), shared by the forward
// einsum (plan_einsum.cpp) and the gradients (backward/): operands as atoms in, their
// contraction to `output`'s atoms out, as a list of steps on a PlanBuilder.
#include <optional>
#include <vector>

#include "einexpr/codegen/planner.hpp"
#include "plan/builder.hpp"

namespace einexpr::detail {

/// Contracts `nodes` (each an operand's atoms, diagonals already taken) down to the atoms
/// `output` lists: axes in one operand only and not in the output are summed first
/// (reductions), then pairs are contracted in the order `order` picks for `goal` (../order;
/// ShapeError when no order meets goal.memory_limit), each a
/// ContractStep on operands viewed as [batch.., m, k] x [batch.., k, n]. An operand is
/// copied only where no GEMM can read it in place. The last contraction writes `output`'s
/// layout directly where it can. Records the ContractionInfo and, for three or more
/// operands, a note with the order, the search that found it, its time, and what left to
/// right would cost. Returns the result's atoms (every atom of `output`, in some order).
/// `nodes` of one operand: its reduction. `exact_limit`, when given, replaces the order
/// search's default (order::Options::exact_limit): the most operands its exact programs take.
AtomView contract_all(PlanBuilder& b, std::vector<AtomView> nodes, const Axes& output, ContractionOrder order,
                      const OrderGoal& goal = {}, std::optional<int> exact_limit = {});

}  // namespace einexpr::detail
