#include "plan/builder.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <numeric>

#include "einexpr/codegen/pipeline.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::detail {

int AtomView::index_of(AxisId id) const noexcept {
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i].id == id) return static_cast<int>(i);
  return -1;
}

const AtomDim& AtomView::at(AxisId id) const {
  const int i = index_of(id);
  EINEXPR_ASSERT(i >= 0, "atom view: axis " + std::to_string(id) + " is missing");
  return dims[static_cast<std::size_t>(i)];
}

Shape AtomView::shape() const {
  Shape s;
  for (const AtomDim& d : dims) s.push_back(d.length);
  return s;
}

Strides AtomView::strides() const {
  Strides s;
  for (const AtomDim& d : dims) s.push_back(d.stride);
  return s;
}

Axes AtomView::ids() const {
  Axes a;
  for (const AtomDim& d : dims) a.push_back(d.id);
  return a;
}

std::vector<DimAxes> AtomView::dims_axes() const {
  std::vector<DimAxes> a;
  for (const AtomDim& d : dims) a.push_back(DimAxes{d.id});
  return a;
}

std::int64_t AtomView::numel() const { return checked_numel(shape()); }

std::vector<AtomDim> split_dim(const AxisTable& axes, const Axes& parts, std::int64_t stride) {
  std::vector<AtomDim> out(parts.size());
  std::int64_t s = stride;
  for (std::size_t k = parts.size(); k-- > 0;) {
    out[k] = AtomDim{parts[k], axes.length(parts[k]), s};
    s = checked_mul(s, std::max<std::int64_t>(axes.length(parts[k]), 1));
  }
  return out;
}

AtomView AtomView::permuted(const Axes& order) const {
  AtomView out{-1, buffer, offset, {}};
  for (AxisId id : order) out.dims.push_back(at(id));
  if (out.dims == dims) out.value = value;
  return out;
}

Axes flatten(const std::vector<OutDim>& outs) {
  Axes all;
  for (const OutDim& o : outs) all.insert(all.end(), o.atoms.begin(), o.atoms.end());
  return all;
}

Strides strides_for_order(const std::vector<AtomDim>& dims, const Axes& order) {
  Strides out(dims.size(), 0);
  std::int64_t s = 1;
  for (std::size_t k = order.size(); k-- > 0;) {
    std::size_t i = 0;
    while (i < dims.size() && dims[i].id != order[k]) ++i;
    EINEXPR_ASSERT(i < dims.size(), "strides_for_order: axis " + std::to_string(order[k]) + " is missing");
    out[i] = s;
    s = checked_mul(s, std::max<std::int64_t>(dims[i].length, 1));
  }
  return out;
}

AtomView atoms_of(const Plan& plan, int v) {
  const Value& value = plan.value(v);
  AtomView out{v, value.buffer, value.layout.offset, {}};
  for (std::size_t d = 0; d < value.dims.size(); ++d) {
    const DimAxes& dim = value.dims[d];
    const std::int64_t len = value.layout.shape[d];
    // A dim of length 1 named by one longer axis was broadcast ('...' against a longer one).
    const bool broadcast = dim.size() == 1 && len == 1 && plan.axes.length(dim[0]) != 1;
    std::int64_t stride = value.layout.strides[d];
    for (std::size_t k = dim.size(); k-- > 0;) {
      const AxisId id = dim[k];
      const std::int64_t length = plan.axes.length(id);
      if (length == 1 && plan.axes[id].kind == AxisKind::anonymous) continue;  // names a dim, no atom
      const std::int64_t s = broadcast ? 0 : stride;
      if (const int i = out.index_of(id); i >= 0)
        out.dims[static_cast<std::size_t>(i)].stride = checked_add(out.dims[static_cast<std::size_t>(i)].stride, s);
      else
        out.dims.push_back(AtomDim{id, length, s});
      stride = checked_mul(stride, length);
    }
  }
  // Atoms in the order their dims list them (a group's atoms were added innermost first).
  std::vector<AtomDim> ordered;
  for (const DimAxes& dim : value.dims)
    for (AxisId id : dim)
      if (out.has(id) && std::none_of(ordered.begin(), ordered.end(), [&](const AtomDim& a) { return a.id == id; }))
        ordered.push_back(out.at(id));
  out.dims = std::move(ordered);
  if (out.layout() != value.layout) out.value = -1;
  return out;
}

PlanBuilder::PlanBuilder(Op op, std::string pattern, DType dtype, AxisTable axes) {
  plan_.op = op;
  plan_.pattern = std::move(pattern);
  plan_.dtype = dtype;
  plan_.axes = std::move(axes);
}

int PlanBuilder::add_input(const Layout& layout, std::vector<DimAxes> dims, std::optional<DType> dtype) {
  EINEXPR_ASSERT(plan_.num_inputs == static_cast<int>(plan_.values.size()), "inputs must come first");
  // A broadcast view (stride 0) may hold more elements than int64 counts while its memory is
  // tiny; every count a step makes from it would overflow: refuse it here (ShapeError).
  checked_numel(layout.shape);
  (void)layout.extent();  // and so may its strides reach past what int64 counts: refused too
  const int index = plan_.num_inputs++;
  plan_.buffers.push_back(PlanBuffer{index, 0, dtype.value_or(plan_.dtype)});
  Layout l = layout;
  l.offset = 0;  // the program binds each input's buffer at its element [0, ..., 0]
  plan_.values.push_back(Value{index, std::move(l), std::move(dims)});
  return index;
}

