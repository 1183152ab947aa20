// program check, program cost: a model file checked (names, then shapes and dtypes in one
// axis environment) and costed for a training step, from the file and sizes alone.
#include <algorithm>
#include <iostream>

#include "args.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace einexpr::cli {

namespace {

std::string shape_text(const ProgramPlan& plan, int id) {
  const ProgramTensor& t = plan.tensor(id);
  std::string s;
  for (std::size_t d = 0; d < t.dims.size(); ++d) s += (d ? ", " : "") + t.dims[d] + "=" + std::to_string(t.shape[d]);
  return "[" + s + "]";
}

void write_statement_json(JsonWriter& j, const StatementCost& s) {
  j.begin_object().field("name", s.name).field("op", s.op).field("pattern", s.pattern).field("dtype", name(s.dtype));
  j.field("flops", s.forward.flops).field("flops_exact", s.forward.flops_exact);
  j.field("backward_flops", s.backward_flops).field("backward_bytes", s.backward_bytes);
  j.field("bytes_read", s.forward.bytes_read).field("bytes_written", s.forward.bytes_written);
  j.field("bytes_planned", s.forward.bytes_planned).field("is_view", s.is_view);
  j.key("gradients").begin_array();
  for (const StatementGradient& g : s.gradients)
    j.begin_object()
        .field("tensor", g.tensor)
        .field("expression", g.expression)
        .field("flops", g.cost.flops)
        .field("bytes", g.cost.ideal_bytes())
        .end_object();
  j.end_array();
  if (s.roofline) {
    j.key("roofline").begin_object().field("time_s", s.roofline->time_s).field("bound", s.roofline->bound());
    j.field("backward_time_s", s.backward_time_s).end_object();
  } else {
    j.key("roofline").null();
    if (!s.roofline_error.empty()) j.field("roofline_error", s.roofline_error);
  }
  j.end_object();
}

void write_memory_json(JsonWriter& j, const ProgramMemory& m) {
  j.key("memory").begin_object().field("params_bytes", m.params_bytes).field("grads_bytes", m.grads_bytes);
  j.field("optimizer_bytes", m.optimizer_bytes).field("inputs_bytes", m.inputs_bytes);
  j.field("activations_bytes", m.activations_bytes).field("peak_bytes", m.peak_bytes);
  j.field("forward_peak_bytes", m.forward_peak_bytes).end_object();
}

void write_estimate_json(JsonWriter& j, const SixNP& e) {
  j.key("estimate").begin_object().field("n", e.n).field("n_exact", e.n_exact).field("p", e.p);
  j.field("six_n_p", e.rule).field("exact", e.exact).field("skipped_flops", e.skipped);
  j.key("parts").begin_array();
  for (const SixNP::Part& p : e.parts)
    j.begin_object().field("what", p.what).field("exact", p.exact).field("rule", p.rule).field("note", p.note).end_object();
  j.end_array().end_object();
}

void print_cost_json(const ProgramPlan& plan, const ProgramCost& c, const ProgramCostArgs& args) {
  JsonWriter j(std::cout);
  j.begin_object().field("file", args.file).field("dtype", args.dtype);
  j.key("axes").begin_object();
  for (const auto& [axis, length] : plan.axes) j.field(axis, length);
  j.end_object();
  j.field("optimizer", name(c.optimizer)).field("mixed_precision", c.mixed_precision);
  j.field("forward_flops", c.forward_flops).field("backward_flops", c.backward_flops);
  j.field("accumulate_flops", c.accumulate_flops).field("optimizer_flops", c.optimizer_flops);
  j.field("step_flops", c.step_flops).field("forward_bytes", c.forward_bytes);
  j.field("backward_bytes", c.backward_bytes).field("optimizer_bytes", c.optimizer_bytes);
  j.field("params", c.params);
  write_memory_json(j, c.memory);
  j.key("statements").begin_array();
  for (const StatementCost& s : c.statements) write_statement_json(j, s);
  j.end_array();
  if (c.timing.error.empty()) {
    j.key("roofline").begin_object().field("device", c.timing.device).field("forward_time_s", c.timing.forward_s);
    j.field("backward_time_s", c.timing.backward_s).field("optimizer_time_s", c.timing.optimizer_s);
    j.field("step_time_s", c.timing.step_s).end_object();
  } else {
    j.key("roofline").null().field("roofline_error", c.timing.error);
  }
  write_estimate_json(j, c.estimate);
  j.end_object();
}

}  // namespace

int program_check_command(const ProgramCheckArgs& args) {
  const ProgramPlan plan = plan_program(read_program_file(args.file));
  std::cout << "ok: " << args.file << " (" << plan.axes_text() << ")\n";
  Table t({}, "llll");
  for (std::size_t id = 0; id < plan.tensors.size(); ++id) {
    const ProgramTensor& x = plan.tensors[id];
    const bool output = std::find(plan.outputs.begin(), plan.outputs.end(), static_cast<int>(id)) != plan.outputs.end();
    const std::string role = x.role == TensorRole::statement ? plan.statements[static_cast<std::size_t>(x.statement)].spec.str()
                                                             : name(x.role);
    t.add({x.name, role, shape_text(plan, static_cast<int>(id)) + " " + std::string(name(x.dtype)), output ? "output" : ""});
  }
  std::cout << t.str();
  return 0;
}

int program_cost_command(const ProgramCostArgs& args) {
  ProgramOptions options;
  options.axes = parse_lengths(args.lengths);
  options.dtype = parse_dtype(args.dtype);
  ProgramCostOptions cost_options;
  cost_options.device = args.device;
  cost_options.optimizer = parse_optimizer(args.optimizer);
  cost_options.mixed_precision = args.mixed_precision;
  find_device(args.device);  // an unknown device: exit 1 before any work
  const ProgramPlan plan = plan_program(read_program_file(args.file), options);
  const ProgramCost c = cost(plan, cost_options);
  if (args.json) {
    print_cost_json(plan, c, args);
    return 0;
  }
  std::cout << c.str();
  return 0;
}

}  // namespace einexpr::cli
