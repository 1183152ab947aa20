#include <catch2/catch.hpp>

#include "einexpr/codegen/plan.hpp"

using namespace einexpr;

TEST_CASE("reductions parse by name, and unknown ones are named in the error", "[plan]") {
  CHECK(parse_reduction("mean") == Reduction::mean);
  CHECK_THROWS_WITH(parse_reduction("meen"), Catch::Contains("unknown reduction 'meen'") && Catch::Contains("sum, mean"));
}
