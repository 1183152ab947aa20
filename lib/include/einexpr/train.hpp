#pragma once
// Training a model program: forward, backward toward the params and the optimizer update,
// planned once and run step after step.
//
//   ast::Program p = parse_program(text, "lecture2.ein");
//   Trainer t = compile_training(p, {.axes = {{"B", 64}}}, {.kind = Optimizer::adam, .lr = 1e-3},
//                                {{"w1", w1}, {"w2", w2}});        // plans, lowers, allocates
//   for (int i = 0; i < 100; ++i) double loss = t.step({{"x", x}}); // no planning, no allocation
//   Tensor w1_now = t.parameters().at("w1");
//
// The program's one output is the loss, a 0-d float; its gradient is seeded with 1. The step
// is the timeline of plan_training (codegen/training_plan.hpp): the forward statements, the
// gradients toward the params in backward order (only where the cost says they flow), then
// the update. Every buffer of that timeline lives in one arena, allocated when the trainer is
// made, at offsets planned by liveness (plan_memory); params, gradients of params and the
// optimizer's state are in it or beside it, never allocated by a step.
//
// The optimizers are torch.optim's, in the params' dtype (f32 or f64; bf16 and f16 params
// through f32 master weights with mixed_precision), step for step:
//   sgd       g = dw + wd·w;                              w -= lr·g
//   momentum  g = dw + wd·w; b = μ·b + g (b = g at first); w -= lr·b       (dampening 0)
//   adam      g = dw + wd·w; m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²;
//             w -= lr/(1-β1^t) · m / (sqrt(v)/sqrt(1-β2^t) + ε)
//   adamw     w -= lr·wd·w first (decoupled), then adam's update without wd
// A param the loss does not depend on has no gradient and is left alone (torch skips a param
// whose .grad is None).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "einexpr/codegen/program_cost.hpp"
#include "einexpr/codegen/program_plan.hpp"
#include "einexpr/codegen/recompute.hpp"
#include "einexpr/codegen/training_plan.hpp"
#include "einexpr/parser/program.hpp"
#include "einexpr/runtime/tensor.hpp"

namespace einexpr {

class StepHooks;  // step_hooks.hpp

struct OptimizerOptions {
  Optimizer kind = Optimizer::sgd;
  double lr = 1e-3;
  double momentum = 0.9;      // momentum: μ
  double weight_decay = 0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam, adamw
  /// bf16 / f16 params (the forward and backward in their dtype) updated through f32 master
  /// weights and f32 optimizer state, each param then the rounding of its master, as
  /// program cost's --mixed-precision counts it. Without it such a param is an error.
  bool mixed_precision = false;
  /// Gradient accumulation: each step's inputs split into this many equal micro-batches
  /// along `batch_axis` (the first dim of every input that has it; no param may), the program
  /// planned once at the micro-batch's size, each micro-batch's forward and backward run in
  /// turn with the loss's gradient seeded 1/K, the params' gradients summed, then one update.
  /// step() returns the mean of the micro-batches' losses: for a loss that averages over the
  /// batch axis, the full batch's loss and gradient (torch's loss / K per micro-batch).
  int micro_batches = 1;
  std::string batch_axis = "B";
  /// What the backward keeps (codegen/recompute.hpp): none, the checkpoints (statement
  /// results; the loss always; every other tensor the backward reads is made again from
  /// them just before the first gradient that needs it), or auto (chosen to fit
  /// memory_limit, the fewest FLOPs made again). Empty: the program's own choice, its
  /// `checkpoint` lines (default_recompute). Under auto the limit holds for the trainer's
  /// peak_bytes_predicted: where the arena's staging buffers push a choice past it, the
  /// search is run again with the limit lowered by the excess (program cost, which does not
  /// lower, may then show the first choice).
  std::optional<RecomputeOptions> recompute = std::nullopt;
  /// dropout's random stream: the k-th dropout of the program at step t (micro-batches count
  /// as steps: t·K + micro) draws its mask from random::stream(seed, t, k) (codegen/random.hpp),
  /// so a run is the same for one seed on any machine, and restore() resumes it bit for bit.
  std::uint64_t seed = 0;
};

using TensorMap = std::map<std::string, Tensor, std::less<>>;

class Trainer {
 public:
  ~Trainer();
  Trainer(Trainer&&) noexcept;
  Trainer& operator=(Trainer&&) noexcept;

