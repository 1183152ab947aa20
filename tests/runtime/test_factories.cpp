// Factories (zeros, ones, full, arange, randn, from_vector, from_doubles) in every dtype,
// metadata and its errors, zero-size and 0-dim tensors, and devices in a CPU-only build.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "einexpr/config.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/tensor.hpp"
#include "einexpr/runtime/threads.hpp"

using namespace einexpr;

namespace {
// The value `v` takes when stored in `dtype` (through one element, as convert() rounds it).
double stored(double v, DType dtype) {
  std::uint64_t bits = 0;
  store_from_double(v, &bits, dtype);
  return load_as_double(&bits, dtype);
}
}  // namespace

TEST_CASE("zeros, ones and full in every dtype", "[tensor][factories]") {
  for (DType d : all_dtypes) {
    CAPTURE(name(d));
    for (const Tensor& t : {Tensor::zeros({2, 3}, d), Tensor::ones({2, 3}, d), Tensor::full({2, 3}, -3.7, d)}) {
      CHECK(t.dtype() == d);
      CHECK(t.shape() == Shape{2, 3});
      CHECK(t.is_contiguous());
      CHECK(t.device() == Device::cpu());
    }
    CHECK(Tensor::zeros({2, 3}, d).to_vector<double>() == std::vector<double>(6, 0.0));
    CHECK(Tensor::ones({2, 3}, d).to_vector<double>() == std::vector<double>(6, 1.0));
    CHECK(Tensor::full({2, 3}, -3.7, d).to_vector<double>() == std::vector<double>(6, stored(-3.7, d)));
  }
  CHECK(stored(-3.7, DType::i32) == -3.0);  // the reference above truncates integers
  CHECK(stored(-3.7, DType::boolean) == 1.0);
  CHECK(Tensor::full({2}, 1e6, DType::f16).to_vector<double>() == std::vector<double>(2, INFINITY));
  CHECK(Tensor::full({2}, -1e6, DType::f8_e4m3).to_vector<double>() == std::vector<double>(2, -448.0));
}

TEST_CASE("arange counts 0..n-1 in every dtype", "[tensor][factories]") {
  for (DType d : all_dtypes) {
    CAPTURE(name(d));
    const Tensor t = Tensor::arange(600, d);
    CHECK(t.shape() == Shape{600});
    const std::vector<double> v = t.to_vector<double>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      CAPTURE(i);
      if (v[i] != stored(static_cast<double>(i), d)) CHECK(v[i] == stored(static_cast<double>(i), d));
    }
  }
  CHECK(Tensor::arange(600, DType::f8_e4m3).at<double>({599}) == 448);
  CHECK(Tensor::arange(600, DType::bf16).at<double>({257}) == 256);  // 8 significant bits: tie to even
  CHECK(Tensor::arange(0).numel() == 0);
  CHECK_THROWS_AS(Tensor::arange(-1), ShapeError);
  CHECK_THROWS_WITH(Tensor::arange(-1), "arange: n must be >= 0 (got -1)");
}

TEST_CASE("arange fills in chunks, and checks its size before allocating anything", "[tensor][factories][limits]") {
  const std::vector<std::int64_t> v = Tensor::arange(10000, DType::i32).to_vector<std::int64_t>();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<std::int64_t>(i)) CHECK(v[i] == static_cast<std::int64_t>(i));
  // Once, a vector of n int64s came first: std::length_error or bad_alloc, not einexpr's errors.
  CHECK_THROWS_WITH(Tensor::arange(std::int64_t{1} << 62, DType::i64), "size overflows 64 bits: 4611686018427387904 * 8");
  CHECK_THROWS_AS(Tensor::arange(std::int64_t{1} << 61, DType::f32), ShapeError);
  CHECK_THROWS_AS(Tensor::arange(std::int64_t{1} << 50, DType::f32), AllocationError);
}

