// cost(const Plan&): FLOPs and bytes of every step and of the whole plan, without running
// it (conventions in DESIGN.md, "Cost accounting conventions", and cost.hpp).
//
// Per step:
//   view      0 FLOPs, 0 bytes
//   copy      0 FLOPs; reads the distinct source elements (a stride-0 dim reads once),
//             writes the destination
//   contract  2·|B|·m·n·k FLOPs when it sums, |B|·m·n when it only multiplies (outer,
//             Hadamard; cost/convention.hpp, as the order search counts); exact:
//             |B|·m·n·(2k-1), 0 when k = 0; MACs |B|·m·n·k; reads a and b once (distinct
//             elements), writes dst
//   reduce    n_in - n_out FLOPs (+ n_out for mean; var, std, logsumexp: statistic_flops);
//             reads src, writes dst
//   map       flops_per_element(f) · n_out; reads each src (distinct), writes dst
//   embed     0 FLOPs; reads src, writes dst (zeros) and src's elements into it
//   normalize normalization_flops (per element and per row); reads each src, writes dst
//   fill      0 FLOPs; writes dst
//   gather    0 FLOPs; reads the table's elements it gathers (one per output element: a
//             row read twice counts twice) and the distinct indices, writes dst
//   scatter   one add per update; reads the updates, the distinct indices and the elements
//             they add into, writes those elements
//   join      0 FLOPs, 0 bytes (its parts' copies moved the data)
//   cross_entropy  cross_entropy_flops; reads each src, writes dst
// Each value counts at its own dtype's size (indices i64 or i32 beside the data).
// Whole plan: ideal bytes read = every input once (distinct elements; an input only gathers
// read counts the elements they read, when fewer); ideal bytes
// written = the output once, 0 when the output is a view of an input; planned bytes =
// the sum over steps; peak_extra_bytes = the most temporary bytes alive at once.
#include <algorithm>
#include <set>
#include <variant>

#include "cost/convention.hpp"
#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"

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

/// A formula factor for an axis: its name, or its length for an anonymous axis (a number
/// folds into the coefficient).
std::string factor(const AxisTable& table, AxisId id) {
  const Axis& a = table[id];
  return a.kind == AxisKind::anonymous ? std::to_string(a.length) : a.name;
}

/// The factors of the dims [begin, end) of v: each dim's axes, or its length where the
/// axes do not say it (a broadcast dim of length 1, a dim without names).
std::vector<std::string> factors(const Plan& plan, const Value& v, std::size_t begin, std::size_t end,
                                 bool distinct) {
  std::vector<std::string> out;
  const bool named = v.dims.size() == v.layout.shape.size();
  for (std::size_t d = begin; d < end; ++d) {
    if (distinct && v.layout.strides[d] == 0) continue;
    const std::int64_t len = v.layout.shape[d];
    if (named && (v.dims[d].empty() ? len == 1 : plan.axes.product(v.dims[d]) == len)) {
      for (AxisId id : v.dims[d]) out.push_back(factor(plan.axes, id));
    } else {
      out.push_back(std::to_string(len));
    }
  }
  return out;
}

struct StepCoster {
  const Plan& plan;
  mutable std::vector<bool> allocated;  // per buffer: a step has made it (counted once)

  /// The element size of value v.
  Count es(int v) const { return Count(element_size(plan.dtype_of(v))); }

  Formula numel_formula(const Value& v) const {
    return Formula::product(1, factors(plan, v, 0, v.layout.shape.size(), false));
  }
  Formula distinct_formula(const Value& v) const {
    return Formula::product(1, factors(plan, v, 0, v.layout.shape.size(), true));
  }

