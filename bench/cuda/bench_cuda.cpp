// bench_cuda: the GPU benchmarks of issue 6 (bench/cuda/README.md says what each measures).
//
//   bench_cuda [--quick] [--json FILE] [--spec h100|h200|...] [--only TEXT]
//
// Exits 77 ("[SKIP]") when no CUDA GPU is visible; 1 when a check failed or a workload threw;
// 2 on bad arguments; else 0. Targets missed are reported, never an exit status: timings are
// measured, not asserted.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "ceilings.hpp"
#include "cuda_check.hpp"
#include "direct.hpp"
#include "einexpr/config.hpp"
#include "einexpr/einexpr.hpp"
#include "gpu_timer.hpp"
#include "report.hpp"
#include "workload.hpp"
#include "workloads.hpp"

using namespace einexpr;
using namespace einexpr::bench;

namespace {

struct Args {
  bool quick = false;
  std::string json;
  std::string spec;  // "" = from the GPU's name
  std::string only;  // run only workloads whose name contains this
};

constexpr const char* usage =
    "usage: bench_cuda [--quick] [--json FILE] [--spec NAME] [--only TEXT]\n"
    "  The GPU benchmarks of issue 6 (bench/cuda/README.md); exit 77 where no GPU is visible.\n"
    "  --quick      tiny sizes, correctness checks, no targets (the ctest entry)\n"
    "  --json FILE  also write the device, ceilings, rows and checks as JSON\n"
    "  --spec NAME  the device table entry for promised numbers (default: from the GPU's name)\n"
    "  --only TEXT  run only the workloads whose name contains TEXT (gemm-bf16, gemm-f32,\n"
    "               gemm-bf16-cube, scores, permute-bchw, permute-bhsd, reduce, repeat, a pattern)\n";

std::optional<Args> parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", usage);
      std::exit(0);
    } else if (arg == "--quick") {
      a.quick = true;
    } else if (arg == "--json" && has_value) {
      a.json = argv[++i];
    } else if (arg == "--spec" && has_value) {
      a.spec = argv[++i];
    } else if (arg == "--only" && has_value) {
      a.only = argv[++i];
    } else {
      std::fprintf(stderr, "bench_cuda: unexpected argument '%s'\n%s", arg.c_str(), usage);
      return std::nullopt;
    }
  }
  return a;
}

/// The device table entry named by the GPU, "" when the name says nothing we know.
std::string spec_from_name(std::string gpu) {
  for (char& ch : gpu) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (const char* known : {"H200", "H100", "A100", "B200"})
    if (gpu.find(known) != std::string::npos) {
      std::string spec = known;
      spec[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(spec[0])));
      return spec;
    }
  return "";
}

DeviceInfo device_info(int device, bool quick) {
  cudaDeviceProp p{};
  EINEXPR_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceInfo d;
  d.name = p.name;
  d.compute_capability = p.major * 10 + p.minor;
  d.multiprocessors = p.multiProcessorCount;
  d.memory_bytes = static_cast<double>(p.totalGlobalMem);
  d.l2_bytes = static_cast<double>(p.l2CacheSize);
  EINEXPR_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  EINEXPR_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  d.tf32 = f32_is_tf32();
  d.quick = quick;
  return d;
}

/// The promised numbers' entry: --spec, else the GPU's name; --quick falls back to h100.
std::string choose_spec(const Args& args, const DeviceInfo& d) {
  if (!args.spec.empty()) return args.spec;
  std::string spec = spec_from_name(d.name);
  if (spec.empty() && args.quick) {
    std::printf("note: no device table entry is named in '%s'; --quick uses h100's numbers\n", d.name.c_str());
    spec = "h100";
  }
  if (spec.empty()) throw Error("cannot tell which promised numbers apply to '" + d.name + "': pass --spec NAME");
  if (d.name.find("PCIe") != std::string::npos || d.name.find("NVL") != std::string::npos)
    std::printf(
        "note: '%s' is not the SXM part that the '%s' entry describes; MFU and floors use the SXM's numbers "
        "(pass --spec, or a device file in $EINEXPR_DEVICES, for this part's)\n",
        d.name.c_str(), spec.c_str());
  return spec;
}

/// Runs each selected workload; a workload that throws is reported and the rest still run.
bool run_workloads(Env& env, const Args& args, std::vector<Row>& rows) {
  bool ok = true;
  for (const Workload& w : workloads(args.quick)) {
    if (!args.only.empty() && w.name.find(args.only) == std::string::npos) continue;
    const std::size_t checks_before = env.checks.size();
    try {
      const std::vector<Row> got = w.run(env);
      for (std::size_t i = checks_before; i < env.checks.size(); ++i) ok &= env.checks[i].ok();
      if (got.empty()) std::printf("  [FAIL] a check failed: %s was not timed\n", w.name.c_str());
      rows.insert(rows.end(), got.begin(), got.end());
    } catch (const std::exception& e) {
      std::printf("  [ERROR] %s: %s\n", w.name.c_str(), e.what());
      ok = false;
    }
    env.current.clear();
    allocator_for(env.gpu()).release_cached();  // the next workload starts with the GPU's memory free
    std::fflush(stdout);
  }
  return ok;
}

int run(const Args& args) {
  Env env;
  env.quick = args.quick;
  env.tf32 = f32_is_tf32();
  if (args.quick) env.timing = TimingOptions{1, 2, 2, 0.0};
  DeviceInfo device = device_info(env.device, args.quick);
  device.spec = choose_spec(args, device);
  env.spec = &find_device(device.spec);
  const GpuTimer timer(env.device);
  const DirectBlas raw(env.device, BlasSettings::raw), settings(env.device, BlasSettings::einexpr);
  env.timer = &timer;
  env.blas = &raw;
  device.blas = raw.describe();
  print_device(device);
  env.ceilings = measure_ceilings(env, raw, settings);
  allocator_for(env.gpu()).release_cached();
  print_ceilings(env.ceilings, device);
  std::vector<Row> rows;
  const bool ok = run_workloads(env, args, rows);
  print_table(rows, device);
  int failed = 0;
  for (const Check& c : env.checks) failed += c.ok() ? 0 : 1;
  std::printf("checks: %zu made, %d failed%s\n", env.checks.size(), failed, ok ? "" : "; a workload failed");
  if (!args.json.empty()) {
    write_json(args.json, device, env.ceilings, rows, env.checks);
    std::printf("wrote %s\n", args.json.c_str());
  }
  std::printf(args.quick ? "\n--quick: correctness only; run without --quick for the measurements.\n"
                         : "\nPaste the table above into bench/RESULTS.md under the GPU's name (%s), beside "
                           "bench/cuda/README.md's predictions.\n",
              device.name.c_str());
  return ok && failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Args> args = parse_args(argc, argv);
  if (!args) return 2;
  if (!has_cuda) {
    std::printf("[SKIP] einexpr was built without CUDA\n");
    return 77;
  }
  if (cuda_device_count() == 0) {
    std::printf("[SKIP] no CUDA GPU is visible\n");
    return 77;
  }
  try {
    return run(*args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda: %s\n", e.what());
    return 1;
  }
}
