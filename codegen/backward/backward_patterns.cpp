// The gradient expressions of a forward plan, derived as pattern text (backward.hpp).
#include <algorithm>
#include <variant>

#include "backward/backward_text.hpp"
#include "einexpr/codegen/backward.hpp"
#include "einexpr/runtime/error.hpp"
#include "cost/elementwise_flops.hpp"
#include "plan/plan_axes.hpp"

namespace einexpr {

namespace {

using detail::PatternText;
using detail::Tokens;

// What every derivation needs: the forward plan's tensors, named, and its axis lengths.
struct Forward {
  const Plan& plan;
  std::vector<GradientTensor> inputs;  // X, or A, B, C, ...
  GradientTensor y, dy;
  std::map<std::string, std::int64_t, std::less<>> lengths;

  explicit Forward(const Plan& p) : plan(p), lengths(detail::known_axis_lengths(p)) {
    for (int i = 0; i < p.num_inputs; ++i) {
      const Value& v = p.values.at(static_cast<std::size_t>(i));
      const std::string name = p.num_inputs == 1 ? "X" : std::string(1, static_cast<char>('A' + i % 24)) +
                                                              (i < 24 ? "" : std::to_string(i));
      inputs.push_back({name, v.layout.shape, v.axes});
    }
    y = {"Y", p.output_value().layout.shape, p.output_value().axes};
    dy = y;
    dy.name = "dY";
  }

  // The lengths `pattern` needs: names in compositions on its left, names new on its right.
  AxisLengths needed_lengths(const std::string& pattern) const {
    const PatternText t = detail::split_pattern(pattern);
    std::vector<std::string> left, grouped;
    for (const Tokens& in : t.inputs)
      for (const std::string& tok : in) {
        const Tokens names = detail::names_of(tok);
        left.insert(left.end(), names.begin(), names.end());
        if (names.size() > 1) grouped.insert(grouped.end(), names.begin(), names.end());
      }
    AxisLengths out;
    auto add = [&](const std::string& name) {
      auto it = lengths.find(name);
      const bool listed = std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.first == name; });
      if (it != lengths.end() && !listed) out.emplace_back(name, it->second);
    };
    for (const std::string& name : grouped) add(name);
    for (const std::string& tok : t.output)
      for (const std::string& name : detail::names_of(tok))
        if (std::find(left.begin(), left.end(), name) == left.end()) add(name);
    return out;
  }

  GradientStage stage(std::string op, std::string pattern, std::vector<GradientTensor> operands,
                      GradientTensor result) const {
    GradientStage s;
    s.op = std::move(op);
    s.lengths = s.op == "elementwise" ? AxisLengths{} : needed_lengths(pattern);
    s.pattern = std::move(pattern);
    s.operands = std::move(operands);
    s.result = std::move(result);
    return s;
  }
};

GradientTensor renamed(GradientTensor t, std::string name) {
  t.name = std::move(name);
  return t;
}

GradientStage elementwise(const Forward& f, std::string expression, Count per, std::vector<GradientTensor> operands,
                          GradientTensor result) {
  GradientStage s = f.stage("elementwise", std::move(expression), std::move(operands), std::move(result));
  s.flops_per_element = per;
  return s;
}

// dX_i of an einsum: one contraction of dY with the other operands; an axis of X_i found
// nowhere else was summed in the forward, so the contraction's result is repeated over it.
GradientExpr einsum_gradient(const Forward& f, const PatternText& t, std::size_t i) {
  GradientExpr g{"operand " + std::to_string(i + 1), {}};
  const GradientTensor& x = f.inputs.at(i);
  Tokens available = t.output;
  for (std::size_t j = 0; j < t.inputs.size(); ++j)
    if (j != i) available.insert(available.end(), t.inputs[j].begin(), t.inputs[j].end());
  Tokens keep;
  for (const std::string& tok : t.inputs[i])
    if (std::find(available.begin(), available.end(), tok) != available.end()) keep.push_back(tok);
  const std::string dx = "d" + x.name;
  if (t.inputs.size() == 1) {  // dY already has every kept axis: rearrange or repeat it
    if (t.output == t.inputs[0]) return g;
    const bool same = keep.size() == t.inputs[0].size();
    g.stages.push_back(f.stage(same ? "rearrange" : "repeat", detail::join(t.output) + " -> " + detail::join(t.inputs[0]),
                               {f.dy}, renamed(x, dx)));
    return g;
  }
  std::vector<GradientTensor> operands = {f.dy};
  PatternText e{{t.output}, keep};
  for (std::size_t j = 0; j < t.inputs.size(); ++j)
    if (j != i) e.inputs.push_back(t.inputs[j]), operands.push_back(f.inputs.at(j));
  if (keep.size() == t.inputs[i].size()) {
    g.stages.push_back(f.stage("einsum", detail::text(e), std::move(operands), renamed(x, dx)));
    return g;
  }
  GradientTensor partial = detail::select(x, t.inputs[i], keep, "t0");
  g.stages.push_back(f.stage("einsum", detail::text(e), std::move(operands), partial));
  g.stages.push_back(f.stage("repeat", detail::join(keep) + " -> " + detail::join(t.inputs[i]), {partial},
                             renamed(x, dx)));
  return g;
}