  // Reads `srcs` (distinct elements) and writes `dst` into a temporary (allocated by the
  // first step that writes it).
  void move(StepCost& c, const std::vector<int>& srcs, int dst) const {
    Formula bytes;
    for (int s : srcs) {
      c.bytes_read += distinct(value_of(plan, s)) * es(s);
      bytes = bytes + distinct_formula(value_of(plan, s)) * es(s);
    }
    const Value& d = value_of(plan, dst);
    c.bytes_written = numel(d) * es(dst);
    c.bytes_formula = bytes + numel_formula(d) * es(dst);
    allocate(c, dst);
  }
  void allocate(StepCost& c, int dst) const {
    const Value& d = value_of(plan, dst);
    const PlanBuffer& buffer = plan.buffers.at(static_cast<std::size_t>(d.buffer));
    const auto b = static_cast<std::size_t>(d.buffer);
    if (buffer.input < 0 && !allocated[b]) c.bytes_allocated = Count::from_int64(buffer.elements) * es(dst);
    allocated[b] = true;
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
    // No summed axis (an outer or Hadamard product): one multiply per output, no add, as
    // numpy.einsum_path counts it; else 2 per multiply-add (cost/convention.hpp).
    const bool sums = !s.summed.empty();
    c.flops = convention::contraction_flops(outputs, k, sums);
    c.flops_exact = k == Count(0) ? Count(0) : outputs * (Count(2) * k - Count(1));
    c.macs = outputs * k;
    std::vector<std::string> f = factors(plan, dst, 0, nb + 2, false);
    const std::vector<std::string> fk = factors(plan, a, nb + 1, nb + 2, false);
    f.insert(f.end(), fk.begin(), fk.end());
    c.flops_formula = Formula::product(sums ? 2 : 1, std::move(f));
    move(c, {s.a, s.b}, s.dst);
    return c;
  }
  StepCost operator()(const ReduceStep& s, StepCost c) const {
    c.kind = "reduce";
    const Value& src = value_of(plan, s.src);
    const Value& dst = value_of(plan, s.dst);
    const Count n_in = numel(src), n_out = numel(dst);
    c.flops = convention::fold_flops(n_in, n_out);  // sum over an empty axis folds nothing
    c.flops_formula = numel_formula(src) - numel_formula(dst);
    if (s.op == Reduction::mean) {
      c.flops += n_out;
      c.flops_formula += numel_formula(dst);
    }
    if (s.op == Reduction::var || s.op == Reduction::std || s.op == Reduction::logsumexp) {
      const bool root = s.op == Reduction::std;
      c.flops = convention::statistic_flops(n_in, n_out, root);
      c.flops_formula = numel_formula(src) * Count(4);
      if (root) c.flops_formula += numel_formula(dst);
    }
    c.flops_exact = c.flops;
    move(c, {s.src}, s.dst);
    return c;
  }
  StepCost operator()(const NormStep& s, StepCost c) const {
    c.kind = s.backward ? "d." + std::string(name(s.kind)) : std::string(name(s.kind));
    const Value& dst = value_of(plan, s.dst);
    Count rows(1);
    std::vector<std::string> row_factors;
    for (std::size_t d = 0; d < dst.layout.shape.size(); ++d)
      if (std::find(s.axes.begin(), s.axes.end(), static_cast<int>(d)) == s.axes.end()) {
        rows = rows * Count(static_cast<std::uint64_t>(dst.layout.shape[d]));
        const std::vector<std::string> f = factors(plan, dst, d, d + 1, false);
        row_factors.insert(row_factors.end(), f.begin(), f.end());
      }
    const int kind = static_cast<int>(s.kind);
    c.flops = c.flops_exact = convention::normalization_flops(kind, s.backward, numel(dst), rows);
    const Count per_element = convention::normalization_flops(kind, s.backward, Count(1), Count(0));
    const Count per_row = convention::normalization_flops(kind, s.backward, Count(0), Count(1));
    c.flops_formula = numel_formula(dst) * per_element;
    if (per_row != Count(0)) c.flops_formula += Formula::product(per_row, row_factors);
    move(c, s.srcs, s.dst);
    return c;
  }
  StepCost operator()(const EmbedStep& s, StepCost c) const {
    c.kind = "embed";
    move(c, {s.src}, s.dst);  // reads src, writes every element of dst (the zeros)...
    const Value& src = value_of(plan, s.src);
    c.bytes_written += numel(src) * es(s.dst);  // ...and src's elements again, onto the diagonal
    c.bytes_formula += numel_formula(src) * es(s.dst);
    return c;
  }
  StepCost operator()(const FillStep& s, StepCost c) const {
    c.kind = "fill";
    move(c, {}, s.dst);
    return c;
  }
  StepCost operator()(const GatherStep& s, StepCost c) const {
    c.kind = "gather";
    const Value& dst = value_of(plan, s.dst);
    const Value& index = value_of(plan, s.index);
    c.bytes_read = numel(dst) * es(s.src) + distinct(index) * es(s.index);
    c.bytes_written = numel(dst) * es(s.dst);
    c.bytes_formula = numel_formula(dst) * es(s.src) + distinct_formula(index) * es(s.index) +
                      numel_formula(dst) * es(s.dst);
    allocate(c, s.dst);
    return c;
  }
  StepCost operator()(const ScatterAddStep& s, StepCost c) const {
    c.kind = "scatter";
    const Value& updates = value_of(plan, s.updates);
    const Value& index = value_of(plan, s.index);
    c.flops = c.flops_exact = numel(updates);
    c.flops_formula = numel_formula(updates);
    c.bytes_read = numel(updates) * es(s.updates) * Count(2) + distinct(index) * es(s.index);
    c.bytes_written = numel(updates) * es(s.dst);
    c.bytes_formula = numel_formula(updates) * es(s.updates) * Count(3) + distinct_formula(index) * es(s.index);
    allocate(c, s.dst);
    return c;
  }
  StepCost operator()(const JoinStep&, StepCost c) const {
    c.kind = "join";
    c.is_view = true;
    return c;
  }
  StepCost operator()(const CrossEntropyStep& s, StepCost c) const {
    c.kind = s.backward ? "d.cross_entropy" : "cross_entropy";
    const int logits = s.srcs[s.backward ? 1 : 0];
    const Value& x = value_of(plan, logits);
    const Count n = numel(x);
    Count rows(1);
    for (std::size_t d = 0; d < x.layout.shape.size(); ++d)
      if (static_cast<int>(d) != s.axis) rows *= Count::from_int64(x.layout.shape[d]);
    c.flops = c.flops_exact = convention::cross_entropy_flops(s.backward, n, rows);
    std::vector<std::string> row_factors;
    for (std::size_t d = 0; d < x.layout.shape.size(); ++d)
      if (static_cast<int>(d) != s.axis) {
        const std::vector<std::string> f = factors(plan, x, d, d + 1, false);
        row_factors.insert(row_factors.end(), f.begin(), f.end());
      }
    c.flops_formula = numel_formula(x) * Count(s.backward ? 3 : 4) + Formula::product(s.backward ? 2 : 1, row_factors);
    move(c, s.srcs, s.dst);
    return c;
  }
  StepCost operator()(const RandomStep& s, StepCost c) const {
    c.kind = "random";  // integer hashing and a compare: no floating-point operations
    move(c, {s.seed}, s.dst);
    return c;
  }
  StepCost operator()(const MaskStep& s, StepCost c) const {
    c.kind = "dropout";  // a multiply per element (torch's x · noise)
    const Value& dst = value_of(plan, s.dst);
    c.flops = c.flops_exact = numel(dst);
    c.flops_formula = numel_formula(dst);
    move(c, {s.src, s.mask}, s.dst);
    return c;
  }
  StepCost operator()(const MapStep& s, StepCost c) const {
    c.kind = "map";
    const Count per = std::visit([](const auto& op) { return flops_per_element(op); }, s.op);
    const Value& dst = value_of(plan, s.dst);
    c.flops = c.flops_exact = per * numel(dst);
    c.flops_formula = numel_formula(dst) * per;
    move(c, s.srcs, s.dst);
    return c;
  }
};