TEST_CASE("randn is reproducible by seed, independent of threads, and standard normal", "[tensor][factories]") {
  const Tensor a = Tensor::randn({100000}, DType::f64, 7);
  const Tensor b = Tensor::randn({100000}, DType::f64, 7);
  const Tensor c = Tensor::randn({100000}, DType::f64, 8);
  CHECK(a.to_vector<double>() == b.to_vector<double>());
  const std::vector<double> va = a.to_vector<double>(), vc = c.to_vector<double>();
  std::size_t same = 0;
  for (std::size_t i = 0; i < va.size(); ++i) same += va[i] == vc[i];
  CHECK(same < 10);
  const double mean = std::accumulate(va.begin(), va.end(), 0.0) / static_cast<double>(va.size());
  double var = 0;
  for (double x : va) var += (x - mean) * (x - mean);
  const double sd = std::sqrt(var / static_cast<double>(va.size()));
  CHECK(std::fabs(mean) < 0.02);  // the standard error is 0.003
  CHECK(std::fabs(sd - 1) < 0.02);
  std::size_t beyond3 = 0;
  for (double x : va) beyond3 += std::fabs(x) > 3;
  CHECK(beyond3 > 150);  // 0.27% of 1e5 = 270 expected
  CHECK(beyond3 < 400);
  const int threads = num_threads();
  set_num_threads(1);
  const Tensor one = Tensor::randn({100000}, DType::f64, 7);
  set_num_threads(std::max(threads, 2));
  const Tensor many = Tensor::randn({100000}, DType::f64, 7);
  set_num_threads(threads);
  CHECK(one.to_vector<double>() == va);
  CHECK(many.to_vector<double>() == va);
}

TEST_CASE("randn in every float dtype is the f64 samples rounded", "[tensor][factories]") {
  const Tensor ref = Tensor::randn({3, 1000}, DType::f64, 99);
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::f8_e4m3, DType::f8_e5m2}) {
    CAPTURE(name(d));
    const Tensor t = Tensor::randn({3, 1000}, d, 99);
    CHECK(t.to_vector<double>() == ref.to(d).to_vector<double>());
  }
}

TEST_CASE("randn of integers is uniform on [-100, 100], of bool a fair coin", "[tensor][factories]") {
  for (DType d : {DType::i64, DType::i32}) {
    CAPTURE(name(d));
    const std::vector<std::int64_t> v = Tensor::randn({100000}, d, 3).to_vector<std::int64_t>();
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    CHECK(*lo == -100);
    CHECK(*hi == 100);
    const double mean = static_cast<double>(std::accumulate(v.begin(), v.end(), std::int64_t{0})) / 1e5;
    CHECK(std::fabs(mean) < 1.5);  // sd of the mean: 58 / 316 = 0.18
    CHECK(Tensor::randn({100}, d, 3).to_vector<std::int64_t>() != Tensor::randn({100}, d, 4).to_vector<std::int64_t>());
  }
  const std::vector<bool> flips = Tensor::randn({100000}, DType::boolean, 5).to_vector<bool>();
  const auto heads = std::count(flips.begin(), flips.end(), true);
  CHECK(heads > 49000);  // sd 158
  CHECK(heads < 51000);
}