std::vector<GradientExpr> einsum_gradients(const Forward& f) {
  const PatternText t = detail::split_pattern(f.plan.pattern);
  if (t.inputs.size() != f.inputs.size())
    throw Error("backward: einsum '" + f.plan.pattern + "' has " + std::to_string(t.inputs.size()) +
                " operands but the plan " + std::to_string(f.inputs.size()) + " inputs");
  for (std::size_t i = 0; i < t.inputs.size(); ++i)
    for (std::size_t a = 0; a < t.inputs[i].size(); ++a)
      if (std::count(t.inputs[i].begin(), t.inputs[i].end(), t.inputs[i][a]) > 1)
        throw Error("backward of einsum '" + f.plan.pattern + "' is not supported: operand " + std::to_string(i + 1) +
                    " takes a diagonal (axis " + t.inputs[i][a] + " twice)");
  std::vector<GradientExpr> out;
  for (std::size_t i = 0; i < t.inputs.size(); ++i) out.push_back(einsum_gradient(f, t, i));
  return out;
}

const ReduceStep* find_reduce(const Plan& plan) {
  for (const Step& s : plan.steps)
    if (const auto* r = std::get_if<ReduceStep>(&s)) return r;
  return nullptr;
}

Count numel(const Shape& shape) {
  Count n(1);
  for (std::int64_t len : shape) n *= Count::from_int64(len);
  return n;
}

std::vector<GradientExpr> reduce_gradients(const Forward& f) {
  const ReduceStep* r = find_reduce(f.plan);
  const GradientTensor& x = f.inputs.at(0);
  GradientExpr g{"operand 0", {}};
  const std::string inverse = swap_sides(f.plan.pattern);
  if (r == nullptr) {  // nothing reduced: the plan only rearranged
    g.stages.push_back(f.stage("rearrange", inverse, {f.dy}, renamed(x, "dX")));
    return {g};
  }
  switch (r->op) {
    case Reduction::sum:
      g.stages.push_back(f.stage("repeat", inverse, {f.dy}, renamed(x, "dX")));
      break;
    case Reduction::mean: {
      const Count n_out = numel(f.y.shape);
      const Count n = n_out == Count(0) ? Count(1) : Count::from_u128(numel(x.shape).raw() / n_out.raw());
      const GradientTensor scaled = renamed(f.dy, "t0");
      g.stages.push_back(elementwise(f, "dY / " + n.str(), 1, {f.dy}, scaled));
      g.stages.push_back(f.stage("repeat", inverse, {scaled}, renamed(x, "dX")));
      break;
    }
    case Reduction::max:
    case Reduction::min:
      g.stages.push_back(elementwise(f, "where(X == Y, dY, 0)", 2, {x, f.y, f.dy}, renamed(x, "dX")));
      break;
    case Reduction::prod:
      g.stages.push_back(elementwise(f, "dY · Y / X", 2, {x, f.y, f.dy}, renamed(x, "dX")));
      break;
    case Reduction::var:
    case Reduction::std: {  // dX = dY · 2(X - mean)/(n - c), std: dY · (X - mean)/((n - c)·Y)
      GradientStage mean = f.stage("reduce", f.plan.pattern, {x}, renamed(f.y, "t0"));
      mean.reduction = Reduction::mean;
      const GradientTensor t0 = mean.result;
      g.stages.push_back(std::move(mean));
      const std::string c = std::to_string(r->correction);
      if (r->op == Reduction::var)
        g.stages.push_back(elementwise(f, "dY · 2·(X - t0)/(n - " + c + ")", 3, {x, t0, f.dy}, renamed(x, "dX")));
      else
        g.stages.push_back(elementwise(f, "dY · (X - t0)/((n - " + c + ")·Y)", 4, {x, t0, f.y, f.dy}, renamed(x, "dX")));
      break;
    }
    case Reduction::logsumexp:  // the softmax of X along the reduced axes, times dY
      g.stages.push_back(elementwise(f, "dY · exp(X - Y)", 3, {x, f.y, f.dy}, renamed(x, "dX")));
      break;
    case Reduction::any:
    case Reduction::all:
      throw Error(std::string("backward of reduce ") + name(r->op) + " is not defined (boolean)");
  }
  return {g};
}

