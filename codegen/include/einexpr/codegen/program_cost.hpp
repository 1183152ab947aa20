#pragma once
// The cost of a planned model program (program_plan.hpp) for one training step, computed
// without running it, in the accounting core's one convention (cost.hpp):
//   forward     each statement's Cost (FLOPs, bytes), summed
//   backward    the gradients the program needs, each a plan from backward.hpp costed by
//               cost(): gradients flow from the outputs toward the params only, so an
//               input's gradient is never computed (the lecture's first layer costs
//               2·B·D·E backward, not 4·B·D·E); a tensor read by k statements has its k
//               gradients added: (k-1)·numel FLOPs of accumulation
//   optimizer   FLOPs per param element: sgd 2 (w -= lr·g), momentum 4 (b = μ·b + g,
//               w -= lr·b), adam 14 (m: 3, v: 4, the two bias corrections 2, w -= lr·m̂ /
//               (sqrt(v̂) + ε): 5), as torch.optim writes them without weight decay
//   memory      params and their gradients at the params' dtype; optimizer state in f32
//               (momentum 1 state, adam 2; --mixed-precision adds f32 master weights for
//               params narrower than f32); activations: the forward buffers the backward
//               reads; peak: the high-water mark through forward and backward with every
//               buffer freed after its last use, params, optimizer state and inputs included
//   recompute   what the backward keeps (recompute.hpp: none, the checkpoints, or chosen under a
//               memory limit); the forward statements made again, counted apart from the
//               step's FLOPs, their bounds in the step's time; memory under that choice
//   roofline    each statement and each gradient bounded on the device by itself
//               (max(FLOPs / peak, ideal bytes / bandwidth)), the bounds summed; a view (a
//               statement or gradient whose plan moves nothing) takes no time and adds no
//               bytes to the totals; the optimizer step is bounded at the f32 peak
//   6·N·P       the rule of thumb beside the exact count: N data points (a statement that
//               reads a param loops over N·|param| index combinations), P params; the
//               difference is split into where it comes from (SixNP::parts)
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/program_plan.hpp"
#include "einexpr/codegen/recompute.hpp"

