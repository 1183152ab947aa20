// Axis lengths read off a plan's values (see plan_axes.hpp).
#include "plan/plan_axes.hpp"

#include <algorithm>

namespace einexpr::detail {

namespace {

bool is_number(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Solves one composed dim whose factors are all known but one; returns true if it did.
bool solve(const AxisName& axis, std::int64_t length, std::map<std::string, std::int64_t, std::less<>>& known) {
  std::int64_t product = 1;
  const std::string* unknown = nullptr;
  for (const std::string& f : axis) {
    if (is_number(f)) {
      product *= std::stoll(f);
    } else if (auto it = known.find(f); it != known.end()) {
      product *= it->second;
    } else {
      if (unknown != nullptr) return false;  // two unknowns (or a square): not solved here
      unknown = &f;
    }
  }
  if (unknown == nullptr || product == 0 || length % product != 0) return false;
  known.emplace(*unknown, length / product);
  return true;
}

}  // namespace

std::map<std::string, std::int64_t, std::less<>> known_axis_lengths(const Plan& plan) {
  std::map<std::string, std::int64_t, std::less<>> known;
  for (const Value& v : plan.values)
    for (std::size_t d = 0; d < v.axes.size() && d < v.layout.shape.size(); ++d)
      if (v.axes[d].size() == 1 && !is_number(v.axes[d][0])) known.emplace(v.axes[d][0], v.layout.shape[d]);
  for (bool progress = true; progress;) {
    progress = false;
    for (const Value& v : plan.values)
      for (std::size_t d = 0; d < v.axes.size() && d < v.layout.shape.size(); ++d)
        if (v.axes[d].size() > 1) progress = solve(v.axes[d], v.layout.shape[d], known) || progress;
  }
  return known;
}

std::vector<std::string> input_axis_names(const Plan& plan) {
  std::vector<std::string> names;
  for (int i = 0; i < plan.num_inputs && i < static_cast<int>(plan.values.size()); ++i)
    for (const AxisName& axis : plan.values[static_cast<std::size_t>(i)].axes)
      for (const std::string& f : axis)
        if (!is_number(f) && std::find(names.begin(), names.end(), f) == names.end()) names.push_back(f);
  return names;
}

}  // namespace einexpr::detail
