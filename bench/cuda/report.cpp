#include "report.hpp"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "einexpr/runtime/error.hpp"

namespace einexpr::bench {

namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// "-" where a figure does not apply (no FLOPs, no measured ceiling).
std::string fmt_or_dash(const char* format, double v) { return v > 0 ? fmt(format, v) : "-"; }

std::string met_text(int met) { return met < 0 ? "-" : met ? "yes" : "**no**"; }

}  // namespace

void print_device(const DeviceInfo& d) {
  std::printf("device: %s (compute capability %d.%d, %d SMs, %.1f GiB, L2 %.0f MiB)\n", d.name.c_str(),
              d.compute_capability / 10, d.compute_capability % 10, d.multiprocessors, d.memory_bytes / (1 << 30),
              d.l2_bytes / (1 << 20));
  std::printf("driver %d, runtime %d, %s\n", d.driver_version, d.runtime_version, d.blas.c_str());
  std::printf("promised numbers from einexpr's device table: '%s'; f32 GEMMs %s\n", d.spec.c_str(),
              d.tf32 ? "as TF32 (EINEXPR_TF32=1)" : "in full f32 (CUBLAS_COMPUTE_32F)");
  if (d.quick) std::printf("--quick: tiny sizes, correctness only; the timings below mean nothing\n");
}

void print_ceilings(const Ceilings& c, const DeviceInfo& d) {
  std::printf("\nceilings measured here (median):\n");
  std::printf(
      "  cudaMemcpyAsync D2D of %.0f MiB: %.3f ms, %.0f GB/s (read + written), %.2f of the promised %.0f GB/s\n",
      c.copy_bytes / (1 << 20), c.copy_ms, c.copy_bytes_per_s / 1e9, c.copy_bytes_per_s / c.promised_bandwidth,
      c.promised_bandwidth / 1e9);
  std::printf(
      "  cuBLAS bf16 %d^3 (cublasGemmEx, CUBLAS_COMPUTE_32F): %.1f TFLOP/s raw, %.1f with einexpr's handle "
      "settings; %.2f of the promised %.1f\n",
      c.gemm_n, c.bf16_flops_per_s / 1e12, c.bf16_einexpr_settings_flops_per_s / 1e12,
      c.bf16_flops_per_s / c.promised_bf16, c.promised_bf16 / 1e12);
  std::printf("  cuBLAS f32 %d^3 (%s): %.1f TFLOP/s, %.2f of the promised %.1f\n", c.gemm_n,
              d.tf32 ? "TF32" : "CUBLAS_COMPUTE_32F", c.f32_flops_per_s / 1e12, c.f32_flops_per_s / c.promised_f32,
              c.promised_f32 / 1e12);
}

void print_table(const std::vector<Row>& rows, const DeviceInfo& d) {
  std::printf("\n### bench_cuda on %s%s\n\n", d.name.c_str(), d.quick ? " (--quick: not a measurement)" : "");
  std::printf(
      "| workload | sizes | dtype | form | einexpr ms | ± | baseline | baseline ms | ± | ratio | TFLOP/s | MFU "
      "| of cuBLAS | GB/s | of D2D | floor ms | gap | target | met |\n");
  std::printf("|---|---|---|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n");
  int judged = 0, met = 0;
  for (const Row& r : rows) {
    std::printf("| `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                r.workload.c_str(), r.sizes.c_str(), r.dtype.c_str(), r.form.c_str(), fmt("%.4g", r.einexpr_ms).c_str(),
                fmt("%.1f%%", 100 * r.einexpr_spread).c_str(), r.baseline.c_str(), fmt("%.4g", r.baseline_ms).c_str(),
                fmt("%.1f%%", 100 * r.baseline_spread).c_str(), fmt("%.3f", r.ratio).c_str(),
                fmt_or_dash("%.1f", r.flops_per_s / 1e12).c_str(), fmt_or_dash("%.3f", r.mfu).c_str(),
                fmt_or_dash("%.3f", r.of_blas).c_str(), fmt("%.0f", r.bytes_per_s / 1e9).c_str(),
                fmt_or_dash("%.3f", r.of_copy).c_str(), fmt("%.4g", r.floor_ms).c_str(),
                fmt("%.2f", r.einexpr_ms / r.floor_ms).c_str(), r.target.empty() ? "-" : r.target.c_str(),
                met_text(r.met).c_str());
    if (r.met >= 0) {
      ++judged;
      met += r.met;
    }
  }
  std::printf(
      "\nratio = baseline ms / einexpr ms (the same work). ± = |median of timing round 1 - round 2| / the "
      "smaller. MFU against the promised peak; 'of cuBLAS' against the cuBLAS %s rate measured above; "
      "'of D2D' against the measured copy rate. floor = max(FLOPs / promised peak, ideal bytes / promised "
      "bandwidth); gap = einexpr ms / floor ms.\n",
      "n^3");
  if (d.quick)
    std::printf("targets: not judged (--quick)\n");
  else
    std::printf("targets met: %d of %d\n", met, judged);
}

