// cost(ProgramPlan): each statement's forward Cost and needed gradients' Costs, the totals,
// the optimizer update, memory (training_memory.cpp), 6·N·P (estimate.cpp) and the
// roofline bounds on the device.
#include "einexpr/codegen/program_cost.hpp"

#include <algorithm>
#include <cctype>

#include "einexpr/runtime/error.hpp"
#include "program/backward_plan.hpp"
#include "program/estimate.hpp"
#include "program/training_memory.hpp"

namespace einexpr {

const char* name(Optimizer optimizer) noexcept {
  switch (optimizer) {
    case Optimizer::sgd: return "sgd";
    case Optimizer::momentum: return "momentum";
    case Optimizer::adam: return "adam";
    case Optimizer::adamw: return "adamw";
  }
  return "?";
}

Optimizer parse_optimizer(std::string_view text) {
  for (Optimizer o : {Optimizer::sgd, Optimizer::momentum, Optimizer::adam, Optimizer::adamw})
    if (text == name(o)) return o;
  throw Error("unknown optimizer '" + std::string(text) + "' (expected sgd, momentum, adam or adamw)");
}

// torch.optim's updates without weight decay, each +, -, ·, / and sqrt one FLOP:
//   sgd       w -= lr·g                                               2
//   momentum  b = μ·b + g; w -= lr·b                                  2 + 2
//   adam      m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g·g;             3 + 4
//             m̂ = m / (1-β1^t); v̂ = v / (1-β2^t);                      1 + 1
//             w -= lr·m̂ / (sqrt(v̂) + ε)                               5
//   adamw     adam's (its decoupled weight decay, like every weight decay, not counted)
Count optimizer_flops_per_element(Optimizer optimizer) noexcept {
  switch (optimizer) {
    case Optimizer::sgd: return 2;
    case Optimizer::momentum: return 4;
    case Optimizer::adam:
    case Optimizer::adamw: return 14;
  }
  return 0;
}

int optimizer_states(Optimizer optimizer) noexcept {
  return optimizer == Optimizer::adam || optimizer == Optimizer::adamw ? 2 : optimizer == Optimizer::momentum ? 1 : 0;
}

namespace {

using program_detail::BackwardPlan;

Count numel_of(const ProgramTensor& t) { return Count::from_int64(checked_numel(t.shape)); }
Count bytes_of(const ProgramTensor& t) { return numel_of(t) * Count(element_size(t.dtype)); }
bool narrower_than_f32(DType d) { return is_floating(d) && element_size(d) < 4; }

/// The time bound of `flops` and `bytes` at `dtype` on the device.
double bound(Count flops, Count bytes, DType dtype, const DeviceSpec& device) {
  Cost c;
  c.dtype = dtype;
  c.flops = flops;
  c.bytes_read = bytes;
  return roofline(c, device).time_s;
}

/// A plan that moves nothing (a view): no FLOPs, nothing planned to move.
bool moves_nothing(const Cost& c) { return c.flops == Count{} && c.bytes_planned == Count{}; }

/// The roofline of `c`, with no bytes for a view.
Roofline bound_of(Cost c, const DeviceSpec& device) {
  if (moves_nothing(c)) c.bytes_read = c.bytes_written = Count{};
  return roofline(c, device);
}

StatementCost statement_cost(const ProgramPlan& plan, std::size_t s, const BackwardPlan& bwd, const DeviceSpec* device) {
  const PlannedStatement& st = plan.statements[s];
  StatementCost c;
  c.name = st.name;
  c.op = st.spec.str();
  c.pattern = st.pattern;
  c.dtype = st.plan.dtype;
  c.forward = cost(st.plan);
  c.is_view = moves_nothing(c.forward);
  if (st.call >= 0) {
    const ProgramBlock& b = plan.blocks[static_cast<std::size_t>(st.call)];
    c.call = b.name;
    c.layer = st.layer;
    c.body = st.body;
    c.layers = b.layers;
  }
  for (const program_detail::NeededGradient& g : bwd.gradients[s]) {
    Cost gc = cost(g.gradient.plan);
    gc.op = "backward";
    gc.pattern = g.expression;
    c.backward_flops += gc.flops;
    if (!moves_nothing(gc)) c.backward_bytes += gc.ideal_bytes();
    c.gradients.push_back({plan.tensor(g.tensor).name, g.expression, std::move(gc)});
  }
  if (device == nullptr) return c;
  try {
    c.roofline = bound_of(c.forward, *device);
    for (const StatementGradient& g : c.gradients) c.backward_time_s += bound_of(g.cost, *device).time_s;
  } catch (const Error& e) {
    c.roofline.reset();
    c.backward_time_s = 0;
    c.roofline_error = e.what();
  }
  return c;
}

struct Update {
  Count flops, bytes;
  double time_s = 0;
};

// One update of every param: its FLOPs, the bytes it moves (the gradient read; the weights,
// each f32 state and master weights read and written) and its bound at the f32 peak.
Update optimizer_update(const ProgramPlan& plan, const ProgramCostOptions& o, const DeviceSpec* device) {
  Update u;
  for (const ProgramTensor& t : plan.tensors) {
    if (t.role != TensorRole::param) continue;
    const Count n = numel_of(t), es = element_size(t.dtype);
    const bool master = o.mixed_precision && narrower_than_f32(t.dtype);
    const Count per = es + es * Count(2) + Count(8u * static_cast<unsigned>(optimizer_states(o.optimizer))) +
                      (master ? Count(8) : Count(0));
    u.flops += n * optimizer_flops_per_element(o.optimizer);
    u.bytes += n * per;
  }
  if (device) u.time_s = bound(u.flops, u.bytes, DType::f32, *device);
  return u;
}

ProgramMemory memory(const ProgramPlan& plan, const BackwardPlan& bwd, const ProgramCostOptions& o,
                     const TrainingOptions& training, std::vector<int>& recomputed) {
  ProgramMemory m;
  for (const ProgramTensor& t : plan.tensors) {
    if (t.role == TensorRole::input) m.inputs_bytes += bytes_of(t);
    if (t.role != TensorRole::param) continue;
    m.params_bytes += bytes_of(t);
    m.grads_bytes += bytes_of(t);
    const int states = optimizer_states(o.optimizer) + (o.mixed_precision && narrower_than_f32(t.dtype) ? 1 : 0);
    m.optimizer_bytes += numel_of(t) * Count(4u * static_cast<unsigned>(states));
  }
  const program_detail::TrainingMemory tm = program_detail::training_memory(plan, bwd, training);
  m.activations_bytes = tm.activations_bytes;
  m.kept = tm.kept;
  m.forward_peak_bytes = tm.forward_peak_bytes;
  recomputed = tm.recomputed;
  m.peak_bytes = tm.peak_bytes + m.params_bytes + m.optimizer_bytes + m.inputs_bytes;
  return m;
}

void timing(ProgramCost& c, const ProgramPlan& plan, const BackwardPlan& bwd, const Update& update,
            const std::vector<int>& recomputed, const DeviceSpec& device) {
  c.timing.device = device.name;
  for (const StatementCost& s : c.statements) {
    if (!s.roofline_error.empty()) {
      c.timing = {};
      c.timing.device = device.name;
      c.timing.error = "statement '" + s.name + "': " + s.roofline_error;
      return;
    }
    c.timing.forward_s += s.roofline->time_s;
    c.timing.backward_s += s.backward_time_s;
  }
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {  // accumulation: an add per extra gradient
    const int k = bwd.contributions[t];
    if (k < 2) continue;
    const ProgramTensor& x = plan.tensors[t];
    const Count adds = numel_of(x) * Count(static_cast<unsigned>(k - 1));
    c.timing.backward_s += bound(adds, adds * Count(3 * element_size(x.dtype)), x.dtype, device);
  }
  for (int s : recomputed) c.timing.recompute_s += c.statements[static_cast<std::size_t>(s)].roofline->time_s;
  c.timing.optimizer_s = update.time_s;
  c.timing.step_s = c.timing.forward_s + c.timing.backward_s + c.timing.recompute_s + c.timing.optimizer_s;
}

}  // namespace

std::int64_t step_fixed_bytes(const ProgramPlan& plan, Optimizer optimizer, bool mixed_precision) {
  ProgramCostOptions o;
  o.optimizer = optimizer;
  o.mixed_precision = mixed_precision;
  Count fixed;
  for (const ProgramTensor& t : plan.tensors) {
    if (t.role == TensorRole::input) fixed += bytes_of(t);
    if (t.role != TensorRole::param) continue;
    const int states = optimizer_states(optimizer) + (mixed_precision && narrower_than_f32(t.dtype) ? 1 : 0);
    fixed += bytes_of(t) + numel_of(t) * Count(4u * static_cast<unsigned>(states));
  }
  constexpr std::uint64_t most = static_cast<std::uint64_t>(INT64_MAX);
  return fixed.fits_u64() && fixed.u64() <= most ? static_cast<std::int64_t>(fixed.u64()) : INT64_MAX;
}

ProgramCost cost(const ProgramPlan& plan, const ProgramCostOptions& options) {
  const DeviceSpec* device = options.device.empty() ? nullptr : &find_device(options.device);
  const BackwardPlan bwd = program_detail::plan_backward(plan);
  ProgramCost c;
  c.file = plan.program.file;
  c.axes = plan.axes_text();
  c.optimizer = options.optimizer;
  c.mixed_precision = options.mixed_precision;
  for (std::size_t s = 0; s < plan.statements.size(); ++s) {
    c.statements.push_back(statement_cost(plan, s, bwd, device));
    const StatementCost& sc = c.statements.back();
    c.forward_flops += sc.forward.flops;
    if (!sc.is_view) c.forward_bytes += sc.forward.ideal_bytes();
    c.backward_flops += sc.backward_flops;
    c.backward_bytes += sc.backward_bytes;
  }
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    const int k = bwd.contributions[t];
    const Count adds = numel_of(plan.tensors[t]) * Count(static_cast<unsigned>(std::max(k - 1, 0)));
    c.accumulate_flops += adds;  // each add reads two gradients and writes one
    c.backward_bytes += adds * Count(3 * element_size(plan.tensors[t].dtype));
    if (plan.tensors[t].role == TensorRole::param) c.params += numel_of(plan.tensors[t]);
  }
  c.backward_flops += c.accumulate_flops;
  const Update update = optimizer_update(plan, options, device);
  c.optimizer_flops = update.flops;
  c.optimizer_bytes = update.bytes;
  c.recompute = choose_recompute(plan, options.recompute ? *options.recompute : default_recompute(plan),
                                 step_fixed_bytes(plan, options.optimizer, options.mixed_precision));
  c.step_flops = c.forward_flops + c.backward_flops + c.optimizer_flops;
  c.memory = memory(plan, bwd, options, c.recompute.training, c.recomputed);
  c.estimate = program_detail::six_n_p(plan, bwd, c);
  if (device) timing(c, plan, bwd, update, c.recomputed, *device);
  return c;
}

}  // namespace einexpr
