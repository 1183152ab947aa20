#include <catch2/catch.hpp>

#include "einexpr/parser/ast.hpp"

TEST_CASE("op names", "[ast]") { CHECK(std::string(einexpr::name(einexpr::Op::einsum)) == "einsum"); }