// dX_i of a binary map: the rule's elementwise derivative over Y's shape, then a sum over
// the axes X_i was broadcast along (or a rearrange where it only permuted them).
GradientExpr binary_gradient(const Forward& f, const PatternText& t, BinaryOp op, std::size_t i) {
  GradientExpr g{"operand " + std::to_string(i + 1), {}};
  const detail::BinaryGradientRule rule = detail::binary_gradient_rule(op, static_cast<int>(i));
  const GradientTensor& x = f.inputs.at(i);
  const bool whole = t.inputs.at(i) == t.output;
  GradientTensor grad = f.dy;
  if (!rule.identity) {
    std::vector<GradientTensor> operands = {f.dy};
    if (rule.reads_a) operands.push_back(f.inputs.at(0));
    if (rule.reads_b) operands.push_back(f.inputs.at(1));
    if (rule.reads_y) operands.push_back(f.y);
    grad = renamed(f.y, whole ? "d" + x.name : "t0");
    g.stages.push_back(elementwise(f, rule.expression, rule.flops, std::move(operands), grad));
  }
  if (whole) return g;
  const std::string pattern = detail::join(t.output) + " -> " + detail::join(t.inputs[i]);
  const bool permutation = t.inputs[i].size() == t.output.size() &&
                           std::is_permutation(t.output.begin(), t.output.end(), t.inputs[i].begin());
  GradientStage s = f.stage(permutation ? "rearrange" : "reduce", pattern, {grad}, renamed(x, "d" + x.name));
  g.stages.push_back(std::move(s));
  return g;
}

std::vector<GradientExpr> map_gradients(const Forward& f, const MapStep& m) {
  if (const auto* op = std::get_if<UnaryOp>(&m.op)) {
    const detail::UnaryGradientRule rule = detail::unary_gradient_rule(*op);
    std::vector<GradientTensor> operands = {f.dy};
    if (rule.reads_x) operands.push_back(f.inputs.at(0));
    if (rule.reads_y) operands.push_back(f.y);
    GradientExpr g{"operand 0", {}};
    if (f.plan.pattern.empty()) {
      g.stages.push_back(elementwise(f, rule.expression, rule.flops, std::move(operands), renamed(f.inputs.at(0), "dX")));
      return {g};
    }
    // A pattern: the derivative in Y's layout, then the inverse rearrange into X's.
    const GradientTensor t0 = renamed(f.y, "t0");
    g.stages.push_back(elementwise(f, rule.expression, rule.flops, std::move(operands), t0));
    g.stages.push_back(f.stage("rearrange", swap_sides(f.plan.pattern), {t0}, renamed(f.inputs.at(0), "dX")));
    return {g};
  }
  if (f.inputs.size() != 2) throw Error("backward: a binary map plan has " + std::to_string(f.inputs.size()) + " inputs");
  PatternText t;
  if (f.plan.pattern.empty()) {  // no pattern: both operands have the output's shape
    const Tokens all = {"…"};
    t = {{all, all}, all};
  } else {
    t = detail::split_pattern(f.plan.pattern);
  }
  const BinaryOp op = std::get<BinaryOp>(m.op);
  return {binary_gradient(f, t, op, 0), binary_gradient(f, t, op, 1)};
}

const MapStep* find_map(const Plan& plan) {
  for (const Step& s : plan.steps)
    if (const auto* m = std::get_if<MapStep>(&s)) return m;
  return nullptr;
}

}  // namespace

std::vector<GradientExpr> gradient_expressions(const Plan& forward) {
  const Forward f(forward);
  const std::string& op = forward.op;
  if (op == "einsum") return einsum_gradients(f);
  if (op == "rearrange") {
    GradientExpr g{"operand 0", {}};
    g.stages.push_back(f.stage("rearrange", swap_sides(forward.pattern), {f.dy}, renamed(f.inputs.at(0), "dX")));
    return {g};
  }
  if (op == "reduce") return reduce_gradients(f);
  if (op == "repeat") {
    GradientExpr g{"operand 0", {}};
    GradientStage s = f.stage("reduce", swap_sides(forward.pattern), {f.dy}, renamed(f.inputs.at(0), "dX"));
    g.stages.push_back(std::move(s));
    return {g};
  }
  if (const MapStep* m = find_map(forward)) return map_gradients(f, *m);
  throw Error("backward of '" + op + "' is not supported (einsum, rearrange, reduce, repeat and maps are)");
}

}  // namespace einexpr
