// What cost --json, program cost --json and explain print, for the tool and for the Python
// module alike, so that einexpr.cost() is exactly `einexpr cost --json`, Program.cost()
// `program cost --json` and einexpr.explain() `explain`.
#include "report.hpp"

#include <algorithm>
#include <set>

#include "output.hpp"

namespace einexpr::cli {

CostReport make_report(const ExprSpec& expr, DType dtype, const DeviceSpec& device) {
  CostReport r;
  r.expr = expr;
  const Plan plan = plan_expr(r.expr, dtype);
  r.cost = cost(plan);
  try {  // a forward's cost never fails for want of a gradient
    r.backward = backward_cost(plan);
  } catch (const Error& e) {
    r.backward_error = e.what();
  }
  try {  // nor for want of a peak where the tables list none (bool, integers)
    r.roofline = roofline(r.cost, device);
  } catch (const Error& e) {
    if (is_floating(dtype)) throw;  // a float peak the chosen device lacks: the user's to fix
    r.roofline_error = e.what();
  }
  return r;
}

namespace {

void write_steps_json(JsonWriter& j, const Cost& c) {
  j.key("steps").begin_array();
  for (const StepCost& s : c.steps) {
    j.begin_object().field("kind", s.kind).field("label", s.label).field("is_view", s.is_view);
    j.field("flops", s.flops).field("flops_exact", s.flops_exact).field("bytes", s.bytes_read + s.bytes_written);
    j.field("bytes_read", s.bytes_read).field("bytes_written", s.bytes_written);
    j.field("bytes_allocated", s.bytes_allocated).end_object();
  }
  j.end_array();
}

/// A figure beside the plan's own counts: its exact literal, or null with `KEY_error` saying
/// it is 2^128 or more (the plan's own counts fit; a figure compared with them need not).
void write_figure(JsonWriter& j, const std::string& key, const MaybeCount& c) {
  if (c) {
    j.field(key, *c);
  } else {
    j.key(key).null();
    j.field(key + "_error", std::string(kOver128Bits) + ": does not fit in 128 bits, so it is not counted exactly");
  }
}

void write_roofline_json(JsonWriter& j, const Roofline& f) {
  j.key("roofline").begin_object().field("device", f.device).field("dtype", name(f.dtype));
  j.field("peak_flops", f.peak_flops).field("bandwidth", f.bandwidth);
  j.field("accelerator_intensity", f.accelerator_intensity).field("bound", f.bound()).field("time_s", f.time_s);
  j.field("compute_time_s", f.compute_time_s).field("memory_time_s", f.memory_time_s);
  j.field("best_mfu", f.best_mfu).end_object();
}

void write_backward_json(JsonWriter& j, const BackwardCost& b) {
  j.key("backward").begin_array();
  for (const GradientCost& g : b.gradients)
    j.begin_object()
        .field("input", g.input)
        .field("expression", g.expression)
        .field("flops", g.cost.flops)
        .field("bytes", g.cost.ideal_bytes())
        .end_object();
  j.end_array();
}

}  // namespace

void write_cost_json(std::ostream& os, const CostReport& r, bool with_gradients) {
  const Cost& c = r.cost;
  JsonWriter j(os);
  j.begin_object().field("op", r.expr.op).field("pattern", r.expr.pattern).field("dtype", name(c.dtype));
  if (r.expr.op == "reduce") j.field("reduction", name(r.expr.reduction));
  if (r.expr.reduction == Reduction::var || r.expr.reduction == Reduction::std)
    j.field("correction", r.expr.correction);
  if (r.expr.op == "map") j.field("function", r.expr.function);
  j.key("sizes").begin_object();
  for (const auto& [axis, len] : r.expr.sizes) j.field(axis, len);
  j.end_object();
  j.field("flops", c.flops).field("flops_exact", c.flops_exact);
  write_figure(j, "naive_flops", c.naive_flops);
  write_figure(j, "flops_numpy", c.flops_numpy);
  j.field("macs", c.macs);
  j.field("bytes_read", c.bytes_read).field("bytes_written", c.bytes_written);
  j.field("bytes_planned", c.bytes_planned).field("peak_extra_bytes", c.peak_extra_bytes);
  j.field("intensity", c.intensity()).field("intensity_exact", c.intensity_exact());
  j.key("formulas").begin_object().field("flops", c.flops_formula.str()).field("bytes", c.bytes_formula.str());
  j.end_object();
  write_steps_json(j, c);
  if (r.backward) {
    j.field("backward_flops", r.backward->flops).field("backward_bytes", r.backward->bytes);
    if (with_gradients) write_backward_json(j, *r.backward);
  } else {
    j.key("backward_flops").null().key("backward_bytes").null();
    j.key("backward").null();
    j.field("backward_error", r.backward_error);
  }
  if (r.roofline) {
    write_roofline_json(j, *r.roofline);
  } else {
    j.key("roofline").null();
    j.field("roofline_error", r.roofline_error);
  }
  j.end_object();
}

void write_explain(std::ostream& os, ExprSpec e, DType dtype) {
  const Plan plan = plan_expr(e, dtype);
  const Cost c = cost(plan);
  os << plan.str() << "steps\n";
  Table t({"step", "kind", "FLOPs", "read", "written", "temporary"}, "llrrrr");
  Count read, written;
  int views = 0;
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const StepCost& s = c.steps[i];
    const int dst = destination(plan.steps.at(i));
    t.add({"%" + std::to_string(dst), s.is_view ? s.kind + " (moves nothing)" : s.kind, si(s.flops.to_double(), "FLOP"),
           iec(s.bytes_read.to_double()), iec(s.bytes_written.to_double()), iec(s.bytes_allocated.to_double())});
    read += s.bytes_read;
    written += s.bytes_written;
    views += s.is_view ? 1 : 0;
  }
  t.add({"total", "", si(c.flops.to_double(), "FLOP"), iec(read.to_double()), iec(written.to_double()),
         iec(c.peak_extra_bytes.to_double()) + " peak"});
  os << t.str() << "  " << views << " of " << c.steps.size() << " steps are views; FLOPs " << c.flops.str()
            << " = " << c.flops_formula.str() << "; planned bytes " << c.bytes_planned.str() << ", ideal "
            << c.ideal_bytes().str() << (plan.output_is_view() ? "; the output is a view of its input\n" : "\n");
}

