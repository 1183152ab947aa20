#pragma once
// The 6·N·P rule of thumb beside the exact count (private to codegen/program).
#include "einexpr/codegen/program_cost.hpp"
#include "program/backward_plan.hpp"

namespace einexpr::program_detail {

/// N: over the einsum statements that read a param directly (else any statement that does),
/// the index combinations the statement loops over per param element; their sum over the
/// sum of those params' sizes when they differ. 6·N·P is split by param: each param's share
/// 6·N·|p| goes to the part of the first statement that reads it. `cost` has the statements'
/// costs and the totals.
SixNP six_n_p(const ProgramPlan& plan, const BackwardPlan& backward, const ProgramCost& cost);

}  // namespace einexpr::program_detail
