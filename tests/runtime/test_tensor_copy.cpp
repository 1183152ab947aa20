// Copies and element access: clone, to(DType) in every pair of dtypes (checked element by
// element against convert()), copy_from (broadcast sources, converting, into views), fill,
// set / at with their bounds errors, and to_vector on non-contiguous views.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/strided.hpp"
#include "einexpr/runtime/tensor.hpp"

using namespace einexpr;

namespace {

// The bytes of element `index` (row-major position i) of t.
std::vector<unsigned char> element_bytes(const Tensor& t, std::int64_t i) {
  std::int64_t off = t.storage_offset();
  for (int d = t.dim() - 1; d >= 0; --d) {
    const std::int64_t len = t.shape()[static_cast<std::size_t>(d)];
    off += (i % len) * t.strides()[static_cast<std::size_t>(d)];
    i /= len;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(t.storage()->data()) +
                  off * static_cast<std::int64_t>(t.element_size());
  return {p, p + t.element_size()};
}

// A non-contiguous [3, 3] view of random values of `dtype`: rows 1..3 of a transposed
// [6, 5], every other column.
Tensor strided_view(DType dtype, std::uint64_t seed) {
  const Tensor t = Tensor::randn({6, 5}, dtype, seed).transpose(0, 1).slice(0, 1, 4).slice(1, 0, 6, 2);
  REQUIRE_FALSE(t.is_contiguous());
  return t;
}

}  // namespace

TEST_CASE("to(dtype) converts every element as convert() does, from a strided view", "[tensor][copy]") {
  for (DType src : all_dtypes) {
    const Tensor x = strided_view(src, 17 + static_cast<std::uint64_t>(src));
    for (DType dst : all_dtypes) {
      CAPTURE(name(src), name(dst));
      const Tensor y = x.to(dst);
      CHECK(y.dtype() == dst);
      CHECK(y.shape() == x.shape());
      CHECK(same_storage(x, y) == (src == dst));
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        std::vector<unsigned char> want(element_size(dst));
        convert(element_bytes(x, i).data(), src, want.data(), dst, 1);
        CHECK(element_bytes(y, i) == want);
      }
    }
  }
}

TEST_CASE("clone always copies, contiguously", "[tensor][copy]") {
  const Tensor x = strided_view(DType::f32, 3);
  const Tensor c = x.clone();
  CHECK_FALSE(same_storage(x, c));
  CHECK(c.is_contiguous());
  CHECK(c.to_vector<float>() == x.to_vector<float>());
  const Tensor d = c.clone();  // of a contiguous tensor too
  CHECK_FALSE(same_storage(c, d));
  Tensor e = c.clone();
  e.fill(0);
  CHECK(c.to_vector<float>() == x.to_vector<float>());  // the copy is independent
}

TEST_CASE("copy_from: same shape, converting, broadcast sources, into views", "[tensor][copy]") {
  const Tensor row = Tensor::from_vector<double>({1.5, -2.5, 3.25}, {3});
  Tensor dst = Tensor::zeros({2, 3}, DType::f32);
  dst.copy_from(row.as_strided({2, 3}, {0, 1}, 0));  // stride-0 broadcast source, f64 -> f32
  CHECK(dst.to_vector<float>() == std::vector<float>{1.5f, -2.5f, 3.25f, 1.5f, -2.5f, 3.25f});

  Tensor base = Tensor::zeros({3, 2}, DType::i32);
  Tensor view = base.transpose(0, 1);  // write through a transposed view
  view.copy_from(Tensor::from_vector<float>({1.9f, 2.9f, -3.9f, 4, 5, 6}, {2, 3}));
  CHECK(base.to_vector<std::int32_t>() == std::vector<std::int32_t>{1, 4, 2, 5, -3, 6});

  const Tensor src = Tensor::randn({4, 5}, DType::f64, 9);
  Tensor out = Tensor::zeros({5, 4}, DType::f64);
  out.transpose(0, 1).copy_from(src);
  CHECK(out.transpose(0, 1).to_vector<double>() == src.to_vector<double>());

  struct Row { std::function<void()> call; std::string message; };
  const Row rows[] = {
      {[&] { dst.copy_from(Tensor::zeros({3, 2})); }, "copy_from: source of shape [3, 2] into a tensor of shape [2, 3]"},
      {[&] { dst.copy_from(row); }, "copy_from: source of shape [3] into a tensor of shape [2, 3]"},
      {[&] { dst.copy_from(Tensor()); }, "copy_from: undefined tensor"},
      {[&] { Tensor().copy_from(dst); }, "copy_from: undefined tensor"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.message);
    CHECK_THROWS_WITH(r.call(), r.message);
  }
  CHECK_THROWS_AS(dst.copy_from(row), ShapeError);
}

