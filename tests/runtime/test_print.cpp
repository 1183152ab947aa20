// Tensor::str(): the values as torch prints them (the seeds show many), then einexpr's
// shape and dtype.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "einexpr/runtime/tensor.hpp"

using namespace einexpr;

TEST_CASE("str() prints values as torch does, then shape and dtype", "[tensor][print][seeds]") {
  const double nan_value = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Row { Tensor t; std::string want; };
  const Row rows[] = {
      // seeds: torch.tensor([1e-8], dtype=float16) and bfloat16
      {Tensor::from_doubles({1e-8}, {1}, DType::f16), "tensor([0.], shape=[1], dtype=f16)"},
      {Tensor::from_doubles({1e-8}, {1}, DType::bf16), "tensor([1.0012e-08], shape=[1], dtype=bf16)"},
      // seeds: x.rsqrt(), x.pow(2), x / 0.5
      {Tensor::from_vector<float>({1, 0.5f, 1 / 3.0f}, {3}), "tensor([1.0000, 0.5000, 0.3333], shape=[3], dtype=f32)"},
      {Tensor::from_vector<std::int64_t>({1, 16, 81}, {3}), "tensor([ 1, 16, 81], shape=[3], dtype=i64)"},
      {Tensor::from_vector<float>({2, 8, 18}, {3}), "tensor([ 2.,  8., 18.], shape=[3], dtype=f32)"},
      // seeds: x[0][0] = 100 on an int tensor
      {Tensor::from_vector<std::int64_t>({100, 2, 3, 4, 5, 6}, {2, 3}),
       "tensor([[100,   2,   3],\n        [  4,   5,   6]], shape=[2, 3], dtype=i64)"},
      {Tensor::zeros({2, 2}), "tensor([[0., 0.],\n        [0., 0.]], shape=[2, 2], dtype=f32)"},
      {Tensor::from_vector<bool>({true, false}, {2}), "tensor([ True, False], shape=[2], dtype=bool)"},
      {Tensor::from_doubles({-1.5, 2.25}, {2}), "tensor([-1.5000,  2.2500], shape=[2], dtype=f32)"},
      {Tensor::from_doubles({1, 2000}, {2}), "tensor([1.0000e+00, 2.0000e+03], shape=[2], dtype=f32)"},
      {Tensor::from_doubles({0.5, 1e9}, {2}, DType::f64), "tensor([5.0000e-01, 1.0000e+09], shape=[2], dtype=f64)"},
      {Tensor::from_doubles({nan_value, -inf, 0, 3}, {4}), "tensor([nan, -inf, 0., 3.], shape=[4], dtype=f32)"},
      {Tensor::from_doubles({nan_value, 0.25}, {2}), "tensor([   nan, 0.2500], shape=[2], dtype=f32)"},
      {Tensor::from_doubles({-0.0}, {}), "tensor(-0., shape=[], dtype=f32)"},
      {Tensor::full({}, 7, DType::i32), "tensor(7, shape=[], dtype=i32)"},
      {Tensor::from_vector<std::int64_t>({9007199254740993}, {1}),  // 2^53 + 1: printed exactly
       "tensor([9007199254740993], shape=[1], dtype=i64)"},
      {Tensor::from_doubles({448, 1000}, {2}, DType::f8_e4m3), "tensor([448., 448.], shape=[2], dtype=f8_e4m3)"},
      {Tensor::zeros({0, 3}), "tensor([], shape=[0, 3], dtype=f32)"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.want);
    CHECK(r.t.str() == r.want);
  }
  CHECK(Tensor().str() == "tensor(undefined)");
}

TEST_CASE("str() of the seeds' arange(24).reshape(2, 3, 4) and a transposed view", "[tensor][print][seeds]") {
  const Tensor x = Tensor::arange(24, DType::i64).reshape({2, 3, 4});
  CHECK(x.str() ==
        "tensor([[[ 0,  1,  2,  3],\n"
        "         [ 4,  5,  6,  7],\n"
        "         [ 8,  9, 10, 11]],\n"
        "\n"
        "        [[12, 13, 14, 15],\n"
        "         [16, 17, 18, 19],\n"
        "         [20, 21, 22, 23]]], shape=[2, 3, 4], dtype=i64)");
  const Tensor y = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(1, 0);
  CHECK(y.str() == "tensor([[1., 4.],\n        [2., 5.],\n        [3., 6.]], shape=[3, 2], dtype=f32)");
  std::ostringstream os;
  os << y;
  CHECK(os.str() == y.str());
}

TEST_CASE("str() wraps long rows at 80 columns as torch does", "[tensor][print][seeds]") {
  // The seeds print torch.ones(16, 32): 18 elements per line, continuation indented under the row.
  const std::string row = "[1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1.,\n"
                          "         1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1.]";
  CHECK(Tensor::ones({2, 32}).str() == "tensor([" + row + ",\n        " + row + "], shape=[2, 32], dtype=f32)");
}

TEST_CASE("str() of more than 1000 elements shows three at each edge", "[tensor][print]") {
  CHECK(Tensor::arange(2000, DType::i32).str() ==
        "tensor([   0,    1,    2,  ..., 1997, 1998, 1999], shape=[2000], dtype=i32)");
  const Tensor big = Tensor::arange(1100, DType::i64).view({100, 11});
  CHECK(big.str() ==
        "tensor([[   0,    1,    2,  ...,    8,    9,   10],\n"
        "        [  11,   12,   13,  ...,   19,   20,   21],\n"
        "        [  22,   23,   24,  ...,   30,   31,   32],\n"
        "        ...,\n"
        "        [1067, 1068, 1069,  ..., 1075, 1076, 1077],\n"
        "        [1078, 1079, 1080,  ..., 1086, 1087, 1088],\n"
        "        [1089, 1090, 1091,  ..., 1097, 1098, 1099]], shape=[100, 11], dtype=i64)");
}

TEST_CASE("str() of enormous broadcast views is summarized without visiting every index", "[tensor][print][limits]") {
  // Found probing for hangs: shown_indices looped over every index of each dim, so printing
  // a 2^40-element broadcast view (one element of memory) never ended, and numel() of
  // [2^62, 4] overflowed (ShapeError from str()).
  const Tensor one = Tensor::ones({1}, DType::i32);
  CHECK(one.as_strided({std::int64_t{1} << 40}, {0}, 0).str() ==
        "tensor([1, 1, 1,  ..., 1, 1, 1], shape=[1099511627776], dtype=i32)");
  CHECK(one.as_strided({std::int64_t{1} << 62, 4}, {0, 0}, 0).str() ==
        "tensor([[1, 1, 1, 1],\n        [1, 1, 1, 1],\n        [1, 1, 1, 1],\n        ...,\n"
        "        [1, 1, 1, 1],\n        [1, 1, 1, 1],\n        [1, 1, 1, 1]], shape=[4611686018427387904, 4], dtype=i32)");
  // 64 dims of 2 would show all 2^64 elements, as torch would try to: only the summary line.
  const std::string deep = one.as_strided(Shape(64, 2), Strides(64, 0), 0).str();
  CHECK(deep.rfind("tensor(..., shape=[2, 2, 2, ", 0) == 0);
  CHECK(Tensor::zeros({0, std::int64_t{1} << 62}).str() == "tensor([], shape=[0, 4611686018427387904], dtype=f32)");
}
