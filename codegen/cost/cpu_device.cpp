// The 'cpu' device measured where it runs (cost.hpp's cpu_calibration): FMA peaks from
// chains of fused multiply-adds on registers with the CPU's widest vectors (vec_math.hpp's
// probes, the same instruction set the kernels use), one chain set per OpenMP thread;
// copy bandwidth from memcpy of 64 MiB split over the threads, (bytes read + bytes
// written) / time. Each figure is the fastest of up to 15 runs after a warm-up, for at most
// 0.15 s each: other work on the machine only slows a run, so the fastest is the closest to
// what the hardware does (on a loaded machine, measure again when it is quiet:
// `einexpr devices --calibrate`). About 0.1-0.5 s in all, once: the result is cached per
// CPU model, thread count and instruction set in $XDG_CACHE_HOME/einexpr/cpu_device.json.
// The one parallel region einexpr runs on OpenMP rather than its own pool (parallel.hpp): a
// peak is `threads` threads working at the same moment, which OpenMP's team guarantees and
// the pool (where the caller may run every piece) does not; it runs once, not per op.
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cost/cpu_device.hpp"
#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/threads.hpp"
#include "einexpr/codegen/lower.hpp"

namespace einexpr {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int cache_version = 1;
constexpr int min_repeats = 3, max_repeats = 15;
constexpr double budget_s = 0.15;  // per figure, after min_repeats
constexpr std::int64_t fma_steps = std::int64_t{1} << 20;
constexpr std::size_t copy_bytes = std::size_t{64} << 20;

/// "AMD EPYC (family 25, model 1)": /proc/cpuinfo's first model name, family and model.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, family, number;
  auto value = [](const std::string& l) {
    const std::size_t colon = l.find(':');
    return colon == std::string::npos ? std::string() : l.substr(l.find_first_not_of(" \t", colon + 1));
  };
  while (std::getline(in, line) && (model.empty() || family.empty() || number.empty())) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = value(line);
    else if (family.empty() && line.rfind("cpu family", 0) == 0) family = value(line);
    else if (number.empty() && line.rfind("model\t", 0) == 0) number = value(line);
  }
  if (model.empty()) return "unknown CPU";
  if (!family.empty() && !number.empty()) model += " (family " + family + ", model " + number + ")";
  return model;
}

/// The fastest run of f, in seconds (after one warm-up): at least min_repeats runs, then
/// more while the budget lasts, at most max_repeats.
template <class F>
double best_time(F&& f) {
  f();
  double best = 1e30;
  const auto begin = Clock::now();
  for (int r = 0; r < max_repeats; ++r) {
    const auto start = Clock::now();
    f();
    const auto end = Clock::now();
    best = std::min(best, std::chrono::duration<double>(end - start).count());
    if (r + 1 >= min_repeats && std::chrono::duration<double>(end - begin).count() > budget_s) break;
  }
  return best;
}

double fma_peak(bool f64, int threads) {
  volatile double sink = 0;
  double flops = 0;
  const double seconds = best_time([&] {
    double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const CpuFmaRun r = cpu_fma_run(f64, fma_steps);
      total += r.sum;
      if (omp_get_thread_num() == 0) flops = r.flops;
    }
    sink = total;
  });
  return flops * threads / seconds;
}