  /// One step on the program's inputs (every `input`, by name, of the planned shape and
  /// dtype): forward, backward, update. Returns the loss the forward computed (before the
  /// update). A loss that is NaN or infinite stops the step before its backward: Error
  /// naming the step, the params left as the last step made them.
  double step(const TensorMap& inputs);
  /// Steps taken (each one that updated the params).
  std::int64_t steps() const noexcept;
  /// The params now (the trainer's own storage: a later step changes them; copy to keep).
  const TensorMap& parameters() const noexcept;
  /// Each param's gradient in the last step (views of the arena: the next step overwrites
  /// them; with micro-batches their sum, f32 for a bf16 / f16 param); a param the loss does
  /// not depend on has none.
  TensorMap gradients() const;

  /// The optimizer's state, by torch's names: "w.momentum_buffer" (momentum), "w.exp_avg" and
  /// "w.exp_avg_sq" (adam, adamw) per param with a gradient, and "w.master" (f32) for a bf16 /
  /// f16 param under mixed precision (copies).
  TensorMap optimizer_state() const;
  /// Continues a run from a checkpoint: every param, the state optimizer_state() names for
  /// this optimizer, and the steps taken, so that the next step is the one an uninterrupted
  /// run would take (bit for bit). Error naming what is missing, unknown or misshapen;
  /// nothing changes unless everything fits.
  void restore(const TensorMap& params, const TensorMap& state, std::int64_t steps);

  const ProgramPlan& plan() const noexcept;
  const TrainingPlan& training() const noexcept;
  const OptimizerOptions& optimizer() const noexcept;
  /// The arena (the timeline's buffers, plus the staging buffers a lowering adds inside an
  /// event), the params, the optimizer's state and the program's numbers (0-d tensors):
  /// what the trainer allocates. A step
  /// allocates nothing more (peak_bytes_measured of the CLI checks it).
  std::int64_t peak_bytes_predicted() const noexcept;
  std::int64_t arena_bytes() const noexcept;
  /// The forward FLOPs a step does again under recomputation (cost() of each statement run
  /// again, times the micro-batches); 0 without it.
  Count recompute_flops() const noexcept;
  /// What the backward keeps, as chosen (auto: the search's figures).
  const RecomputeChoice& recompute() const noexcept;

 private:
  struct Impl;
  explicit Trainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend Trainer compile_training(const ast::Program&, const ProgramOptions&, const OptimizerOptions&,
                                  const TensorMap&, std::shared_ptr<StepHooks>);
};

/// Plans the program (plan_program with `options`; the params' shapes and dtypes bind axes
/// as given tensors do), its backward (plan_training) and the update, lowers every plan for
/// the CPU and allocates the arena. `params` holds every param's initial value, copied.
/// Errors: a program whose outputs are not one 0-d float (the loss), a param missing, unknown,
/// of another shape or dtype, a bf16 / f16 param without mixed_precision, options out of range
/// (lr < 0, betas outside [0, 1), eps <= 0). `hooks` (a step on a device mesh, mesh_run.hpp)
/// adds the collectives; under ZeRO it also says which part of each param this trainer
/// updates, and the optimizer's state is that part's (1-d tensors in optimizer_state()).
Trainer compile_training(const ast::Program& program, const ProgramOptions& options,
                         const OptimizerOptions& optimizer, const TensorMap& params,
                         std::shared_ptr<StepHooks> hooks = nullptr);

}  // namespace einexpr
