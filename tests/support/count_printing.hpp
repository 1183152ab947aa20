#pragma once
// Catch2 prints a Count as its exact decimal digits (instead of {?}) in failed checks, and a
// MaybeCount as them or "2^128 or more".
#include <catch2/catch.hpp>

#include <string>

#include "einexpr/codegen/count.hpp"

namespace Catch {
template <>
struct StringMaker<einexpr::Count> {
  static std::string convert(const einexpr::Count& c) { return c.str(); }
};
template <>
struct StringMaker<einexpr::MaybeCount> {
  static std::string convert(const einexpr::MaybeCount& c) { return einexpr::str(c); }
};
}  // namespace Catch
