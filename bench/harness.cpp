// The harness (registration, shared inputs) and the memory limits: memcpy, read-sum and
// fill of the same bytes, each thread on one contiguous chunk.
#include <benchmark/benchmark.h>
#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>  // streaming stores: SSE2 on every x86-64 CPU, AVX and AVX-512 where it has them
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

namespace {
#if defined(__x86_64__)
// One chunk: plain stores up to dst's first 64-byte boundary, whole lines streamed, the tail
// plain; one function per vector width, chosen by what the CPU has.
template <class Lines>
void stream_chunk(char* dst, const char* src, std::size_t bytes, Lines lines) {
  std::size_t i = std::min(bytes, (64 - reinterpret_cast<std::uintptr_t>(dst) % 64) % 64);
  std::memcpy(dst, src, i);
  const std::size_t whole = (bytes - i) / 64 * 64;
  lines(dst + i, src + i, whole);
  i += whole;
  std::memcpy(dst + i, src + i, bytes - i);
}
__attribute__((target("avx512f"))) void lines512(char* d, const char* s, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 64) _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(s + i));
}
__attribute__((target("avx"))) void lines256(char* d, const char* s, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
  }
}
void lines128(char* d, const char* s, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 64)
    for (int k = 0; k < 4; ++k)
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i) + k, _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i) + k));
}
#endif
}  // namespace

void stream_bytes_threads(void* dst, const void* src, std::size_t bytes, int threads) {
#if defined(__x86_64__)
  static const auto lines = __builtin_cpu_supports("avx512f") ? lines512 : __builtin_cpu_supports("avx") ? lines256 : lines128;
#endif
#pragma omp parallel num_threads(threads)
  {
    const auto [b, e] = chunk(bytes, 1, omp_get_thread_num(), omp_get_num_threads());
    char* d = static_cast<char*>(dst) + b;
    const char* s = static_cast<const char*>(src) + b;
#if defined(__x86_64__)
    stream_chunk(d, s, e - b, lines);
    _mm_sfence();
#else
    std::memcpy(d, s, e - b);
#endif
  }
}

void stream_copy_threads(float* dst, const float* src, std::size_t n, int threads) {
  stream_bytes_threads(dst, src, n * sizeof(float), threads);
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
