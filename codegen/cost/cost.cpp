// cost(const Plan&): FLOPs and bytes of every step and of the whole plan, without running
// it (conventions in DESIGN.md, "Cost accounting conventions", and cost.hpp).
//
// Per step:
//   view      0 FLOPs, 0 bytes
//   copy      0 FLOPs; reads the distinct source elements (a stride-0 dim reads once),
//             writes the destination
//   contract  2·|B|·m·n·k FLOPs (exact: |B|·m·n·(2k-1), 0 when k = 0); reads a and b
//             once (distinct elements), writes dst
//   reduce    n_in - n_out FLOPs (+ n_out for mean); reads src, writes dst
//   map       flops_per_element(f) · n_out; reads each src (distinct), writes dst
// Whole plan: ideal bytes read = every input once (distinct elements); ideal bytes
// written = the output once, 0 when the output is a view of an input; planned bytes =
// the sum over steps; peak_extra_bytes = the most temporary bytes alive at once.
#include <algorithm>
#include <set>
#include <variant>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/plan_axes.hpp"

namespace einexpr {

namespace {

const Value& value_of(const Plan& plan, int v) {
  EINEXPR_ASSERT(v >= 0 && static_cast<std::size_t>(v) < plan.values.size(), "cost: a step refers to a missing value");
  return plan.values[static_cast<std::size_t>(v)];
}

/// Elements of the dims [begin, end) of v; with `distinct`, stride-0 dims count once.
Count elements(const Value& v, std::size_t begin, std::size_t end, bool distinct) {
  Count n(1);
  for (std::size_t d = begin; d < end; ++d) {
    const std::int64_t len = v.layout.shape[d];
    if (len == 0) return Count(0);
    if (!distinct || v.layout.strides[d] != 0) n *= Count::from_int64(len);
  }
  return n;
}
Count numel(const Value& v) { return elements(v, 0, v.layout.shape.size(), false); }
Count distinct(const Value& v) { return elements(v, 0, v.layout.shape.size(), true); }

/// The axis-name factors of the dims [begin, end) of v (numbers where a dim has no names).
std::vector<std::string> factors(const Value& v, std::size_t begin, std::size_t end, bool distinct) {
  std::vector<std::string> out;
  const bool named = v.axes.size() == v.layout.shape.size();
  for (std::size_t d = begin; d < end; ++d) {
    if (distinct && v.layout.strides[d] == 0) continue;
    if (named)
      out.insert(out.end(), v.axes[d].begin(), v.axes[d].end());
    else
      out.push_back(std::to_string(v.layout.shape[d]));
  }
  return out;
}
Formula numel_formula(const Value& v) { return Formula::product(1, factors(v, 0, v.layout.shape.size(), false)); }
Formula distinct_formula(const Value& v) { return Formula::product(1, factors(v, 0, v.layout.shape.size(), true)); }

struct StepCoster {
  const Plan& plan;
  Count es;  // element size

  // Reads `srcs` (distinct elements) and writes `dst` into a new temporary.
  void move(StepCost& c, const std::vector<int>& srcs, int dst) const {
    Formula bytes;
    for (int s : srcs) {
      c.bytes_read += distinct(value_of(plan, s)) * es;
      bytes = bytes + distinct_formula(value_of(plan, s));
    }
    const Value& d = value_of(plan, dst);
    c.bytes_written = numel(d) * es;
    c.bytes_formula = (bytes + numel_formula(d)) * es;
    const PlanBuffer& buffer = plan.buffers.at(static_cast<std::size_t>(d.buffer));
    if (buffer.input < 0) c.bytes_allocated = Count::from_int64(buffer.elements) * es;
  }

