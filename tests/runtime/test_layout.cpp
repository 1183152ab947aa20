// layout.cpp: view strides (torch's computeStride), overflow-checked sizes, -1 inference,
// contiguity and extents, as tables.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/layout.hpp"

using namespace einexpr;

namespace {
constexpr std::int64_t big = std::int64_t{1} << 32;
constexpr std::int64_t i64_max = INT64_MAX;
}  // namespace

TEST_CASE("try_view_strides: the strides of a view, or none", "[layout]") {
  struct Row { Shape shape; Strides strides; Shape new_shape; std::optional<Strides> want; };
  const Row rows[] = {
      {{2, 3}, {3, 1}, {3, 2}, Strides{2, 1}},
      {{2, 3}, {3, 1}, {6}, Strides{1}},
      {{2, 3}, {3, 1}, {2, 3, 1}, Strides{3, 1, 1}},
      {{2, 3}, {3, 1}, {1, 2, 3}, Strides{6, 3, 1}},
      {{2, 3, 4}, {12, 4, 1}, {6, 4}, Strides{4, 1}},
      {{2, 3, 4}, {12, 4, 1}, {2, 12}, Strides{12, 1}},
      {{2, 3, 4}, {12, 4, 1}, {4, 3, 2}, Strides{6, 2, 1}},
      {{3, 2}, {1, 3}, {2, 3}, std::nullopt},               // the seeds: view of a transpose
      {{3, 2}, {1, 3}, {6}, std::nullopt},
      {{3, 2}, {1, 3}, {3, 2, 1}, Strides{1, 3, 3}},        // only adding a length-1 dim
      {{3, 2}, {1, 3}, {3, 1, 2}, Strides{1, 6, 3}},
      {{2, 3, 4}, {1, 2, 6}, {6, 4}, std::nullopt},         // Fortran order
      {{2, 3, 4}, {1, 2, 6}, {2, 3, 2, 2}, Strides{1, 2, 12, 6}},
      {{4, 3}, {6, 1}, {2, 2, 3}, Strides{12, 6, 1}},       // every other row
      {{4, 3}, {6, 1}, {12}, std::nullopt},
      {{2, 1, 3}, {3, 100, 1}, {6}, Strides{1}},            // a length-1 dim's stride is free
      {{6}, {2}, {2, 3}, Strides{6, 2}},
      {{6}, {2}, {3, 2}, Strides{4, 2}},
      {{6}, {0}, {2, 3}, Strides{0, 0}},                    // broadcast
      {{}, {}, {1, 1}, Strides{1, 1}},
      {{1}, {1}, {}, Strides{}},
      {{0, 3}, {3, 1}, {0, 3}, Strides{3, 1}},
      {{0, 3}, {3, 1}, {3, 0}, Strides{1, 1}},
      {{2, 3}, {3, 1}, {7}, std::nullopt},                  // numel differs
      {{2, 3}, {3, 1}, {3}, std::nullopt},
      {{}, {}, {2}, std::nullopt},
      {{0}, {1}, {5}, std::nullopt},
      {{5}, {1}, {0}, std::nullopt},
  };
  for (const Row& r : rows) {
    CAPTURE(shape_str(r.shape), shape_str(r.strides), shape_str(r.new_shape));
    const std::optional<Strides> got = try_view_strides(r.shape, r.strides, r.new_shape);
    REQUIRE(got.has_value() == r.want.has_value());
    if (got) {
      CAPTURE(shape_str(*got));
      CHECK(*got == *r.want);
    }
  }
}

TEST_CASE("checked_numel, checked_mul and checked_add throw instead of wrapping", "[layout][errors]") {
  CHECK(checked_numel(Shape{}) == 1);
  CHECK(checked_numel(Shape{2, 3, 4}) == 24);
  CHECK(checked_numel(Shape{0, big, big / 4}) == 0);
  CHECK(checked_numel(Shape{big / 4, big, 0}) == 0);
  CHECK(checked_numel(Shape{big / 4, big}) == i64_max / 2 + 1);
  CHECK(checked_mul(-3, 4) == -12);
  CHECK(checked_add(i64_max - 1, 1) == i64_max);
  struct Row { std::function<void()> call; std::string message; };
  const Row rows[] = {
      {[] { checked_numel(Shape{2, -3}); }, "negative length -3 in shape [2, -3]"},
      {[] { checked_numel(Shape{0, -1}); }, "negative length -1 in shape [0, -1]"},
      {[] { checked_numel(Shape{big, big}); },
       "the number of elements of shape [4294967296, 4294967296] overflows 64 bits"},
      {[] { checked_numel(Shape{3, big, big / 2}); },
       "the number of elements of shape [3, 4294967296, 2147483648] overflows 64 bits"},
      // numpy's rule ('array is too big' either way): an empty shape's nonzero lengths
      // must still multiply within 64 bits, whichever end the zero is at (torch refuses
      // [2^32, 2^32, 0] but takes [0, 2^32, 2^32]).
      {[] { checked_numel(Shape{0, big, big}); },
       "the number of elements of shape [0, 4294967296, 4294967296] overflows 64 bits"},
      {[] { checked_numel(Shape{big, big, 0}); },
       "the number of elements of shape [4294967296, 4294967296, 0] overflows 64 bits"},
      {[] { checked_mul(std::int64_t{1} << 62, 2); }, "size overflows 64 bits: 4611686018427387904 * 2"},
      {[] { checked_mul(-(std::int64_t{1} << 62), 3); },
       "size overflows 64 bits: -4611686018427387904 * 3"},
      {[] { checked_add(i64_max, 1); }, "size overflows 64 bits: 9223372036854775807 + 1"},
      {[] { contiguous_strides(Shape{std::int64_t{1} << 62, 4}); },
       "size overflows 64 bits: 4 * 4611686018427387904"},
      {[] { Layout::contiguous({big, big}); },
       "the number of elements of shape [4294967296, 4294967296] overflows 64 bits"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.message);
    CHECK_THROWS_AS(r.call(), ShapeError);
    CHECK_THROWS_WITH(r.call(), r.message);
  }
}

