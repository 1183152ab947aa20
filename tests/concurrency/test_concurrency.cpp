// The plan caches under many threads at once: the same expression from every thread, many
// different ones (more than the pattern cache holds, so entries are evicted while others
// use them), compiled expressions shared between threads, errors thrown concurrently, and
// caches cleared and counted in the middle of it all. Each result is compared with one
// computed before the threads start. Its own executable (label "concurrency") so that the
// ThreadSanitizer build (EINEXPR_SANITIZE=thread, scripts/test.sh) builds and runs just it.
//
// OpenMP: libgomp is not built with TSan, so its barriers look like races to it. These
// tests run with one einexpr thread (set_num_threads(1): no parallel regions start); the
// parallel kernels have their own tests in the other folders.
#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "einexpr/einexpr.hpp"

using namespace einexpr;

namespace {

constexpr int thread_count = 16;

/// Runs body(t, i) for i < iterations on `thread_count` threads at once.
void hammer(int iterations, const std::function<void(int, int)>& body) {
  set_num_threads(1);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < iterations; ++i) body(t, i);
    });
  go = true;
  for (auto& th : threads) th.join();
}

/// An expression and its result computed on one thread beforehand.
struct Expected {
  std::function<Tensor()> run;
  std::vector<double> values;
};

std::vector<Expected> expressions(const Tensor& x, const Tensor& y) {
  std::vector<Expected> e = {
      {[&] { return rearrange(x, "a (b c) -> c a b", {{"b", 2}}); }, {}},
      {[&] { return rearrange(x, "a b -> b a", {}, Copy::always); }, {}},
      {[&] { return reduce(x, "a (b c) -> a c", Reduction::max, {{"c", 3}}); }, {}},
      {[&] { return reduce(x, "a b -> b", "mean"); }, {}},
      {[&] { return repeat(x, "a b -> a r b", {{"r", 3}}, Copy::always); }, {}},
      {[&] { return einsum(x, y, "a b, b c -> a c"); }, {}},
      {[&] { return einsum(x, y, x, "a b, b c, d b -> a c d"); }, {}},
      {[&] { return map(x, "gelu"); }, {}},
      {[&] { return map(x, y.transpose(0, 1).contiguous().slice(0, 0, 1).reshape({6}), "a b, b -> a b", "add"); }, {}},
  };
  for (Expected& ex : e) ex.values = ex.run().to_vector<double>();
  return e;
}

}  // namespace

TEST_CASE("threads share cached plans of the same and different expressions", "[concurrency]") {
  const Tensor x = Tensor::randn({4, 6}, DType::f32, 1);
  const Tensor y = Tensor::randn({6, 5}, DType::f32, 2);
  const std::vector<Expected> ex = expressions(x, y);
  std::atomic<int> wrong{0};
  clear_caches();
  hammer(150, [&](int t, int i) {
    const Expected& e = ex[static_cast<std::size_t>(t % 2 == 0 ? 0 : (t + i) % static_cast<int>(ex.size()))];
    if (e.run().to_vector<double>() != e.values) ++wrong;
  });
  CHECK(wrong == 0);
  const EngineStats s = engine_stats();
  CHECK(s.program_cache.size <= s.program_cache.capacity);
}

TEST_CASE("more patterns than the pattern cache holds: evicted while in use", "[concurrency]") {
  const Tensor x = Tensor::randn({3, 4}, DType::f64, 3);
  const std::vector<double> transposed = rearrange(x, "a b -> b a", {}, Copy::always).to_vector<double>();
  std::atomic<int> wrong{0};
  hammer(120, [&](int t, int i) {
    // 16 threads x 120 names: ~2000 distinct patterns, against a pattern cache of 256.
    const std::string a = "a" + std::to_string(t * 1000 + i);
    const Tensor r = rearrange(x, a + " b -> b " + a, {}, Copy::always);
    if (r.to_vector<double>() != transposed) ++wrong;
  });
  CHECK(wrong == 0);
  CHECK(engine_stats().pattern_cache.evictions > 0);
}

TEST_CASE("compiled expressions are shared by threads across layouts", "[concurrency]") {
  const Compiled f = compile_einsum("b i j, b j k -> b i k");
  std::vector<Tensor> as, bs;
  std::vector<std::vector<double>> want;
  for (int n = 1; n <= 24; ++n) {  // more layouts than a Compiled keeps (16): constant eviction
    as.push_back(Tensor::randn({2, n, 3}, DType::f64, static_cast<std::uint64_t>(n)));
    bs.push_back(Tensor::randn({2, 3, 2}, DType::f64, 100));
    want.push_back(einsum(as.back(), bs.back(), "b i j, b j k -> b i k").to_vector<double>());
  }
  std::atomic<int> wrong{0};
  hammer(100, [&](int t, int i) {
    const auto k = static_cast<std::size_t>((t * 7 + i) % 24);
    if (f(as[k], bs[k]).to_vector<double>() != want[k]) ++wrong;
  });
  CHECK(wrong == 0);
}

TEST_CASE("errors, clear_caches and engine_stats in the middle of it all", "[concurrency]") {
  const Tensor x = Tensor::randn({4, 6}, DType::f32, 1);
  const std::vector<double> want = rearrange(x, "a b -> b a", {}, Copy::always).to_vector<double>();
  std::atomic<int> wrong{0}, pattern_errors{0}, shape_errors{0};
  hammer(100, [&](int t, int i) {
    switch ((t + i) % 5) {
      case 0:
        try {
          rearrange(x, "a (b -> a b");
        } catch (const PatternError& e) {
          if (e.position() == 2) ++pattern_errors;
        }
        break;
      case 1:
        try {
          rearrange(x, "a (b c) -> a b c", {{"b", 4}});
        } catch (const ShapeError&) {
          ++shape_errors;
        }
        break;
      case 2:
        if (t == 3 && i % 10 == 0) clear_caches();
        (void)engine_stats();
        break;
      default:
        if (rearrange(x, "a b -> b a", {}, Copy::always).to_vector<double>() != want) ++wrong;
    }
  });
  CHECK(wrong == 0);
  CHECK(pattern_errors == thread_count * 100 / 5);
  CHECK(shape_errors == thread_count * 100 / 5);
}
