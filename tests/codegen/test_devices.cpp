// The device table: lookups, the JSON file format (good and bad files), $EINEXPR_DEVICES,
// and the 'cpu' device measured, cached, read back and measured again (in a scratch
// $XDG_CACHE_HOME; ctest gives every other test a fixed entry through $EINEXPR_CPU_DEVICE).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/threads.hpp"
#include "scratch_dir.hpp"

using namespace einexpr;

TEST_CASE("the device table: promised dense peaks per dtype and bandwidths", "[devices]") {
  struct Row {
    const char* device;
    DType dtype;
    double peak;
  };
  const Row rows[] = {
      {"h100", DType::bf16, 989.5e12},   {"h100", DType::f16, 989.5e12}, {"h100", DType::f32, 67e12},
      {"h100", DType::f8_e4m3, 1979e12}, {"h100", DType::f8_e5m2, 1979e12}, {"h100", DType::f64, 67e12},
      {"h200", DType::bf16, 989.5e12},   {"a100", DType::bf16, 312e12},  {"a100", DType::f32, 19.5e12},
      {"t4", DType::f32, 8.1e12},        {"t4", DType::f16, 65e12},      {"b200", DType::bf16, 2.25e15},
      {"b200", DType::f8_e4m3, 4.5e15},  {"cpu", DType::f32, 2 * 3.61e9 * 32}, {"cpu", DType::f64, 2 * 3.61e9 * 16},
  };
  for (const Row& r : rows) {
    CAPTURE(r.device, name(r.dtype));
    CHECK(find_device(r.device).peak_for(r.dtype) == r.peak);
  }
  CHECK(find_device("h100").bandwidth == 3.35e12);
  CHECK(find_device("h200").bandwidth == 4.8e12);
  CHECK(find_device("h100").accelerator_intensity(DType::bf16) == Approx(295.3731).epsilon(1e-6));
  for (const DeviceSpec& d : device_specs()) {
    CAPTURE(d.name);
    CHECK_FALSE(d.description.empty());
    CHECK_FALSE(d.source.empty());
    CHECK(d.bandwidth > 0);
  }
  CHECK_THAT(find_device("cpu").source, Catch::Contains("measured") && Catch::Contains("memcpy"));
}

TEST_CASE("device lookup is case-insensitive and names the known devices on a miss", "[devices]") {
  CHECK(find_device("H100").name == "h100");
  CHECK(&find_device("Cpu") == &find_device("cpu"));
  CHECK_THROWS_WITH(find_device("h1000"), Catch::Contains("unknown device 'h1000'") && Catch::Contains("h100") &&
                                              Catch::Contains("t4") && Catch::Contains("cpu"));
  CHECK_THROWS_WITH(find_device("t4").peak_for(DType::bf16),
                    Catch::Contains("device 't4' has no peak FLOP/s for bf16") && Catch::Contains("f16, f32"));
  CHECK_THROWS_WITH(find_device("h100").peak_for(DType::i32), Catch::Contains("for i32"));
}

TEST_CASE("codegen/cost/devices.json is the built-in table of GPUs as a file", "[devices]") {
  const std::vector<DeviceSpec> file = read_device_file(EINEXPR_CODEGEN_DIR "/devices.json");
  REQUIRE(file.size() == 5);
  for (const DeviceSpec& d : file) {
    CAPTURE(d.name);
    const DeviceSpec& builtin = find_device(d.name);
    CHECK(d.description == builtin.description);
    CHECK(d.source == builtin.source);
    CHECK(d.bandwidth == builtin.bandwidth);
    CHECK(d.peak_flops == builtin.peak_flops);
    CHECK(d.memory == builtin.memory);
    CHECK(d.memory > 0);
  }
}