namespace einexpr {

enum class Optimizer : unsigned char { sgd, momentum, adam, adamw };
const char* name(Optimizer optimizer) noexcept;
/// "sgd", "momentum", "adam", "adamw"; Error listing them otherwise.
Optimizer parse_optimizer(std::string_view text);
/// FLOPs per param element of one update, and f32 states kept per param element.
Count optimizer_flops_per_element(Optimizer optimizer) noexcept;
int optimizer_states(Optimizer optimizer) noexcept;

struct ProgramCostOptions {
  std::string device = "h100";   // device-table entry of the roofline; "" for none
  Optimizer optimizer = Optimizer::sgd;
  bool mixed_precision = false;  // f32 master weights for params narrower than f32
  /// What the backward keeps (recompute.hpp); empty: the program's own choice
  /// (default_recompute: its checkpoint lines, else none).
  std::optional<RecomputeOptions> recompute = std::nullopt;
};

/// The bytes a training step holds throughout, beside its timeline: params, optimizer state
/// (and master weights) and inputs, as ProgramMemory counts them (the limit of --recompute
/// auto applies to these plus the timeline's peak).
std::int64_t step_fixed_bytes(const ProgramPlan& plan, Optimizer optimizer, bool mixed_precision);

/// One gradient a statement's backward computes.
struct StatementGradient {
  std::string tensor;      // the input it is the gradient of
  std::string expression;  // with the program's names: "einsum(dh1, x, 'B E, B D -> D E')"
  Cost cost;
};

struct StatementCost {
  std::string name;        // the tensor it defines
  std::string op;          // "einsum", "reduce mean", "map gelu"
  std::string pattern;
  DType dtype = DType::f32;
  Cost forward;
  bool is_view = false;                      // moves nothing: no time, no bytes in the totals
  std::vector<StatementGradient> gradients;  // empty when its backward does not run
  Count backward_flops, backward_bytes;      // the gradients summed (ideal bytes; views 0)
  std::optional<Roofline> roofline;          // the forward's, on the device
  double backward_time_s = 0;                // the gradients' bounds summed
  std::string roofline_error;                // why roofline is empty, if it is
  // in a block's layer ("hL[3].q0"): the call's name, the layer, its place in the layer
  // (statements with one call and place are the same statement of each layer), the layers
  std::string call;
  int layer = -1;
  int body = -1;
  std::int64_t layers = 0;
};

/// A forward buffer the backward reads: kept from the statement that makes it to the last
/// gradient that reads it.
struct KeptActivation {
  std::string tensor;        // the statement result the buffer holds ("h1")
  std::string read_as;       // the tensors the gradients read in it ("q" for a view), ", "-joined
  std::string shape;         // "[B=1024, E=256] f32"
  Count bytes;
  std::vector<std::string> needed_by;  // the gradients that read it, with the program's names
  std::string call;          // made in a block's layer: the call's name, and the layer
  int layer = -1;
};

struct ProgramMemory {
  Count params_bytes, grads_bytes, optimizer_bytes, inputs_bytes;
  Count activations_bytes;   // what the backward needs kept: the sum over `kept`
  std::vector<KeptActivation> kept;  // in the order the forward makes them
  Count peak_bytes;          // forward + backward high-water mark, everything included
  Count forward_peak_bytes;  // the forward alone (inference): statement buffers only
};

/// 6·N·P beside the exact forward + backward count, and where they differ.
struct SixNP {
  struct Part {
    std::string what;        // "contractions that read a param", ...
    Count exact, rule;       // this part's exact FLOPs and the rule's share of 6·N·P
    std::string note;        // why they differ
  };
  double n = 0;              // data points: rule / (6·P) (exact when every param's is the same)
  bool n_exact = true;       // every param statement loops over the same N
  Count p;                   // params
  Count rule;                // 6·N·P, as Σ over param reads of 6·(index combinations)
  Count exact;               // forward + backward
  Count skipped;             // what the rule counts for gradients toward inputs (not needed)
  std::vector<Part> parts;   // exact and rule summed over the parts are `exact` and `rule`
};

struct ProgramTiming {
  std::string device;
  double forward_s = 0, backward_s = 0, optimizer_s = 0, step_s = 0;
  std::string error;         // non-empty: no bound (a dtype the device table lacks)
  double recompute_s = 0;    // the statements made again (in step_s)
};

struct ProgramCost {
  std::string file;          // the program's file name ("" if none)
  std::string axes;          // "B=1024 D=256 E=256 K=64"
  std::vector<StatementCost> statements;
  Count forward_flops, forward_bytes;      // ideal bytes summed over statements (views: 0)
  Count backward_flops, backward_bytes;    // gradients (views: 0 bytes) + accumulation
  Count accumulate_flops;                  // of which: gradients added together
  Count optimizer_flops, optimizer_bytes;  // one update of every param
  Count step_flops;                        // forward + backward + optimizer: the model's FLOPs (MFU's
                                           // numerator, PaLM's convention), recompute.recompute_flops apart
  Count params;                            // elements
  Optimizer optimizer = Optimizer::sgd;
  bool mixed_precision = false;
  ProgramMemory memory;       // under `recompute`'s choice
  RecomputeChoice recompute;  // what the backward keeps; the FLOPs it makes again are in no other
                              // count (its time is in timing.step_s)
  std::vector<int> recomputed;  // the statements a step makes again, as often as it does (event order)
  SixNP estimate;
  ProgramTiming timing;

  /// Tables for people: statements, totals, memory, the 6·N·P comparison.
  std::string str() const;
};

/// Costs a planned program. Throws ProgramError at a statement whose needed gradient cannot
/// be derived, Error for an unknown device, a kept name that is no statement's result, or a
/// memory limit no choice fits (choose_recompute).
ProgramCost cost(const ProgramPlan& plan, const ProgramCostOptions& options = {});

}  // namespace einexpr