/// The most temporary bytes alive at once: a temporary lives from the step that makes
/// it to the last step that reads it (or a view of it); the output's lives to the end.
Count peak_extra_bytes(const Plan& plan) {
  const std::size_t nbuf = plan.buffers.size(), nsteps = plan.steps.size();
  std::vector<long> made(nbuf, -1), last(nbuf, -1);
  auto buffer_of = [&](int v) { return static_cast<std::size_t>(value_of(plan, v).buffer); };
  for (std::size_t i = 0; i < nsteps; ++i) {
    const auto t = static_cast<long>(i);
    const std::size_t b = buffer_of(destination(plan.steps[i]));
    if (made[b] < 0) made[b] = t;
    last[b] = std::max(last[b], t);
    for (int v : sources(plan.steps[i])) last[buffer_of(v)] = std::max(last[buffer_of(v)], t);
  }
  last[buffer_of(plan.output)] = static_cast<long>(nsteps);
  Count peak;
  for (long t = 0; t <= static_cast<long>(nsteps); ++t) {
    Count alive;
    for (std::size_t b = 0; b < nbuf; ++b)
      if (plan.buffers[b].input < 0 && made[b] >= 0 && made[b] <= t && t <= last[b])
        alive += Count::from_int64(plan.buffers[b].elements) * Count(element_size(plan.buffers[b].dtype));
    peak = std::max(peak, alive);
  }
  return peak;
}

