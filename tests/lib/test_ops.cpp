#include <catch2/catch.hpp>

#include "einexpr/einexpr.hpp"

TEST_CASE("the umbrella header compiles and the version is set", "[lib]") {
  CHECK(std::string(einexpr::version).size() > 0);
}
