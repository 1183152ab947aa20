// bench (fields and counts, never timing thresholds), roofline (a well-formed SVG and
// its table) and devices (the table, as text and as JSON).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using namespace einexpr;
using test::Sandbox;

TEST_CASE("bench --json times a tiny problem and reports it against the device table") {
  Sandbox box;
  const test::CliResult r = box.run({"bench", "einsum", "b d, d k -> b k", "b=16", "d=8", "k=4", "--json", "--warmup",
                                     "1", "--repeats", "3", "--min-time", "0", "--threads", "1"});
  INFO(r);
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"median_s", "min_s", "max_s", "mean_s", "repeats", "flops", "flops_per_s", "bytes_per_s",
                          "mfu", "threads", "device", "spec", "dtype"})
    CHECK(j.contains(key));
  CHECK(j["repeats"].get<int>() >= 3);
  // The mean and the slowest run beside the median: the mean shows runs that stalled.
  CHECK(j["min_s"].get<double>() <= j["mean_s"].get<double>());
  CHECK(j["mean_s"].get<double>() <= j["max_s"].get<double>());
  CHECK(j["threads"] == 1);
  CHECK(j["device"] == "cpu");
  CHECK(j["spec"] == "cpu");
  CHECK(j["flops"] == 2 * 16 * 8 * 4);
  CHECK(j["min_s"].get<double>() <= j["median_s"].get<double>());
  CHECK(j["median_s"].get<double>() <= j["max_s"].get<double>());
  CHECK(j["mfu"].get<double>() >= 0);
  CHECK(j["peak_flops"].get<double>() == find_device("cpu").peak_for(DType::f32));
  CHECK(j["output_is_view"] == false);
}

TEST_CASE("bench runs every op and prints a table, --spec picks the device-table entry") {
  Sandbox box;
  const std::vector<std::vector<std::string>> rows = {
      {"bench", "rearrange", "c h w -> c w h", "c=3", "h=4", "w=5"},
      {"bench", "reduce", "c (h h2) (w w2) -> c h w", "mean", "c=2", "h=2", "h2=3", "w=2", "w2=3"},
      {"bench", "repeat", "h w -> c h w", "c=4", "h=3", "w=2", "--dtype", "bf16"},
      {"bench", "einsum", "b d, d k -> b k", "b=8", "d=8", "k=8", "--spec", "h100"},
  };
  for (std::vector<std::string> args : rows) {
    CAPTURE(args);
    args.insert(args.end(), {"--repeats", "1", "--warmup", "0", "--min-time", "0"});
    const test::CliResult r = box.run(args);
    INFO(r);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("  median ") && Catch::Contains("  MFU ") && Catch::Contains("on cpu"));
    CHECK_THAT(r.out, Catch::Contains("  mean ") && Catch::Contains(" x the median"));
  }
  CHECK_THAT(box.run(rows[3]).out, Catch::Contains("against h100: 67 TFLOP/s f32"));
  CHECK_THAT(box.run(rows[0]).out, Catch::Contains("the result is a view of the input"));
}