TEST_CASE("device files add devices, and $EINEXPR_DEVICES is read on use", "[devices]") {
  const testing_support::ScratchDir dir;
  const std::string path = dir.write("lab.json", R"([
    {"name": "Lab-GPU", "description": "a test device", "peak_flops": {"bf16": 100e12, "f32": 20e12},
     "bandwidth": 1e12, "source": "made up for a test"},
    {"name": "lab-min", "peak_flops": {"f32": 1e9}, "bandwidth": 1e9}
  ])");
  load_device_file(path);
  const DeviceSpec& lab = find_device("lab-gpu");
  CHECK(lab.peak_for(DType::bf16) == 100e12);
  CHECK(lab.accelerator_intensity(DType::bf16) == 100.0);
  CHECK(find_device("LAB-MIN").source.empty());
  // Loading again replaces by name, in place.
  load_device_file(dir.write("lab2.json", R"([{"name": "lab-gpu", "peak_flops": {"bf16": 200e12}, "bandwidth": 1e12}])"));
  CHECK(lab.peak_for(DType::bf16) == 200e12);

  const std::string env = dir.write("env.json", R"([{"name": "env-gpu", "peak_flops": {"f32": 5e12}, "bandwidth": 5e11}])");
  ::setenv("EINEXPR_DEVICES", env.c_str(), 1);
  CHECK(find_device("env-gpu").accelerator_intensity(DType::f32) == 10.0);
  const std::string bad = dir.write("bad.json", "[{\"name\": \"x\"}]");
  ::setenv("EINEXPR_DEVICES", bad.c_str(), 1);
  CHECK_THROWS_WITH(device_specs(), Catch::Contains(bad) && Catch::Contains("peak_flops"));
  ::unsetenv("EINEXPR_DEVICES");
  CHECK(find_device("env-gpu").name == "env-gpu");
}

TEST_CASE("bad device files are errors naming the file and the problem", "[devices]") {
  struct Row {
    const char* what;
    const char* text;
    const char* message;
  };
  const Row rows[] = {
      {"not JSON", "[{\"name\": ", "not valid JSON"},
      {"not a list", "{\"name\": \"x\"}", "expected a JSON list of devices, found object"},
      {"an entry not an object", "[3]", "entry 0 is not an object"},
      {"no name", R"([{"peak_flops": {"f32": 1}, "bandwidth": 1}])", "entry 0: \"name\" must be a non-empty string"},
      {"empty name", R"([{"name": "", "peak_flops": {"f32": 1}, "bandwidth": 1}])", "\"name\" must be a non-empty"},
      {"no peaks", R"([{"name": "x", "bandwidth": 1}])", "entry 0 ('x'): \"peak_flops\" must be an object"},
      {"peaks a list", R"([{"name": "x", "peak_flops": [1], "bandwidth": 1}])", "\"peak_flops\" must be an object"},
      {"a peak as text", R"([{"name": "x", "peak_flops": {"bf16": "lots"}, "bandwidth": 1}])",
       "peak_flops.bf16 must be a positive number, not \"lots\""},
      {"a zero peak", R"([{"name": "x", "peak_flops": {"bf16": 0}, "bandwidth": 1}])",
       "peak_flops.bf16 must be a positive number"},
      {"no bandwidth", R"([{"name": "x", "peak_flops": {"f32": 1}}])", "\"bandwidth\" (bytes/s) is missing"},
      {"a negative bandwidth", R"([{"name": "x", "peak_flops": {"f32": 1}, "bandwidth": -3}])",
       "bandwidth must be a positive number, not -3"},
      {"a misspelt key", R"([{"name": "x", "peak_flops": {"f32": 1}, "bandwith": 1}])", "unknown key \"bandwith\""},
      {"a source that is not text", R"([{"name": "x", "peak_flops": {"f32": 1}, "bandwidth": 1, "source": 3}])",
       "\"source\" must be a string"},
      {"the second entry", R"([{"name": "a", "peak_flops": {"f32": 1}, "bandwidth": 1}, {"name": "b"}])",
       "entry 1 ('b')"},
  };
  const testing_support::ScratchDir dir;
  for (const Row& r : rows) {
    CAPTURE(r.what);
    const std::string path = dir.write("bad.json", r.text);
    CHECK_THROWS_AS(read_device_file(path), Error);
    CHECK_THROWS_WITH(read_device_file(path), Catch::Contains("device file '" + path + "'") && Catch::Contains(r.message));
  }
  const std::string missing = (dir.path() / "missing.json").string();
  CHECK_THROWS_WITH(load_device_file(missing), Catch::Contains(missing) && Catch::Contains("cannot be opened"));
}

namespace {

/// Sets an environment variable for a scope (nullptr unsets it), then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("the cpu device is measured once, cached, read back, and measured again when asked", "[devices][cpu]") {
  const std::string fixture = std::getenv("EINEXPR_CPU_DEVICE") ? std::getenv("EINEXPR_CPU_DEVICE") : "";
  const testing_support::ScratchDir dir;
  const ScopedEnv cache("XDG_CACHE_HOME", dir.path().c_str());
  const ScopedEnv fixed("EINEXPR_CPU_DEVICE", nullptr);
  const std::string path = dir / "einexpr/cpu_device.json";
  CHECK(cpu_cache_path() == path);

