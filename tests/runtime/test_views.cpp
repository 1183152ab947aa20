// Views: select, slice, view, reshape, transpose, permute, as_strided and contiguous, with
// their error messages. The base tensors hold each element's storage index as its value
// (arange), so a view's values are the storage positions it reaches.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/tensor.hpp"

using namespace einexpr;

namespace {

using Values = std::vector<std::int64_t>;

Values values(const Tensor& t) { return t.to_vector<std::int64_t>(); }

// base = arange(24) as [2, 3, 4]
Tensor base() { return Tensor::arange(24, DType::i64).view({2, 3, 4}); }

struct ErrorRow { std::function<Tensor()> call; std::string message; };

void check_errors(const std::vector<ErrorRow>& rows) {
  for (const ErrorRow& r : rows) {
    CAPTURE(r.message);
    CHECK_THROWS_AS(r.call(), ShapeError);
    CHECK_THROWS_WITH(r.call(), r.message);
  }
}

}  // namespace

TEST_CASE("select takes one index along a dim, negative from the end", "[tensor][views]") {
  struct Row { int dim; std::int64_t index; Shape shape; Strides strides; Values want; };
  const Row rows[] = {
      {0, 1, {3, 4}, {4, 1}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
      {1, -1, {2, 4}, {12, 1}, {8, 9, 10, 11, 20, 21, 22, 23}},
      {2, 3, {2, 3}, {12, 4}, {3, 7, 11, 15, 19, 23}},
      {-1, -4, {2, 3}, {12, 4}, {0, 4, 8, 12, 16, 20}},
      {-3, 0, {3, 4}, {4, 1}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
  };
  const Tensor x = base();
  for (const Row& r : rows) {
    CAPTURE(r.dim, r.index);
    const Tensor y = x.select(r.dim, r.index);
    CHECK(y.shape() == r.shape);
    CHECK(y.strides() == r.strides);
    CHECK(values(y) == r.want);
    CHECK(same_storage(x, y));
  }
  CHECK(x.select(0, 1).select(0, 2).select(0, 3).at<std::int64_t>({}) == 23);
  check_errors({
      {[x] { return x.select(3, 0); }, "select: dim 3 is out of range for a tensor of 3 dims"},
      {[x] { return x.select(-4, 0); }, "select: dim -4 is out of range for a tensor of 3 dims"},
      {[x] { return x.select(0, 2); }, "select: index 2 is out of range for dim 0 of length 2"},
      {[x] { return x.select(1, -4); }, "select: index -4 is out of range for dim 1 of length 3"},
      {[] { return Tensor::zeros({}).select(0, 0); }, "select: dim 0 is out of range for a tensor of 0 dims"},
  });
}

TEST_CASE("slice follows Python's clamping, with positive steps", "[tensor][views]") {
  constexpr std::int64_t lo = INT64_MIN, hi = INT64_MAX;
  struct Row { std::int64_t begin, end, step; Values want; };
  const Row rows[] = {
      {2, 5, 1, {2, 3, 4}},       {-3, 10, 1, {7, 8, 9}},   {0, 10, 3, {0, 3, 6, 9}},
      {1, 100, 4, {1, 5, 9}},     {-100, 2, 1, {0, 1}},     {5, 2, 1, {}},
      {8, -1, 1, {8}},            {-1, -100, 1, {}},        {0, 10, 20, {0}},
      {12, 20, 1, {}},            {3, 3, 1, {}},            {0, hi, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {lo, hi, 3, {0, 3, 6, 9}},  {0, 10, hi, {0}},         {9, hi, hi, {9}},
      {-2, hi, 1, {8, 9}},
  };
  const Tensor x = Tensor::arange(10, DType::i64);
  for (const Row& r : rows) {
    CAPTURE(r.begin, r.end, r.step);
    const Tensor y = x.slice(0, r.begin, r.end, r.step);
    CHECK(values(y) == r.want);
    CHECK(y.numel() == static_cast<std::int64_t>(r.want.size()));
    CHECK(same_storage(x, y));
  }
  const Tensor m = Tensor::arange(20, DType::i64).view({4, 5}).slice(1, 1, 4, 2);
  CHECK(m.shape() == Shape{4, 2});
  CHECK(m.strides() == Strides{5, 2});
  CHECK(m.storage_offset() == 1);
  CHECK(values(m) == Values{1, 3, 6, 8, 11, 13, 16, 18});
  CHECK(values(m.slice(0, 1, 3).slice(1, 1, 2)) == Values{8, 13});
  // A step past the end keeps one element, whatever the step (no overflow of stride * step).
  CHECK(values(Tensor::arange(20, DType::i64).view({4, 5}).slice(0, 1, 4, hi)) == Values{5, 6, 7, 8, 9});
  check_errors({
      {[x] { return x.slice(0, 0, 5, 0); }, "slice: step must be positive (got 0)"},
      {[x] { return x.slice(0, 0, 5, -1); }, "slice: step must be positive (got -1)"},
      {[x] { return x.slice(2, 0, 5); }, "slice: dim 2 is out of range for a tensor of 1 dims"},
  });
}

TEST_CASE("view: -1 inference, strides of the view, and the non-contiguous error", "[tensor][views]") {
  const Tensor x = base();
  struct Row { Tensor from; Shape shape; Shape want_shape; Strides want_strides; };
  const Row rows[] = {
      {x, {-1}, {24}, {1}},
      {x, {6, -1}, {6, 4}, {4, 1}},
      {x, {4, 3, 2}, {4, 3, 2}, {6, 2, 1}},
      {x, {2, 1, 12}, {2, 1, 12}, {12, 12, 1}},
      {x.transpose(0, 1), {3, 2, 2, 2}, {3, 2, 2, 2}, {4, 12, 2, 1}},
      {x.select(2, 1), {-1}, {6}, {4}},
  };
  for (const Row& r : rows) {
    CAPTURE(shape_str(r.from.shape()), shape_str(r.from.strides()), shape_str(r.shape));
    const Tensor y = r.from.view(r.shape);
    CHECK(y.shape() == r.want_shape);
    CHECK(y.strides() == r.want_strides);
    CHECK(values(y) == values(r.from));  // same elements, same order
    CHECK(same_storage(x, y));
  }
  const Tensor t = Tensor::arange(6, DType::i64).view({2, 3}).transpose(1, 0);
  const Tensor odd = Tensor::arange(6, DType::i64).view({2, 1, 3}).permute({2, 1, 0});
  check_errors({
      {[t] { return t.view({2, 3}); },
       "view size is not compatible with input tensor's size and stride: view [2, 3] of a tensor of "
       "shape [3, 2] and strides [1, 3]; dims 0 and 1 are not contiguous with each other "
       "(stride 1 != 3 * 2); use reshape() or contiguous() first"},
      {[odd] { return odd.view({6}); },
       "view size is not compatible with input tensor's size and stride: view [6] of a tensor of "
       "shape [3, 1, 2] and strides [1, 3, 3]; dims 0 and 2 are not contiguous with each other "
       "(stride 1 != 3 * 2); use reshape() or contiguous() first"},
      {[x] { return x.view({-1, 5}); }, "shape [-1, 5] is invalid for 24 elements"},
      {[x] { return x.view({-1, -1}); }, "only one dimension can be -1 in shape [-1, -1]"},
      {[x] { return x.view({5, 5}); }, "shape [5, 5] is invalid for 24 elements"},
  });
}

TEST_CASE("reshape is a view when the strides allow, else a copy", "[tensor][views]") {
  const Tensor x = Tensor::randn({4, 6}, DType::f32, 11);
  struct Row { Tensor from; Shape shape; bool view; };
  const Row rows[] = {
      {x, {24}, true},
      {x, {2, 2, -1}, true},
      {x.slice(0, 1, 3), {12}, true},
      {x.transpose(0, 1), {24}, false},
      {x.transpose(0, 1), {6, 2, 2}, true},
      {x.slice(1, 0, 6, 2), {12}, true},  // rows of 3 at stride 2 follow on at stride 6
      {x.slice(1, 0, 4), {16}, false},
      {x.slice(1, 0, 4), {2, 2, 4}, true},
  };
  for (const Row& r : rows) {
    CAPTURE(shape_str(r.from.shape()), shape_str(r.from.strides()), shape_str(r.shape));
    const Tensor y = r.from.reshape(r.shape);
    CHECK(same_storage(y, x) == r.view);
    CHECK(y.numel() == r.from.numel());
    CHECK(y.to_vector<float>() == r.from.to_vector<float>());
    if (!r.view) CHECK(y.is_contiguous());
  }
  CHECK_THROWS_WITH(x.reshape({5, -1}), "shape [5, -1] is invalid for 24 elements");
}

TEST_CASE("transpose and permute swap shapes and strides", "[tensor][views]") {
  const Tensor x = base();
  const Tensor t = x.transpose(0, -1);
  CHECK(t.shape() == Shape{4, 3, 2});
  CHECK(t.strides() == Strides{1, 4, 12});
  CHECK(t.at<std::int64_t>({3, 1, 1}) == x.at<std::int64_t>({1, 1, 3}));
  CHECK(x.transpose(1, 1).strides() == x.strides());
  struct Row { std::vector<int> dims; Shape shape; Strides strides; };
  const Row rows[] = {
      {{2, 0, 1}, {4, 2, 3}, {1, 12, 4}},
      {{-1, 0, -2}, {4, 2, 3}, {1, 12, 4}},
      {{0, 1, 2}, {2, 3, 4}, {12, 4, 1}},
      {{1, 2, 0}, {3, 4, 2}, {4, 1, 12}},
  };
  for (const Row& r : rows) {
    CAPTURE(r.dims);
    const Tensor p = x.permute(r.dims);
    CHECK(p.shape() == r.shape);
    CHECK(p.strides() == r.strides);
    CHECK(same_storage(p, x));
    for (std::int64_t i = 0; i < r.shape[0]; ++i)  // p[i, j, k] is x at the permuted index
      for (std::int64_t j = 0; j < r.shape[1]; ++j)
        for (std::int64_t k = 0; k < r.shape[2]; ++k) {
          std::int64_t idx[3];
          const std::int64_t pi[3] = {i, j, k};
          for (int d = 0; d < 3; ++d) idx[(r.dims[static_cast<std::size_t>(d)] + 3) % 3] = pi[d];
          CHECK(p.at<std::int64_t>({i, j, k}) == x.at<std::int64_t>({idx[0], idx[1], idx[2]}));
        }
  }
  check_errors({
      {[x] { return x.transpose(0, 3); }, "transpose: dim 3 is out of range for a tensor of 3 dims"},
      {[x] { return x.permute({0, 1}); }, "permute: 2 dims given for a tensor of 3 dims"},
      {[x] { return x.permute({0, 0, 1}); }, "permute: dim 0 appears twice"},
      {[x] { return x.permute({0, -3, 1}); }, "permute: dim -3 appears twice"},
      {[x] { return x.permute({0, 1, 3}); }, "permute: dim 3 is out of range for a tensor of 3 dims"},
  });
}

TEST_CASE("as_strided views any strides that stay inside the storage", "[tensor][views]") {
  const Tensor x = Tensor::arange(6, DType::i64);
  CHECK(values(x.as_strided({2, 2}, {1, 2}, 1)) == Values{1, 3, 2, 4});
  CHECK(values(x.as_strided({3, 2}, {0, 1}, 4)) == Values{4, 5, 4, 5, 4, 5});  // broadcast rows
  CHECK(values(x.as_strided({2, 3}, {3, 1}, 0)) == Values{0, 1, 2, 3, 4, 5});
  CHECK(values(x.slice(0, 2, 6).as_strided({2}, {1}, 0)) == Values{0, 1});  // offset from storage start
  CHECK(x.as_strided({0, 5}, {100, 100}, 6).numel() == 0);
  constexpr std::int64_t big = std::int64_t{1} << 62;
  check_errors({
      {[x] { return x.as_strided({2, 3}, {3, 1}, 1); },
       "Tensor: a view of shape [2, 3], strides [3, 1] and offset 1 reaches past the end of its "
       "storage of 48 bytes"},
      {[x] { return x.as_strided({7}, {1}, 0); },
       "Tensor: a view of shape [7], strides [1] and offset 0 reaches past the end of its storage of 48 bytes"},
      {[x] { return x.as_strided({3}, {-1}, 2); }, "Tensor: negative strides are not supported: [-1]"},
      {[x] { return x.as_strided({2, 3}, {1}, 0); }, "Tensor: shape [2, 3] and strides [1] differ in rank"},
      {[x] { return x.as_strided({1}, {1}, -1); }, "Tensor: negative storage offset"},
      {[x] { return x.as_strided({big, 2}, {big, 1}, 0); },
       "size overflows 64 bits: 4611686018427387903 * 4611686018427387904"},
  });
}

TEST_CASE("contiguous copies only a non-contiguous tensor", "[tensor][views]") {
  const Tensor x = Tensor::randn({3, 4}, DType::f32, 5);
  struct Row { Tensor t; bool copies; };
  const Row rows[] = {
      {x, false},
      {x.slice(0, 1, 3), false},     // contiguous with an offset
      {x.select(1, 2), true},
      {x.transpose(0, 1), true},
      {x.view({4, 1, 3}).permute({1, 0, 2}), false},  // only a length-1 dim moved
      {x.slice(1, 4, 4), false},     // empty
  };
  for (const Row& r : rows) {
    CAPTURE(shape_str(r.t.shape()), shape_str(r.t.strides()));
    const Tensor c = r.t.contiguous();
    CHECK(r.t.is_contiguous() == !r.copies);
    CHECK(same_storage(c, x) == !r.copies);
    CHECK(c.is_contiguous());
    CHECK(c.to_vector<float>() == r.t.to_vector<float>());
  }
}

TEST_CASE("views and copies of an undefined tensor say it is undefined", "[views][errors]") {
  // Once: "transpose: dim 0 is out of range for a tensor of 0 dims", "Tensor: null storage".
  const Tensor u;
  CHECK_THROWS_WITH(u.view({1}), "view: the tensor is undefined");
  CHECK_THROWS_WITH(u.reshape({1}), "reshape: the tensor is undefined");
  CHECK_THROWS_WITH(u.transpose(0, 1), "transpose: the tensor is undefined");
  CHECK_THROWS_WITH(u.permute({}), "permute: the tensor is undefined");
  CHECK_THROWS_WITH(u.select(0, 0), "select: the tensor is undefined");
  CHECK_THROWS_WITH(u.slice(0, 0, 1), "slice: the tensor is undefined");
  CHECK_THROWS_WITH(u.as_strided({1}, {1}, 0), "as_strided: the tensor is undefined");
  CHECK_THROWS_WITH(u.clone(), "clone: the tensor is undefined");
  CHECK_THROWS_WITH(u.to(DType::f64), "to: the tensor is undefined");
  CHECK_THROWS_WITH(u.to(Device::cpu()), "to: the tensor is undefined");
  CHECK_FALSE(u.contiguous().defined());
}
