// reduce against the reference: every reduction, dtype and layout.
#include "check_op.hpp"
#include "matchers.hpp"

using namespace einexpr;
using testing_support::check_against_reference;

namespace {

struct Row {
  const char* pattern;
  Shape shape;
  AxisLengths lengths;
  std::int64_t terms;  // elements folded into each output (for the tolerance)
};

const std::vector<Row> rows = {
    {"b c (h h2) (w w2) -> b c h w", {2, 3, 4, 6}, {{"h2", 2}, {"w2", 2}}, 4},
    {"batch seq hidden -> batch hidden", {2, 3, 4}, {}, 3},
    {"... hidden -> ...", {2, 3, 4}, {}, 4},
    {"b h w c -> b c", {2, 3, 4, 5}, {}, 12},
    {"b h w c -> c", {2, 3, 4, 5}, {}, 24},
    {"b h w ->", {2, 3, 4}, {}, 24},
    {"b s h -> b h", {3, 5, 4}, {}, 5},
    {"b s h -> h s b", {2, 3, 4}, {}, 1},
    {"b (s 2) h -> b s h", {2, 6, 3}, {}, 2},
    {"b 2 h -> b h", {2, 2, 3}, {}, 2},
    {"a b c -> a () c", {2, 3, 4}, {}, 3},
    {"(a b) c -> b c", {6, 4}, {{"a", 2}}, 2},
    {"... c -> c", {2, 3, 4}, {}, 6},
    {"a b c -> c a", {2, 3, 4}, {}, 3},
    {"a b c d -> b d", {2, 3, 2, 3}, {}, 4},
    {"a b c d -> a c", {2, 3, 2, 3}, {}, 9},
    {"a b -> a", {4, 1}, {}, 1},
    {"a b -> b", {1, 7}, {}, 1},
    {"c (h h2) (w w2) -> c h w", {3, 4, 6}, {{"h2", 2}, {"w2", 3}}, 6},
    {"a b c -> (c a)", {2, 3, 4}, {}, 3},
};

}  // namespace

TEST_CASE("reduce matches the reference for every reduction, dtype and layout", "[reduce]") {
  for (const Row& row : rows) {
    for (Reduction r : {Reduction::sum, Reduction::mean, Reduction::max, Reduction::min, Reduction::prod}) {
      CAPTURE(row.pattern, shape_str(row.shape), name(r));
      const std::vector<DType> dtypes =
          r == Reduction::mean ? testing_support::float_dtypes : testing_support::all_numeric;
      check_against_reference(
          {row.shape}, dtypes, r == Reduction::max || r == Reduction::min ? 0 : row.terms,
          [&](const auto& in) { return reduce(in[0], row.pattern, r, row.lengths); },
          [&](const auto& in) { return reference::reduce(in[0], row.pattern, r, row.lengths); });
    }
  }
}

TEST_CASE("any and all reduce bool tensors", "[reduce]") {
  for (const Row& row : rows) {
    for (Reduction r : {Reduction::any, Reduction::all, Reduction::max, Reduction::min}) {
      CAPTURE(row.pattern, name(r));
      const Tensor x = Tensor::randn(row.shape, DType::boolean, 5);
      const Tensor y = reduce(x, row.pattern, r, row.lengths);
      CHECK(y.dtype() == DType::boolean);
      CHECK(reference::max_rel_error(y, reference::reduce(x, row.pattern, r, row.lengths)) == 0);
    }
  }
}

TEST_CASE("the seeds' reduce: sum over seq of arange(24)", "[reduce][seeds]") {
  const Tensor x = Tensor::arange(24, DType::i64).view({2, 3, 4});
  const Tensor y = reduce(x, "batch seq hidden -> batch hidden", "sum");
  CHECK(y.to_vector<std::int64_t>() == std::vector<std::int64_t>{12, 15, 18, 21, 48, 51, 54, 57});
}

TEST_CASE("mean of integers, any of floats and sum of bools are dtype errors", "[reduce][errors]") {
  const Tensor i = Tensor::arange(6, DType::i64).view({2, 3});
  CHECK_THROWS_MATCHES(reduce(i, "a b -> a", "mean"), DTypeError,
                       testing_support::MessageHas({"mean is not defined for integer dtypes"}));
  CHECK_THROWS_MATCHES(reduce(i.to(DType::f32), "a b -> a", "any"), DTypeError,
                       testing_support::MessageHas({"any and all take bool tensors"}));
  CHECK_THROWS_MATCHES(reduce(i.to(DType::boolean), "a b -> a", "sum"), DTypeError,
                       testing_support::MessageHas({"convert with .to(DType::i64) first"}));
  CHECK_THROWS_MATCHES(reduce(i, "a b -> a", "meen"), Error, testing_support::MessageHas({"unknown reduction 'meen'"}));
}

TEST_CASE("reductions over empty axes: sum 0, prod 1, max an error", "[reduce]") {
  const Tensor x = Tensor::zeros({3, 0});
  CHECK(reduce(x, "a b -> a", "sum").to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(reduce(x, "a b -> a", "prod").to_vector<float>() == std::vector<float>{1, 1, 1});
  CHECK_THROWS_MATCHES(reduce(x, "a b -> a", "max"), ShapeError,
                       testing_support::MessageHas({"max of no elements is undefined"}));
}
