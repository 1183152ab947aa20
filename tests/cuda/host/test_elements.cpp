// CPU-runnable checks of the CUDA backend's host-and-device code (CUDA builds only): the
// element conversions the GPU kernels use are bit-for-bit einexpr::convert, the index
// divider divides, and the status macros name the call.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cuda_check.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/error.hpp"
#include "elements_host.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

bool is_nan_bytes(const unsigned char* p, DType d) {
  return is_floating(d) && std::isnan(load_as_double(p, d));
}

// Source elements of `d` covering its corner cases: every bit pattern of the 1- and
// 2-byte formats, specials and random bit patterns of the wide ones.
std::vector<unsigned char> sources(DType d, std::size_t& count) {
  const std::size_t es = element_size(d);
  std::vector<unsigned char> out;
  auto push = [&](const void* p) {
    const auto* b = static_cast<const unsigned char*>(p);
    out.insert(out.end(), b, b + es);
  };
  std::mt19937_64 rng(7);
  if (es <= 2 && d != DType::boolean) {
    for (std::uint32_t i = 0; i < (1u << (8 * es)); ++i) push(&i);  // little-endian low bytes
  } else if (d == DType::boolean) {
    for (unsigned char b : {0, 1, 2, 255}) push(&b);
  } else {
    const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, 448.0, 449.0, 464.0, 465.0, 57344.0, 61440.0, 65504.0,
                               65520.0, 65519.99, 3.0e38, -3.4e38, 1e-45, 1e-40, 5.9604644775390625e-08,
                               2.98e-08, 1.9531e-03, 9.3e-10, 2147483647.0, -2147483648.5, 2147483648.0,
                               9.3e18, -9.3e18, 1e300, std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                               0.1, -2.5, 3.5, 1.00048828125, 1.0009765625};
    for (double v : specials) {
      unsigned char buf[8];
      store_from_double(v, buf, d);
      push(buf);
    }
    const std::int64_t ints[] = {INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN, 16777217, 9007199254740993LL, -7};
    for (std::int64_t v : ints) {
      unsigned char buf[8];
      convert(&v, DType::i64, buf, d, 1);
      push(buf);
    }
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t bits = rng();
      push(&bits);
    }
  }
  count = out.size() / es;
  return out;
}

}  // namespace

TEST_CASE("the GPU's element conversions are einexpr::convert, bit for bit", "[cuda_host]") {
  for (DType sd : all_dtypes) {
    std::size_t n = 0;
    const std::vector<unsigned char> src = sources(sd, n);
    for (DType dd : all_dtypes) {
      CAPTURE(name(sd), name(dd));
      const std::size_t ses = element_size(sd), des = element_size(dd);
      std::vector<unsigned char> want(n * des), got(n * des);
      convert(src.data(), sd, want.data(), dd, n);
      for (std::size_t i = 0; i < n; ++i) host_convert_element(&src[i * ses], sd, &got[i * des], dd);
      std::size_t mismatches = 0, first = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const bool same = std::memcmp(&want[i * des], &got[i * des], des) == 0 ||
                          (is_nan_bytes(&want[i * des], dd) && is_nan_bytes(&got[i * des], dd));  // NaN payloads may differ
        if (!same && mismatches++ == 0) first = i;
      }
      const double first_src = load_as_double(&src[first * ses], sd);
      const double first_want = load_as_double(&want[first * des], dd), first_got = load_as_double(&got[first * des], dd);
      CAPTURE(first, first_src, first_want, first_got);
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("the kernels' fast f16 and bf16 paths round as the CPU does", "[cuda_host]") {
  std::mt19937 rng(3);
  std::vector<float> values = {0.0f, -0.0f, 65504.0f, 65519.0f, 65520.0f, 1e-8f, 2.9802322e-08f, 5.96e-08f,
                               6.1035156e-05f, 3.0e38f, std::numeric_limits<float>::infinity()};
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (!std::isnan(f)) values.push_back(f);
  }
  std::size_t bad16 = 0, bad_bf16 = 0;
  for (float f : values) {
    bad16 += host_float_to_f16(f) != f32_to_f16(f);
    bad_bf16 += host_float_to_bf16(f) != f32_to_bf16(f);
  }
  CHECK(bad16 == 0);
  CHECK(bad_bf16 == 0);
  std::size_t bad_load = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const float want = f16_to_f32(static_cast<std::uint16_t>(b)), got = host_f16_to_float(static_cast<std::uint16_t>(b));
    bad_load += !(std::memcmp(&want, &got, 4) == 0 || (std::isnan(want) && std::isnan(got)));
  }
  CHECK(bad_load == 0);
}

TEST_CASE("the index divider's magic numbers divide exactly below 2^31", "[cuda_host]") {
  std::mt19937 rng(11);
  std::vector<std::uint32_t> divisors = {1, 2, 3, 5, 7, 10, 64, 100, 127, 1000, 65535, 65536, 1000003, 0x7FFFFFFFu};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % 0x7FFFFFFFu);
  for (std::uint32_t d : divisors) {
    std::vector<std::uint32_t> ns = {0, 1, d - 1, d, d + 1, 0x7FFFFFFEu, 0x7FFFFFFFu};
    for (int i = 0; i < 500; ++i) ns.push_back(rng() % 0x80000000u);
    for (std::uint32_t n : ns) {
      if (n > 0x7FFFFFFFu) continue;
      CAPTURE(n, d);
      REQUIRE(host_int_divide(n, d) == n / d);
    }
  }
}

TEST_CASE("EINEXPR_CUDA_CHECK and EINEXPR_CUBLAS_CHECK name the call, the error and the line", "[cuda_host]") {
  const auto cuda = [] { EINEXPR_CUDA_CHECK(cudaErrorInvalidValue); };
  CHECK_THROWS_AS(cuda(), DeviceError);
  CHECK_THROWS_WITH(cuda(), Catch::Contains("CUDA call failed: cudaErrorInvalidValue") &&
                                Catch::Contains("cudaErrorInvalidValue)") && Catch::Contains("test_elements.cpp:"));
  const auto cublas = [] { EINEXPR_CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED); };
  CHECK_THROWS_AS(cublas(), DeviceError);
  CHECK_THROWS_WITH(cublas(), Catch::Contains("cuBLAS call failed: CUBLAS_STATUS_NOT_SUPPORTED: CUBLAS_STATUS_NOT_SUPPORTED") &&
                                  Catch::Contains("test_elements.cpp:"));
  CHECK_NOTHROW([] { EINEXPR_CUDA_CHECK(cudaSuccess); }());
}
