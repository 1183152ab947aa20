// The device table: promised dense peak FLOP/s per dtype and memory bandwidth, each
// device with the source of its numbers; user devices come from JSON files
// ($EINEXPR_DEVICES, load_device_file). codegen/cost/devices.json is the same table in the
// file format, as documentation and as an example (a test keeps the two equal).
//
// GPU figures are the vendors' datasheets. NVIDIA lists tensor-core figures "with
// sparsity" (2:4 structured); the table holds the dense ones, half of those. Where a
// datasheet gives an FP64 Tensor Core figure, "f64" is that one (what a GEMM reaches).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <mutex>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

// 2 cores of the development machine: AMD EPYC, Zen 4 (family 25, model 17). Zen 4
// executes AVX-512 on two 256-bit FMA pipes: per cycle and core 2 pipes x 8 f32 lanes x
// 2 FLOPs (multiply-add) = 32 f32 FLOPs, 16 f64 FLOPs. The clock is the one that runs:
// /proc/cpuinfo says 2.596 GHz under KVM, but the host boosts, and bench/bench_fma.cpp
// measured 116.9 GFLOP/s f32 on one core and 231.1 on two (bench/RESULTS.md), 32 FLOPs a
// cycle at 3.61 GHz. With the nominal clock a GEMM measured at 207 GFLOP/s had an MFU of 1.25.
constexpr double cpu_cores = 2, cpu_hz = 3.61e9;
constexpr double cpu_f32 = cpu_cores * cpu_hz * 32;  // 231.0e9
constexpr double cpu_f64 = cpu_cores * cpu_hz * 16;  // 115.5e9

std::vector<DeviceSpec> builtin_devices() {
  const std::map<std::string, double> hopper = {{"f64", 67e12},    {"f32", 67e12},    {"tf32", 494.5e12},
                                                {"bf16", 989.5e12}, {"f16", 989.5e12}, {"fp8", 1979e12}};
  return {
      {"h100", "NVIDIA H100 SXM5 80 GB", hopper, 3.35e12,
       "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column: FP64 Tensor Core 67 TFLOPS, FP32 67, "
       "TF32 989, BF16 1979, FP16 1979, FP8 3958 TFLOPS with sparsity (dense: half), GPU memory bandwidth "
       "3.35 TB/s. The seeds use 1979e12 / 2 and 3.35e12 (accelerator intensity 295.37)."},
      {"h200", "NVIDIA H200 SXM 141 GB", hopper, 4.8e12,
       "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column: the H100 SXM's compute (FP64 Tensor Core 67 "
       "TFLOPS, FP32 67, TF32 989, BF16 1979, FP16 1979, FP8 3958 TFLOPS with sparsity; dense: half), "
       "GPU memory bandwidth 4.8 TB/s."},
      {"a100", "NVIDIA A100 SXM4 80 GB",
       {{"f64", 19.5e12}, {"f32", 19.5e12}, {"tf32", 156e12}, {"bf16", 312e12}, {"f16", 312e12}}, 2.039e12,
       "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM column: FP64 Tensor Core 19.5 TFLOPS, FP32 19.5, "
       "TF32 156, BF16 312, FP16 312 TFLOPS dense (312 / 624 / 624 with sparsity), GPU memory bandwidth "
       "2,039 GB/s. No FP8."},
      {"t4", "NVIDIA T4 16 GB", {{"f32", 8.1e12}, {"f16", 65e12}}, 320e9,
       "NVIDIA T4 Tensor Core GPU datasheet: single precision 8.1 TFLOPS, mixed precision (FP16/FP32) "
       "65 TFLOPS, GPU memory bandwidth 320 GB/s. It lists no FP64, BF16 or FP8 figure (Turing has no BF16 "
       "tensor cores). The seeds' notebook promises 8e12 FLOP/s for it."},
      {"b200", "NVIDIA B200 (HGX B200, 180 GB, 1000 W)",
       {{"f64", 37e12}, {"f32", 75e12}, {"tf32", 1.1e15}, {"bf16", 2.25e15}, {"f16", 2.25e15}, {"fp8", 4.5e15}},
       7.7e12,
       "NVIDIA GB200 NVL72 datasheet, HGX B200 column, per GPU: FP64/FP64 Tensor Core 37 TFLOPS, FP32 75 "
       "TFLOPS, TF32 2.2, FP16/BF16 4.5, FP8 9 PFLOPS with sparsity (dense: half), 180 GB HBM3E at 7.7 TB/s."},
      {"cpu", "2 cores of an AMD EPYC (Zen 4), this project's development machine",
       {{"f64", cpu_f64}, {"f32", cpu_f32}, {"bf16", cpu_f32}, {"f16", cpu_f32}, {"fp8", cpu_f32}}, 35.3e9,
       "Peak: 2 cores x 3.61 GHz x FLOPs per cycle; Zen 4 runs AVX-512 on two 256-bit FMA pipes: 32 f32 "
       "FLOPs/cycle/core (231.0 GFLOP/s), 16 f64 (115.5 GFLOP/s). The clock is measured, not the 2.596 GHz "
       "that /proc/cpuinfo shows the KVM guest: an FMA loop on registers (bench/bench_fma.cpp) ran at 231.1 "
       "GFLOP/s f32 on 2 threads, the host boosting. bf16, f16 and fp8 are computed in f32 on the CPU, so they get the f32 rate (Zen 4's "
       "AVX512_BF16 dot products, unused, would double bf16). Bandwidth measured: memcpy of 512 MiB split "
       "over 2 threads, (bytes read + bytes written) / time, median of 11 repeats; 7 runs gave 30.6-39.1 "
       "GB/s, median 35.3 GB/s, while other builds shared the machine."},
  };
}

