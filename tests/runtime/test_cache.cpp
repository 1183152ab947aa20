// LruCache (eviction order, stats, get_or_create, threads) and measure() (counts and the
// consistency of its statistics; no timing thresholds).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "einexpr/runtime/cache.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/timing.hpp"

using namespace einexpr;

namespace {

// The keys present, in the order given (probing with find() counts and reorders).
std::string present(LruCache<std::string, int>& cache, const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys)
    if (cache.find(k)) out += k;
  return out;
}

}  // namespace

TEST_CASE("LruCache evicts the least recently used entry", "[cache]") {
  struct Row { std::string ops; std::string present; std::uint64_t evictions; };
  // ops: "+k" inserts k (value = its letter), "?k" finds k (touching it).
  const Row rows[] = {
      {"+a+b+c", "abc", 0},
      {"+a+b+c+d", "bcd", 1},
      {"+a+b+c?a+d", "acd", 1},
      {"+a+b+c?a?b+d+e", "bde", 2},
      {"+a+b+c+a+d", "acd", 1},  // inserting an existing key touches it
      {"+a?z+b+c+d+e+f", "def", 3},
  };
  for (const Row& r : rows) {
    CAPTURE(r.ops);
    LruCache<std::string, int> cache(3);
    for (std::size_t i = 0; i + 1 < r.ops.size(); i += 2) {
      const std::string key(1, r.ops[i + 1]);
      if (r.ops[i] == '+') cache.insert(key, std::make_shared<const int>(key[0]));
      else (void)cache.find(key);
    }
    CHECK(cache.stats().evictions == r.evictions);
    CHECK(cache.stats().size == r.present.size());
    CHECK(present(cache, {"a", "b", "c", "d", "e", "f"}) == r.present);
  }
}

TEST_CASE("LruCache counts hits and misses, keeps the first value for a key, clears", "[cache]") {
  LruCache<int, std::string> cache(0);  // capacity 0 means 1
  CHECK(cache.stats().capacity == 1);
  CHECK(cache.find(1) == nullptr);
  auto first = cache.insert(1, std::make_shared<const std::string>("one"));
  auto second = cache.insert(1, std::make_shared<const std::string>("uno"));
  CHECK(*second == "one");
  CHECK(second == first);
  CHECK(*cache.find(1) == "one");
  cache.insert(2, std::make_shared<const std::string>("two"));
  CHECK(cache.find(1) == nullptr);
  const CacheStats s = cache.stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 2);
  CHECK(s.evictions == 1);
  CHECK(s.size == 1);
  cache.clear();
  CHECK(cache.stats().size == 0);
  CHECK(cache.find(2) == nullptr);
}

TEST_CASE("get_or_create builds once, and a throwing factory inserts nothing", "[cache]") {
  LruCache<int, int> cache(4);
  int calls = 0;
  auto make = [&] { return ++calls * 10; };
  CHECK(*cache.get_or_create(5, make) == 10);
  CHECK(*cache.get_or_create(5, make) == 10);
  CHECK(calls == 1);
  CHECK_THROWS_WITH(cache.get_or_create(6, []() -> int { throw ShapeError("no plan for 6"); }), "no plan for 6");
  CHECK(cache.stats().size == 1);
  CHECK(cache.find(6) == nullptr);
  CHECK(*cache.get_or_create(6, make) == 20);  // a later factory still runs
  CHECK(cache.stats().size == 2);
}

TEST_CASE("LruCache under many threads: right values, one shared value per key", "[cache]") {
  LruCache<int, long> cache(16);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3000; ++i) {
        const int key = (i * 7 + t) % 50;  // more keys than capacity: constant eviction
        auto v = cache.get_or_create(key, [key] { return static_cast<long>(key) * key; });
        if (*v != static_cast<long>(key) * key) ++wrong;
      }
    });
  for (std::thread& th : threads) th.join();
  CHECK(wrong == 0);
  const CacheStats s = cache.stats();
  CHECK(s.hits + s.misses == 8 * 3000);
  CHECK(s.size <= 16);

  LruCache<int, long> one(4);  // every thread on one key: all get the first value inserted
  std::vector<std::shared_ptr<const long>> got(8);
  threads.clear();
  for (std::size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) got[t] = one.get_or_create(7, [] { return 49L; });
    });
  for (std::thread& th : threads) th.join();
  for (const auto& p : got) CHECK(p == got[0]);
  CHECK(*got[0] == 49);
  CHECK(one.stats().size == 1);
}

TEST_CASE("measure runs the warm-up and repeat counts asked for", "[timing]") {
  struct Row { int warmup, min_repeats, max_repeats; double min_seconds, max_seconds; int repeats; };
  const Row rows[] = {
      {3, 4, 10, 0.0, 10.0, 4},     // min_seconds reached at once: the minimum repeats
      {0, 1, 1, 0.0, 10.0, 1},
      {2, 1, 6, 1e9, 1e9, 6},       // never enough time: the maximum repeats
      {-2, 5, 7, 1e9, 1e9, 7},      // negative warm-up counts as none
      {1, 5, 9, 1e9, 0.0, 1},       // max_seconds already passed after one repeat
  };
  for (const Row& r : rows) {
    CAPTURE(r.warmup, r.min_repeats, r.max_repeats, r.min_seconds, r.max_seconds);
    int calls = 0;
    MeasureOptions o;
    o.warmup = r.warmup;
    o.min_repeats = r.min_repeats;
    o.max_repeats = r.max_repeats;
    o.min_seconds = r.min_seconds;
    o.max_seconds = r.max_seconds;
    const Measurement m = measure([&] { ++calls; }, o);
    CHECK(m.warmup == std::max(0, r.warmup));
    CHECK(m.repeats == r.repeats);
    CHECK(m.samples_s.size() == static_cast<std::size_t>(r.repeats));
    CHECK(calls == m.warmup + m.repeats);
  }
}

TEST_CASE("measure's median, min, max and mean agree with its samples", "[timing]") {
  for (int repeats : {1, 2, 5, 6}) {
    CAPTURE(repeats);
    MeasureOptions o;
    o.warmup = 0;
    o.min_repeats = o.max_repeats = repeats;
    o.min_seconds = 0;
    volatile double sink = 0;
    const Measurement m = measure([&] { for (int i = 0; i < 1000; ++i) sink = sink + i; }, o);
    std::vector<double> s = m.samples_s;
    REQUIRE(s.size() == static_cast<std::size_t>(repeats));
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    CHECK(m.median_s == (n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2])));
    CHECK(m.min_s == s.front());
    CHECK(m.max_s == s.back());
    CHECK(m.min_s <= m.median_s);
    CHECK(m.median_s <= m.max_s);
    CHECK(m.mean_s >= m.min_s);
    CHECK(m.mean_s <= m.max_s);
    for (double x : s) CHECK(x >= 0);
  }
  MeasureOptions bad;
  bad.min_repeats = 0;
  CHECK_THROWS_WITH(measure([] {}, bad), "measure: need 1 <= min_repeats <= max_repeats");
  bad.min_repeats = 5;
  bad.max_repeats = 4;
  CHECK_THROWS_WITH(measure([] {}, bad), "measure: need 1 <= min_repeats <= max_repeats");
  const double t0 = now_seconds();
  const double t1 = now_seconds();
  CHECK(t0 <= t1);  // monotonic
}
