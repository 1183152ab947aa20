// Every planning error a user can cause, asserted by class and message.
#include <catch2/catch.hpp>

#include "matchers.hpp"

#include "einexpr/einexpr.hpp"

using namespace einexpr;
using Catch::Matchers::Contains;

TEST_CASE("shape errors name the axis, both sizes and where", "[errors]") {
  const Tensor x = Tensor::randn({2, 64}, DType::f32, 1);
  const Tensor y = Tensor::randn({32, 5}, DType::f32, 2);
  CHECK_THROWS_MATCHES(einsum(x, y, "b h, h k -> b k"), ShapeError,
                       testing_support::MessageHas({"axis h is 64 in operand 1 (dim 1) but 32 in operand 2 (dim 0)"}));
  CHECK_THROWS_MATCHES(einsum(Tensor::randn({3, 4}, DType::f32, 1), "i i -> i"), ShapeError,
                       testing_support::MessageHas({"axis i is 3 (dim 0) and 4 (dim 1) in operand 1: a repeated axis takes the diagonal"}));
  const Tensor z = Tensor::randn({2, 10}, DType::f32, 3);
  CHECK_THROWS_MATCHES(rearrange(z, "b (h w) -> b h w", {{"w", 3}}), ShapeError,
                       testing_support::MessageHas({"dim 1 of the input has length 10, which (h w) cannot split: 10 is not divisible by 3"}));
  CHECK_THROWS_MATCHES(rearrange(z, "b (h w) -> b h w"), ShapeError,
                       testing_support::MessageHas({"cannot infer the lengths of h and w in (h w)"}));
  CHECK_THROWS_MATCHES(rearrange(z, "b (h w) -> b h w", {{"h", 2}, {"w", 3}}), ShapeError,
                       testing_support::MessageHas({"has length 10 but (h w) = 2·3 = 6"}));
  CHECK_THROWS_MATCHES(rearrange(z, "b h -> h b", {{"h", 3}}), ShapeError,
                       testing_support::MessageHas({"axis h is 10 in the input (dim 1 of the input) but 3 was given"}));
  CHECK_THROWS_MATCHES(rearrange(z, "b h -> h b", {{"q", 3}}), ShapeError,
                       testing_support::MessageHas({"the length of axis q is given (3) but 'b h -> h b' does not use q"}));
  CHECK_THROWS_MATCHES(rearrange(z, "b h c -> h b c"), ShapeError,
                       testing_support::MessageHas({"the input has 2 dims (shape [2, 10]) but 'b h c' names 3"}));
  CHECK_THROWS_MATCHES(rearrange(z, "b h c ... -> h b c ..."), ShapeError, testing_support::MessageHas({"needs at least 3"}));
  CHECK_THROWS_MATCHES(repeat(z, "b h -> b h c"), ShapeError, testing_support::MessageHas({"the length of new axis c is not given"}));
  CHECK_THROWS_MATCHES(rearrange(z, "b 3 -> b"), PatternError, testing_support::MessageHas({"anonymous"}));
  CHECK_THROWS_MATCHES(einsum(Tensor::randn({2, 3}, DType::f32, 1), Tensor::randn({4, 3}, DType::f32, 1),
                              "... i, ... i -> ..."),
                       ShapeError, testing_support::MessageHas({"do not broadcast"}));
  CHECK_THROWS_MATCHES(einsum(x, "a b c -> a"), ShapeError,
                       testing_support::MessageHas({"operand 1 has 2 dims (shape [2, 64]) but 'a b c' names 3"}));
  CHECK_THROWS_MATCHES(rearrange(z, "b h -> b h", {{"h", -1}}), ShapeError, testing_support::MessageHas({"must be >= 0"}));
}

TEST_CASE("dtype and device errors", "[errors]") {
  const Tensor a = Tensor::randn({2, 3}, DType::f32, 1);
  const Tensor b = Tensor::randn({3, 2}, DType::bf16, 1);
  CHECK_THROWS_MATCHES(einsum(a, b, "i j, j k -> i k"), DTypeError,
                       testing_support::MessageHas({"einsum operands have different dtypes: f32 (operand 1) and bf16 (operand 2)"}));
  CHECK_THROWS_MATCHES(einsum(a.to(DType::boolean), "i j -> j i"), DTypeError, testing_support::MessageHas({"bool"}));
  CHECK_THROWS_MATCHES(einsum(Tensor(), a, "i j, j k -> i k"), Error, testing_support::MessageHas({"operand 1 is an undefined tensor"}));
}

TEST_CASE("errors carry the call's context at the end", "[errors]") {
  const Tensor x = Tensor::randn({2, 10}, DType::f32, 3);
  try {
    rearrange(x, "b (h w) -> b h w", {{"w", 3}});
    FAIL("no error");
  } catch (const ShapeError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains("in rearrange('b (h w) -> b h w') on input of shape [2, 10] (f32) with w=3"));
    CHECK(e.reason().find("in rearrange") == std::string::npos);
  }
  try {
    rearrange(x, "b (h w -> b h w");
    FAIL("no error");
  } catch (const PatternError& e) {
    CHECK(e.position() == 2);
    CHECK_THAT(std::string(e.what()), Contains("b (h w -> b h w\n") && Contains("\n    ^"));
  }
}
