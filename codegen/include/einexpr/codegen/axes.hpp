#pragma once
// Axes as integers. Resolution (plan/resolve*.cpp) gives every atomic axis of an
// expression an AxisId and one row in the plan's AxisTable: its display name, length and
// kind. Everything after resolution (steps, the order search, cost, formulas, backward,
// printing) refers to axes by id and reads names and lengths from the table; nothing
// parses a name again.
//
//   "b (h d), h d k -> b k"   ids: b=0 h=1 d=2 k=3      dims of operand 1: {0} {1 2}
//   "i 3 -> i 3"              the anonymous 3 has an id of its own (kind anonymous)
//   "... i -> i ..."          each dim '...' stands for has an id (kind ellipsis, "…0")
//   "()" and "1"              a unit dim: no atom (DimAxes {}), or an anonymous 1's id
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace einexpr {

using AxisId = int;

enum class AxisKind : unsigned char {
  named,      // "b", "seq1"
  anonymous,  // "3": an axis given by its length; every occurrence is its own axis
  ellipsis,   // the j-th dim '...' stands for, named "…j"
};

struct Axis {
  std::string name;          // display name: "b", "3", "…0"
  std::int64_t length = 0;
  AxisKind kind = AxisKind::named;
  friend bool operator==(const Axis&, const Axis&) = default;
};

/// The axes of one expression, by id.
class AxisTable {
 public:
  /// Appends an axis; returns its id.
  AxisId add(Axis axis);
  /// The named axis called `name`, or -1.
  AxisId find(std::string_view name) const noexcept;
  /// The named axis `name`: its id, added with `length` if it is new.
  AxisId named(std::string_view name, std::int64_t length);

  const Axis& operator[](AxisId id) const { return axes_.at(static_cast<std::size_t>(id)); }
  Axis& operator[](AxisId id) { return axes_.at(static_cast<std::size_t>(id)); }
  std::size_t size() const noexcept { return axes_.size(); }
  bool empty() const noexcept { return axes_.empty(); }
  const std::vector<Axis>& all() const noexcept { return axes_; }

  const std::string& name(AxisId id) const { return (*this)[id].name; }
  std::int64_t length(AxisId id) const { return (*this)[id].length; }
  /// Product of the lengths of `ids` (overflow-checked: ShapeError).
  std::int64_t product(const std::vector<AxisId>& ids) const;

  friend bool operator==(const AxisTable&, const AxisTable&) = default;

 private:
  std::vector<Axis> axes_;
};

/// One dim of a value: the axes it is the composition of, outermost first. {} is a unit
/// dim "()"; {h, d} is "(h d)".
using DimAxes = std::vector<AxisId>;

/// "b", "(h d)", "()" for a dim, by the table's names.
std::string to_string(const DimAxes& dim, const AxisTable& table);
/// "b s h" for a list of axes.
std::string axes_text(const std::vector<AxisId>& ids, const AxisTable& table);

}  // namespace einexpr