std::vector<AxisId> unite(std::vector<AxisId> a, const std::vector<AxisId>& b) {
  for (AxisId id : b)
    if (std::find(a.begin(), a.end(), id) == a.end()) a.push_back(id);
  return a;
}

/// The product of the axes' lengths, or nullopt where it is 2^128 or more.
MaybeCount maybe_size_of(const AxisTable& axes, const std::vector<AxisId>& ids) {
  MaybeCount n = Count(1);
  for (AxisId id : ids) n = checked_mul(n, Count::from_int64(axes.length(id)));
  return n;
}

/// numpy.einsum_path's "naive FLOP count": one loop nest over every distinct axis doing
/// max(1, n - 1) operations per iteration for n operands, plus one when some axis is in more
/// than one operand (numpy's `inner_product`). Plans other than einsum, and plans built by
/// hand (no ContractionInfo to read the operands from): their own FLOPs. nullopt where it is
/// 2^128 or more: a loop nest over every axis of a large einsum easily is, while the plan,
/// which never loops over them all at once, fits.
MaybeCount naive_flops(const Plan& plan, Count flops) {
  if (plan.op != Op::einsum || !plan.contraction) return flops;
  const std::vector<std::vector<AxisId>>& operands = plan.contraction->operands;
  std::vector<AxisId> all;
  std::size_t total = 0;
  for (const auto& o : operands) {
    all = unite(std::move(all), o);
    total += o.size();
  }
  const bool inner = total > all.size();
  const auto n = static_cast<std::uint64_t>(operands.size());
  return checked_mul(maybe_size_of(plan.axes, all), Count(std::max<std::uint64_t>(1, n - 1) + (inner ? 1 : 0)));
}

/// numpy.einsum_path's (and opt_einsum's) count of einexpr's own path: each pairwise step
/// costs the product of the lengths of every axis either operand holds, times 2 when the
/// step sums an axis (opt_einsum's flop_count: max(1, terms - 1) + inner); a one-operand
/// einsum the same over its axes. Unlike einexpr, numpy does not sum an axis private to one
/// operand first (so its count can pass 2^128 where einexpr's does not: then nullopt).
/// numpy prints this sum plus 1 as its "Optimized FLOP count".
MaybeCount numpy_flops(const Plan& plan) {
  auto step = [&](const std::vector<AxisId>& contracted, const std::vector<AxisId>& kept) {
    bool inner = false;
    for (AxisId id : contracted) inner = inner || std::find(kept.begin(), kept.end(), id) == kept.end();
    return checked_mul(maybe_size_of(plan.axes, contracted), Count(inner ? 2 : 1));
  };
  const ContractionInfo& info = *plan.contraction;
  if (info.operands.size() == 1) return step(info.operands[0], info.output);
  std::vector<std::vector<AxisId>> nodes = info.operands;
  std::vector<bool> alive(nodes.size(), true);
  MaybeCount total = Count(0);
  for (const auto& [x, y] : info.path) {
    alive[static_cast<std::size_t>(x)] = alive[static_cast<std::size_t>(y)] = false;
    std::vector<AxisId> keep = info.output;
    for (std::size_t j = 0; j < nodes.size(); ++j)
      if (alive[j]) keep = unite(std::move(keep), nodes[j]);
    const std::vector<AxisId> contracted = unite(nodes[static_cast<std::size_t>(x)], nodes[static_cast<std::size_t>(y)]);
    std::vector<AxisId> result;
    for (AxisId id : contracted)
      if (std::find(keep.begin(), keep.end(), id) != keep.end()) result.push_back(id);
    total = checked_add(total, step(contracted, keep));
    nodes.push_back(std::move(result));
    alive.push_back(true);
  }
  return total;
}

