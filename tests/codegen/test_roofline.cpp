// The roofline bound, MFU, and the SVG plot.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"
#include "named_plan_builder.hpp"
#include "scratch_dir.hpp"

using namespace einexpr;
using cost_test::PlanBuilder;

namespace {

Cost matmul_bf16(std::int64_t n) {
  PlanBuilder b("einsum", "i j, j k -> i k", DType::bf16, {{"i", n}, {"j", n}, {"k", n}});
  const int x = b.input("i j"), w = b.input("j k");
  return cost(b.finish(b.contract(x, w, "", "i", "j", "k")));
}

Cost relu_bf16(std::int64_t n) {
  PlanBuilder b("map", "", DType::bf16, {{"n", n}});
  return cost(b.finish(b.map(UnaryOp::relu, b.input("n"))));
}

// Every tag closes in order (self-closing ones close themselves); comments are not used.
bool balanced(const std::string& svg) {
  std::vector<std::string> open;
  for (std::size_t at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1)) {
    const std::size_t end = svg.find('>', at);
    if (end == std::string::npos) return false;
    const std::string tag = svg.substr(at + 1, end - at - 1);
    const std::string name = tag.substr(tag[0] == '/' ? 1 : 0, tag.find_first_of(" />", 1) - (tag[0] == '/' ? 1 : 0));
    if (tag.back() == '/') continue;
    if (tag[0] != '/') {
      open.push_back(name);
    } else {
      if (open.empty() || open.back() != name) return false;
      open.pop_back();
    }
  }
  return open.empty();
}

}  // namespace

TEST_CASE("roofline on an H100 in bf16: matmul compute-bound, ReLU memory-bound", "[roofline]") {
  const DeviceSpec& h100 = find_device("h100");
  const Roofline mm = roofline(matmul_bf16(1024), h100);
  CHECK(mm.compute_bound);
  CHECK(mm.bound() == "compute");
  CHECK(mm.accelerator_intensity == Approx(295.3731).epsilon(1e-6));
  CHECK(mm.intensity == Approx(1024.0 / 3));
  CHECK(mm.compute_time_s == Approx(2.0 * 1024 * 1024 * 1024 / 989.5e12));
  CHECK(mm.memory_time_s == Approx(6.0 * 1024 * 1024 / 3.35e12));
  CHECK(mm.time_s == mm.compute_time_s);
  CHECK(mm.best_mfu == 1.0);

  const std::int64_t n = 1024 * 1024;
  const Roofline relu = roofline(relu_bf16(n), h100);
  CHECK_FALSE(relu.compute_bound);
  CHECK(relu.bound() == "memory");
  CHECK(relu.memory_time_s == Approx(1.252e-6).epsilon(1e-3));   // the seeds' communication time
  CHECK(relu.compute_time_s == Approx(1.060e-9).epsilon(1e-3));  // the seeds' computation time
  CHECK(relu.time_s == relu.memory_time_s);
  CHECK(relu.intensity == 0.25);
  CHECK(relu.best_mfu == Approx(relu.compute_time_s / relu.memory_time_s));
}

TEST_CASE("MFU: the seeds' T4 matmul reaches 0.6346 of a promised 8e12 FLOP/s", "[roofline]") {
  DeviceSpec t4_seeds = find_device("t4");
  t4_seeds.peak_flops["f32"] = 8e12;  // the seeds' promise; the datasheet says 8.1e12
  const Count flops = Count(2) * Count(16384) * Count(32768) * Count(8192);
  CHECK(mfu(flops, 1.7326699799999914, t4_seeds, DType::f32) == Approx(0.6345764862712088).epsilon(1e-12));
  CHECK(mfu(flops, 1.73267, t4_seeds, DType::f32) == Approx(0.6346).margin(5e-5));
  CHECK(mfu(flops, 1.73267, find_device("t4"), DType::f32) == Approx(0.6346 * 8 / 8.1).margin(5e-5));
  CHECK_THROWS_WITH(mfu(flops, 0.0, t4_seeds, DType::f32), Catch::Contains("positive number of seconds"));
  CHECK_THROWS_WITH(mfu(flops, 1.0, t4_seeds, DType::bf16), Catch::Contains("no peak FLOP/s for bf16"));
}

TEST_CASE("roofline of a dtype the device has no peak for is an error", "[roofline]") {
  CHECK_THROWS_WITH(roofline(relu_bf16(16), find_device("t4")), Catch::Contains("device 't4'") && Catch::Contains("bf16"));
}

TEST_CASE("the roofline SVG: well-formed, with axes, roofs, ridge and labelled points", "[roofline]") {
  const DeviceSpec& h100 = find_device("h100");
  const Roofline mm = roofline(matmul_bf16(1024), h100);
  const Roofline relu = roofline(relu_bf16(1024 * 1024), h100);
  const std::vector<RooflinePoint> points = {
      {"matmul n=1024", mm.intensity, mm.peak_flops * mm.best_mfu, false},
      {"relu n=2^20", relu.intensity, relu.peak_flops * relu.best_mfu, false},
      {"matmul (measured) <fast> & \"hot\"", mm.intensity, 6.1e14, true},
      {"a view", 0.0, 0.0, false},
  };
  const std::string svg = roofline_svg(h100, DType::bf16, points);
  CAPTURE(svg);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(balanced(svg));
  for (const char* piece : {"matmul n=1024", "relu n=2^20", "matmul (measured) &lt;fast&gt; &amp; &quot;hot&quot;",
                            "a view (off scale)", "ridge 295.4 FLOP/B", "989.5 TFLOP/s (bf16)", "3.35 TB/s",
                            "arithmetic intensity (FLOP/byte)", "performance (FLOP/s)", "class=\"measured\"",
                            "class=\"bound\"", "NVIDIA H100 SXM5 80 GB", "<polyline"})
    CHECK_THAT(svg, Catch::Contains(piece));
  CHECK_THAT(svg, !Catch::Contains("<fast>"));
}

TEST_CASE("write_roofline_svg writes through a temporary file and a rename", "[roofline]") {
  const testing_support::ScratchDir dir;
  const std::string path = (dir.path() / "roofline.svg").string();
  const DeviceSpec& cpu = find_device("cpu");
  const std::vector<RooflinePoint> points = {{"gemm", 50.0, 1e11, true}};
  write_roofline_svg(path, cpu, DType::f32, points);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == roofline_svg(cpu, DType::f32, points));
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
  CHECK(files == 1);  // no temporary left behind
  const std::string nowhere = (dir.path() / "no such dir" / "plot.svg").string();
  CHECK_THROWS_WITH(write_roofline_svg(nowhere, cpu, DType::f32, points), Catch::Contains(nowhere));
}
