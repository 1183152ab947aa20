// The CPU's f32 FMA peak, measured: independent chains of fused multiply-adds on registers
// (no memory traffic), one chain set per thread. The 'cpu' device's peak in
// codegen/device_specs.cpp is computed from the clock the guest reports; a host that boosts
// past it runs faster, and this row says by how much. GEMM rows are read against it too.
#include <omp.h>

#include <cstdint>

#include "bench.hpp"

namespace bench {
namespace {

// 64 bytes of floats: one AVX-512 register under -march=native on Zen 4 / Cascade Lake,
// two AVX2 registers elsewhere (GCC splits the vector; the count of FMAs is the same).
typedef float v16 __attribute__((vector_size(64)));

constexpr int chains = 12;                // enough independent FMAs to cover the latency
constexpr std::int64_t steps = 1 << 16;   // per call and thread
constexpr double flops_per_thread = 2.0 * 16 * chains * steps;

float fma_chains(float seed) {
  v16 acc[chains];
  for (int c = 0; c < chains; ++c) acc[c] = v16{} + (seed + static_cast<float>(c));
  const v16 mul = v16{} + 0.999999f, add = v16{} + 1e-7f;
  for (std::int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (int c = 0; c < chains; ++c) acc[c] = acc[c] * mul + add;  // contracts to one FMA
  }
  v16 sum = acc[0];
  for (int c = 1; c < chains; ++c) sum += acc[c];
  float out = 0;
  for (int i = 0; i < 16; ++i) out += sum[i];
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