TEST_CASE("bench shows progress on stderr when it runs longer than a second") {
  Sandbox box;
  const test::CliResult r = box.run({"bench", "einsum", "b d, d k -> b k", "b=128", "d=128", "k=128", "--min-time",
                                     "1.1", "--max-time", "1.1", "--warmup", "0", "--repeats", "1", "--json"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::StartsWith("bench: ") && Catch::Contains(" timed runs, "));
  CHECK(nlohmann::json::parse(r.out)["repeats"].get<int>() >= 1);
}

TEST_CASE("roofline writes an SVG with one labelled point per expression") {
  Sandbox box;
  const test::CliResult r =
      box.run({"roofline", "plot.svg", "--dtype", "bf16", "einsum|i j, j k -> i k|i=1024,j=1024,k=1024",
               "einsum|i, i j -> j|i=1024,j=1024", "reduce|i j -> i|sum|i=1024,j=1024"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("roofline of h100 (bf16): 989.5 TFLOP/s, 3.35 TB/s, ridge 295.4 FLOP/B"));
  CHECK_THAT(r.out, Catch::Contains("i j, j k -> i k  einsum") && Catch::Contains("compute"));
  CHECK_THAT(r.out, Catch::Contains("i, i j -> j") && Catch::Contains("memory"));
  CHECK_THAT(r.out, Catch::Contains("wrote plot.svg"));
  const std::string svg = box.read_bytes("plot.svg");
  CHECK_THAT(svg, Catch::StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK_THAT(svg, Catch::EndsWith("</svg>\n"));
  const DeviceSpec& h100 = find_device("h100");
  const std::vector<std::pair<std::string, Cost>> costs = {
      {"i j, j k -> i k", cost_einsum("i j, j k -> i k", {{"i", 1024}, {"j", 1024}, {"k", 1024}}, DType::bf16)},
      {"i, i j -> j", cost_einsum("i, i j -> j", {{"i", 1024}, {"j", 1024}}, DType::bf16)},
      {"i j -> i", cost_reduce("i j -> i", Reduction::sum, {{"i", 1024}, {"j", 1024}}, DType::bf16)},
  };
  std::vector<RooflinePoint> points;
  for (const auto& [label, c] : costs) {
    const Roofline bound = roofline(c, h100);
    points.push_back({label, bound.intensity, c.flops.to_double() / bound.time_s, false});
  }
  CHECK(svg == roofline_svg(h100, DType::bf16, points));
  for (const char* label : {"i j, j k -&gt; i k", "i, i j -&gt; j", "i j -&gt; i"})
    CHECK_THAT(svg, Catch::Contains(label));
  CHECK(std::count(svg.begin(), svg.end(), '<') == std::count(svg.begin(), svg.end(), '>'));
  CHECK(box.files() == std::set<std::string>{"plot.svg"});
}

TEST_CASE("devices lists the table and --json is a device file") {
  Sandbox box;
  test::CliResult r = box.run({"devices"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("h100") && Catch::Contains("989.5 T") && Catch::Contains("3.35 TB/s") &&
                        Catch::Contains("NVIDIA H100 SXM5 80 GB") && Catch::Contains("sources\n  h100: NVIDIA"));
  // each GPU's memory (--search fits layouts into it), and the links of program cost --mesh
  CHECK_THAT(r.out, Catch::Contains("bandwidth  memory  description") && Catch::Contains("3.35 TB/s   80 GB") &&
                        Catch::Contains("4.8 TB/s  141 GB"));
  CHECK_THAT(r.out, Catch::Contains("links between devices (program cost --mesh: t = 8.4 µs + steps·α + bus bytes / β)") &&
                        Catch::Contains("  nvlink  450 GB/s  3.4 µs\n") && Catch::Contains("  ib       50 GB/s  9.6 µs\n") &&
                        Catch::Contains("  pcie     64 GB/s  5.7 µs\n") && Catch::Contains("nvlink: NVIDIA H100 Tensor Core GPU datasheet"));
  r = box.run({"devices", "--json"});
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j.is_array());
  const auto h100 = std::find_if(j.begin(), j.end(), [](const nlohmann::json& d) { return d["name"] == "h100"; });
  REQUIRE(h100 != j.end());
  CHECK((*h100)["peak_flops"]["bf16"].get<double>() == 989.5e12);
  CHECK((*h100)["bandwidth"].get<double>() == 3.35e12);
  CHECK((*h100)["memory"].get<double>() == 80e9);
  // the JSON is a valid $EINEXPR_DEVICES file
  box.write_bytes("mine.json", r.out);
  CHECK(read_device_file(box.path("mine.json")).size() == j.size());
  const std::string custom =
      R"([{"name": "mygpu", "description": "a test GPU", "peak_flops": {"f32": 1e12}, "bandwidth": 1e11, "source": "test"}])";
  box.write_bytes("custom.json", custom);
  r = box.run({"devices"}, {{"EINEXPR_DEVICES", box.path("custom.json")}});
  CHECK_THAT(r.out, Catch::Contains("mygpu"));
  r = box.run({"cost", "einsum", "a b, b -> a", "a=10", "b=10", "--device", "mygpu"},
              {{"EINEXPR_DEVICES", box.path("custom.json")}});
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("mygpu (f32): 1 TFLOP/s, 100 GB/s"));
}

TEST_CASE("devices --calibrate measures the cpu into $XDG_CACHE_HOME and the table uses it") {
  Sandbox box;
  const std::map<std::string, std::string> env = {{"XDG_CACHE_HOME", box.path("cache")}, {"EINEXPR_CPU_DEVICE", ""}};
  test::CliResult r = box.run({"devices", "--calibrate", "--json", "--threads", "1"}, env);
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::Contains("measured the cpu: ") && Catch::Contains("cached in " + box.path("cache")));
  const auto is_cpu = [](const nlohmann::json& d) { return d["name"] == "cpu"; };
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const auto cpu = std::find_if(j.begin(), j.end(), is_cpu);
  REQUIRE(cpu != j.end());
  CHECK_THAT((*cpu)["source"].get<std::string>(), Catch::Contains("Measured by einexpr"));
  const double f32 = (*cpu)["peak_flops"]["f32"].get<double>();
  CHECK(f32 > 0);
  CHECK((*cpu)["peak_flops"]["bf16"].get<double>() == f32);
  // the cache is read back by the next run (no --calibrate): the same numbers
  r = box.run({"devices", "--json", "--threads", "1"}, env);
  REQUIRE(r.status == 0);
  const nlohmann::json again = nlohmann::json::parse(r.out);
  const auto cpu2 = std::find_if(again.begin(), again.end(), is_cpu);
  REQUIRE(cpu2 != again.end());
  CHECK((*cpu2)["peak_flops"] == (*cpu)["peak_flops"]);
  CHECK((*cpu2)["bandwidth"] == (*cpu)["bandwidth"]);
}

TEST_CASE("bench map and bench reduce var report the same fields as the other bench commands") {
  Sandbox box;
  const std::vector<std::vector<std::string>> rows = {
      {"bench", "map", "b s h -> b s h", "gelu", "b=4", "s=8", "h=16"},
      {"bench", "map", "b s h, h -> b s h", "add", "b=4", "s=8", "h=16"},
      {"bench", "reduce", "b s h -> b h", "var", "b=4", "s=8", "h=16", "--correction", "0"}};
  for (std::vector<std::string> args : rows) {
    CAPTURE(args);
    args.insert(args.end(), {"--json", "--repeats", "1", "--warmup", "0", "--min-time", "0"});
    const test::CliResult r = box.run(args);
    INFO(r);
    REQUIRE(r.status == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    for (const char* key : {"median_s", "min_s", "max_s", "repeats", "flops", "bytes", "flops_per_s", "bytes_per_s",
                            "mfu", "threads", "device", "spec", "dtype", "roofline_time_s", "bound", "output_is_view"})
      CHECK(j.contains(key));
    CHECK(j["op"] == args[1]);
  }
  const nlohmann::json gelu = nlohmann::json::parse(
      box.run({"bench", "map", "b s h -> b s h", "gelu", "b=4", "s=8", "h=16", "--json", "--repeats", "1", "--warmup",
               "0", "--min-time", "0"})
          .out);
  CHECK(gelu["function"] == "gelu");
  CHECK(gelu["flops"] == 20 * 4 * 8 * 16);
  CHECK(gelu["bytes"] == 2 * 4 * 4 * 8 * 16);
}