  StepCost operator()(const ViewStep&, StepCost c) const {
    c.kind = "view";
    c.is_view = true;
    return c;
  }
  StepCost operator()(const CopyStep& s, StepCost c) const {
    c.kind = "copy";
    move(c, {s.src}, s.dst);
    return c;
  }
  StepCost operator()(const ContractStep& s, StepCost c) const {
    c.kind = "contract";
    const Value& a = value_of(plan, s.a);
    const Value& dst = value_of(plan, s.dst);
    const auto nb = static_cast<std::size_t>(s.batch_dims);
    EINEXPR_ASSERT(a.layout.shape.size() == nb + 2 && dst.layout.shape.size() == nb + 2,
                   "cost: a contraction's operands are not [batch.., m, k] x [batch.., k, n]");
    const Count outputs = numel(dst);                   // |B|·m·n
    const Count k = elements(a, nb + 1, nb + 2, false);
    // No contracted axis (an outer or Hadamard product): one multiply per output, no add,
    // as numpy.einsum_path counts it; else 2 per multiply-add.
    const bool summed = !a.axes[nb + 1].empty();
    c.flops = summed ? Count(2) * outputs * k : outputs * k;
    c.flops_exact = k == Count(0) ? Count(0) : outputs * (Count(2) * k - Count(1));
    std::vector<std::string> f = factors(dst, 0, nb + 2, false);
    const std::vector<std::string> fk = factors(a, nb + 1, nb + 2, false);
    f.insert(f.end(), fk.begin(), fk.end());
    c.flops_formula = Formula::product(summed ? 2 : 1, std::move(f));
    move(c, {s.a, s.b}, s.dst);
    return c;
  }
  StepCost operator()(const ReduceStep& s, StepCost c) const {
    c.kind = "reduce";
    const Value& src = value_of(plan, s.src);
    const Value& dst = value_of(plan, s.dst);
    const Count n_in = numel(src), n_out = numel(dst);
    c.flops = n_in >= n_out ? n_in - n_out : Count(0);  // sum over an empty axis folds nothing
    c.flops_formula = numel_formula(src) - numel_formula(dst);
    if (s.op == Reduction::mean) {
      c.flops += n_out;
      c.flops_formula = c.flops_formula + numel_formula(dst);
    }
    // var: the mean (n_in - n_out adds, n_out divides), then each deviation subtracted,
    // squared and added (n_in + n_in + n_in - n_out), and n_out divides by n - correction:
    // 4·n_in. std: + n_out square roots. logsumexp: the max (n_in - n_out compares), each
    // x - m and its exp (2·n_in; an exp counts 1, as in elementwise_flops.cpp), the sum
    // (n_in - n_out), log and + m (2·n_out): 4·n_in.
    if (s.op == Reduction::var || s.op == Reduction::std || s.op == Reduction::logsumexp) {
      c.flops = Count(4) * n_in;
      c.flops_formula = numel_formula(src) * Count(4);
      if (s.op == Reduction::std) {
        c.flops += n_out;
        c.flops_formula = c.flops_formula + numel_formula(dst);
      }
    }
    c.flops_exact = c.flops;
    move(c, {s.src}, s.dst);
    return c;
  }
  StepCost operator()(const MapStep& s, StepCost c) const {
    c.kind = "map";
    const Count per = std::visit([](auto op) { return flops_per_element(op); }, s.op);
    const Value& dst = value_of(plan, s.dst);
    c.flops = c.flops_exact = per * numel(dst);
    c.flops_formula = numel_formula(dst) * per;
    move(c, s.srcs, s.dst);
    return c;
  }
};

int dst_of(const Step& step) {
  return std::visit([](const auto& s) { return s.dst; }, step);
}

std::vector<int> srcs_of(const Step& step) {
  return std::visit(
      [](const auto& s) -> std::vector<int> {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, ContractStep>)
          return {s.a, s.b};
        else if constexpr (std::is_same_v<S, MapStep>)
          return s.srcs;
        else
          return {s.src};
      },
      step);
}

/// The most temporary bytes alive at once: a temporary lives from the step that makes
/// it to the last step that reads it (or a view of it); the output's lives to the end.
Count peak_extra_bytes(const Plan& plan, Count es) {
  const std::size_t nbuf = plan.buffers.size(), nsteps = plan.steps.size();
  std::vector<long> made(nbuf, -1), last(nbuf, -1);
  auto buffer_of = [&](int v) { return static_cast<std::size_t>(value_of(plan, v).buffer); };
  for (std::size_t i = 0; i < nsteps; ++i) {
    const auto t = static_cast<long>(i);
    const std::size_t b = buffer_of(dst_of(plan.steps[i]));
    if (made[b] < 0) made[b] = t;
    last[b] = std::max(last[b], t);
    for (int v : srcs_of(plan.steps[i])) last[buffer_of(v)] = std::max(last[buffer_of(v)], t);
  }
  last[buffer_of(plan.output)] = static_cast<long>(nsteps);
  Count peak;
  for (long t = 0; t <= static_cast<long>(nsteps); ++t) {
    Count alive;
    for (std::size_t b = 0; b < nbuf; ++b)
      if (plan.buffers[b].input < 0 && made[b] >= 0 && made[b] <= t && t <= last[b])
        alive += Count::from_int64(plan.buffers[b].elements) * es;
    peak = std::max(peak, alive);
  }
  return peak;
}

/// numpy's naive einsum (einsum_path's "naive FLOP count"): one loop nest over every
/// distinct axis doing n-1 multiplies per iteration for n operands, plus one add when some
/// axis is summed. Other plans: their own FLOPs.
Count naive_flops(const Plan& plan, Count flops) {
  if (plan.op != "einsum" || plan.num_inputs < 2) return flops;
  const auto lengths = detail::known_axis_lengths(plan);
  std::set<std::string> out;
  for (const AxisName& axis : plan.output_value().axes) out.insert(axis.begin(), axis.end());
  Count product(1);
  bool summed = false;
  for (const std::string& name : detail::input_axis_names(plan)) {
    auto it = lengths.find(name);
    if (it == lengths.end()) return flops;  // a length the plan does not determine
    product *= Count::from_int64(it->second);
    summed = summed || out.count(name) == 0;
  }
  return product * Count(static_cast<std::uint64_t>(plan.num_inputs - 1 + (summed ? 1 : 0)));
}

}  // namespace

