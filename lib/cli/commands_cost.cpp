// cost, explain, check: what an expression costs and how it is planned, from the pattern
// and the axis sizes alone (nothing is allocated), and whether a pattern is valid.
#include <iostream>
#include <optional>

#include "args.hpp"
#include "commands.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/ops.hpp"
#include "einexpr/parser/numpy_hint.hpp"
#include "einexpr/parser/parse.hpp"
#include "output.hpp"
#include "report.hpp"

namespace einexpr::cli {

namespace {

std::string title(const ExprSpec& e, DType dtype) {
  std::string t = e.op + " '" + e.pattern + "'";
  if (e.op == "reduce") t += std::string(" ") + name(e.reduction);
  if (e.reduction == Reduction::var || e.reduction == Reduction::std)
    t += " correction " + std::to_string(e.correction);
  if (e.op == "map") t += " " + e.function;
  return t + " (" + std::string(name(dtype)) + ")  " + lengths_text(e.sizes) + "\n";
}

/// A figure beside the plan's own counts, which may be 2^128 or more (then it says so).
void add_figure(Table& t, const std::string& what, const MaybeCount& c, const std::string& note) {
  if (c)
    add_quantity(t, what, si(c->to_double(), "FLOP"), c->str() + " " + note);
  else
    t.add({what, "-", "", std::string(kOver128Bits) + ", too large to count exactly " + note});
}

void print_cost_table(const CostReport& r) {
  const Cost& c = r.cost;
  Table t({}, "lrll");
  add_quantity(t, "FLOPs", si(c.flops.to_double(), "FLOP"), c.flops.str() + " = " + c.flops_formula.str());
  add_quantity(t, "exact FLOPs", si(c.flops_exact.to_double(), "FLOP"), c.flops_exact.str() + " (multiplies + adds)");
  if (c.op == "einsum") add_figure(t, "numpy FLOPs", c.flops_numpy, "(numpy.einsum_path's count of this path)");
  add_quantity(t, "MACs", si(c.macs.to_double(), "MAC"), c.macs.str() + " (multiply-accumulates, as fvcore counts)");
  if (c.naive_flops != c.flops) add_figure(t, "naive FLOPs", c.naive_flops, "(one loop nest)");
  add_quantity(t, "bytes read", iec(c.bytes_read.to_double()), c.bytes_read.str() + (c.op == "get_at" ? " (each input once; of the table, the rows gathered)" : " (each input once)"));
  add_quantity(t, "bytes written", iec(c.bytes_written.to_double()), c.bytes_written.str() + " (the output once)");
  add_quantity(t, "bytes planned", iec(c.bytes_planned.to_double()), c.bytes_planned.str() + " (what the steps move)");
  add_quantity(t, "peak temporary", iec(c.peak_extra_bytes.to_double()), c.peak_extra_bytes.str());
  add_quantity(t, "intensity", num(c.intensity()) + " FLOP/B",
               "exact " + num(c.intensity_exact()) + "; ideal bytes = " + c.bytes_formula.str());
  if (r.backward)
    add_quantity(t, "backward", si(r.backward->flops.to_double(), "FLOP"),
                 r.backward->flops.str() + " (" + std::to_string(r.backward->gradients.size()) +
                     (r.backward->gradients.size() == 1 ? " gradient)" : " gradients)"));
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


}  // namespace

int cost_command(const CostArgs& args) {
  const ExprSpec expr =
      parse_expr_args(args.expr.op, args.expr.pattern, args.expr.rest, args.expr.correction, args.expr.eps,
                      args.expr.ignore_index, args.expr.p);
  const DType dtype = expr_dtype(args.expr.dtype, expr);
  const CostReport r = make_report(expr, dtype, find_device(args.device));
  if (args.json) {
    write_cost_json(std::cout, r, args.backward);
    return 0;
  }
  print_cost_table(r);
  if (args.backward) print_backward_table(r);
  return 0;
}

int explain_command(const ExprArgs& args) {
  const ExprSpec expr =
      parse_expr_args(args.op, args.pattern, args.rest, args.correction, args.eps, args.ignore_index, args.p);
  write_explain(std::cout, expr, expr_dtype(args.dtype, expr));
  return 0;
}

int check_command(const CheckArgs& args) {
  const bool inferred = args.op.empty();
  Op op = Op::rearrange;
  if (!inferred) {
    const OpRow* row = find_op_row(args.op);
    if (row == nullptr) throw Error("unknown op '" + args.op + "' (expected one of " + op_row_names() + ")");
    op = row->op;
  }
  bool parsed = !inferred;  // the op is known once the pattern parses
  try {
    if (inferred) {
      const ast::Pattern p = parse(args.pattern);
      bool joins = false;  // "(a + b)" in the output: a concatenation, which is rearrange's
      for (const ast::Term& t : p.output.terms)
        if (const auto* g = std::get_if<ast::Group>(&t)) joins = joins || g->concat;
      op = p.operands.size() == 1 || joins ? Op::rearrange : Op::einsum;
      parsed = true;
    }
    (void)parse_pattern(op, args.pattern);
  } catch (Error& e) {
    if (const std::string hint = numpy_pattern_hint(args.pattern); !hint.empty()) e.add_context(hint);
    if (inferred && parsed)
      e.add_context(std::string("checked as ") + name(op) + " (the default for " +
                    (op == Op::rearrange ? "one operand" : "several operands") +
                    "); --op reduce, repeat, einsum, map, get_at, ... checks for another op");
    throw;
  }
  std::cout << "ok (" << (inferred ? std::string(name(op)) : args.op) << ")\n";
  return 0;
}

}  // namespace einexpr::cli
