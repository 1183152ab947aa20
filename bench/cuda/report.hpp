#pragma once
// What bench_cuda prints: the device and its measured ceilings, then one row per einexpr
// form and baseline of each workload, as a Markdown table (to paste into bench/RESULTS.md)
// and, with --json, as a JSON file.
#include <string>
#include <vector>

#include "checks.hpp"

namespace einexpr::bench {

/// The machine, as found.
struct DeviceInfo {
  std::string name;            // cudaDeviceProp::name
  std::string spec;            // the DeviceSpec the promised numbers come from
  int compute_capability = 0;  // 90 for H100 / H200
  int multiprocessors = 0;
  double memory_bytes = 0;
  double l2_bytes = 0;
  int driver_version = 0, runtime_version = 0;
  std::string blas;   // the raw cuBLAS handle's description
  bool tf32 = false;  // EINEXPR_TF32=1: f32 GEMMs on tensor cores
  bool quick = false;
};

/// The limits measured on the machine itself before any workload (METHOD.md), beside the
/// device table's promised numbers.
struct Ceilings {
  double copy_bytes = 0;  // bytes one cudaMemcpyAsync D2D copied
  double copy_ms = 0;
  double copy_bytes_per_s = 0;  // (read + written) / median
  double promised_bandwidth = 0;
  int gemm_n = 0;                                // n of the n^3 GEMMs
  double bf16_flops_per_s = 0;                   // raw cuBLAS (default settings)
  double bf16_einexpr_settings_flops_per_s = 0;  // the same with einexpr's handle settings
  double f32_flops_per_s = 0;                    // raw cuBLAS, einexpr's f32 compute type
  double promised_bf16 = 0, promised_f32 = 0;
};

struct Row {
  std::string workload;  // the pattern
  std::string sizes;     // "B=16384 D=32768 K=8192"
  std::string dtype;
  std::string form;                                // "into" (preallocated output) or "fresh" (new output)
  std::string baseline;                            // "cuBLAS", "memcpy D2D", "memset"
  bool primary = true;                             // the baseline the target is judged against
  double einexpr_ms = 0, baseline_ms = 0;          // medians over both timing rounds
  double einexpr_spread = 0, baseline_spread = 0;  // |round 1 - round 2| / the smaller median
  int einexpr_repeats = 0, baseline_repeats = 0;
  double ratio = 0;                         // baseline_ms / einexpr_ms (both do the same work)
  double flops = 0;                         // cost(plan).flops
  double bytes = 0;                         // cost(plan) ideal bytes: inputs read once, output written once
  double planned_bytes = 0;                 // cost(plan).bytes_planned: what the plan's steps move
  double flops_per_s = 0, bytes_per_s = 0;  // achieved by einexpr
  double mfu = 0;                           // flops_per_s / promised peak
  double of_blas = 0;                       // flops_per_s / measured cuBLAS n^3 rate of the dtype
  double of_bandwidth = 0;                  // bytes_per_s / promised bandwidth
  double of_copy = 0;                       // bytes_per_s / measured D2D copy rate
  double floor_ms = 0;                      // predicted: max(flops / peak, bytes / bandwidth), promised numbers
  std::string bound;                        // "compute" or "memory", of that floor
  std::string target;                       // the target for this row ("" when none)
  int met = -1;                             // 1 met, 0 missed, -1 not judged (quick mode, secondary rows)
};

void print_device(const DeviceInfo& device);
void print_ceilings(const Ceilings& ceilings, const DeviceInfo& device);
/// The Markdown table, then how many targets were met.
void print_table(const std::vector<Row>& rows, const DeviceInfo& device);
/// Everything above plus each check, as JSON; throws Error when the file cannot be written.
void write_json(const std::string& path, const DeviceInfo& device, const Ceilings& ceilings,
                const std::vector<Row>& rows, const std::vector<Check>& checks);

}  // namespace einexpr::bench
