// checks.cpp on the CPU: the comparisons bench_cuda trusts to pass or fail a GPU result
// (HostCopy reads CPU tensors the same way it reads downloaded ones).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "checks.hpp"
#include "einexpr/runtime/tensor.hpp"

using namespace einexpr;
using namespace einexpr::bench;

TEST_CASE("HostCopy reads f32 and bf16 elements in row-major order") {
  const std::vector<double> values = {1.5, -2.25, 3.0, 0.0, 1e-3, -7.0};
  for (DType dtype : {DType::f32, DType::bf16}) {
    CAPTURE(name(dtype));
    const Tensor t = Tensor::from_doubles(values, {2, 3}, dtype);
    const HostCopy h(t);
    REQUIRE(h.numel() == 6);
    REQUIRE(h.shape() == Shape{2, 3});
    const std::vector<double> want = t.to_vector<double>();  // rounded to dtype
    for (std::int64_t i = 0; i < 6; ++i) CHECK(h[i] == want[static_cast<std::size_t>(i)]);
  }
  CHECK_THROWS_AS(HostCopy(Tensor::randn({3, 4}).transpose(0, 1)), ShapeError);
}

TEST_CASE("relative errors: zero when equal, the Frobenius ratio otherwise, NaN on a non-finite result") {
  const HostCopy a(Tensor::from_doubles({3, 4}, {2}));
  const HostCopy b(Tensor::from_doubles({3, 4.5}, {2}));
  CHECK(relative_error(a, a) == 0);
  CHECK(relative_error(b, a) == Approx(0.5 / 5));
  CHECK(relative_error(b, std::vector<double>{3, 4}) == Approx(0.1));
  CHECK(std::isnan(relative_error(a, std::vector<double>{3})));  // sizes differ
  const HostCopy poisoned(Tensor::from_doubles({3, NAN}, {2}, DType::bf16));
  CHECK(std::isnan(relative_error(poisoned, a)));
  CHECK_FALSE((Check{"x", relative_error(poisoned, a), 1e-2}.ok()));
  const HostCopy infinite(Tensor::from_doubles({3, INFINITY}, {2}));
  CHECK_FALSE((Check{"x", relative_error(infinite, a), 1e-2}.ok()));
}

TEST_CASE("sampled errors: every index when count >= numel, else sampled indices, each computed once") {
  const Tensor t = Tensor::randn({1000}, DType::f32, 3);
  const HostCopy h(t);
  const std::vector<double> v = t.to_vector<double>();
  int calls = 0;
  const auto exact = [&](std::int64_t i) {
    ++calls;
    return v[static_cast<std::size_t>(i)];
  };
  const Samples all = reference_samples(1000, 1000, 1, exact);
  CHECK(calls == 1000);
  CHECK(all.index.front() == 0);
  CHECK(all.index.back() == 999);
  CHECK(sampled_error(h, all) == 0);
  const Samples some = reference_samples(1000, 50, 1, exact);
  CHECK(some.index.size() == 50);
  CHECK(calls == 1050);
  CHECK(sampled_error(h, some) == 0);
  // One wrong element is found when every index is checked.
  const auto one_off = [&](std::int64_t i) { return i == 617 ? v[617] + 1 : v[static_cast<std::size_t>(i)]; };
  CHECK(sampled_error(h, reference_samples(1000, 1000, 1, one_off)) > 0);
  const HostCopy nan(Tensor::from_doubles({1, NAN}, {2}));
  CHECK(std::isnan(sampled_error(nan, reference_samples(2, 2, 1, [](std::int64_t) { return 1.0; }))));
  CHECK(std::isnan(sampled_error(nan, all)));  // indices beyond got
}

TEST_CASE("differing_elements counts elements whose bytes differ") {
  Tensor want = Tensor::randn({4, 5}, DType::bf16, 4);
  CHECK(differing_elements(HostCopy(want), want) == 0);
  Tensor other = want.clone();
  other.set({1, 2}, 100.0);
  other.set({3, 4}, -100.0);
  CHECK(differing_elements(HostCopy(other), want) == 2);
  CHECK(differing_elements(HostCopy(want.to(DType::f32)), want) == 21);  // dtypes differ
  CHECK(differing_elements(HostCopy(want.slice(0, 0, 2)), want) == 11);  // sizes differ
  const Tensor big = Tensor::randn({3 << 20}, DType::bf16, 5);           // more than one memcmp chunk
  Tensor changed = big.clone();
  changed.set({(2 << 20) + 7}, 1000.0);
  CHECK(differing_elements(HostCopy(changed), big) == 1);
}

TEST_CASE("check_standard_normal passes N(0, 1) samples and fails zeros, offsets, NaN") {
  CHECK(check_standard_normal(Tensor::randn({1 << 20}, DType::bf16, 6)) == "");
  CHECK(check_standard_normal(Tensor::randn({512}, DType::f32, 7)) == "");
  CHECK(check_standard_normal(Tensor::zeros({4096}, DType::bf16)) != "");
  CHECK(check_standard_normal(Tensor::full({4096}, 1.0, DType::f32)) != "");
  Tensor scaled = Tensor::from_doubles(Tensor::randn({4096}, DType::f64, 8).to_vector<double>(), {4096});
  std::vector<double> v = scaled.to_vector<double>();
  for (double& x : v) x *= 2;
  CHECK(check_standard_normal(Tensor::from_doubles(v, {4096})) != "");
  v[10] = NAN;
  CHECK(check_standard_normal(Tensor::from_doubles(v, {4096})).find("not finite") != std::string::npos);
}

TEST_CASE("tolerances follow METHOD.md by dtype") {
  CHECK(tolerance(DType::bf16, 32768) == 1e-2);
  CHECK(tolerance(DType::f16, 1) == 2e-3);
  CHECK(tolerance(DType::f32, 10000) == Approx(1e-4 + 1e-6));
  CHECK(tolerance(DType::f32, 10000, true) == 2e-3);
}