Cost cost(const Plan& plan) {
  Cost c;
  c.op = plan.op;
  c.pattern = plan.pattern;
  c.dtype = plan.dtype;
  const Count es(element_size(plan.dtype));
  const StepCoster coster{plan, es};
  for (const Step& step : plan.steps) {
    StepCost base;
    base.label = to_string(step, plan);
    StepCost s = std::visit([&](const auto& st) { return coster(st, std::move(base)); }, step);
    c.flops += s.flops;
    c.flops_exact += s.flops_exact;
    c.flops_formula = c.flops_formula + s.flops_formula;
    c.bytes_planned += s.bytes_read + s.bytes_written;
    c.steps.push_back(std::move(s));
  }
  Formula ideal;
  for (int i = 0; i < plan.num_inputs; ++i) {
    c.bytes_read += distinct(value_of(plan, i)) * es;
    ideal = ideal + distinct_formula(value_of(plan, i));
  }
  if (!plan.output_is_view()) {
    c.bytes_written = numel(plan.output_value()) * es;
    ideal = ideal + numel_formula(plan.output_value());
  }
  c.bytes_formula = ideal * es;
  c.peak_extra_bytes = peak_extra_bytes(plan, es);
  c.naive_flops = naive_flops(plan, c.flops);
  return c;
}

double Cost::intensity() const noexcept {
  const double bytes = bytes_read.to_double() + bytes_written.to_double();
  return bytes == 0 ? 0.0 : flops.to_double() / bytes;
}

double Cost::intensity_exact() const noexcept {
  const double bytes = bytes_read.to_double() + bytes_written.to_double();
  return bytes == 0 ? 0.0 : flops_exact.to_double() / bytes;
}

}  // namespace einexpr
