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

struct AtomDim {
  std::string name;           // "b", "3" (anonymous), "…0" (ellipsis)
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

  int index_of(std::string_view name) const noexcept;  // -1 if absent
  bool has(std::string_view name) const noexcept { return index_of(name) >= 0; }
  Shape shape() const;
  Strides strides() const;
  std::vector<AxisName> axes() const;
  Layout layout() const { return Layout{shape(), strides(), offset}; }
  std::int64_t numel() const;
  /// The same atoms in `order` (every name must be present; others dropped).
  AtomView permuted(const std::vector<std::string>& order) const;
};

/// One dim of an output: the product of its atoms (none: a unit dim of length 1).
struct OutDim {
  std::vector<std::string> atoms;
  AxisName name;  // for printing: the atoms, or {"1"} for an anonymous 1, {} for ()
};

class PlanBuilder {
 public:
  PlanBuilder(std::string op, std::string pattern, DType dtype);

  /// Adds input `index`'s value (in order: call for 0, 1, ...).
  int add_input(const Layout& layout, std::vector<AxisName> axes);
  /// A value viewing src's buffer with `layout` (a ViewStep; src itself if nothing changes).
  int view(int src, Layout layout, std::vector<AxisName> axes);
  /// A new temporary buffer laid out by (shape, strides), which must not overlap.
  int new_temp_value(Shape shape, Strides strides, std::vector<AxisName> axes);
  void add_step(Step step);
  void note(std::string text) { plan_.notes.push_back(std::move(text)); }
  const Plan& plan() const noexcept { return plan_; }
  const Value& value(int v) const { return plan_.values.at(static_cast<std::size_t>(v)); }
  DType dtype() const noexcept { return plan_.dtype; }
  /// Validates, simplifies (simplify.cpp) and returns the plan with `output` as its output.
  Plan finish(int output) &&;

  // ---- atom views ----
  /// The atoms of `v` as a value (a ViewStep unless its layout is v's own).
  AtomView emit(AtomView v);
  /// Copies v into a new contiguous buffer with its atoms in `order`.
  AtomView materialize(const AtomView& v, const std::vector<std::string>& order);
  /// The value for `outs` (each a group of consecutive atoms of v, in v's order): a view
  /// when v's strides allow merging each group, else nullopt.
  std::optional<int> try_merge_view(const AtomView& v, const std::vector<OutDim>& outs);
  /// As try_merge_view, materializing v first (contiguous) when the strides do not allow it.
  int merge(const AtomView& v, const std::vector<OutDim>& outs);

 private:
  Plan plan_;
};

/// How an atom prints: anonymous atoms are made unique as "3", "3'1", "3'2"...; they all
/// print (and count in formulas) as "3".
std::string display_name(std::string_view atom);

/// Strides of a buffer laid out contiguously in `order`, returned for `dims`' order.
Strides strides_for_order(const std::vector<AtomDim>& dims, const std::vector<std::string>& order);
/// Names of v's atoms, in v's order.
std::vector<std::string> names_of(const std::vector<AtomDim>& dims);

/// The plan-level passes (simplify.cpp): drop identity views, fuse view chains, remove
/// values and buffers no step or output uses.
Plan simplify(Plan plan);

}  // namespace einexpr::detail
