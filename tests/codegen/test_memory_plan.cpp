// plan_memory(): two buffers alive at a common step never share a byte; offsets aligned;
// the arena is never below the live peak and reaches it where greedy-by-size can. On random
// lifetimes, checked pairwise.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "einexpr/codegen/memory_plan.hpp"

using namespace einexpr;

namespace {

void check_valid(const std::vector<Lifetime>& b, const MemoryPlan& m, std::int64_t alignment) {
  REQUIRE(m.offsets.size() == b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    CHECK(m.offsets[i] % alignment == 0);
    CHECK(m.offsets[i] + b[i].bytes <= m.arena_bytes);
    for (std::size_t j = i + 1; j < b.size(); ++j) {
      const bool together = b[i].first <= b[j].last && b[j].first <= b[i].last;
      const bool disjoint = m.offsets[i] + b[i].bytes <= m.offsets[j] || m.offsets[j] + b[j].bytes <= m.offsets[i];
      if (together && b[i].bytes > 0 && b[j].bytes > 0) CHECK(disjoint);
    }
  }
  CHECK(m.arena_bytes >= m.live_peak_bytes);
}

}  // namespace

TEST_CASE("memory plan: small cases by hand", "[memory]") {
  struct Row {
    std::vector<Lifetime> buffers;
    std::int64_t live_peak, arena;
    std::vector<std::int64_t> offsets;
  };
  const std::vector<Row> rows = {
      {{}, 0, 0, {}},
      {{{128, 0, 0}}, 128, 128, {0}},
      // a chain: each result read by the next statement only; two alive at a time
      {{{256, 0, 1}, {128, 1, 2}, {256, 2, 3}, {64, 3, 4}}, 384, 384, {0, 256, 0, 256}},
      // nothing overlaps in time: everything at offset 0
      {{{64, 0, 0}, {192, 1, 1}, {128, 2, 2}}, 192, 192, {0, 0, 0}},
      // all alive together: stacked, largest first
      {{{64, 0, 2}, {192, 0, 2}, {128, 1, 1}}, 384, 384, {320, 0, 192}},
      // sizes not multiples of the alignment: the next offset is rounded up
      {{{100, 0, 1}, {10, 0, 1}}, 110, 138, {0, 128}},
      // zero bytes take no room
      {{{0, 0, 5}, {64, 0, 5}}, 64, 64, {0, 0}},
  };
  for (const Row& r : rows) {
    CAPTURE(r.live_peak, r.arena);
    const MemoryPlan m = plan_memory(r.buffers, 64);
    CHECK(m.live_peak_bytes == r.live_peak);
    CHECK(live_peak(r.buffers) == r.live_peak);
    CHECK(m.arena_bytes == r.arena);
    CHECK(m.offsets == r.offsets);
    check_valid(r.buffers, m, 64);
  }
  CHECK_THROWS_WITH(plan_memory({}, 0), "plan_memory: the alignment must be positive");
}

TEST_CASE("memory plan: random lifetimes never collide", "[memory]") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Lifetime> b;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % 30);
      b.push_back({static_cast<std::int64_t>(rng() % 5000), first, first + static_cast<int>(rng() % 8)});
    }
    const std::int64_t alignment = trial % 2 ? 64 : 1;
    CAPTURE(trial);
    const MemoryPlan m = plan_memory(b, alignment);
    check_valid(b, m, alignment);
    std::int64_t sum = 0;
    for (const Lifetime& l : b) sum += l.bytes;
    CHECK(m.arena_bytes <= sum + alignment * n);  // never worse than no reuse (plus padding)
  }
}
