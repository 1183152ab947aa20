// The gradients of rearrange, repeat, reduce and the maps (backward.hpp), each built on a
// Derivation (derive.hpp): work over atoms, then laid out in the input's dims.
#include <algorithm>
#include <cstdio>

#include "backward/derive.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/contract.hpp"

namespace einexpr::detail::backward {

namespace {

const ReduceStep* find_reduce(const Plan& plan) {
  for (const Step& s : plan.steps)
    if (const auto* r = std::get_if<ReduceStep>(&s)) return r;
  return nullptr;
}

const MapStep* find_map(const Plan& plan) {
  for (const Step& s : plan.steps)
    if (const auto* m = std::get_if<MapStep>(&s)) return m;
  return nullptr;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

/// dX = dY laid out in X's dims (rearrange, and a reduce that reduced nothing).
Gradient relaid(const Plan& forward) {
  Derivation d(forward, 0, Op::rearrange);
  const int dy = d.add_dy();
  const int dx = d.lay_out(d.atoms(dy));
  std::string e = "rearrange(dY, " + quoted(d.y_text() + " -> " + d.x_text()) + ")";
  return std::move(d).finish(dx, std::move(e));
}

/// The product of the lengths of X's axes that Y lacks (what a mean divided by).
std::int64_t reduced_count(const Derivation& d) {
  const Axes y = d.y_axes();
  std::int64_t n = 1;
  for (AxisId id : d.x_axes())
    if (std::find(y.begin(), y.end(), id) == y.end()) n = checked_mul(n, d.axes().length(id));
  return n;
}

/// var: dY · 2(X - M)/(n - c); std: (dY / Y) · (X - M)/(n - c): M the mean of X over the
/// reduced axes (a sum, then scaled), n - c never below 0 (as the forward's divisor).
Gradient centered_gradient(const Plan& forward, const ReduceStep& r) {
  Derivation d(forward, 0, Op::map);
  const bool var = r.op == Reduction::var;
  const int dy = d.add_dy(), x = d.add_input(0), y = var ? -1 : d.add_y();
  const std::int64_t n = reduced_count(d);
  const Axes y_axes = d.atoms(dy).ids();
  const AtomView sum = contract_all(d.builder(), {d.atoms(x)}, y_axes, ContractionOrder::optimal);
  const GradOp to_mean{GradOp::Kind::scale, UnaryOp::relu, BinaryOp::maximum, 0,
                       n == 0 ? 0.0 : 1.0 / static_cast<double>(n)};
  const AtomView mean = d.map(to_mean, {sum.value}, y_axes);
  const int scaled_dy = var ? dy : d.map(BinaryOp::div, {dy, y}, y_axes).value;
  const double divisor = static_cast<double>(std::max<std::int64_t>(0, n - r.correction));
  const GradOp op{GradOp::Kind::centered, UnaryOp::relu, BinaryOp::maximum, 0, (var ? 2.0 : 1.0) / divisor};
  const AtomView g = d.map(op, {scaled_dy, x, mean.value}, d.x_axes());
  const int dx = d.lay_out(g);
  const std::string c = std::to_string(r.correction);
  return std::move(d).finish(dx, var ? "dY · 2·(X - mean(X))/(n - " + c + ")"
                                     : "dY / Y · (X - mean(X))/(n - " + c + ")");
}

Gradient reduce_gradient(const Plan& forward, const ReduceStep& r) {
  auto sides = [](const Derivation& d) { return quoted(d.y_text() + " -> " + d.x_text()); };
  switch (r.op) {
    case Reduction::sum: {
      Derivation d(forward, 0, Op::repeat);
      const int dy = d.add_dy();
      const int dx = d.lay_out(d.atoms(dy));
      return std::move(d).finish(dx, "repeat(dY, " + sides(d) + ")");
    }
    case Reduction::mean: {
      Derivation d(forward, 0, Op::repeat);
      const int dy = d.add_dy();
      const std::int64_t n = reduced_count(d);
      GradOp scale{GradOp::Kind::scale, UnaryOp::relu, BinaryOp::maximum, 0, n == 0 ? 0.0 : 1.0 / static_cast<double>(n)};
      const AtomView scaled = d.map(scale, {dy}, d.atoms(dy).ids());
      const int dx = d.lay_out(scaled);
      return std::move(d).finish(dx, "repeat(dY / " + std::to_string(n) + ", " + sides(d) + ")");
    }
    case Reduction::max:
    case Reduction::min:
    case Reduction::prod: {
      Derivation d(forward, 0, Op::map);
      const int dy = d.add_dy(), x = d.add_input(0), y = d.add_y();
      const bool prod = r.op == Reduction::prod;
      const GradOp op{prod ? GradOp::Kind::prod : GradOp::Kind::select_equal, UnaryOp::relu, BinaryOp::maximum, 0, 1};
      const AtomView g = d.map(op, prod ? std::vector<int>{dy, y, x} : std::vector<int>{dy, x, y}, d.x_axes());
      const int dx = d.lay_out(g);
      return std::move(d).finish(dx, prod ? "dY · Y / X" : "where(X == Y, dY, 0)");
    }
    case Reduction::var:
    case Reduction::std:
      return centered_gradient(forward, r);
    case Reduction::logsumexp: {  // the softmax of X along the reduced axes, times dY
      Derivation d(forward, 0, Op::map);
      const int dy = d.add_dy(), x = d.add_input(0), y = d.add_y();
      const GradOp op{GradOp::Kind::softmax, UnaryOp::relu, BinaryOp::maximum, 0, 1};
      const int dx = d.lay_out(d.map(op, {dy, x, y}, d.x_axes()));
      return std::move(d).finish(dx, "dY · exp(X - Y)");
    }
    case Reduction::any:
    case Reduction::all:
      break;
  }
  throw Error(std::string("backward of reduce ") + name(r.op) + " is not defined (boolean)");
}

Gradient unary_gradient(const Plan& forward, UnaryOp f) {
  Derivation d(forward, 0, Op::map);
  const int dy = d.add_dy();
  std::vector<int> srcs = {dy};
  const bool reads_y = unary_gradient_reads_y(f);
  if (f != UnaryOp::neg) srcs.push_back(reads_y ? d.add_y() : d.add_input(0));
  const AtomView g = d.map(GradOp{GradOp::Kind::unary, f, BinaryOp::maximum, 0, 1}, srcs, d.atoms(dy).ids());
  const int dx = d.lay_out(g);
  std::string e = std::string("dY · ") + name(f) + "'(" + (f == UnaryOp::neg ? "" : reads_y ? "Y" : "X") + ")";
  if (f == UnaryOp::neg) e = "-dY";
  return std::move(d).finish(dx, std::move(e));
}

/// dX_i of a binary map: the rule over Y's atoms, summed over the atoms X_i lacks.
Gradient binary_gradient(const Plan& forward, BinaryOp f, int i) {
  Derivation d(forward, i, Op::map);
  const int dy = d.add_dy();
  const Axes y_axes = d.atoms(dy).ids();
  AtomView g = d.atoms(dy);
  std::string e = "dY";
  const int other = 1 - i;
  auto input = [&](int j) { return d.add_input(j); };
  switch (f) {
    case BinaryOp::add: break;
    case BinaryOp::sub:
      if (i == 1) g = d.map(UnaryOp::neg, {dy}, y_axes), e = "-dY";
      break;
    case BinaryOp::mul:
      g = d.map(BinaryOp::mul, {dy, input(other)}, y_axes), e = other == 0 ? "dY · A" : "dY · B";
      break;
    case BinaryOp::div:
      if (i == 0) {
        g = d.map(BinaryOp::div, {dy, input(1)}, y_axes), e = "dY / B";
      } else {
        const int y = d.add_y(), b = input(1);
        g = d.map(GradOp{GradOp::Kind::div_rhs, UnaryOp::relu, f, i, 1}, {dy, y, b}, y_axes), e = "-dY · Y / B";
      }
      break;
    case BinaryOp::maximum:
    case BinaryOp::minimum: {
      const int a = input(0), b = input(1);
      g = d.map(GradOp{GradOp::Kind::select, UnaryOp::relu, f, i, 1}, {dy, a, b}, y_axes);
      e = std::string("dY · (") + (i == 0 ? "A" : "B") + " wins the " + name(f) + "; ties halve)";
      break;
    }
  }
  Axes keep;
  for (AxisId id : d.x_axes())
    if (g.has(id)) keep.push_back(id);
  if (keep.size() != g.dims.size()) {  // summed over the axes X_i was broadcast along
    g = contract_all(d.builder(), {g}, keep, ContractionOrder::optimal);
    e = "sum(" + e + ")";
  }
  const int dx = d.lay_out(g);
  return std::move(d).finish(dx, std::move(e));
}

}  // namespace

std::vector<Gradient> rearrange_gradients(const Plan& forward) { return {relaid(forward)}; }

std::vector<Gradient> repeat_gradients(const Plan& forward) {
  Derivation d(forward, 0, Op::reduce);
  const int dy = d.add_dy();
  const AtomView g = contract_all(d.builder(), {d.atoms(dy)}, d.x_axes(), ContractionOrder::optimal);
  const int dx = d.lay_out(g);
  std::string e = "reduce(dY, " + quoted(d.y_text() + " -> " + d.x_text()) + ", 'sum')";
  return {std::move(d).finish(dx, std::move(e))};
}

std::vector<Gradient> reduce_gradients(const Plan& forward) {
  const ReduceStep* r = find_reduce(forward);
  if (r == nullptr) return {relaid(forward)};  // nothing was reduced: a rearrange
  return {reduce_gradient(forward, *r)};
}

// y = normalize(x) along the bracketed atoms, then (layer_norm, rms_norm) · g and + b over
// them: dX is the normalization's backward of dY · g; dg = sum(dY · X̂) and db = sum(dY)
// over the other atoms, X̂ made again from X (the forward's normalized tensor is not kept:
// only X is, as for dX).
std::vector<Gradient> normalize_gradients(const Plan& forward) {
  const NormStep* n = nullptr;
  for (const Step& s : forward.steps)
    if (const auto* found = std::get_if<NormStep>(&s)) n = found;
  EINEXPR_ASSERT(n != nullptr && !n->backward, "backward: a normalize plan without its NormStep");
  const bool reads_y = n->kind == Normalization::softmax || n->kind == Normalization::log_softmax;
  EINEXPR_ASSERT(!reads_y || forward.num_inputs == 1, "backward: a softmax plan with an affine part");
  const Value& normalized = forward.value(n->dst);
  Axes along;
  for (int a : n->axes)
    for (AxisId id : normalized.dims.at(static_cast<std::size_t>(a))) along.push_back(id);
  const bool gain = forward.num_inputs >= 2;
  std::vector<Gradient> out;
  {
    Derivation d(forward, 0, Op::normalize);
    const int dy = d.add_dy(), v = reads_y ? d.add_y() : d.add_input(0);
    int upstream = dy;
    if (gain) upstream = d.map(BinaryOp::mul, {dy, d.add_input(1)}, d.x_axes()).value;
    const int dx = d.lay_out(d.normalization(*n, {upstream, v}, d.x_axes(), along));
    const std::string r = gain ? "(dY · g)" : "dY";
    std::string e;
    switch (n->kind) {
      case Normalization::softmax: e = "Y · (dY - sum(dY · Y))"; break;
      case Normalization::log_softmax: e = "dY - exp(Y) · sum(dY)"; break;
      case Normalization::layer_norm: e = "r · (" + r + " - mean(" + r + ") - X̂ · mean(" + r + " · X̂))"; break;
      case Normalization::rms_norm: e = "r · (" + r + " - X̂ · mean(" + r + " · X̂))"; break;
    }
    out.push_back(std::move(d).finish(dx, e + " along [" + d.dims_text({along}) + "]"));
  }
  for (int i = 1; i < forward.num_inputs; ++i) {  // the gain, then the bias: summed over the other atoms
    Derivation d(forward, i, Op::normalize);
    const int dy = d.add_dy();
    const Axes order = d.y_axes();
    AtomView g = d.atoms(dy);
    std::string e = "dY";
    if (i == 1) {
      const AtomView xhat = d.normalized(*n, d.add_input(0), order, along);
      g = d.map(BinaryOp::mul, {dy, xhat.value}, order);
      e = "dY · X̂";
    }
    g = contract_all(d.builder(), {g}, d.x_axes(), ContractionOrder::optimal);
    out.push_back(std::move(d).finish(d.lay_out(g), "sum(" + e + ")"));
  }
  return out;
}

std::vector<Gradient> map_gradients(const Plan& forward) {
  const MapStep* m = find_map(forward);
  EINEXPR_ASSERT(m != nullptr, "backward: a map plan without a map step");
  if (const auto* u = std::get_if<UnaryOp>(&m->op)) return {unary_gradient(forward, *u)};
  const auto* b = std::get_if<BinaryOp>(&m->op);
  EINEXPR_ASSERT(b != nullptr && forward.num_inputs == 2, "backward: a map plan of a gradient function");
  return {binary_gradient(forward, *b, 0), binary_gradient(forward, *b, 1)};
}

}  // namespace einexpr::detail::backward
