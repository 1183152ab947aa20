// AxisTable: the axes of one expression, by id (axes.hpp).
#include "einexpr/codegen/axes.hpp"

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr {

AxisId AxisTable::add(Axis axis) {
  axes_.push_back(std::move(axis));
  return static_cast<AxisId>(axes_.size()) - 1;
}

AxisId AxisTable::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].kind == AxisKind::named && axes_[i].name == name) return static_cast<AxisId>(i);
  return -1;
}

AxisId AxisTable::named(std::string_view name, std::int64_t length) {
  const AxisId id = find(name);
  return id >= 0 ? id : add(Axis{std::string(name), length, AxisKind::named});
}

std::int64_t AxisTable::product(const std::vector<AxisId>& ids) const {
  std::int64_t p = 1;
  for (AxisId id : ids) p = checked_mul(p, length(id));
  return p;
}

std::string to_string(const DimAxes& dim, const AxisTable& table) {
  if (dim.empty()) return "()";
  if (dim.size() == 1) return table.name(dim[0]);
  return "(" + axes_text(dim, table) + ")";
}

std::string axes_text(const std::vector<AxisId>& ids, const AxisTable& table) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? " " : "") + table.name(ids[i]);
  return s;
}

}  // namespace einexpr
