// The cost of a backward pass: each gradient's stages planned (planner.hpp) and costed
// (cost()), or, for elementwise derivatives, costed per element; then summed.
// A gradient of several stages is costed unfused: each stage reads its operands and
// writes its result, so an intermediate is written once and read once.
#include <map>
#include <span>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

Count numel(const Shape& shape) {
  Count n(1);
  for (std::int64_t len : shape) n *= Count::from_int64(len);
  return n;
}

Formula numel_formula(const GradientTensor& t) {
  std::vector<std::string> factors;
  if (t.axes.size() == t.shape.size())
    for (const AxisName& a : t.axes) factors.insert(factors.end(), a.begin(), a.end());
  else
    for (std::int64_t len : t.shape) factors.push_back(std::to_string(len));
  return Formula::product(1, std::move(factors));
}

Cost elementwise_cost(const GradientStage& s, DType dtype) {
  const Count es(element_size(dtype));
  StepCost step;
  step.kind = "map";
  step.label = s.result.name + " = " + s.str();
  step.flops = step.flops_exact = s.flops_per_element * numel(s.result.shape);
  step.flops_formula = numel_formula(s.result) * s.flops_per_element;
  Formula bytes;
  for (const GradientTensor& t : s.operands) {
    step.bytes_read += numel(t.shape) * es;
    bytes = bytes + numel_formula(t);
  }
  step.bytes_written = step.bytes_allocated = numel(s.result.shape) * es;
  step.bytes_formula = (bytes + numel_formula(s.result)) * es;
  Cost c;
  c.op = "elementwise";
  c.pattern = s.pattern;
  c.dtype = dtype;
  c.flops = c.flops_exact = c.naive_flops = step.flops;
  c.flops_formula = step.flops_formula;
  c.bytes_read = step.bytes_read;
  c.bytes_written = step.bytes_written;
  c.bytes_planned = step.bytes_read + step.bytes_written;
  c.peak_extra_bytes = step.bytes_allocated;
  c.bytes_formula = step.bytes_formula;
  c.steps.push_back(std::move(step));
  return c;
}

// Appends `next` to `total` (a gradient computed stage after stage, unfused).
void chain(Cost& total, Cost next) {
  total.flops += next.flops;
  total.flops_exact += next.flops_exact;
  total.naive_flops += next.naive_flops;
  total.bytes_read += next.bytes_read;
  total.bytes_written += next.bytes_written;
  total.bytes_planned += next.bytes_planned;
  total.peak_extra_bytes = std::max(total.peak_extra_bytes, next.peak_extra_bytes);
  total.flops_formula = total.flops_formula + next.flops_formula;
  total.bytes_formula = total.bytes_formula + next.bytes_formula;
  for (StepCost& s : next.steps) total.steps.push_back(std::move(s));
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The stage as text, with operands that earlier stages made written as their expressions.
std::string stage_text(const GradientStage& stage, const std::map<std::string, std::string>& made) {
  if (stage.op == "elementwise") return stage.pattern;
  std::string s = stage.op + "(";
  for (const GradientTensor& t : stage.operands) {
    const auto it = made.find(t.name);
    s += (it == made.end() ? t.name : it->second) + ", ";
  }
  s += quoted(stage.pattern);
  if (stage.op == "reduce") s += ", " + quoted(name(stage.reduction));
  for (const auto& [axis, length] : stage.lengths) s += ", " + axis + "=" + std::to_string(length);
  return s + ")";
}

}  // namespace

std::string GradientStage::str() const { return stage_text(*this, {}); }

std::string GradientExpr::str() const {
  if (stages.empty()) return "dY";
  std::map<std::string, std::string> made;  // result name -> its expression
  std::string text;
  for (const GradientStage& stage : stages) {
    text = stage_text(stage, made);
    made[stage.result.name] = text;
  }
  return text;
}

Plan plan_gradient_stage(const GradientStage& stage, DType dtype) {
  const ast::Pattern pattern = parse(stage.pattern);
  std::vector<Layout> layouts;
  for (const GradientTensor& t : stage.operands) layouts.push_back(Layout::contiguous(t.shape));
  if (stage.op == "einsum") {
    check(pattern, Op::einsum);
    return plan_einsum(pattern, std::span<const Layout>(layouts), dtype, stage.lengths);
  }
  EINEXPR_ASSERT(layouts.size() == 1, "backward: a one-operand stage with " + std::to_string(layouts.size()) + " operands");
  if (stage.op == "rearrange") {
    check(pattern, Op::rearrange);
    return plan_rearrange(pattern, layouts[0], dtype, stage.lengths);
  }
  if (stage.op == "repeat") {
    check(pattern, Op::repeat);
    return plan_repeat(pattern, layouts[0], dtype, stage.lengths);
  }
  if (stage.op == "reduce") {
    check(pattern, Op::reduce);
    return plan_reduce(pattern, layouts[0], dtype, stage.reduction, stage.lengths);
  }
  throw Error("backward: a stage of op '" + stage.op + "' has no planner");
}

Cost gradient_stage_cost(const GradientStage& stage, DType dtype, const GradientPlanner& planner) {
  if (stage.op == "elementwise") return elementwise_cost(stage, dtype);
  return cost(planner(stage, dtype));
}

BackwardCost backward_cost(const Plan& forward, const GradientPlanner& planner) {
  BackwardCost out;
  for (const GradientExpr& g : gradient_expressions(forward)) {
    Cost total;
    total.op = "backward";
    total.pattern = g.str();
    total.dtype = forward.dtype;
    for (const GradientStage& stage : g.stages) chain(total, gradient_stage_cost(stage, forward.dtype, planner));
    out.flops += total.flops;
    out.bytes += total.ideal_bytes();
    out.gradients.push_back({g.input, total.pattern, std::move(total)});
  }
  return out;
}

BackwardCost backward_cost(const Plan& forward) { return backward_cost(forward, plan_gradient_stage); }

}  // namespace einexpr
