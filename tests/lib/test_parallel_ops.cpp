// Every CPU kernel that shares its work among einexpr's threads (runtime/parallel.hpp), on
// random data large enough to run in parallel: the result with 2, 3 and 4 threads against the
// one-thread (serial) result, and the same result on every run with one thread count however
// the pieces fell to threads. Elementwise and per-row kernels (maps, copies, normalizations,
// reductions with many outputs) give the serial result exactly; GEMMs (cut into parts of
// M or N) and reductions split along the reduced axis (partial sums combined in piece order)
// to rounding.
#include <catch2/catch.hpp>

#include <cmath>
#include <atomic>
#include <functional>
#include <thread>
#include <string>
#include <vector>

#include "einexpr/einexpr.hpp"
#include "einexpr/runtime/parallel.hpp"

using namespace einexpr;

namespace {

struct ThreadsGuard {
  int saved = num_threads();
  ~ThreadsGuard() { set_num_threads(saved); }
};

struct Case {
  std::string name;
  std::function<Tensor()> run;
  bool exact;  // the serial result bit for bit with any thread count
  // otherwise: how far another summation order may move an element, relative to max(1, |it|).
  // The GEMMs' dot products of 1024 N(0,1) products run partial sums up to ~32, each addition
  // off by up to 2^-24 of that, over a random walk of 1024 of them: ~6e-5 apart between two
  // orders (OpenBLAS's AVX2 and AVX-512 kernels block K differently for one and two threads;
  // measured up to 3.5e-5 on a Zen 3); the other sums are shorter or of larger results
  double tolerance = 1e-5;
};

std::vector<Case> cases() {
  static const Tensor x = Tensor::randn({512, 1024}, DType::f32, 1);     // 512 Ki values
  static const Tensor w = Tensor::randn({1024, 96}, DType::f32, 2);
  static const Tensor q = Tensor::randn({6, 128, 64}, DType::f32, 3);
  static const Tensor k = Tensor::randn({6, 128, 64}, DType::f32, 4);
  static const Tensor flat = Tensor::randn({1 << 20}, DType::f32, 5);
  static const Tensor cube = Tensor::randn({64, 64, 64}, DType::f32, 6);
  static const Tensor xd = Tensor::randn({512, 256}, DType::f64, 7);
  return {
      {"gemm", [] { return einsum(x, w, "b d, d k -> b k"); }, false, 2e-4},
      {"gemm, one batch item cut in parts", [] { return einsum(x.slice(0, 0, 64), w, "b d, d k -> b k"); }, false, 2e-4},
      {"batched gemm", [] { return einsum(q, k, "h s d, h t d -> h s t"); }, false},
      {"copy (transpose)", [] { return rearrange(cube, "a b c -> c b a", {}, Copy::always); }, true},
      {"copy (strided slice)", [] { return rearrange(x.slice(1, 3, 1000), "a b -> b a", {}, Copy::always); }, true},
      {"map gelu", [] { return map(x, "gelu"); }, true},
      {"map add, broadcast", [] { return map(x, w.slice(1, 0, 1).reshape({1024}), "b d, d -> b d", "add"); }, true},
      {"reduce rows (many outputs)", [] { return reduce(x, "b d -> b", "mean"); }, true},
      {"reduce columns (outer)", [] { return reduce(x, "b d -> d", "sum"); }, false},
      {"reduce all (split reduced range)", [] { return reduce(flat, "n ->", "sum"); }, false},
      {"reduce var, f64", [] { return reduce(xd, "b d -> d", "var"); }, false},
      {"reduce logsumexp, two outputs", [] { return reduce(x, "(t b) d -> t", "logsumexp", {{"t", 2}}); }, false},
      {"layer_norm", [] { return layer_norm(x, "b [d]"); }, true},
      {"softmax", [] { return softmax(x, "b [d]"); }, true},
      {"randn", [] { return Tensor::randn({1 << 19}, DType::f32, 9); }, true},
  };
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

}  // namespace

TEST_CASE("parallel kernels give the serial result (exactly, or to rounding)", "[parallel]") {
  const ThreadsGuard guard;
  for (const Case& c : cases()) {
    set_num_threads(1);
    const std::vector<double> serial = values(c.run());
    for (int threads : {2, 3, 4}) {
      CAPTURE(c.name, threads);
      set_num_threads(threads);
      const std::vector<double> got = values(c.run());
      REQUIRE(got.size() == serial.size());
      std::size_t off = 0;
      double worst = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const double err = std::abs(got[i] - serial[i]) / std::max(1.0, std::abs(serial[i]));
        worst = std::max(worst, err);
        off += got[i] != serial[i];
      }
      CAPTURE(worst, off);
      if (c.exact) CHECK(off == 0);
      CHECK(worst <= c.tolerance);
    }
  }
}

TEST_CASE("with one thread count, every run gives the same bits however pieces fell to threads", "[parallel]") {
  const ThreadsGuard guard;
  set_num_threads(2);
  const auto before = pool_stats();
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    const std::vector<double> first = values(c.run());
    int differ = 0;
    for (int r = 0; r < 10; ++r) differ += values(c.run()) != first;
    CHECK(differ == 0);
  }
  // The kernels did go through the pool (more than one piece each).
  CHECK(pool_stats().jobs + pool_stats().serial_jobs > before.jobs + before.serial_jobs);
}

TEST_CASE("many small ops in a row (below and at the parallel threshold) from several threads", "[parallel]") {
  const ThreadsGuard guard;
  set_num_threads(2);
  const Tensor small = Tensor::randn({64, 64}, DType::f32, 11);   // below the threshold: serial
  const Tensor mid = Tensor::randn({256, 256}, DType::f32, 12);   // at it: a pool job each
  const std::vector<double> s = values(reduce(small, "a b -> a", "sum"));
  const std::vector<double> m = values(map(mid, "exp"));
  int wrong = 0;
  std::vector<std::thread> callers;
  std::atomic<int> bad{0};
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        bad += values(reduce(small, "a b -> a", "sum")) != s;
        bad += values(map(mid, "exp")) != m;
      }
    });
  for (int i = 0; i < 300; ++i) wrong += values(map(mid, "exp")) != m;
  for (auto& c : callers) c.join();
  CHECK(wrong == 0);
  CHECK(bad == 0);
}
