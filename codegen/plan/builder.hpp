#pragma once
// Private to codegen: building plans. A PlanBuilder appends values, buffers and steps;
// an AtomView is a value seen with one dim per atomic axis (compositions split, ellipsis
// expanded), the form every planner works in before merging dims for the output.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "einexpr/codegen/plan.hpp"

namespace einexpr::detail {

using Axes = std::vector<AxisId>;

struct AtomDim {
  AxisId id = 0;              // in the plan's AxisTable
  std::int64_t length = 1;
  std::int64_t stride = 0;
  friend bool operator==(const AtomDim&, const AtomDim&) = default;
};

/// A value of a plan with one dim per atom (value = -1 until a view is emitted for it).
struct AtomView {
  int value = -1;
  int buffer = -1;
  std::int64_t offset = 0;
  std::vector<AtomDim> dims;

  int index_of(AxisId id) const noexcept;  // -1 if absent
  bool has(AxisId id) const noexcept { return index_of(id) >= 0; }
  const AtomDim& at(AxisId id) const;      // InternalError if absent
  Shape shape() const;
  Strides strides() const;
  Axes ids() const;
  std::vector<DimAxes> dims_axes() const;  // one dim per atom
  Layout layout() const { return Layout{shape(), strides(), offset}; }
  std::int64_t numel() const;
  /// The same atoms in `order` (every id must be present; others dropped).
  AtomView permuted(const Axes& order) const;
};

/// `parts` as the atoms that split a dim of stride `stride`, innermost last (a unit part
/// counts 1 in the strides): a slice of a concatenated or packed dim seen as its parts.
std::vector<AtomDim> split_dim(const AxisTable& axes, const Axes& parts, std::int64_t stride);

/// One dim of an output: the product of its atoms (none: a unit dim of length 1).
struct OutDim {
  Axes atoms;     // the atoms whose product it is (in the value being merged)
  DimAxes name;   // what the dim is called: the atoms, plus an anonymous 1's id; {} for ()
};

class PlanBuilder {
 public:
  PlanBuilder(Op op, std::string pattern, DType dtype, AxisTable axes);

  AxisTable& axes() noexcept { return plan_.axes; }
  const AxisTable& axes() const noexcept { return plan_.axes; }
  /// Adds input `index`'s value (in order: call for 0, 1, ...), of the plan's dtype or `dtype`.
  int add_input(const Layout& layout, std::vector<DimAxes> dims, std::optional<DType> dtype = std::nullopt);
  /// A value viewing src's buffer with `layout` (a ViewStep; src itself if nothing changes).
  int view(int src, Layout layout, std::vector<DimAxes> dims);
  /// A new temporary buffer laid out by (shape, strides), which must not overlap; its
  /// elements of the plan's dtype or `dtype`.
  int new_temp_value(Shape shape, Strides strides, std::vector<DimAxes> dims,
                     std::optional<DType> dtype = std::nullopt);
  /// A value of an existing temporary `buffer` that no step has made yet: the step that
  /// writes it (a copy into a slice, a scatter-add, a join) makes it.
  int value_in(int buffer, Layout layout, std::vector<DimAxes> dims);
  void add_step(Step step);
  void note(std::string text) { plan_.notes.push_back(std::move(text)); }
  void set_contraction(ContractionInfo info) { plan_.contraction = std::move(info); }
  void set_slice(SliceInfo info) { plan_.slice = std::move(info); }
  void set_pattern(std::string pattern) { plan_.pattern = std::move(pattern); }
  const Plan& plan() const noexcept { return plan_; }
  const Value& value(int v) const { return plan_.values.at(static_cast<std::size_t>(v)); }
  DType dtype() const noexcept { return plan_.dtype; }
  /// The plan with `output` as its output, after the pipeline's passes (run_passes,
  /// pipeline.hpp). Validation is the pipeline's next stage (compile_plan), not this one's.
  Plan finish(int output) &&;

  // ---- atom views ----
  /// The atoms of `v` as a value (a ViewStep unless its layout is v's own).
  AtomView emit(AtomView v);
  /// Copies v into a new contiguous buffer with its atoms in `order`.
  AtomView materialize(const AtomView& v, const Axes& order);
  /// The value for `outs` (each a group of consecutive atoms of v, in v's order): a view
  /// when v's strides allow merging each group, else nullopt.
  std::optional<int> try_merge_view(const AtomView& v, const std::vector<OutDim>& outs);
  /// As try_merge_view, materializing v first (contiguous) when the strides do not allow it.
  int merge(const AtomView& v, const std::vector<OutDim>& outs);

 private:
  Plan plan_;
};

/// Strides of a buffer laid out contiguously in `order`, returned for `dims`' order.
Strides strides_for_order(const std::vector<AtomDim>& dims, const Axes& order);
/// Every atom of `outs`, in order.
Axes flatten(const std::vector<OutDim>& outs);
/// The atoms of a plan's value: each dim split into the axes it composes (strides from the
/// dim's stride and the axes' lengths), an axis in two dims (a diagonal) once with the
/// strides added, a dim of length 1 whose axis is longer (broadcast) as stride 0, and an
/// anonymous 1 left out (it names a dim; it is no atom), as resolution makes them.
AtomView atoms_of(const Plan& plan, int value);

/// The plan-level passes (simplify.cpp; the pipeline runs them in this order): a view of a
/// view reads the first view's source; a view that changes nothing is its source; steps,
/// values and buffers nothing uses go.
Plan fuse_view_chains(Plan plan);
Plan drop_identity_views(Plan plan);
Plan remove_unused(Plan plan);

}  // namespace einexpr::detail
