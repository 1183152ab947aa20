#pragma once
// Private to codegen: the einsum core over atom views (contract.cpp), shared by the forward
// einsum (plan_einsum.cpp) and the gradients (backward/): operands as atoms in, their
// contraction to `output`'s atoms out, as a list of steps on a PlanBuilder.
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/planner.hpp"
#include "plan/builder.hpp"

namespace einexpr::detail {

/// Contracts `nodes` (each an operand's atoms, diagonals already taken) down to the atoms
/// `output` lists: axes in one operand only and not in the output are summed first
/// (reductions), then pairs are contracted in the order `order` picks for `goal` (../order;
/// ShapeError when no order meets goal.memory_limit), each a
/// ContractStep on operands viewed as [batch.., m, k] x [batch.., k, n]. An operand is
/// copied only where no GEMM can read it in place; where its m (n) atoms do not merge into
/// one stride, the outermost of them become batch dims instead (the other operand read at
/// stride 0 there) when each GEMM keeps enough work. The last contraction writes `output`'s
/// layout directly where it can. Records the ContractionInfo and, for three or more
/// operands, a note with the order, the search that found it, its time, and what left to
/// right would cost. Returns the result's atoms (every atom of `output`, in some order).
/// `nodes` of one operand: its reduction.
///
/// `search`, when given, changes the order search (the gradients' einsums): its exact
/// programs take at most `exact_limit` operands, and past that `tree` (node ids as in
/// ContractionInfo::path) is taken instead of the heuristic's, named `method` in the note.
struct SearchOverride {
  int exact_limit = 0;
  std::vector<std::pair<int, int>> tree;
  std::string method;
};
AtomView contract_all(PlanBuilder& b, std::vector<AtomView> nodes, const Axes& output, ContractionOrder order,
                      const OrderGoal& goal = {}, const SearchOverride* search = nullptr);

}  // namespace einexpr::detail