namespace {

nlohmann::json row_json(const Row& r) {
  return {{"workload", r.workload},
          {"sizes", r.sizes},
          {"dtype", r.dtype},
          {"form", r.form},
          {"baseline", r.baseline},
          {"primary", r.primary},
          {"einexpr_ms", r.einexpr_ms},
          {"einexpr_spread", r.einexpr_spread},
          {"einexpr_repeats", r.einexpr_repeats},
          {"baseline_ms", r.baseline_ms},
          {"baseline_spread", r.baseline_spread},
          {"baseline_repeats", r.baseline_repeats},
          {"ratio", r.ratio},
          {"flops", r.flops},
          {"bytes", r.bytes},
          {"planned_bytes", r.planned_bytes},
          {"flops_per_s", r.flops_per_s},
          {"bytes_per_s", r.bytes_per_s},
          {"mfu", r.mfu},
          {"of_measured_blas", r.of_blas},
          {"of_promised_bandwidth", r.of_bandwidth},
          {"of_measured_copy", r.of_copy},
          {"floor_ms", r.floor_ms},
          {"bound", r.bound},
          {"target", r.target},
          {"met", r.met < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.met == 1)}};
}

}  // namespace

void write_json(const std::string& path, const DeviceInfo& d, const Ceilings& c, const std::vector<Row>& rows,
                const std::vector<Check>& checks) {
  nlohmann::json j;
  j["device"] = {{"name", d.name},
                 {"spec", d.spec},
                 {"compute_capability", d.compute_capability},
                 {"multiprocessors", d.multiprocessors},
                 {"memory_bytes", d.memory_bytes},
                 {"l2_bytes", d.l2_bytes},
                 {"driver_version", d.driver_version},
                 {"runtime_version", d.runtime_version},
                 {"blas", d.blas},
                 {"tf32", d.tf32},
                 {"quick", d.quick}};
  j["ceilings"] = {{"copy_bytes", c.copy_bytes},
                   {"copy_ms", c.copy_ms},
                   {"copy_bytes_per_s", c.copy_bytes_per_s},
                   {"promised_bandwidth", c.promised_bandwidth},
                   {"gemm_n", c.gemm_n},
                   {"bf16_flops_per_s", c.bf16_flops_per_s},
                   {"bf16_einexpr_settings_flops_per_s", c.bf16_einexpr_settings_flops_per_s},
                   {"f32_flops_per_s", c.f32_flops_per_s},
                   {"promised_bf16", c.promised_bf16},
                   {"promised_f32", c.promised_f32}};
  j["rows"] = nlohmann::json::array();
  for (const Row& r : rows) j["rows"].push_back(row_json(r));
  j["checks"] = nlohmann::json::array();
  for (const Check& k : checks)
    j["checks"].push_back({{"what", k.what}, {"error", k.error}, {"tolerance", k.tolerance}, {"ok", k.ok()}});
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  if (!out) throw Error("bench_cuda: could not write " + path);
}

}  // namespace einexpr::bench