std::mutex registry_mutex;
bool registry_ready = false;
std::string env_file_loaded;  // the $EINEXPR_DEVICES file last added

// The devices, in a deque so that find_device's references stay valid as files add more
// (a replaced device is assigned in place), and the same as a vector for device_specs().
std::deque<DeviceSpec>& registry() {
  static std::deque<DeviceSpec> devices;
  return devices;
}
std::vector<DeviceSpec>& registry_list() {
  static std::vector<DeviceSpec> list;
  return list;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Adds or replaces (by case-insensitive name). The caller holds registry_mutex.
void merge(std::vector<DeviceSpec> devices) {
  std::deque<DeviceSpec>& into = registry();
  for (DeviceSpec& d : devices) {
    auto same = [&](const DeviceSpec& e) { return lower(e.name) == lower(d.name); };
    if (auto it = std::find_if(into.begin(), into.end(), same); it != into.end())
      *it = std::move(d);
    else
      into.push_back(std::move(d));
  }
  registry_list().assign(into.begin(), into.end());
}

// Fills the registry on first use with the built-in table, then adds the file that
// $EINEXPR_DEVICES names (on first use, and again whenever it names another file). A bad
// file throws, and keeps throwing while the variable names it.
void ensure_ready() {
  if (!registry_ready) {
    merge(builtin_devices());
    registry_ready = true;
  }
  const char* path = std::getenv("EINEXPR_DEVICES");
  if (path == nullptr || *path == '\0' || env_file_loaded == path) return;
  merge(read_device_file(path));
  env_file_loaded = path;
}

}  // namespace

double DeviceSpec::peak_for(DType dtype) const {
  const std::string key =
      dtype == DType::f8_e4m3 || dtype == DType::f8_e5m2 ? std::string("fp8") : std::string(einexpr::name(dtype));
  if (auto it = peak_flops.find(key); it != peak_flops.end()) return it->second;
  std::string known;
  for (const auto& [k, v] : peak_flops) known += (known.empty() ? "" : ", ") + k;
  throw Error("device '" + this->name + "' has no peak FLOP/s for " + key + " (its table lists: " +
              (known.empty() ? "nothing" : known) + ")");
}

double DeviceSpec::accelerator_intensity(DType dtype) const {
  if (!(bandwidth > 0)) throw Error("device '" + name + "' has no memory bandwidth");
  return peak_for(dtype) / bandwidth;
}

const std::vector<DeviceSpec>& device_specs() {
  const std::lock_guard lock(registry_mutex);
  ensure_ready();
  return registry_list();
}

void load_device_file(const std::string& path) {
  std::vector<DeviceSpec> devices = read_device_file(path);
  const std::lock_guard lock(registry_mutex);
  ensure_ready();
  merge(std::move(devices));
}

const DeviceSpec& find_device(std::string_view name) {
  const std::lock_guard lock(registry_mutex);
  ensure_ready();
  for (const DeviceSpec& d : registry())
    if (lower(d.name) == lower(name)) return d;
  std::string known;
  for (const DeviceSpec& d : registry()) known += (known.empty() ? "" : ", ") + d.name;
  throw Error("unknown device '" + std::string(name) + "' (known devices: " + known + ")");
}

}  // namespace einexpr
