// Messages through the C++ API: numpy's one-letter patterns get a hint with einexpr's
// spelling (ops and costs alike), and a program's composition takes the one axis its
// input's shape leaves open (ProgramOptions::axes and given tensors), or says which to give.
#include <catch2/catch.hpp>

#include "einexpr/einexpr.hpp"

using namespace einexpr;

TEST_CASE("an einsum written as numpy writes it says how einexpr spells it", "[messages]") {
  const Tensor x = Tensor::randn({8, 4}, DType::f32, 1), w = Tensor::randn({4, 3}, DType::f32, 2);
  const std::string hint = "\n  einexpr's axes are names separated by spaces: numpy's 'bd,dk->bk' is 'b d, d k -> b k' here";
  CHECK_THROWS_WITH(einsum(x, w, "bd,dk->bk"), Catch::Contains("output axis 'bk' appears in no input") &&
                                                   Catch::EndsWith(hint));
  CHECK_THROWS_WITH(cost_einsum("bd,dk->bk", {{"b", 8}}), Catch::EndsWith(hint));
  CHECK_THROWS_WITH(rearrange(x, "ab->ba"), Catch::EndsWith("numpy's 'ab->ba' is 'a b -> b a' here"));
  // Spelled einexpr's way it runs, as numpy.einsum('bd,dk->bk') would.
  CHECK(einsum(x, w, "b d, d k -> b k").shape() == Shape{8, 3});
  CHECK_THROWS_WITH(einsum(x, w, "b d, d k -> b q"), !Catch::Contains("numpy's"));
}

TEST_CASE("a program's composition takes the axis its input leaves open", "[messages][program]") {
  const ast::Program p = parse_program(
      "axes B=2 H=4 K=3\n"
      "input x: B (H K)\n"
      "y = rearrange(x, \"B (H K) -> B H K\")\n",
      "comp.ein");
  const Tensor x = Tensor::arange(48, DType::f32).view({2, 24});
  ProgramOptions o;
  o.axes = {{"H", 4}};
  o.given = {{"x", x.shape(), x.dtype(), "x.npy"}};
  const CompiledProgram m(p, o);
  const Tensor y = m.run({{"x", x}})["y"];
  CHECK(y.shape() == Shape{2, 4, 6});
  CHECK(y.to_vector<float>() == x.to_vector<float>());
  // Two axes open: which to give is the user's to say.
  ProgramOptions both;
  both.given = o.given;
  CHECK_THROWS_WITH(CompiledProgram(p, both),
                    Catch::Contains("dim 1 of x.npy is 24 but it is (H K) = 12: H=4 (line 1), K=3 (line 1); give all "
                                    "but one of H, K a length (ProgramOptions::axes) and the last is inferred"));
  // A factor fixed by another tensor's dim counts as given.
  const ast::Program q = parse_program(
      "axes B=2 H=4 K=3\n"
      "input x: B (H K)\n"
      "input k: K\n"
      "y = rearrange(x, \"B (H K) -> B H K\")\n",
      "comp2.ein");
  const Tensor k = Tensor::zeros({8}, DType::f32);
  ProgramOptions from_k;
  from_k.given = {{"x", x.shape(), x.dtype(), "x.npy"}, {"k", k.shape(), k.dtype(), "k.npy"}};
  const CompiledProgram mk(q, from_k);
  CHECK(mk.run({{"x", x}, {"k", k}})["y"].shape() == Shape{2, 3, 8});
}
