// Count: exact 128-bit counts that throw instead of wrapping; MaybeCount, a figure that is
// exact or 2^128 or more; cost() naming the step whose count leaves 128 bits.
#include <catch2/catch.hpp>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/count.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan_builder.hpp"

using namespace einexpr;

TEST_CASE("counts of the seeds' matmuls are exact products", "[count]") {
  struct Row {
    const char* what;
    Count value;
    const char* digits;
  };
  const Count B = 16384, D = 32768, K = 8192;
  const Row rows[] = {
      {"2*1024*256*64 (the seeds' CPU sizes)", Count(2) * Count(1024) * Count(256) * Count(64), "33554432"},
      {"2*B*D*K (the seeds' GPU sizes)", Count(2) * B * D * K, "8796093022208"},
      {"2*B*D*D + 2*B*D*K (the two-layer model)", Count(2) * B * D * D + Count(2) * B * D * K, "43980465111040"},
      {"2^64 exactly", Count(UINT64_MAX) + Count(1), "18446744073709551616"},
      {"2^100", Count(1ULL << 50) * Count(1ULL << 50), "1267650600228229401496703205376"},
      {"2^128 - 1", Count::from_u128(~Count::u128(0)), "340282366920938463463374607431768211455"},
      {"zero", Count(), "0"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    CHECK(r.value.str() == r.digits);
  }
  CHECK((Count(2) * B * D * K).u64() == 8796093022208ULL);
  CHECK((Count(2) * B * D * D + Count(2) * B * D * K).to_double() == Approx(4.398e13).epsilon(1e-4));
}

TEST_CASE("a count beyond 2^64 stays exact and converts to double", "[count]") {
  const Count big = Count(1ULL << 50) * Count(1ULL << 50) + Count(7);
  CHECK_FALSE(big.fits_u64());
  CHECK(big.str() == "1267650600228229401496703205383");
  CHECK(big.to_double() == Approx(1.2676506002282294e30));
  CHECK_THROWS_WITH(big.u64(), Catch::Contains("1267650600228229401496703205383") && Catch::Contains("64 bits"));
  CHECK(big - Count(7) == Count(1ULL << 50) * Count(1ULL << 50));
  CHECK(big > Count(UINT64_MAX));
}

TEST_CASE("a count beyond 2^128 throws ShapeError instead of wrapping", "[count]") {
  const Count max = Count::from_u128(~Count::u128(0));
  const Count two64 = Count(UINT64_MAX) + Count(1);
  CHECK_THROWS_AS(max + Count(1), ShapeError);
  CHECK_THROWS_WITH(max + Count(1), Catch::Contains("overflow") && Catch::Contains("128 bits"));
  CHECK_THROWS_AS(two64 * two64, ShapeError);
  CHECK_THROWS_WITH(two64 * two64, Catch::Contains("18446744073709551616 * 18446744073709551616"));
  Count c = max;
  CHECK_THROWS_AS(c *= Count(2), ShapeError);
  CHECK(c == max);  // unchanged by the failed operation
}

TEST_CASE("negative counts are errors", "[count]") {
  CHECK_THROWS_WITH(Count(3) - Count(5), Catch::Contains("3 - 5 is negative"));
  CHECK_THROWS_WITH(Count::from_int64(-1), Catch::Contains("negative value -1"));
  CHECK(Count::from_int64(INT64_MAX).str() == "9223372036854775807");
}

TEST_CASE("a figure beside the counts is exact or nullopt past 2^128, never wrapped", "[count]") {
  const Count max = Count::from_u128(~Count::u128(0));
  const Count two64 = Count(UINT64_MAX) + Count(1);
  CHECK(checked_mul(two64, Count(3)) == two64 * Count(3));
  CHECK(checked_add(max - Count(1), Count(1)) == max);
  CHECK_FALSE(checked_mul(two64, two64).has_value());
  CHECK_FALSE(checked_add(max, Count(1)).has_value());
  CHECK_FALSE(checked_mul(std::nullopt, Count(0)).has_value());  // out of range stays out
  CHECK_FALSE(checked_add(Count(1), std::nullopt).has_value());
  CHECK(str(checked_mul(two64, Count(2))) == "36893488147419103232");
  CHECK(str(checked_mul(two64, two64)) == "2^128 or more");
}

TEST_CASE("a count the plan needs refuses past 2^128, naming the step", "[count][cost]") {
  // A hand-made plan (no planner would make one) whose GEMM writes 2^124 outputs through a
  // stride-0 view, each a sum over 2^62: its FLOPs cannot be counted, and cost() says where.
  test::PlanBuilder b(DType::f32);
  const int x = b.input(Tensor::zeros({2, 2}));
  const std::int64_t big = std::int64_t{1} << 62;
  const int a = b.view(x, Layout{{big, big}, {0, 0}, 0});
  const int w = b.view(x, Layout{{big, big}, {0, 0}, 0});
  const Plan plan = b.finish(b.contract(a, w, Layout{{big, big}, {0, 0}, 0}, 0));
  CHECK_THROWS_AS(cost(plan), ShapeError);
  CHECK_THROWS_WITH(cost(plan), Catch::Contains("does not fit in 128 bits") &&
                                    Catch::Contains("in the plan's step 3 of 3: %3 = contract.gemm %1, %2"));
}