TEST_CASE("from_vector copies values of its element type, from_doubles converts", "[tensor][factories]") {
  std::vector<float> values = {1.5f, -2, 3, 4, 5, 6};
  const Tensor t = Tensor::from_vector(values, {3, 2});
  values[0] = 100;  // a copy: later changes do not show
  CHECK(t.at<float>({0, 0}) == 1.5f);
  CHECK(t.dtype() == DType::f32);
  CHECK(Tensor::from_vector<std::int32_t>({1, 2}, {2}).dtype() == DType::i32);
  CHECK(Tensor::from_vector<bool>({true, false, true}, {3}).to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(Tensor::from_vector<half_t>({{0x3C00}, {0xC000}}, {2}).to_vector<float>() == std::vector<float>{1, -2});
  CHECK(Tensor::from_doubles({1.1, 2.9, -0.5}, {3}, DType::i64).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{1, 2, 0});
  CHECK(Tensor::from_doubles({0.1}, {}, DType::bf16).at<double>({}) == stored(0.1, DType::bf16));
  CHECK_THROWS_AS(Tensor::from_vector<float>({1, 2, 3, 4, 5}, {2, 3}), ShapeError);
  CHECK_THROWS_WITH(Tensor::from_vector<float>({1, 2, 3, 4, 5}, {2, 3}),
                    "from_vector: 5 values for shape [2, 3] of 6 elements");
  CHECK_THROWS_WITH(Tensor::from_doubles({1}, {0}), "from_vector: 1 values for shape [0] of 0 elements");
  CHECK_THROWS_WITH(Tensor::from_vector<float>({1}, {-1}), "negative length -1 in shape [-1]");
}

TEST_CASE("metadata: sizes, strides, negative dims and their errors", "[tensor][factories]") {
  const Tensor x = Tensor::zeros({2, 3, 4});
  CHECK(x.dim() == 3);
  CHECK(x.size(0) == 2);
  CHECK(x.size(-1) == 4);
  CHECK(x.stride(-2) == 4);
  CHECK(x.storage_offset() == 0);
  CHECK(x.defined());
  CHECK(x.data_ptr() == x.storage()->data());
  CHECK(x.select(0, 1).data_ptr() == static_cast<void*>(x.storage()->data() + 48));
  CHECK_THROWS_WITH(x.stride(3), "stride: dim 3 is out of range for a tensor of 3 dims");
  CHECK_THROWS_WITH(x.size(-4), "size: dim -4 is out of range for a tensor of 3 dims");
  const Tensor undefined;
  CHECK_FALSE(undefined.defined());
  CHECK(undefined.data_ptr() == nullptr);
  CHECK_FALSE(undefined.same_storage(undefined));
}

TEST_CASE("zero-size and 0-dim tensors", "[tensor][factories]") {
  const Tensor e = Tensor::zeros({0, 3}, DType::f64);
  CHECK(e.numel() == 0);
  CHECK(e.nbytes() == 0);
  CHECK(e.to_vector<double>().empty());
  CHECK(e.view({3, 0}).shape() == Shape{3, 0});
  CHECK(e.reshape({-1}).shape() == Shape{0});
  CHECK(e.transpose(0, 1).contiguous().shape() == Shape{3, 0});
  CHECK(e.clone().numel() == 0);
  CHECK(e.to(DType::i32).numel() == 0);
  CHECK(e.slice(1, 1, 2).shape() == Shape{0, 1});
  const Tensor s = Tensor::full({}, 2.5);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.nbytes() == 4);
  CHECK(s.at<float>({}) == 2.5f);
  CHECK(s.view({1, 1}).at<float>({0, 0}) == 2.5f);
  CHECK(s.reshape({-1}).shape() == Shape{1});
}

TEST_CASE("devices: to(cpu) is the same tensor, CUDA is refused without CUDA", "[tensor][factories]") {
  const Tensor x = Tensor::ones({2});
  CHECK(same_storage(x.to(Device::cpu()), x));
  CHECK(Device::cpu().str() == "cpu");
  CHECK(Device::cuda(1).str() == "cuda:1");
  CHECK(parse_device("cuda:3") == Device::cuda(3));
  CHECK_THROWS_WITH(parse_device("tpu"), "unknown device 'tpu' (expected cpu, cuda or cuda:N)");
  if (!has_cuda) {
    CHECK(cuda_device_count() == 0);
    CHECK_THROWS_AS(x.to(Device::cuda(0)), DeviceError);
    CHECK_THROWS_WITH(x.to(Device::cuda(0)), "einexpr was built without CUDA");
    CHECK_THROWS_WITH(Tensor::zeros({2}, DType::f32, Device::cuda(0)), "einexpr was built without CUDA");
  }
}
