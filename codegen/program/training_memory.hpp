#pragma once
// Memory through one training step's forward and backward (private to codegen/program):
// the high-water marks of plan_training's timeline (einexpr/codegen/training_plan.hpp, where
// its buffers and events are described). Params, optimizer state and inputs are held
// throughout and are added by the caller.
#include "einexpr/codegen/count.hpp"
#include "einexpr/codegen/program_cost.hpp"
#include "einexpr/codegen/training_plan.hpp"
#include "program/backward_plan.hpp"

namespace einexpr::program_detail {

struct TrainingMemory {
  Count activations_bytes;   // forward buffers the backward reads (each buffer once)
  std::vector<KeptActivation> kept;
  Count peak_bytes;          // the most bytes alive at one event (params etc. excluded)
  Count forward_peak_bytes;  // the forward alone, nothing kept for a backward
  std::vector<int> recomputed;  // the statements made again, as often as they are
};

TrainingMemory training_memory(const ProgramPlan& plan, const BackwardPlan& backward, const TrainingOptions& options = {});
/// The timeline itself (training_plan.hpp) from needed gradients already derived; lean: its
/// events without their gradients' plans and expressions (buffers and lifetimes only).
TrainingPlan plan_training(const ProgramPlan& plan, const BackwardPlan& backward, const TrainingOptions& options,
                           bool lean = false);

}  // namespace einexpr::program_detail
