// plan_cost_run(): model programs past the parser (model_run.hpp says what is checked).
#include "model_run.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "einexpr/codegen/mesh.hpp"
#include "einexpr/einexpr.hpp"
#include "fuzz_support.hpp"

using namespace einexpr;

namespace fuzz {

namespace {

constexpr std::int64_t max_run_bytes = std::int64_t{1} << 20;

void check_cost(const ProgramCost& c) {
  Count forward, backward, exact, rule;
  for (const StatementCost& s : c.statements) forward += s.forward.flops, backward += s.backward_flops;
  FUZZ_CHECK(forward == c.forward_flops, "the statements' forward FLOPs do not add up");
  FUZZ_CHECK(backward + c.accumulate_flops == c.backward_flops, "the statements' backward FLOPs do not add up");
  for (const SixNP::Part& p : c.estimate.parts) exact += p.exact, rule += p.rule;
  FUZZ_CHECK(exact == c.estimate.exact && rule == c.estimate.rule, "the 6·N·P parts do not add up");
  FUZZ_CHECK(c.estimate.exact == c.forward_flops + c.backward_flops, "6·N·P's exact count is not forward + backward");
  const ProgramMemory& m = c.memory;
  FUZZ_CHECK(m.peak_bytes >= m.params_bytes + m.inputs_bytes + m.optimizer_bytes + m.activations_bytes,
             "the peak is below what is held throughout plus the activations: " + m.peak_bytes.str());
  FUZZ_CHECK(m.grads_bytes == m.params_bytes, "gradients and params differ in size");
}

void train(const ast::Program& program, const ProgramOptions& options, const ProgramPlan& plan,
           const std::map<std::string, Tensor, std::less<>>& given, const ProgramRun& forward);

// A program with a mesh line: per device no more than the whole, the collectives' bytes add up;
// a layout the program cannot take is an Error (which plan_cost_run accepts).
void check_mesh(const ast::Program& program, const ProgramPlan& plan, const ProgramCost& c) {
  const std::optional<Mesh> mesh = program_mesh(program);
  if (!mesh) return;
  const MeshCost m = shard(plan, c, *mesh);
  FUZZ_CHECK(m.forward_flops <= c.forward_flops, "a device does more forward FLOPs than the whole program");
  FUZZ_CHECK(m.params_bytes <= c.memory.params_bytes, "a device holds more params than the program has");
  FUZZ_CHECK(m.activations_bytes <= c.memory.activations_bytes, "a device keeps more than the whole program");
  Count sum;
  for (const Collective& col : m.collectives) {
    FUZZ_CHECK(col.ranks > 1 || col.bus_bytes == Count(0), "a collective over one device sends bytes");
    sum += col.bus_bytes;
  }
  FUZZ_CHECK(sum == m.forward_bus_bytes + m.backward_bus_bytes + m.optimizer_bus_bytes, "the collectives' bytes do not add up");
}

void run(const ast::Program& program, const ProgramOptions& options) {
  const CompiledProgram m(program, options);
  if (m.unshared_bytes() > max_run_bytes || m.peak_bytes_predicted() > max_run_bytes) return;
  FUZZ_CHECK(m.arena_bytes() <= m.unshared_bytes() + 64 * static_cast<std::int64_t>(m.plan().buffers.size()),
             "the arena is larger than its buffers without reuse");
  std::map<std::string, Tensor, std::less<>> inputs;
  std::uint64_t seed = 1;
  for (const ProgramTensor& t : m.plan().tensors) {
    if (t.role != TensorRole::input && t.role != TensorRole::param) continue;
    if (checked_numel(t.shape) * static_cast<std::int64_t>(element_size(t.dtype)) > max_run_bytes) return;
    inputs[t.name] = Tensor::randn(t.shape, DType::f64, seed++).to(t.dtype);
  }
  const ProgramRun r = m.run(inputs);
  FUZZ_CHECK(r.peak_bytes_measured <= m.peak_bytes_predicted(),
             "measured peak " + std::to_string(r.peak_bytes_measured) + " above the predicted " +
                 std::to_string(m.peak_bytes_predicted()));
  FUZZ_CHECK(r.outputs.size() == m.plan().outputs.size(), "a run returned the wrong number of outputs");
  train(program, options, m.plan(), inputs, r);
}

// A program whose one output is a 0-d float depending on a param: one sgd step (bf16 and
// f16 params through f32 master weights; a param of another dtype is refused with an Error). Its loss is the forward run's bit for bit (the same plans on the same
// layouts; without dropout, which a run skips), it allocates nothing past compile_training, and what it allocates is what it
// predicted.
void train(const ast::Program& program, const ProgramOptions& options, const ProgramPlan& plan,
           const std::map<std::string, Tensor, std::less<>>& given, const ProgramRun& forward) {
  if (plan.outputs.size() != 1) return;
  const ProgramTensor& loss = plan.tensor(plan.outputs[0]);
  if (!loss.shape.empty() || !is_floating(loss.dtype) || !loss.requires_grad) return;
  TensorMap params, inputs;
  for (const auto& [name, t] : given) {
    const ProgramTensor& pt = plan.tensor(plan.tensor(name));
    (pt.role == TensorRole::param ? params : inputs)[name] = t;
  }
  const double want = forward.outputs[0].second.to(DType::f64).data<double>()[0];  // before the window
  reset_storage_peak(Device::cpu());
  const std::size_t before = storage_usage(Device::cpu()).bytes_in_use;
  Trainer t = compile_training(program, options, {.kind = Optimizer::sgd, .lr = 0.01, .mixed_precision = true}, params);
  FUZZ_CHECK(t.training().peak_bytes() <= t.arena_bytes(), "the arena is below the timeline's peak");
  if (t.peak_bytes_predicted() > max_run_bytes) return;
  const std::size_t compiled = storage_usage(Device::cpu()).bytes_in_use;
  double got = 0;
  try {
    got = t.step(inputs);
  } catch (const Error& e) {
    const std::string what = e.what();
    FUZZ_CHECK(what.rfind("the loss is ", 0) == 0 && !std::isfinite(want), "a step failed: " + what);
    return;
  }
  if (t.plan().dropouts == 0)  // a run is inference: dropout drops nothing there
    FUZZ_CHECK(got == want || (std::isnan(got) && std::isnan(want)),
               "the trainer's loss " + std::to_string(got) + " is not the forward's " + std::to_string(want));
  FUZZ_CHECK(storage_usage(Device::cpu()).bytes_in_use == compiled, "a step kept memory");
  FUZZ_CHECK(static_cast<std::int64_t>(storage_usage(Device::cpu()).peak_bytes_in_use - before) <= t.peak_bytes_predicted(),
             "the trainer allocated more than it predicted");
  // the same step with everything but the loss recomputed: the same loss and params, bit for bit
  Trainer r = compile_training(program, options, {.kind = Optimizer::sgd, .lr = 0.01, .mixed_precision = true,
                                                  .recompute = RecomputeOptions{.mode = RecomputeMode::checkpoints}},
                               params);
  const double again = r.step(inputs);
  FUZZ_CHECK(again == got || (std::isnan(again) && std::isnan(got)), "recomputation changed the loss");
  for (const auto& [name, w] : t.parameters()) {
    const Tensor& v = r.parameters().at(name);
    FUZZ_CHECK(std::memcmp(v.data_ptr(), w.data_ptr(), w.nbytes()) == 0, "recomputation changed param '" + name + "'");
  }
  // and with what is kept chosen to fit just under the first trainer's peak: within the
  // limit, or refused; the same loss either way
  const RecomputeOptions tight{.mode = RecomputeMode::automatic, .memory_limit = t.peak_bytes_predicted() - 1, .search_budget = 200};
  std::optional<Trainer> a;
  try {
    a.emplace(compile_training(program, options, {.kind = Optimizer::sgd, .lr = 0.01, .mixed_precision = true, .recompute = tight},
                               params));
  } catch (const Error& e) {
    FUZZ_CHECK(std::string(e.what()).find("memory limit") != std::string::npos, std::string("auto refused: ") + e.what());
    return;
  }
  FUZZ_CHECK(a->peak_bytes_predicted() <= tight.memory_limit, "recompute auto went past its limit");
  const double chosen = a->step(inputs);
  FUZZ_CHECK(chosen == got || (std::isnan(chosen) && std::isnan(got)), "recompute auto changed the loss");
}

}  // namespace

void plan_cost_run(const ast::Program& program, std::string_view text,
                   void (*check_place)(const ProgramError&, std::string_view)) {
  ProgramOptions options;
  for (const ast::AxisDef* d : ast::axis_definitions(program))
    if (d->length > 8) options.axes.emplace_back(d->name.name, 1 + d->length % 8);
  try {
    const ProgramPlan plan = plan_program(program, options);
    const ProgramCost c = cost(plan);
    check_cost(c);
    check_mesh(program, plan, c);
    run(program, options);
  } catch (const InternalError& e) {
    FUZZ_CHECK(false, std::string("InternalError: ") + e.what());
  } catch (const ProgramError& e) {
    check_place(e, text);
  } catch (const Error&) {
    // a length that overflows, a planner's refusal outside a statement: fine, it said why
  }
}

}  // namespace fuzz
