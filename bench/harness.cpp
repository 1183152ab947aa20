// The harness (registration, shared inputs) and the memory limits: memcpy, read-sum and
// fill of the same bytes, each thread on one contiguous chunk.
#include <benchmark/benchmark.h>
#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>  // SSE's streaming store: every x86-64 CPU has it
#endif

#include <algorithm>
#include <cstring>
#include <map>

#include "bench.hpp"

namespace bench {

void add(const std::string& workload, const std::string& role, int threads, const Work& work, Setup setup) {
  const std::string name = workload + " | " + role + " | t" + std::to_string(threads);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    set_threads(threads);
    const std::function<void()> body = setup(threads);
    body();  // warm: plans cached, pages touched
    for (auto _ : state) body();
    state.counters["flops"] = work.flops;
    state.counters["bytes"] = work.bytes;
    state.counters["target"] = work.target;
    state.counters["threads"] = threads;
  })->UseRealTime()->Unit(benchmark::kMicrosecond);
}

namespace {
struct InputCache {
  std::string workload;
  std::map<std::string, einexpr::Tensor> tensors;
};
InputCache& cache() {
  static InputCache c;
  return c;
}
}  // namespace

einexpr::Tensor input(const std::string& workload, const std::string& key,
                      const std::function<einexpr::Tensor()>& make) {
  InputCache& c = cache();
  if (c.workload != workload) {
    c.tensors.clear();
    c.workload = workload;
  }
  auto it = c.tensors.find(key);
  if (it == c.tensors.end()) it = c.tensors.emplace(key, make()).first;
  return it->second;
}

einexpr::Tensor pattern_f32(const einexpr::Shape& shape) {
  einexpr::Tensor t = einexpr::Tensor::empty(shape, einexpr::DType::f32);
  auto* p = static_cast<float*>(t.data_ptr());
  const auto n = t.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<float>((i * 7919) % 2048) / 1024.0f - 1.0f;
  return t;
}

einexpr::Tensor random_f32(const einexpr::Shape& shape, std::uint64_t seed) {
  return einexpr::Tensor::randn(shape, einexpr::DType::f32, seed);
}

// ---- memory limits ----

namespace {
/// Thread t's chunk [begin, end) of n items, chunks rounded to 64-byte multiples.
std::pair<std::size_t, std::size_t> chunk(std::size_t n, std::size_t item, int t, int threads) {
  const std::size_t per_line = 64 / item;
  const std::size_t lines = (n + per_line - 1) / per_line;
  const std::size_t b = std::min(n, lines * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads) * per_line);
  const std::size_t e =
      std::min(n, lines * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads) * per_line);
  return {b, e};
}
}  // namespace

void memcpy_threads(void* dst, const void* src, std::size_t bytes, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const auto [b, e] = chunk(bytes, 1, omp_get_thread_num(), omp_get_num_threads());
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  }
}

void stream_copy_threads(float* dst, const float* src, std::size_t n, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const auto [b, e] = chunk(n, sizeof(float), omp_get_thread_num(), omp_get_num_threads());
    std::size_t i = b;
#if defined(__x86_64__)
    for (; i < e && reinterpret_cast<std::uintptr_t>(dst + i) % 16 != 0; ++i) dst[i] = src[i];
    for (; i + 4 <= e; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
    _mm_sfence();
#endif
    for (; i < e; ++i) dst[i] = src[i];
  }
}

float read_sum(const float* p, std::size_t n, int threads) {
  float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    const auto [b, e] = chunk(n, sizeof(float), omp_get_thread_num(), omp_get_num_threads());
    constexpr std::size_t lanes = 64;  // four 512-bit accumulators
    float acc[lanes] = {};
    std::size_t i = b;
    for (; i + lanes <= e; i += lanes)
#pragma omp simd
      for (std::size_t j = 0; j < lanes; ++j) acc[j] += p[i + j];
    for (; i < e; ++i) acc[0] += p[i];
    for (float a : acc) total += a;
  }
  return total;
}

void fill_stores(float* p, std::size_t n, float value, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const auto [b, e] = chunk(n, sizeof(float), omp_get_thread_num(), omp_get_num_threads());
    std::fill(p + b, p + e, value);
  }
}

void fill_memset(void* p, std::size_t bytes, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const auto [b, e] = chunk(bytes, 1, omp_get_thread_num(), omp_get_num_threads());
    std::memset(static_cast<char*>(p) + b, 0x3c, e - b);
  }
}

}  // namespace bench
