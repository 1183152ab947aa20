#include "ceilings.hpp"

#include "random_fill.hpp"

namespace einexpr::bench {

namespace {

/// FLOP/s of blas.gemm on random n x n matrices of `dtype` (median of env.timing's samples).
double gemm_rate(Env& env, const DirectBlas& blas, std::int64_t n, DType dtype) {
  const Tensor a = random_gpu({n, n}, dtype, env.next_seed(), env.device);
  const Tensor b = random_gpu({n, n}, dtype, env.next_seed(), env.device);
  Tensor c = Tensor::empty({n, n}, dtype, env.gpu());
  const double ms = median(env.timer->time_ms([&] { blas.gemm(a, b, c); }, env.timing));
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / (ms * 1e-3);
}

}  // namespace

Ceilings measure_ceilings(Env& env, const DirectBlas& raw, const DirectBlas& einexpr_settings) {
  Ceilings c;
  c.promised_bandwidth = env.spec->bandwidth;
  c.promised_bf16 = promised_peak(env, DType::bf16);
  c.promised_f32 = promised_peak(env, DType::f32);
  const std::size_t bytes = env.quick ? std::size_t{16} << 20 : std::size_t{2} << 30;
  {
    Tensor src = scratch_bytes(env, bytes), dst = scratch_bytes(env, bytes);
    c.copy_bytes = static_cast<double>(bytes);
    c.copy_ms = median(env.timer->time_ms([&] { copy_d2d(dst, src, bytes); }, env.timing));
    c.copy_bytes_per_s = 2 * c.copy_bytes / (c.copy_ms * 1e-3);
  }
  c.gemm_n = env.quick ? 256 : 8192;
  c.bf16_flops_per_s = gemm_rate(env, raw, c.gemm_n, DType::bf16);
  c.bf16_einexpr_settings_flops_per_s = gemm_rate(env, einexpr_settings, c.gemm_n, DType::bf16);
  c.f32_flops_per_s = gemm_rate(env, raw, c.gemm_n, DType::f32);
  return c;
}

}  // namespace einexpr::bench
