#pragma once
// Catch2 prints a Count as its exact decimal digits (instead of {?}) in failed checks.
#include <catch2/catch.hpp>

#include <string>

#include "einexpr/codegen/count.hpp"

namespace Catch {
template <>
struct StringMaker<einexpr::Count> {
  static std::string convert(const einexpr::Count& c) { return c.str(); }
};
}  // namespace Catch