// Out of line: GCC 12 warns falsely (-Wmaybe-uninitialized) on the inlined variant move.
void PlanBuilder::add_step(Step step) { plan_.steps.push_back(std::move(step)); }

int PlanBuilder::view(int src, Layout layout, std::vector<DimAxes> dims) {
  const Value& s = value(src);
  if (s.layout == layout && s.dims == dims) return src;
  // A view that broadcasts (stride 0) may count more elements than int64 holds though its
  // input does not (an einsum's '...' of length 1 against 2, beside an axis of 2^63 - 1): no
  // plan may hold it (validate), so it is refused as an input is (add_input): ShapeError.
  checked_numel(layout.shape);
  const int dst = static_cast<int>(plan_.values.size());
  plan_.values.push_back(Value{s.buffer, std::move(layout), std::move(dims)});
  plan_.steps.push_back(ViewStep{src, dst});
  return dst;
}

int PlanBuilder::new_temp_value(Shape shape, Strides strides, std::vector<DimAxes> dims,
                                std::optional<DType> dtype) {
  Layout layout{std::move(shape), std::move(strides), 0};
  const std::int64_t elements = layout.extent();
  const DType t = dtype.value_or(plan_.dtype);
  // The bytes must fit in 64 bits too, or a lowering's elements x element size wraps and
  // asks the allocator for the wrong amount: refuse before anything is allocated.
  const auto element_bytes = static_cast<std::int64_t>(element_size(t));
  if (std::int64_t bytes = 0; __builtin_mul_overflow(elements, element_bytes, &bytes))
    throw ShapeError("a buffer of " + std::to_string(elements) + " elements of " + std::string(name(t)) +
                     " (" + std::to_string(element_bytes) + " bytes each): its bytes overflow 64 bits");
  plan_.buffers.push_back(PlanBuffer{-1, elements, t});
  plan_.values.push_back(Value{static_cast<int>(plan_.buffers.size()) - 1, std::move(layout), std::move(dims)});
  return static_cast<int>(plan_.values.size()) - 1;
}

int PlanBuilder::value_in(int buffer, Layout layout, std::vector<DimAxes> dims) {
  EINEXPR_ASSERT(buffer >= plan_.num_inputs && buffer < static_cast<int>(plan_.buffers.size()),
                 "value_in: not a temporary");
  EINEXPR_ASSERT(layout.extent() <= plan_.buffers[static_cast<std::size_t>(buffer)].elements,
                 "value_in: the layout reaches past the buffer");
  checked_numel(layout.shape);  // as view(): a stride-0 layout may count past int64
  plan_.values.push_back(Value{buffer, std::move(layout), std::move(dims)});
  return static_cast<int>(plan_.values.size()) - 1;
}

AtomView PlanBuilder::emit(AtomView v) {
  if (v.value >= 0) return v;
  EINEXPR_ASSERT(v.buffer >= 0, "emit: an atom view without a buffer");
  // Find a value on this buffer to view from: any will do, views are absolute layouts.
  int src = -1;
  for (std::size_t i = 0; i < plan_.values.size() && src < 0; ++i)
    if (plan_.values[i].buffer == v.buffer) src = static_cast<int>(i);
  EINEXPR_ASSERT(src >= 0, "emit: no value on the atom view's buffer");
  v.value = view(src, v.layout(), v.dims_axes());
  return v;
}

AtomView PlanBuilder::materialize(const AtomView& v, const Axes& order) {
  const AtomView src = emit(v.permuted(order));
  const Strides strides = contiguous_strides(src.shape());
  const int dst = new_temp_value(src.shape(), strides, src.dims_axes());
  plan_.steps.push_back(CopyStep{src.value, dst});
  AtomView out{dst, value(dst).buffer, 0, src.dims};
  for (std::size_t i = 0; i < out.dims.size(); ++i) out.dims[i].stride = strides[i];
  return out;
}

namespace {

std::vector<DimAxes> out_dims(const std::vector<OutDim>& outs) {
  std::vector<DimAxes> a;
  for (const OutDim& o : outs) a.push_back(o.name);
  return a;
}

Shape out_shape(const AtomView& v, const std::vector<OutDim>& outs) {
  Shape s;
  std::size_t next = 0;
  for (const OutDim& o : outs) {
    std::int64_t len = 1;
    for (AxisId a : o.atoms) {
      EINEXPR_ASSERT(next < v.dims.size() && v.dims[next].id == a, "merge: atoms out of order");
      len = checked_mul(len, v.dims[next++].length);
    }
    s.push_back(len);
  }
  EINEXPR_ASSERT(next == v.dims.size(), "merge: atoms left over");
  return s;
}


}  // namespace

std::optional<int> PlanBuilder::try_merge_view(const AtomView& v, const std::vector<OutDim>& outs) {
  const Shape shape = out_shape(v, outs);
  auto strides = try_view_strides(v.shape(), v.strides(), shape);
  if (!strides) return std::nullopt;
  const AtomView e = emit(v);
  return view(e.value, Layout{shape, std::move(*strides), v.offset}, out_dims(outs));
}

int PlanBuilder::merge(const AtomView& v, const std::vector<OutDim>& outs) {
  if (auto merged = try_merge_view(v, outs)) return *merged;
  const AtomView m = materialize(v, v.ids());
  auto merged = try_merge_view(m, outs);
  EINEXPR_ASSERT(merged.has_value(), "merge: a contiguous value did not merge");
  return *merged;
}

Plan PlanBuilder::finish(int output) && {
  plan_.output = output;
  return run_passes(std::move(plan_));
}

}  // namespace einexpr::detail