/// Whether every step that reads input i's buffer (views aside) is a gather reading it as
/// its table: then the plan needs only the table elements the gathers read (`elements`, one
/// per element gathered, and its formula), not the whole table (an embedding lookup reads
/// B·S of its V rows).
bool only_gathered(const Plan& plan, int input, const StepCoster& coster, Count& elements, Formula& formula) {
  const int buffer = value_of(plan, input).buffer;
  bool any = false;
  for (const Step& step : plan.steps) {
    if (std::holds_alternative<ViewStep>(step)) continue;
    const auto* g = std::get_if<GatherStep>(&step);
    for (int v : sources(step)) {
      if (value_of(plan, v).buffer != buffer) continue;
      if (g == nullptr || v != g->src) return false;
      const Value& dst = value_of(plan, g->dst);
      elements += numel(dst);
      formula += coster.numel_formula(dst);
      any = true;
    }
  }
  return any;
}

}  // namespace

Cost cost(const Plan& plan) {
  Cost c;
  c.op = name(plan.op);
  c.pattern = plan.pattern;
  c.dtype = plan.dtype;
  const StepCoster coster{plan, std::vector<bool>(plan.buffers.size(), false)};
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    StepCost base;
    base.label = to_string(plan.steps[i], plan);
    const std::string label = base.label;
    try {  // a count the plan needs refuses, naming the step where it leaves 128 bits
      StepCost s = std::visit([&](const auto& st) { return coster(st, std::move(base)); }, plan.steps[i]);
      c.flops += s.flops;
      c.flops_exact += s.flops_exact;
      c.macs += s.macs;
      c.flops_formula += s.flops_formula;
      c.bytes_planned += s.bytes_read + s.bytes_written;
      c.steps.push_back(std::move(s));
    } catch (const ShapeError& e) {
      throw ShapeError(std::string(e.what()) + "\n  in the plan's step " + std::to_string(i + 1) + " of " +
                       std::to_string(plan.steps.size()) + ": " + label);
    }
  }
  Formula ideal;
  for (int i = 0; i < plan.num_inputs; ++i) {
    Count gathered;
    Formula gathered_formula;
    if (only_gathered(plan, i, coster, gathered, gathered_formula) && gathered < distinct(value_of(plan, i))) {
      c.bytes_read += gathered * coster.es(i);
      ideal += gathered_formula * coster.es(i);
      continue;
    }
    c.bytes_read += distinct(value_of(plan, i)) * coster.es(i);
    ideal += coster.distinct_formula(value_of(plan, i)) * coster.es(i);
  }
  if (!plan.output_is_view()) {
    c.bytes_written = numel(plan.output_value()) * coster.es(plan.output);
    ideal += coster.numel_formula(plan.output_value()) * coster.es(plan.output);
  }
  c.bytes_formula = ideal;
  c.peak_extra_bytes = peak_extra_bytes(plan);
  c.naive_flops = naive_flops(plan, c.flops);
  c.flops_numpy = plan.op == Op::einsum && plan.contraction ? numpy_flops(plan) : MaybeCount(c.flops);
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
