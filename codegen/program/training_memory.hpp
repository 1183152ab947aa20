#pragma once
// Memory through one training step's forward and backward (private to codegen/program): a
// timeline of events (each forward statement, then each needed gradient in backward order,
// then the optimizer step), every buffer alive from the event that makes it to the last
// that reads it, and the high-water mark of their sum.
//   forward buffers   a statement's temporaries and results; a result the backward reads
//                     (Y, or an operand X) is kept until that gradient: an activation
//   gradients         dY of each output (a seed), each gradient plan's temporaries, and a
//                     tensor's gradient from its first contribution until its statement's
//                     backward has read it (a param's: to the end); later contributions are
//                     added into it and freed at once; a gradient that is a view shares
//                     its source's buffer
// Params, optimizer state and inputs are held throughout and are added by the caller.
#include "einexpr/codegen/count.hpp"
#include "program/backward_plan.hpp"

namespace einexpr::program_detail {

struct TrainingMemory {
  Count activations_bytes;   // forward buffers the backward reads (each buffer once)
  Count peak_bytes;          // the most bytes alive at one event (params etc. excluded)
  Count forward_peak_bytes;  // the forward alone, nothing kept for a backward
};

TrainingMemory training_memory(const ProgramPlan& plan, const BackwardPlan& backward);

}  // namespace einexpr::program_detail
