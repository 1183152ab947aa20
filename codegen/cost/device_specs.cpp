// The device table: promised dense peak FLOP/s per dtype and memory bandwidth, each
// device with the source of its numbers; user devices come from JSON files
// ($EINEXPR_DEVICES, load_device_file). codegen/cost/devices.json is the same table of GPUs
// in the file format, as documentation and as an example (a test keeps the two equal). The
// 'cpu' entry is measured on the machine that runs (cpu_device.cpp), on first use.
//
// GPU figures are the vendors' datasheets. NVIDIA lists tensor-core figures "with
// sparsity" (2:4 structured); the table holds the dense ones, half of those. Where a
// datasheet gives an FP64 Tensor Core figure, "f64" is that one (what a GEMM reaches).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <mutex>

#include "cost/cpu_device.hpp"
#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

std::vector<DeviceSpec> builtin_devices() {
  const std::map<std::string, double> hopper = {{"f64", 67e12},    {"f32", 67e12},    {"tf32", 494.5e12},
                                                {"bf16", 989.5e12}, {"f16", 989.5e12}, {"fp8", 1979e12}};
  return {
      {"h100", "NVIDIA H100 SXM5 80 GB", hopper, 3.35e12,
       "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column: FP64 Tensor Core 67 TFLOPS, FP32 67, "
       "TF32 989, BF16 1979, FP16 1979, FP8 3958 TFLOPS with sparsity (dense: half), GPU memory bandwidth "
       "3.35 TB/s, GPU memory 80 GB. The seeds use 1979e12 / 2 and 3.35e12 (accelerator intensity 295.37).",
       80e9},
      {"h200", "NVIDIA H200 SXM 141 GB", hopper, 4.8e12,
       "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column: the H100 SXM's compute (FP64 Tensor Core 67 "
       "TFLOPS, FP32 67, TF32 989, BF16 1979, FP16 1979, FP8 3958 TFLOPS with sparsity; dense: half), "
       "GPU memory 141 GB at 4.8 TB/s.",
       141e9},
      {"a100", "NVIDIA A100 SXM4 80 GB",
       {{"f64", 19.5e12}, {"f32", 19.5e12}, {"tf32", 156e12}, {"bf16", 312e12}, {"f16", 312e12}}, 2.039e12,
       "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM column: FP64 Tensor Core 19.5 TFLOPS, FP32 19.5, "
       "TF32 156, BF16 312, FP16 312 TFLOPS dense (312 / 624 / 624 with sparsity), GPU memory bandwidth "
       "2,039 GB/s, GPU memory 80 GB HBM2e. No FP8.",
       80e9},
      {"t4", "NVIDIA T4 16 GB", {{"f32", 8.1e12}, {"f16", 65e12}}, 320e9,
       "NVIDIA T4 Tensor Core GPU datasheet: single precision 8.1 TFLOPS, mixed precision (FP16/FP32) "
       "65 TFLOPS, GPU memory 16 GB GDDR6 at 320 GB/s. It lists no FP64, BF16 or FP8 figure (Turing has no BF16 "
       "tensor cores). The seeds' notebook promises 8e12 FLOP/s for it.",
       16e9},
      {"b200", "NVIDIA B200 (HGX B200, 180 GB, 1000 W)",
       {{"f64", 37e12}, {"f32", 75e12}, {"tf32", 1.1e15}, {"bf16", 2.25e15}, {"f16", 2.25e15}, {"fp8", 4.5e15}},
       7.7e12,
       "NVIDIA GB200 NVL72 datasheet, HGX B200 column, per GPU: FP64/FP64 Tensor Core 37 TFLOPS, FP32 75 "
       "TFLOPS, TF32 2.2, FP16/BF16 4.5, FP8 9 PFLOPS with sparsity (dense: half), 180 GB HBM3E at 7.7 TB/s.",
       180e9},
  };
}

std::mutex registry_mutex;
bool registry_ready = false;
bool cpu_ready = false;       // the 'cpu' entry was looked up (or a file defined one)
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
    if (lower(d.name) == "cpu") cpu_ready = true;  // a file's cpu entry wins over measuring
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

// Adds the measured (or cached) 'cpu' entry unless there is one. The caller holds
// registry_mutex.
void ensure_cpu() {
  if (cpu_ready) return;
  merge({cpu_calibration().device});
}

}  // namespace

CpuCalibration calibrate_cpu() {
  CpuCalibration c = detail::measure_cpu();
  const std::lock_guard lock(registry_mutex);
  ensure_ready();
  merge({c.device});
  return c;
}

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
  ensure_cpu();
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
  if (lower(name) == "cpu") ensure_cpu();
  for (const DeviceSpec& d : registry())
    if (lower(d.name) == lower(name)) return d;
  std::string known;
  for (const DeviceSpec& d : registry()) known += (known.empty() ? "" : ", ") + d.name;
  if (!cpu_ready) known += ", cpu";
  throw Error("unknown device '" + std::string(name) + "' (known devices: " + known + ")");
}

}  // namespace einexpr