namespace {

void write_statement_json(JsonWriter& j, const StatementCost& s) {
  j.begin_object().field("name", s.name).field("op", s.op).field("pattern", s.pattern).field("dtype", name(s.dtype));
  j.field("flops", s.forward.flops).field("flops_exact", s.forward.flops_exact);
  j.field("backward_flops", s.backward_flops).field("backward_bytes", s.backward_bytes);
  j.field("bytes_read", s.forward.bytes_read).field("bytes_written", s.forward.bytes_written);
  j.field("bytes_planned", s.forward.bytes_planned).field("is_view", s.is_view);
  if (s.layer >= 0) j.key("block").begin_object().field("call", s.call).field("layer", s.layer).field("layers", s.layers).end_object();
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
  j.key("activations").begin_array();  // what is kept for the backward, and why
  std::vector<std::pair<std::string, std::pair<Count, std::set<int>>>> blocks;  // per call: its bytes and layers
  for (const KeptActivation& k : m.kept) {
    j.begin_object().field("tensor", k.tensor).field("read_as", k.read_as).field("shape", k.shape).field("bytes", k.bytes);
    j.key("needed_by").begin_array();
    for (const std::string& g : k.needed_by) j.value(g);
    j.end_array();
    if (k.layer >= 0) {
      j.key("block").begin_object().field("call", k.call).field("layer", static_cast<std::int64_t>(k.layer)).end_object();
      auto it = std::find_if(blocks.begin(), blocks.end(), [&](const auto& b) { return b.first == k.call; });
      if (it == blocks.end()) it = blocks.insert(blocks.end(), {k.call, {}});
      it->second.first += k.bytes;
      it->second.second.insert(k.layer);
    }
    j.end_object();
  }
  j.end_array();
  j.key("activations_per_block").begin_array();  // each block call's kept bytes, over its layers
  for (const auto& [call, b] : blocks)
    j.begin_object()
        .field("call", call)
        .field("layers", static_cast<std::int64_t>(b.second.size()))
        .field("bytes", b.first)
        .field("bytes_per_layer", Count::from_u128(b.first.raw() / b.second.size()))
        .end_object();
  j.end_array();
}

void write_estimate_json(JsonWriter& j, const SixNP& e) {
  j.key("estimate").begin_object().field("n", e.n).field("n_exact", e.n_exact).field("p", e.p);
  j.field("six_n_p", e.rule).field("exact", e.exact).field("skipped_flops", e.skipped);
  j.key("parts").begin_array();
  for (const SixNP::Part& p : e.parts)
    j.begin_object().field("what", p.what).field("exact", p.exact).field("rule", p.rule).field("note", p.note).end_object();
  j.end_array().end_object();
}

}  // namespace