TEST_CASE("fill sets each element of a view, converted to the dtype", "[tensor][copy]") {
  struct Row { DType dtype; double value; double want; };
  const Row rows[] = {
      {DType::f64, 2.7, 2.7},          {DType::f32, 2.7, static_cast<double>(2.7f)},
      {DType::f16, 2.7, 2.69921875},   {DType::bf16, 2.7, 2.703125},
      {DType::f8_e4m3, 2.7, 2.75},     {DType::f8_e5m2, 2.7, 2.5},
      {DType::i64, -2.7, -2},          {DType::i32, 2.7, 2},
      {DType::boolean, 0.1, 1},        {DType::f8_e4m3, 1e9, 448},
      {DType::f16, -1e9, -INFINITY},   {DType::i32, 1e12, 2147483647},
  };
  for (const Row& r : rows) {
    CAPTURE(name(r.dtype), r.value);
    Tensor t = Tensor::zeros({3, 4}, r.dtype);
    Tensor col = t.select(1, 2);
    col.fill(r.value);
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 4; ++j) CHECK(t.at<double>({i, j}) == (j == 2 ? r.want : 0.0));
  }
  Tensor empty = Tensor::zeros({0, 3});
  empty.fill(1);  // nothing to fill, no crash
  CHECK(empty.numel() == 0);
  CHECK_THROWS_WITH(Tensor().fill(1), "fill: undefined tensor");
}

TEST_CASE("set and at address one element, with bounds errors", "[tensor][copy][errors]") {
  Tensor x = Tensor::randn({2, 3}, DType::f32, 4);
  const std::vector<float> v = x.to_vector<float>();
  CHECK(x.at<float>({1, 2}) == v[5]);
  CHECK(x.at<float>({-1, -3}) == v[3]);
  CHECK(x.at<double>({0, 1}) == static_cast<double>(v[1]));
  x.set({-2, 1}, 7.9);
  CHECK(x.at<float>({0, 1}) == 7.9f);
  CHECK(x.at<std::int32_t>({0, 1}) == 7);  // converted on the way out, truncating
  CHECK(x.at<bool>({0, 1}));
  const Tensor t = x.transpose(0, 1);  // on a view: the view's own indices
  CHECK(t.at<float>({2, 1}) == v[5]);
  CHECK(t.element_offset({2, 1}) == 5);
  struct Row { std::function<void()> call; std::string message; };
  const Row rows[] = {
      {[&] { (void)x.at<float>({2, 0}); }, "index 2 is out of bounds for dim 0 of length 2"},
      {[&] { (void)x.at<float>({0, -4}); }, "index -4 is out of bounds for dim 1 of length 3"},
      {[&] { (void)x.at<float>({0}); }, "index has 1 entries for a tensor of 2 dims (shape [2, 3])"},
      {[&] { x.set({0, 3}, 1); }, "index 3 is out of bounds for dim 1 of length 3"},
      {[&] { x.set({0, 0, 0}, 1); }, "index has 3 entries for a tensor of 2 dims (shape [2, 3])"},
      {[&] { (void)Tensor().at<float>({}); }, "at: the tensor is undefined"},
      {[&] { Tensor().set({}, 1); }, "set: the tensor is undefined"},
      {[&] { (void)Tensor().to_vector<float>(); }, "to_vector: the tensor is undefined"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.message);
    CHECK_THROWS_WITH(r.call(), r.message);
  }
  CHECK_THROWS_AS(x.at<float>({2, 0}), ShapeError);
}

TEST_CASE("to_vector reads non-contiguous views in logical order", "[tensor][copy]") {
  const Tensor x = Tensor::randn({3, 4, 5}, DType::f64, 21);
  struct Row { Tensor view; };
  const Row rows[] = {
      {x.permute({2, 0, 1})},
      {x.slice(2, 1, 5, 2).transpose(0, 2)},
      {x.select(1, 3)},
      {x.as_strided({2, 3}, {0, 7}, 2)},
  };
  for (const Row& r : rows) {
    const Tensor& v = r.view;
    CAPTURE(shape_str(v.shape()), shape_str(v.strides()), v.storage_offset());
    std::vector<double> want;  // the naive loop over the view's index space
    std::vector<std::int64_t> index(static_cast<std::size_t>(v.dim()), 0);
    for (std::int64_t n = 0; n < v.numel(); ++n) {
      std::int64_t off = v.storage_offset();
      for (std::size_t d = 0; d < index.size(); ++d) off += index[d] * v.strides()[d];
      want.push_back(static_cast<const double*>(static_cast<const void*>(v.storage()->data()))[off]);
      for (std::size_t d = index.size(); d-- > 0;) {
        if (++index[d] < v.shape()[d]) break;
        index[d] = 0;
      }
    }
    CHECK(v.to_vector<double>() == want);
    std::vector<float> as_float(want.begin(), want.end());
    CHECK(v.to_vector<float>() == as_float);
  }
}

TEST_CASE("collapse_dims merges dims that follow on, and never overflows asking", "[tensor][copy][limits]") {
  const Strides row_major{3, 1};
  const CollapsedDims merged = collapse_dims({2, 3}, {&row_major});
  CHECK(merged.shape == Shape{6});
  CHECK(merged.strides.at(0) == Strides{1});
  // Found by fuzz_plan (UBSan): lowering a map over a layout with stride 2^62 computed
  // 2^62 * 6 to see whether two dims merge. Such a pair cannot merge; it is kept as is.
  const Strides huge{1, std::int64_t{1} << 62};
  const CollapsedDims kept = collapse_dims({3, 6}, {&huge});
  CHECK(kept.shape == Shape{3, 6});
  CHECK(kept.strides.at(0) == huge);
}
