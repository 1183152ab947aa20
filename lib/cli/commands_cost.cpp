// cost, explain, check: what an expression costs and how it is planned, from the pattern
// and the axis sizes alone (nothing is allocated), and whether a pattern is valid.
#include <iostream>
#include <optional>
#include <variant>

#include "args.hpp"
#include "commands.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/parse.hpp"
#include "output.hpp"

namespace einexpr::cli {

namespace {

/// Everything `cost` prints, computed before anything is printed.
struct CostReport {
  ExprSpec expr;
  Cost cost;
  std::optional<BackwardCost> backward;  // none when a gradient is not defined...
  std::string backward_error;            // ...and why
  std::optional<Roofline> roofline;      // none when the device lists no peak for the dtype...
  std::string roofline_error;            // ...and why
};

CostReport make_report(const CostArgs& args) {
  CostReport r;
  r.expr = parse_expr_args(args.expr.op, args.expr.pattern, args.expr.rest, args.expr.correction,
                           args.expr.eps);
  const DType dtype = parse_dtype(args.expr.dtype);
  const DeviceSpec device = find_device(args.device);
  const Plan plan = plan_from_sizes(r.expr.op_spec(), r.expr.pattern, r.expr.sizes, dtype);
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

std::string title(const ExprSpec& e, DType dtype) {
  std::string t = e.op + " '" + e.pattern + "'";
  if (e.op == "reduce") t += std::string(" ") + name(e.reduction);
  if (e.reduction == Reduction::var || e.reduction == Reduction::std)
    t += " correction " + std::to_string(e.correction);
  if (e.op == "map") t += " " + e.function;
  return t + " (" + std::string(name(dtype)) + ")  " + lengths_text(e.sizes) + "\n";
}

void print_cost_table(const CostReport& r) {
  const Cost& c = r.cost;
  Table t({}, "lrll");
  add_quantity(t, "FLOPs", si(c.flops.to_double(), "FLOP"), c.flops.str() + " = " + c.flops_formula.str());
  add_quantity(t, "exact FLOPs", si(c.flops_exact.to_double(), "FLOP"), c.flops_exact.str() + " (multiplies + adds)");
  if (c.op == "einsum")
    add_quantity(t, "numpy FLOPs", si(c.flops_numpy.to_double(), "FLOP"),
                 c.flops_numpy.str() + " (numpy.einsum_path's count of this path)");
  add_quantity(t, "MACs", si(c.macs.to_double(), "MAC"), c.macs.str() + " (multiply-accumulates, as fvcore counts)");
  if (c.naive_flops != c.flops)
    add_quantity(t, "naive FLOPs", si(c.naive_flops.to_double(), "FLOP"), c.naive_flops.str() + " (one loop nest)");
  add_quantity(t, "bytes read", iec(c.bytes_read.to_double()), c.bytes_read.str() + " (each input once)");
  add_quantity(t, "bytes written", iec(c.bytes_written.to_double()), c.bytes_written.str() + " (the output once)");
  add_quantity(t, "bytes planned", iec(c.bytes_planned.to_double()), c.bytes_planned.str() + " (what the steps move)");
  add_quantity(t, "peak temporary", iec(c.peak_extra_bytes.to_double()), c.peak_extra_bytes.str());
  add_quantity(t, "intensity", num(c.intensity()) + " FLOP/B",
               "exact " + num(c.intensity_exact()) + "; ideal bytes = " + c.bytes_formula.str());
  if (r.backward)
    add_quantity(t, "backward", si(r.backward->flops.to_double(), "FLOP"),
                 r.backward->flops.str() + " (" + std::to_string(r.backward->gradients.size()) + " gradients)");
  else
    t.add({"backward", "-", "", "none: " + r.backward_error});
  if (r.roofline) {
    const Roofline& f = *r.roofline;
    t.add({"roofline", "", "",
           f.device + " (" + std::string(name(f.dtype)) + "): " + si(f.peak_flops, "FLOP/s") + ", " +
               si(f.bandwidth, "B/s") + ", ridge " + num(f.accelerator_intensity) + " FLOP/B"});
    t.add({"bound", "", "",
           f.bound() + " (intensity " + num(f.intensity) + (f.compute_bound ? " >= " : " < ") +
               num(f.accelerator_intensity) + ")"});
    add_quantity(t, "time", seconds(f.time_s),
                 "lower bound: compute " + seconds(f.compute_time_s) + ", memory " + seconds(f.memory_time_s));
    add_quantity(t, "best MFU", fixed(f.best_mfu, 3), "at the roofline bound");
  } else {
    t.add({"roofline", "-", "", "none: " + r.roofline_error});
  }
  std::cout << title(r.expr, c.dtype) << t.str();
}

void print_backward_table(const CostReport& r) {
  if (!r.backward) {
    std::cout << "backward: none (" << r.backward_error << ")\n";
    return;
  }
  const BackwardCost& b = *r.backward;
  Table t({"gradient", "expression", "FLOPs", "bytes"}, "llrr");
  for (const GradientCost& g : b.gradients)
    t.add({g.input, g.expression, si(g.cost.flops.to_double(), "FLOP"), iec(g.cost.ideal_bytes().to_double())});
  t.add({"total", "", si(b.flops.to_double(), "FLOP"), iec(b.bytes.to_double())});
  const Count both = r.cost.flops + b.flops;
  std::cout << "backward\n"
            << t.str() << "  forward + backward: " << si(both.to_double(), "FLOP") << " = " << both.str() << " ("
            << num(both.to_double() / r.cost.flops.to_double(), 3) << " x forward)\n";
}

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

void print_cost_json(const CostReport& r, bool with_gradients) {
  const Cost& c = r.cost;
  JsonWriter j(std::cout);
  j.begin_object().field("op", r.expr.op).field("pattern", r.expr.pattern).field("dtype", name(c.dtype));
  if (r.expr.op == "reduce") j.field("reduction", name(r.expr.reduction));
  if (r.expr.reduction == Reduction::var || r.expr.reduction == Reduction::std)
    j.field("correction", r.expr.correction);
  if (r.expr.op == "map") j.field("function", r.expr.function);
  j.key("sizes").begin_object();
  for (const auto& [axis, len] : r.expr.sizes) j.field(axis, len);
  j.end_object();
  j.field("flops", c.flops).field("flops_exact", c.flops_exact).field("naive_flops", c.naive_flops);
  j.field("flops_numpy", c.flops_numpy).field("macs", c.macs);
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

Op parse_op(const std::string& text) {
  for (Op op : {Op::rearrange, Op::reduce, Op::repeat, Op::einsum, Op::map})
    if (text == name(op)) return op;
  throw Error("unknown op '" + text + "' (expected rearrange, reduce, repeat, einsum or map)");
}

}  // namespace

int cost_command(const CostArgs& args) {
  const CostReport r = make_report(args);
  if (args.json) {
    print_cost_json(r, args.backward);
    return 0;
  }
  print_cost_table(r);
  if (args.backward) print_backward_table(r);
  return 0;
}

int explain_command(const ExprArgs& args) {
  const ExprSpec e = parse_expr_args(args.op, args.pattern, args.rest, args.correction, args.eps);
  const Plan plan = plan_from_sizes(e.op_spec(), e.pattern, e.sizes, parse_dtype(args.dtype));
  const Cost c = cost(plan);
  std::cout << plan.str() << "steps\n";
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
  std::cout << t.str() << "  " << views << " of " << c.steps.size() << " steps are views; FLOPs " << c.flops.str()
            << " = " << c.flops_formula.str() << "; planned bytes " << c.bytes_planned.str() << ", ideal "
            << c.ideal_bytes().str() << (plan.output_is_view() ? "; the output is a view of its input\n" : "\n");
  return 0;
}

int check_command(const CheckArgs& args) {
  const ast::Pattern pattern = parse(args.pattern);
  const bool inferred = args.op.empty();
  const Op op = inferred ? (pattern.operands.size() == 1 ? Op::rearrange : Op::einsum) : parse_op(args.op);
  try {
    check(pattern, op);
  } catch (Error& e) {
    if (inferred)
      e.add_context(std::string("checked as ") + name(op) + " (the default for " +
                    (op == Op::rearrange ? "one operand" : "several operands") +
                    "); --op reduce, repeat, einsum or map checks for another op");
    throw;
  }
  std::cout << "ok (" << name(op) << ")\n";
  return 0;
}

}  // namespace einexpr::cli
