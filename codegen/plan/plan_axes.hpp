#pragma once
// Axis lengths a plan knows from its values' axis names (private to codegen): a dim named
// {"h"} of length 8 gives h = 8; a dim {"h", "d"} of length 64 gives d = 8 once h is known.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "einexpr/codegen/plan.hpp"

namespace einexpr::detail {

/// Every axis name the plan's values determine, with its length. Numbers and unit dims
/// are not listed; names only known inside a product of two unknowns are left out.
std::map<std::string, std::int64_t, std::less<>> known_axis_lengths(const Plan& plan);

/// The distinct axis names (not numbers) of the plan's inputs, in order of appearance.
std::vector<std::string> input_axis_names(const Plan& plan);

}  // namespace einexpr::detail
