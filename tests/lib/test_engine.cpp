// The caches: a repeated call neither parses nor plans; compiled expressions; threads.
#include <catch2/catch.hpp>

#include <thread>

#include "reference.hpp"
#include "einexpr/einexpr.hpp"

using namespace einexpr;

TEST_CASE("a cached call neither parses nor plans", "[engine]") {
  const Tensor x = Tensor::randn({4, 6}, DType::f32, 1);
  const Tensor first = rearrange(x, "a (b c) -> c a b", {{"b", 2}});
  const EngineStats before = engine_stats();
  const Tensor second = rearrange(x, "a (b c) -> c a b", {{"b", 2}});
  const EngineStats after = engine_stats();
  CHECK(after.parses == before.parses);
  CHECK(after.plans == before.plans);
  CHECK(after.lowerings == before.lowerings);
  CHECK(after.program_cache.hits == before.program_cache.hits + 1);
  CHECK(first.to_vector<float>() == second.to_vector<float>());
  // Different strides plan again, the pattern is not parsed again.
  rearrange(x.slice(1, 0, 6, 1).contiguous().transpose(0, 1).transpose(0, 1), "a (b c) -> c a b", {{"b", 2}});
  const Tensor t = Tensor::randn({6, 4}, DType::f32, 2).transpose(0, 1);
  rearrange(t, "a (b c) -> c a b", {{"b", 2}});
  const EngineStats third = engine_stats();
  CHECK(third.parses == after.parses);
  CHECK(third.plans == after.plans + 1);
}

TEST_CASE("compiled expressions plan once per layout", "[engine]") {
  const Compiled f = compile_einsum("b s1 h, b s2 h -> b s1 s2");
  const Tensor x = Tensor::randn({2, 3, 4}, DType::f32, 1), y = Tensor::randn({2, 5, 4}, DType::f32, 2);
  const Tensor z1 = f(x, y);
  const EngineStats before = engine_stats();
  const Tensor z2 = f(x, y);
  CHECK(engine_stats().plans == before.plans);
  CHECK(engine_stats().program_cache.hits == before.program_cache.hits);  // not even a global lookup
  CHECK(z1.to_vector<float>() == z2.to_vector<float>());
  CHECK(reference::max_rel_error(z1, reference::einsum({x, y}, "b s1 h, b s2 h -> b s1 s2")) <= 1e-5);
  const Compiled r = compile_reduce("b s h -> b h", Reduction::mean);
  CHECK(r(x).shape() == Shape{2, 4});
  CHECK_THROWS_AS(compile_rearrange("a (b -> a b"), PatternError);
}

TEST_CASE("many threads call the same and different expressions at once", "[engine][threads]") {
  const Tensor x = Tensor::randn({8, 12}, DType::f32, 1);
  const std::vector<std::string> patterns = {"a b -> b a", "a (b c) -> c a b", "a (b c) -> (c a) b", "a b -> (b a)"};
  std::vector<std::vector<float>> expected;
  auto lengths = [](const std::string& p) { return p.find('(') != std::string::npos && p.find("(b c)") != std::string::npos ? AxisLengths{{"b", 3}} : AxisLengths{}; };
  for (const auto& p : patterns) expected.push_back(rearrange(x, p, lengths(p)).to_vector<float>());
  clear_caches();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::size_t k = static_cast<std::size_t>((t + i) % 4);
        if (rearrange(x, patterns[k], lengths(patterns[k])).to_vector<float>() != expected[k]) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
}