double copy_bandwidth(int threads) {
  const std::unique_ptr<char[]> src(new char[copy_bytes]), dst(new char[copy_bytes]);
  auto each_chunk = [&](auto&& f) {
#pragma omp parallel num_threads(threads)
    {
      const std::size_t t = static_cast<std::size_t>(omp_get_thread_num()), n = static_cast<std::size_t>(threads);
      const std::size_t begin = copy_bytes * t / n, end = copy_bytes * (t + 1) / n;
      f(begin, end - begin);
    }
  };
  each_chunk([&](std::size_t b, std::size_t n) {  // first touch on the thread that copies
    std::memset(src.get() + b, 1, n);
    std::memset(dst.get() + b, 0, n);
  });
  const auto copy = [&](std::size_t b, std::size_t n) { std::memcpy(dst.get() + b, src.get() + b, n); };
  const double seconds = best_time([&] { each_chunk(copy); });
  return 2.0 * static_cast<double>(copy_bytes) / seconds;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

CpuCalibration measure(const std::string& model, int threads) {
  // f32's vectors hold twice f64's lanes at the same FMA rate, so f32 below f64 means a
  // neighbour took the cores during the f32 runs: measure both again (at most twice more)
  double f32 = fma_peak(false, threads), f64 = fma_peak(true, threads);
  for (int retry = 0; retry < 2 && f32 < f64; ++retry) {
    f32 = std::max(f32, fma_peak(false, threads));
    f64 = std::max(f64, fma_peak(true, threads));
  }
  const double bandwidth = copy_bandwidth(threads);
  CpuCalibration c;
  c.cpu_model = model;
  c.threads = threads;
  c.isa = cpu_isa();
  c.measured = true;
  DeviceSpec& d = c.device;
  d.name = "cpu";
  d.description = model + ", " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + " (measured)";
  d.peak_flops = {{"f64", f64}, {"f32", f32}, {"bf16", f32}, {"f16", f32}, {"fp8", f32}};
  d.bandwidth = bandwidth;
  d.source = "Measured by einexpr on " + utc_now() + " (codegen/cost/cpu_device.cpp), the fastest of up to " +
             std::to_string(max_repeats) + " runs on " + std::to_string(threads) +
             " thread(s): FMA chains on " + c.isa + " registers, " + fixed(f32 / 1e9, 1) + " GFLOP/s f32 and " +
             fixed(f64 / 1e9, 1) + " f64 (bf16, f16 and fp8 compute in f32 and get its rate); memcpy of 64 MiB, " +
             "(bytes read + written) / time, " + fixed(bandwidth / 1e9, 1) +
             " GB/s. 'einexpr devices --calibrate' measures again.";
  return c;
}

json to_json(const CpuCalibration& c) {
  json peaks = json::object();
  for (const auto& [key, peak] : c.device.peak_flops) peaks[key] = peak;
  return {{"version", cache_version}, {"cpu_model", c.cpu_model}, {"threads", c.threads}, {"isa", c.isa},
          {"device",
           {{"name", c.device.name}, {"description", c.device.description}, {"peak_flops", peaks},
            {"bandwidth", c.device.bandwidth}, {"source", c.device.source}}}};
}

/// The cache file's entry, or nothing when it is missing, unreadable, malformed or for
/// another CPU, thread count or instruction set.
std::optional<CpuCalibration> read_cache(const std::string& path, const std::string& model, int threads) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const json j = json::parse(in);
    if (j.at("version") != cache_version || j.at("cpu_model") != model || j.at("threads") != threads ||
        j.at("isa") != cpu_isa())
      return std::nullopt;
    const json& d = j.at("device");
    CpuCalibration c;
    c.cpu_model = model;
    c.threads = threads;
    c.isa = j.at("isa").get<std::string>();
    c.cache_path = path;
    c.device.name = "cpu";
    c.device.description = d.at("description").get<std::string>();
    c.device.source = d.at("source").get<std::string>();
    c.device.bandwidth = d.at("bandwidth").get<double>();
    for (const auto& [key, peak] : d.at("peak_flops").items()) c.device.peak_flops[key] = peak.get<double>();
    const bool sane = c.device.bandwidth > 0 && c.device.peak_flops.count("f32") && c.device.peak_flops.count("f64") &&
                      std::all_of(c.device.peak_flops.begin(), c.device.peak_flops.end(),
                                  [](const auto& kv) { return kv.second > 0; });
    if (!sane) return std::nullopt;
    return c;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

/// Writes the cache through a temporary file and a rename; a cache that cannot be written
/// (no home, a read-only disk) is skipped: the measurement still counts.
void write_cache(CpuCalibration& c, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return;
    out << to_json(c).dump(2) << '\n';
    if (!out) return;
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
  else c.cache_path = path;
}

/// The 'cpu' entry of the device file $EINEXPR_CPU_DEVICE names (its only entry, or the one
/// named cpu).
CpuCalibration from_fixed_file(const std::string& path) {
  const std::vector<DeviceSpec> devices = read_device_file(path);
  const DeviceSpec* d = devices.size() == 1 ? &devices[0] : nullptr;
  for (const DeviceSpec& e : devices)
    if (e.name == "cpu") d = &e;
  if (d == nullptr) throw Error("$EINEXPR_CPU_DEVICE: device file '" + path + "' has no entry named cpu");
  CpuCalibration c;
  c.device = *d;
  c.device.name = "cpu";
  c.cache_path = path;
  return c;
}

}  // namespace

std::string cpu_cache_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/') return std::string(xdg) + "/einexpr/cpu_device.json";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/einexpr/cpu_device.json";
  return "";
}

CpuCalibration cpu_calibration() {
  const char* fixed_file = std::getenv("EINEXPR_CPU_DEVICE");
  if (fixed_file != nullptr && *fixed_file != '\0') return from_fixed_file(fixed_file);
  const std::string model = cpu_model(), path = cpu_cache_path();
  const int threads = num_threads();
  if (!path.empty())
    if (std::optional<CpuCalibration> cached = read_cache(path, model, threads)) return *cached;
  CpuCalibration c = measure(model, threads);
  write_cache(c, path);
  return c;
}

CpuCalibration detail::measure_cpu() {
  CpuCalibration c = measure(cpu_model(), num_threads());
  write_cache(c, cpu_cache_path());
  return c;
}

}  // namespace einexpr