void write_program_cost_json(std::ostream& os, const ProgramPlan& plan, const ProgramCost& c, const std::string& file,
                             const std::string& dtype, const Comparisons* compare, const MeshCost* mesh) {
  JsonWriter j(os);
  j.begin_object().field("file", file).field("dtype", dtype);
  j.key("axes").begin_object();
  for (const auto& [axis, length] : plan.axes) j.field(axis, length);
  j.end_object();
  j.field("optimizer", name(c.optimizer)).field("mixed_precision", c.mixed_precision);
  j.field("forward_flops", c.forward_flops).field("backward_flops", c.backward_flops);
  j.field("accumulate_flops", c.accumulate_flops).field("optimizer_flops", c.optimizer_flops);
  j.field("step_flops", c.step_flops).field("forward_bytes", c.forward_bytes);
  Count matmul;  // the forward's contractions alone (torch's profiler counts these)
  for (std::size_t i = 0; i < plan.statements.size(); ++i)
    for (const Step& step : plan.statements[i].plan.steps)
      if (std::holds_alternative<ContractStep>(step)) {
        matmul += c.statements[i].forward.flops;
        break;
      }
  j.field("matmul_flops", matmul);
  j.field("backward_bytes", c.backward_bytes).field("optimizer_bytes", c.optimizer_bytes);
  j.field("params", c.params);
  const RecomputeChoice& r = c.recompute;
  j.field("recompute_flops", r.recompute_flops);
  j.key("recompute").begin_object().field("mode", name(r.mode)).field("recomputes", r.training.recompute);
  if (r.training.recompute) {
    j.key("checkpoints").begin_array();
    for (const std::string& k : r.training.keep) j.value(k);
    j.end_array();
  }
  if (r.mode == RecomputeMode::automatic) {
    j.field("memory_limit", r.memory_limit).field("fixed_bytes", r.fixed_bytes);
    j.field("no_recompute_peak_bytes", checked_add(r.no_recompute_peak_bytes, r.fixed_bytes));
    j.field("smallest_peak_bytes", checked_add(r.smallest_peak_bytes, r.fixed_bytes));
    j.field("candidates", r.candidates).field("tried", r.tried).field("exhaustive", r.exhaustive);
    j.field("optimal", r.optimal);
  }
  j.end_object();
  write_memory_json(j, c.memory);
  j.key("statements").begin_array();
  for (const StatementCost& s : c.statements) write_statement_json(j, s);
  j.end_array();
  if (c.timing.error.empty()) {
    j.key("roofline").begin_object().field("device", c.timing.device).field("forward_time_s", c.timing.forward_s);
    j.field("backward_time_s", c.timing.backward_s).field("optimizer_time_s", c.timing.optimizer_s);
    j.field("recompute_time_s", c.timing.recompute_s).field("step_time_s", c.timing.step_s).end_object();
  } else {
    j.key("roofline").null().field("roofline_error", c.timing.error);
  }
  write_estimate_json(j, c.estimate);
  if (compare) {
    const Geometry& g = compare->geometry;
    j.key("compare").begin_object();
    j.key("geometry").begin_object().field("l", g.l).field("h", g.h).field("s", g.s).field("V", g.V).field("a", g.a);
    j.field("k", g.k).field("f", g.f).field("b", g.b).end_object();
    j.key("rows").begin_array();
    for (const Comparison& r : compare->rows) {
      j.begin_object().field("what", r.what).field("formula", r.formula).field("published", r.published);
      j.field("exact", r.exact).field("note", r.note);
      j.key("parts").begin_array();
      for (const ComparisonPart& p : r.parts)
        j.begin_object().field("part", p.part).field("published", p.published).field("exact", p.exact).end_object();
      j.end_array().end_object();
    }
    j.end_array().end_object();
  }
  if (mesh) {  // per device on the mesh, and every collective
    j.key("mesh").begin_object();
    j.key("dims").begin_array();
    for (const MeshDim& d : mesh->mesh.dims)
      j.begin_object().field("name", d.name).field("size", d.size).field("link", d.link).end_object();
    j.end_array();
    j.key("shard").begin_object();
    for (const auto& [axis, dim] : mesh->mesh.shard) j.field(axis, dim);
    j.end_object();
    j.field("devices", mesh->mesh.devices()).field("zero", static_cast<std::int64_t>(mesh->mesh.zero));
    j.field("forward_flops", mesh->forward_flops).field("backward_flops", mesh->backward_flops);
    j.field("optimizer_flops", mesh->optimizer_flops).field("params_bytes", mesh->params_bytes);
    j.field("grads_bytes", mesh->grads_bytes).field("optimizer_bytes", mesh->optimizer_bytes);
    j.field("activations_bytes", mesh->activations_bytes);
    j.field("forward_bus_bytes", mesh->forward_bus_bytes).field("backward_bus_bytes", mesh->backward_bus_bytes);
    j.field("optimizer_bus_bytes", mesh->optimizer_bus_bytes);
    const MeshTiming& t = mesh->timing;
    j.key("timing").begin_object().field("device", t.device);
    if (t.error.empty()) {
      j.field("compute_s", t.compute_s).field("forward_comm_s", t.forward_comm_s);
      j.field("backward_comm_s", t.backward_comm_s).field("optimizer_comm_s", t.optimizer_comm_s);
      j.field("step_s", t.step_s).field("overlapped_s", t.overlapped_s);
    } else {
      j.field("error", t.error);
    }
    j.end_object();
    j.key("collectives").begin_array();
    for (const Collective& c : mesh->collectives) {
      j.begin_object().field("tensor", c.tensor).field("phase", c.phase).field("kind", name(c.kind));
      j.field("mesh_dim", c.mesh_dim).field("ranks", c.ranks).field("elements", c.elements).field("bytes", c.bytes);
      j.field("bus_bytes", c.bus_bytes).field("time_s", c.time_s).field("why", c.why);
      if (c.kind == CollectiveKind::all_reduce) j.field("reduce", c.reduce);
      if (!c.step.empty()) j.field("step", c.step);
      if (c.layer >= 0)
        j.key("block").begin_object().field("call", c.call).field("layer", static_cast<std::int64_t>(c.layer)).end_object();
      j.end_object();
    }
    j.end_array().end_object();
  }
  j.end_object();
}

}  // namespace einexpr::cli
