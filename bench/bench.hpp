#pragma once
// The benchmark harness: every einexpr workload is registered beside its limit, both run in
// the same process, so scripts/bench.sh can divide one by the other. A benchmark's name is
// "<workload> | <role> | t<threads>"; roles are
//   out       einexpr writing into an output the caller owns (the *_into forms)
//   fresh     einexpr returning a new tensor each call (the allocator's cached blocks)
//   cold      as fresh, with the allocator's cache emptied each call (fresh pages)
//   limit:X   the limit measured by method X (several methods: the table takes the fastest)
//   call      a per-call overhead with an absolute target (no limit)
//   fma       the measured f32 FMA peak (bench_fma.cpp), no einexpr
// Counters: flops and bytes per iteration (bytes: what the op must read plus write), target
// (the ratio or, for role call, the seconds the issue asks for), threads.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include <einexpr/einexpr.hpp>

namespace bench {

/// What one iteration of a workload does, and the target the table checks.
struct Work {
  double flops = 0;
  double bytes = 0;
  double target = 0;  // ratio (limit time / einexpr time) at least; seconds at most for role call
};

/// Returns the timed body for `threads` threads; everything it allocates stays outside the
/// timed loop.
using Setup = std::function<std::function<void()>(int threads)>;

void add(const std::string& workload, const std::string& role, int threads, const Work& work, Setup setup);

/// Every benchmark, registered by the files below in table order.
void register_gemm();
void register_memory();
void register_overhead();
void register_fma();
void register_maps();
void register_norms();
void register_block();
void register_model();
void register_indexed();

/// Keeps a result alive in the optimizer's eyes.
template <class T>
void benchmark_keep(const T& value) {
  benchmark::DoNotOptimize(value);
}

// ---- inputs: made once per workload and shared by its roles ----

/// The tensor cached under `key` (made by `make` the first time; the cache holds the
/// latest workload's tensors only, so 256 MiB inputs do not pile up).
einexpr::Tensor input(const std::string& workload, const std::string& key,
                      const std::function<einexpr::Tensor()>& make);
/// A contiguous f32 tensor filled with a cheap deterministic pattern in [-1, 1).
einexpr::Tensor pattern_f32(const einexpr::Shape& shape);
/// A contiguous f32 tensor with standard normal values.
einexpr::Tensor random_f32(const einexpr::Shape& shape, std::uint64_t seed);

// ---- limits: the same bytes, or the same matrices, with no einexpr in between ----

/// Every einexpr, OpenMP, Eigen and BLAS thread count set to `threads`.
void set_threads(int threads);
/// memcpy of `bytes`, split into one contiguous chunk per thread.
void memcpy_threads(void* dst, const void* src, std::size_t bytes, int threads);
/// dst[0..n) = src[0..n) with streaming (non-temporal) stores, one chunk of whole lines per
/// thread: a copy that does not read the destination for ownership (glibc's memcpy streams
/// only beyond a size its chunks here may not reach). Each line goes out in the widest store
/// the CPU has (one AVX-512 store, two AVX ones, else four SSE2 ones): on Zen 5 a 200 MiB copy
/// took 4.3 ms with one store a line against 4.8-5.2 ms with SSE2's four.
void stream_bytes_threads(void* dst, const void* src, std::size_t bytes, int threads);
void stream_copy_threads(float* dst, const float* src, std::size_t n, int threads);
/// The sum of n floats, read once (vectorized, one chunk per thread).
float read_sum(const float* p, std::size_t n, int threads);
/// p[0..n) = value with ordinary vector stores, one chunk per thread.
void fill_stores(float* p, std::size_t n, float value, int threads);
/// memset of the same bytes (glibc streams large ones), one chunk per thread.
void fill_memset(void* p, std::size_t bytes, int threads);

/// Row-major c[m,n] = a[m,k] b[k,n], with leading dimensions, through Eigen's own GEMM
/// (Eigen's threads as set_threads left them).
void gemm_eigen(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
                std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed);
/// The same through OpenBLAS's sgemm (its own threads); false when the bench was built
/// without OpenBLAS.
bool gemm_openblas(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
                   std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed);
bool have_openblas();
/// Sets OpenBLAS's own thread count (no-op without OpenBLAS).
void set_openblas_threads(int threads);

}  // namespace bench