TEST_CASE("infer_shape fills one -1 or names the shape that cannot fit", "[layout][errors]") {
  struct Good { Shape shape; std::int64_t numel; Shape want; };
  const Good good[] = {
      {{-1}, 5, {5}},      {{2, -1, 3}, 12, {2, 2, 3}}, {{}, 1, {}},
      {{2, 3}, 6, {2, 3}},  {{1, -1, 1}, 7, {1, 7, 1}},
  };
  for (const Good& r : good) {
    CAPTURE(shape_str(r.shape), r.numel);
    CHECK(infer_shape(r.shape, r.numel) == r.want);
  }
  struct Bad { Shape shape; std::int64_t numel; std::string message; };
  const Bad bad[] = {
      {{2, -1, -1}, 6, "only one dimension can be -1 in shape [2, -1, -1]"},
      {{2, -2}, 4, "invalid length -2 in shape [2, -2]"},
      {{4, -1}, 6, "shape [4, -1] is invalid for 6 elements"},
      {{0, -1}, 0, "shape [0, -1] is invalid for 0 elements"},  // -1 could be anything
      {{-1, 0}, 0, "shape [-1, 0] is invalid for 0 elements"},
      {{2, 3}, 7, "shape [2, 3] is invalid for 7 elements"},
      {{}, 2, "shape [] is invalid for 2 elements"},
      {{big, big, -1}, 1, "size overflows 64 bits: 4294967296 * 4294967296"},
  };
  for (const Bad& r : bad) {
    CAPTURE(shape_str(r.shape), r.numel);
    CHECK_THROWS_AS(infer_shape(r.shape, r.numel), ShapeError);
    CHECK_THROWS_WITH(infer_shape(r.shape, r.numel), r.message);
  }
}

TEST_CASE("contiguous layouts, contiguity and extents", "[layout]") {
  CHECK(Layout::contiguous({2, 3, 4}) == Layout{{2, 3, 4}, {12, 4, 1}, 0});
  CHECK(Layout::contiguous({}) == Layout{{}, {}, 0});
  CHECK(Layout::contiguous({3, 0, 2}).strides == Strides{2, 2, 1});
  CHECK(Layout::contiguous({3, 0, 2}).numel() == 0);
  CHECK(shape_str(Shape{}) == "[]");
  CHECK(shape_str(Shape{2, -1, 30}) == "[2, -1, 30]");
  struct Row { Layout layout; bool contiguous; std::int64_t extent; };
  const Row rows[] = {
      {{{2, 3}, {3, 1}, 0}, true, 6},
      {{{2, 3}, {3, 1}, 5}, true, 11},
      {{{2, 3}, {1, 2}, 0}, false, 6},
      {{{2, 1, 3}, {3, 99, 1}, 0}, true, 6},
      {{{1}, {5}, 2}, true, 3},
      {{{0, 3}, {3, 1}, 4}, true, 0},
      {{{0, 3}, {7, 9}, 4}, true, 0},  // no elements: contiguous whatever the strides
      {{{2, 3}, {4, 1}, 0}, false, 7},
      {{{3}, {2}, 1}, false, 6},
      {{{4}, {0}, 0}, false, 1},
      {{{}, {}, 4}, true, 5},
  };
  for (const Row& r : rows) {
    CAPTURE(shape_str(r.layout.shape), shape_str(r.layout.strides), r.layout.offset);
    CHECK(r.layout.is_contiguous() == r.contiguous);
    CHECK(r.layout.extent() == r.extent);
  }
  const Layout huge{{std::int64_t{1} << 62, 3}, {4, 1}, 0};
  CHECK_THROWS_WITH(huge.extent(), "size overflows 64 bits: 4611686018427387903 * 4");
}
