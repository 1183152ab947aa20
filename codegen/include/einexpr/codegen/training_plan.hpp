#pragma once
// One training step of a planned program on one timeline of events: each forward statement
// (event s), then each needed gradient in backward order (events n, n+1, ...), then the
// optimizer update (the last event). Every buffer lives from the event that makes it to the
// last that reads it:
//   forward buffers   a statement's temporaries and results; a result the backward reads
//                     (Y, or an operand X) is kept until that gradient: an activation
//   seeds             dY of the output (a 0-d loss: a one), made when the backward starts
//   gradients         each gradient plan's temporaries (its event only), and a tensor's
//                     gradient from its first contribution until its statement's backward
//                     has read it (a param's: to the end); later contributions are written
//                     to a buffer of their own, added into it and freed at once; a gradient
//                     that is a contiguous view of its dY shares dY's buffer; one that is
//                     strided (a broadcast) is copied into a buffer of its own; a
//                     layer's slice of a stacked param ("w[3]") has its gradient in the
//                     stack's one gradient buffer, at its offset: its first contribution is
//                     copied there, later ones added

// program cost counts this timeline's high-water mark (training_memory) and lib's Trainer
// runs it, placing the same buffers in one arena: the peak it predicts is this timeline's,
// plus the staging buffers a lowering adds inside an event.
#include <cstdint>
#include <string>
#include <vector>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/codegen/program_plan.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr {

/// Where a backward event's result goes.
enum class GradientInto : unsigned char {
  fresh,     // the first contribution: the plan's output buffer becomes the tensor's gradient
  add,       // a later one: written to its own buffer, then added into the gradient
  view,      // the first, a contiguous view of a source (dY): the gradient shares its buffer
  add_view,  // a later one that is a view of a source: added into the gradient from there
  copy       // the first, strided (a view of a source, or a broadcast in the plan's output
             // buffer): copied into a gradient buffer of its own
};

/// A buffer of the timeline.
struct TrainingBuffer {
  std::int64_t bytes = 0;
  int first = 0;               // the event that makes it
  int last = 0;                // the last event that reads it
  int program_buffer = -1;     // a forward ProgramBuffer (plan.buffers), else -1
  int gradient_of = -1;        // the tensor whose gradient it holds, else -1
};

/// A forward statement run again during the backward (recomputation): its inputs from kept
/// buffers, inputs' and params' own memory or other recomputed buffers, its results into
/// buffers of its own from this event on.
struct TrainingRecompute {
  int statement = 0;
  int event = 0;
  std::vector<int> inputs;     // per statement input: its buffer (-1: an input's or param's own)
  std::vector<int> buffers;    // per plan temporary (plan buffer num_inputs + i): its buffer
};

/// A backward event: one needed gradient of one statement.
struct TrainingGradient {
  int event = 0;               // its place on the timeline
  std::vector<TrainingRecompute> recompute;  // run just before it, in order (their events precede)
  int statement = 0;           // the forward statement
  int operand = 0;             // its input (0-based)
  int tensor = 0;              // the tensor it is the gradient of
  Gradient gradient;           // the plan (backward.hpp): sources dY, Y, X / A, B, ...
  std::string expression;      // with the program's names: "einsum(dh1, x, 'B E, B D -> D E')"
  /// Per plan input: the timeline buffer it reads (-1: an input's or param's own memory; a
  /// recomputed copy where the forward's was not kept), and the forward tensor it is (-1: the
  /// statement output's gradient dY).
  std::vector<int> source_buffers;
  std::vector<int> source_tensors;
  /// Per plan temporary (plan buffer num_inputs + i): its timeline buffer; the output's is
  /// the gradient (fresh) or the contribution (add), -1 where the output is a view.
  std::vector<int> temp_buffers;
  GradientInto into = GradientInto::fresh;
  int contribution = -1;       // add: the buffer the result is written to before the add
};

/// What the backward keeps of the forward.
struct TrainingOptions {
  /// false: every forward buffer the backward reads is kept until then. true: only the
  /// buffers of `keep` (tensor names; the outputs always) are; any other the backward reads
  /// is made again by recomputing its statement (and, as needed, the statements it reads)
  /// just before the first gradient that reads it (torch.utils.checkpoint's trade: memory
  /// for forward FLOPs).
  bool recompute = false;
  std::vector<std::string> keep = {};
};

struct TrainingPlan {
  int events = 0;                          // forward + backward (recomputes included) + the optimizer's
  std::vector<bool> needs_grad;            // per tensor
  std::vector<TrainingGradient> backward;  // in order, each at its event
  std::vector<TrainingBuffer> buffers;
  std::vector<int> forward_buffer;         // per ProgramBuffer: its timeline buffer (-1: external)
  std::vector<int> gradient_buffer;        // per tensor: the buffer of its gradient (-1: none)
  std::vector<Layout> gradient_layout;     // per tensor: its gradient within that buffer
  std::vector<int> seeds;                  // outputs whose gradient is seeded (dY = 1)
  /// Tensors stacked over a block's layers whose gradient buffer is zeroed when the backward
  /// starts, because some layer's slice gets no gradient (each slice's first one is copied in).
  std::vector<int> zeroed;
  std::vector<int> activations;            // forward timeline buffers the backward reads

  /// The most bytes alive at one event (params, their optimizer state and the inputs are
  /// held throughout and not counted), and the same for the forward alone.
  std::int64_t peak_bytes() const;
  std::int64_t forward_peak_bytes(const ProgramPlan& plan) const;
  std::int64_t activations_bytes() const;
  /// The statements recomputed, each as often as it is (in event order).
  std::vector<int> recomputed_statements() const;
};

/// The training step of `plan` (its outputs the losses: each seeded with dY = 1). Throws
/// ProgramError at a statement whose gradient cannot be derived, Error for a kept name that is
/// no statement's result.
TrainingPlan plan_training(const ProgramPlan& plan, const TrainingOptions& options = {});

}  // namespace einexpr