  const CpuCalibration first = cpu_calibration();
  CHECK(first.measured);
  CHECK(first.cache_path == path);
  CHECK(std::filesystem::exists(path));
  CHECK_FALSE(first.cpu_model.empty());
  CHECK(first.threads == num_threads());
  CHECK_THAT(first.device.description, Catch::Contains(first.cpu_model));
  CHECK_THAT(first.device.source, Catch::Contains("Measured by einexpr") && Catch::Contains(first.isa));
  for (const char* key : {"f64", "f32", "bf16", "f16", "fp8"}) CHECK(first.device.peak_flops.at(key) > 0);
  CHECK(first.device.peak_flops.at("bf16") == first.device.peak_flops.at("f32"));
  CHECK(first.device.bandwidth > 0);

  const CpuCalibration cached = cpu_calibration();
  CHECK_FALSE(cached.measured);
  CHECK(cached.device.peak_flops == first.device.peak_flops);
  CHECK(cached.device.bandwidth == first.device.bandwidth);
  CHECK(cached.device.source == first.device.source);

  struct Row {
    const char* what;
    std::string text;
  };
  std::string other_cpu = slurp(path), few_threads = other_cpu, zero = other_cpu;
  other_cpu.replace(other_cpu.find(first.cpu_model), first.cpu_model.size(), "another CPU");
  few_threads = std::regex_replace(few_threads, std::regex(R"("threads": [0-9]+)"), R"("threads": 999)");
  REQUIRE(few_threads.find("\"threads\": 999") != std::string::npos);
  const Row rows[] = {{"not JSON", "{\"version\": 1, \"dev"},
                      {"not an object", "[1, 2]"},
                      {"another CPU", other_cpu},
                      {"another thread count", few_threads},
                      {"a device without peaks", R"({"version": 1, "device": {}})"},
                      {"empty", ""}};
  for (const Row& r : rows) {
    CAPTURE(r.what);
    dir.write("einexpr/cpu_device.json", r.text);
    const CpuCalibration again = cpu_calibration();
    CHECK(again.measured);
    CHECK(again.device.bandwidth > 0);
    CHECK_FALSE(cpu_calibration().measured);  // and the cache is good again
  }

  const CpuCalibration redone = calibrate_cpu();
  CHECK(redone.measured);
  CHECK(find_device("cpu").bandwidth == redone.device.bandwidth);
  CHECK(find_device("cpu").peak_flops == redone.device.peak_flops);
  if (!fixture.empty()) load_device_file(fixture);  // the table's cpu entry as the other tests expect it
}

TEST_CASE("the cpu device: $EINEXPR_CPU_DEVICE fixes it, and where the cache lives", "[devices][cpu]") {
  const testing_support::ScratchDir dir;
  const ScopedEnv cache("XDG_CACHE_HOME", (dir / "xdg").c_str());
  const std::string file = dir.write("fixed.json", R"([{"name": "cpu", "description": "fixed", "peak_flops": {"f32": 7e9},
                                                        "bandwidth": 3e9, "source": "a test"}])");
  {
    const ScopedEnv fixed("EINEXPR_CPU_DEVICE", file.c_str());
    const CpuCalibration c = cpu_calibration();
    CHECK_FALSE(c.measured);
    CHECK(c.device.peak_flops.at("f32") == 7e9);
    CHECK(c.device.description == "fixed");
    CHECK_FALSE(std::filesystem::exists(dir / "xdg"));  // nothing measured, nothing cached
    const ScopedEnv bad("EINEXPR_CPU_DEVICE", (dir / "missing.json").c_str());
    CHECK_THROWS_WITH(cpu_calibration(), Catch::Contains("missing.json") && Catch::Contains("cannot be opened"));
  }
  {
    const ScopedEnv home("HOME", dir.path().c_str());
    const ScopedEnv relative("XDG_CACHE_HOME", "relative/dir");  // not absolute: ignored, as XDG says
    CHECK(cpu_cache_path() == dir / ".cache/einexpr/cpu_device.json");
    const ScopedEnv none("XDG_CACHE_HOME", nullptr);
    CHECK(cpu_cache_path() == dir / ".cache/einexpr/cpu_device.json");
    const ScopedEnv no_home("HOME", nullptr);
    CHECK(cpu_cache_path().empty());
  }
}
