// Derivation (derive.hpp): the sources, elementwise maps over atoms and the lay-out of a
// gradient in its input's dims that every derivation uses.
#include "backward/derive.hpp"

#include <algorithm>

#include "einexpr/runtime/error.hpp"

namespace einexpr::detail::backward {

namespace {

/// Whether dim `d` of v is a '...' dim broadcast from length 1 against a longer one.
bool broadcast_dim(const Plan& plan, const Value& v, std::size_t d) {
  const DimAxes& dim = v.dims[d];
  return dim.size() == 1 && v.layout.shape[d] == 1 && plan.axes.length(dim[0]) != 1;
}

bool contains(const Axes& set, AxisId id) { return std::find(set.begin(), set.end(), id) != set.end(); }

}  // namespace

Derivation::Derivation(const Plan& forward, int input, Op op)
    : forward_(forward), input_(input), b_(op, "", forward.dtype, forward.axes) {
  const Value& x = forward.value(input);
  const AtomView xa = atoms_of(forward, input);
  for (const AtomDim& a : xa.dims) {
    bool bcast = false;
    for (std::size_t d = 0; d < x.dims.size(); ++d)
      bcast = bcast || (broadcast_dim(forward, x, d) && x.dims[d][0] == a.id);
    if (!bcast) x_axes_.push_back(a.id);
  }
}

int Derivation::add_dy() {
  sources_.push_back({GradientSource::Kind::output_gradient, -1, "dY"});
  const Value& y = forward_.output_value();
  return b_.add_input(Layout::contiguous(y.layout.shape), y.dims);
}

int Derivation::add_y() {
  sources_.push_back({GradientSource::Kind::output, -1, "Y"});
  const Value& y = forward_.output_value();
  return b_.add_input(Layout::contiguous(y.layout.shape), y.dims);
}

int Derivation::add_input(int j) {
  GradientSource s{GradientSource::Kind::input, j, ""};
  s.name = source_name(s);
  sources_.push_back(std::move(s));
  const Value& x = forward_.value(j);
  return b_.add_input(x.layout, x.dims, forward_.dtype_of(j));
}

std::string Derivation::source_name(const GradientSource& s) const {
  switch (s.kind) {
    case GradientSource::Kind::output_gradient: return "dY";
    case GradientSource::Kind::output: return "Y";
    case GradientSource::Kind::input: break;
  }
  if (forward_.num_inputs == 1) return "X";
  const int i = s.input;
  return std::string(1, static_cast<char>('A' + i % 24)) + (i < 24 ? "" : std::to_string(i / 24));
}

Axes Derivation::y_axes() const { return atoms_of(forward_, forward_.output).ids(); }

std::string Derivation::dims_text(const std::vector<DimAxes>& dims) const {
  std::string s;
  for (const DimAxes& d : dims) s += (s.empty() ? "" : " ") + to_string(d, axes());
  return s;
}

std::vector<int> Derivation::in_order(const std::vector<int>& srcs, const Axes& order) {
  std::vector<int> values;
  for (int v : srcs) {
    const AtomView a = atoms(v);
    AtomView bcast{-1, a.buffer, a.offset, {}};
    for (AxisId id : order) bcast.dims.push_back(a.has(id) ? a.at(id) : AtomDim{id, axes().length(id), 0});
    values.push_back(b_.emit(bcast).value);
  }
  return values;
}

AtomView Derivation::new_result(const Axes& order) {
  AtomView out{-1, -1, 0, {}};
  for (AxisId id : order) out.dims.push_back({id, axes().length(id), 0});
  const Strides strides = contiguous_strides(out.shape());
  for (std::size_t i = 0; i < out.dims.size(); ++i) out.dims[i].stride = strides[i];
  out.value = b_.new_temp_value(out.shape(), strides, out.dims_axes());
  out.buffer = b_.value(out.value).buffer;
  return out;
}

AtomView Derivation::map(std::variant<UnaryOp, BinaryOp, GradOp> f, const std::vector<int>& srcs, const Axes& order) {
  const std::vector<int> values = in_order(srcs, order);
  const AtomView out = new_result(order);
  b_.add_step(MapStep{values, out.value, f});
  return out;
}

AtomView Derivation::norm_step(const NormStep& forward, const std::vector<int>& srcs, const Axes& order,
                               const Axes& along, bool backward) {
  const std::vector<int> values = in_order(srcs, order);
  const AtomView out = new_result(order);
  std::vector<int> dims;
  for (std::size_t i = 0; i < order.size(); ++i)
    if (contains(along, order[i])) dims.push_back(static_cast<int>(i));
  b_.add_step(NormStep{values, out.value, forward.kind, backward, dims, forward.eps});
  return out;
}

AtomView Derivation::normalization(const NormStep& forward, const std::vector<int>& srcs, const Axes& order,
                                   const Axes& along) {
  return norm_step(forward, srcs, order, along, true);
}

AtomView Derivation::normalized(const NormStep& forward, int src, const Axes& order, const Axes& along) {
  return norm_step(forward, {src}, order, along, false);
}

int Derivation::lay_out(const AtomView& g) {
  const Value& x = forward_.value(input_);
  for (const AtomDim& a : g.dims)
    EINEXPR_ASSERT(contains(x_axes_, a.id), "backward: a gradient holds an axis its input does not");
  AtomView src = g;
  for (AxisId id : x_axes_)
    if (!g.has(id)) {
      src.dims.push_back({id, axes().length(id), 0});  // summed by the forward: broadcast back
      src.value = -1;                                  // no longer g's value
    }
  src = src.permuted(x_axes_);
  // Each of X's dims as the atoms it composes (none for a broadcast '...' dim).
  std::vector<OutDim> outs;
  bool diagonal = false;
  Axes seen;
  for (std::size_t d = 0; d < x.dims.size(); ++d) {
    OutDim o{{}, x.dims[d]};
    if (!broadcast_dim(forward_, x, d))
      for (AxisId id : x.dims[d])
        if (contains(x_axes_, id)) {
          diagonal = diagonal || contains(seen, id);
          seen.push_back(id);
          o.atoms.push_back(id);
        }
    outs.push_back(std::move(o));
  }
  if (!diagonal) return b_.merge(src, outs);
  // A diagonal: zeros of X's shape, src written where every copy of an axis agrees.
  const Strides cs = contiguous_strides(x.layout.shape);
  Strides into(x_axes_.size(), 0);
  for (std::size_t d = 0; d < outs.size(); ++d) {
    std::int64_t inner = cs[d];
    for (std::size_t k = outs[d].atoms.size(); k-- > 0;) {
      const auto at = static_cast<std::size_t>(std::find(x_axes_.begin(), x_axes_.end(), outs[d].atoms[k]) - x_axes_.begin());
      into[at] = checked_add(into[at], inner);
      inner = checked_mul(inner, axes().length(outs[d].atoms[k]));
    }
  }
  const int from = b_.emit(src).value;
  const int dst = b_.new_temp_value(x.layout.shape, cs, x.dims);
  b_.add_step(EmbedStep{from, dst, Layout{src.shape(), into, 0}});
  return dst;
}

Gradient Derivation::finish(int output, std::string expression) && {
  Gradient g;
  g.input = input_;
  g.label = "operand " + std::to_string(input_ + 1);
  g.expression = std::move(expression);
  g.sources = std::move(sources_);
  b_.set_pattern(g.expression);
  g.plan = std::move(b_).finish(output);
  return g;
}

}  // namespace einexpr::detail::backward
