// The CPU's f32 FMA peak, measured: independent chains of fused multiply-adds on registers
// (no memory traffic), one chain set per thread. The 'cpu' device's peak in
// codegen/device_specs.cpp is computed from the clock the guest reports; a host that boosts
// past it runs faster, and this row says by how much. GEMM rows are read against it too.
#include <omp.h>

#include <cstdint>

#include "bench.hpp"

namespace bench {
namespace {

// One register of floats at the widest width the build targets (a wider generic vector is
// lowered by GCC through the stack: 7.8 GFLOP/s on a Zen 3 with AVX2, where 64-byte
// vectors were used), and enough independent FMAs to cover the latency (4-5 cycles on two
// pipes: 8-10 in flight) while the accumulators, mul and add stay in registers.
#if defined(__AVX512F__)
constexpr int lanes = 16;  // 12 of the 32 zmm registers
constexpr int chains = 12;
#elif defined(__AVX__)
constexpr int lanes = 8;  // 10 of the 16 ymm registers
constexpr int chains = 10;
#else
constexpr int lanes = 4;
constexpr int chains = 10;
#endif
typedef float vec __attribute__((vector_size(4 * lanes)));

constexpr std::int64_t steps = 1 << 16;   // per call and thread
constexpr double flops_per_thread = 2.0 * lanes * chains * steps;

float fma_chains(float seed) {
  vec acc[chains];
  for (int c = 0; c < chains; ++c) acc[c] = vec{} + (seed + static_cast<float>(c));
  const vec mul = vec{} + 0.999999f, add = vec{} + 1e-7f;
  for (std::int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (int c = 0; c < chains; ++c) acc[c] = acc[c] * mul + add;  // one FMA (-ffp-contract=fast)
  }
  vec sum = acc[0];
  for (int c = 1; c < chains; ++c) sum += acc[c];
  float out = 0;
  for (int i = 0; i < lanes; ++i) out += sum[i];
  return out;
}

}  // namespace

void register_fma() {
  for (int threads : {1, 2}) {
    add("fma peak f32 (registers only)", "fma", threads, {flops_per_thread * threads, 0, 0}, [](int t) {
      return [t] {
        float total = 0;
#pragma omp parallel num_threads(t) reduction(+ : total)
        total += fma_chains(static_cast<float>(omp_get_thread_num()));
        benchmark_keep(total);
      };
    });
  }
}

}  // namespace bench
