// einops' pack, unpack and parse_shape; the out-parameter forms.
#include <catch2/catch.hpp>

#include "matchers.hpp"

#include "einexpr/einexpr.hpp"
#include "reference.hpp"

using namespace einexpr;
using Catch::Matchers::Contains;

TEST_CASE("pack and unpack round-trip as einops does", "[pack]") {
  const Tensor a = Tensor::randn({2, 3, 5}, DType::f32, 1);   // i * k with * = (3)
  const Tensor b = Tensor::randn({2, 5}, DType::f32, 2);      // * = ()
  const Tensor c = Tensor::randn({2, 4, 2, 5}, DType::f32, 3);  // * = (4, 2)
  const std::array<Tensor, 3> in{a, b, c};
  auto [packed, shapes] = pack(in, "i * k");
  CHECK(packed.shape() == Shape{2, 12, 5});
  CHECK(shapes == std::vector<Shape>{{3}, {}, {4, 2}});
  const std::vector<Tensor> back = unpack(packed, shapes, "i * k");
  REQUIRE(back.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(back[i].shape() == in[i].shape());
    CHECK(back[i].to_vector<float>() == in[i].to_vector<float>());
    CHECK(back[i].same_storage(packed));
  }
  const std::vector<Shape> with_infer = {{3}, {}, {-1, 2}};
  CHECK(unpack(packed, with_infer, "i * k")[2].shape() == Shape{2, 4, 2, 5});
  const std::array<Tensor, 2> bad{a, Tensor::randn({3, 5}, DType::f32, 1)};
  CHECK_THROWS_MATCHES(pack(bad, "i * k"), ShapeError, testing_support::MessageHas({"must match tensor 1's"}));
  CHECK_THROWS_AS(pack(in, "i k"), PatternError);
  const std::vector<Shape> wrong = {{3}, {}, {4, 3}};
  CHECK_THROWS_MATCHES(unpack(packed, wrong, "i * k"), ShapeError, testing_support::MessageHas({"the shapes hold 16 elements along '*' but the packed tensor has 12"}));
}

TEST_CASE("parse_shape names the dims as einops does", "[pack]") {
  const Tensor x = Tensor::zeros({2, 3, 4, 5});
  CHECK(parse_shape(x, "b _ h w") == AxisLengths{{"b", 2}, {"h", 4}, {"w", 5}});
  CHECK(parse_shape(x, "b ... w") == AxisLengths{{"b", 2}, {"w", 5}});
  CHECK_THROWS_MATCHES(parse_shape(x, "b h w"), ShapeError, testing_support::MessageHas({"names 3 dims but the tensor has shape [2, 3, 4, 5]"}));
}

TEST_CASE("parse_shape blames the user's own text, one side of a pattern", "[pack][errors]") {
  const Tensor x = Tensor::zeros({2, 3});
  // Once, the error quoted "a -> b ->" (the text parse_shape made) and pointed into it.
  struct Row { std::string pattern; std::size_t position; std::string reason; };
  const Row rows[] = {
      {"a -> b", 2, "parse_shape takes one side of a pattern, without '->'"},
      {"a, b", 3, "parse_shape takes one operand"},
      {"a \xc3\xa9", 2, "unexpected byte 0xC3"},
      {"a (b", 2, "'(' is never closed"},
      {"a b,", 4, "parse_shape takes one operand"},  // an empty second operand
  };
  for (const Row& r : rows) {
    CAPTURE(r.pattern);
    try {
      parse_shape(x, r.pattern);
      FAIL("accepted");
    } catch (const PatternError& e) {
      CHECK(e.pattern() == r.pattern);
      CHECK(e.position() == r.position);
      CHECK_THAT(e.reason(), Catch::Contains(r.reason));
    }
  }
  CHECK_THROWS_WITH(parse_shape(Tensor(), "a b"), Catch::Contains("parse_shape: the tensor is undefined"));
}

TEST_CASE("unpack refuses negative lengths other than one -1", "[pack][errors]") {
  const Tensor packed = Tensor::zeros({2, 6});
  // Once, a -2 counted as -2 elements and let a wrong split through the sum check.
  const std::vector<Shape> shapes = {{-2}, {8}};
  CHECK_THROWS_MATCHES(unpack(packed, shapes, "a *"), ShapeError,
                       testing_support::MessageHas({"unpack: invalid length -2 in shape [-2]"}));
}

TEST_CASE("out-parameter forms write into the caller's tensor", "[into]") {
  const Tensor x = Tensor::randn({4, 6}, DType::f32, 1);
  Tensor out = Tensor::empty({6, 4});
  rearrange_into(out, x, "a b -> b a");
  CHECK(out.to_vector<float>() == rearrange(x, "a b -> b a").contiguous().to_vector<float>());
  Tensor red = Tensor::empty({4});
  reduce_into(red, x, "a b -> a", Reduction::sum);
  CHECK(reference::max_rel_error(red, reference::reduce(x, "a b -> a", Reduction::sum)) <= 1e-5);
  Tensor rep = Tensor::empty({3, 4, 6});
  repeat_into(rep, x, "a b -> c a b", {{"c", 3}});
  CHECK(reference::max_rel_error(rep, reference::repeat(x, "a b -> c a b", {{"c", 3}})) == 0);
  Tensor mm = Tensor::empty({4, 4});
  const std::array<Tensor, 2> in{x, x};
  einsum_into(mm, in, "i k, j k -> i j");
  CHECK(reference::max_rel_error(mm, reference::einsum({x, x}, "i k, j k -> i j")) <= 1e-5);
  Tensor sum = Tensor::empty({4, 6});
  const Tensor row = Tensor::randn({6}, DType::f32, 2);
  map_into(sum, x, row, "a b, b -> a b", BinaryOp::add);
  CHECK(sum.to_vector<float>() == map(x, row, "a b, b -> a b", BinaryOp::add).to_vector<float>());
  Tensor wrong = Tensor::empty({4, 6});
  CHECK_THROWS_MATCHES(rearrange_into(wrong, x, "a b -> b a"), ShapeError,
                       testing_support::MessageHas({"the output tensor has shape [4, 6] but the result has shape [6, 4]"}));
  // A non-contiguous out tensor is written correctly too.
  Tensor big = Tensor::zeros({6, 8});
  Tensor view = big.slice(1, 0, 8, 2);
  rearrange_into(view, x, "a b -> b a");
  CHECK(view.to_vector<float>() == rearrange(x, "a b -> b a").contiguous().to_vector<float>());
  CHECK(big.at<float>({0, 1}) == 0.0f);
}
