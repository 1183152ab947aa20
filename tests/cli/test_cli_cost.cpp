// cost (table and --json, parsed back and checked against cost_einsum and friends,
// including counts beyond 2^64 as exact literals), explain and check.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <span>

#include "cli_run.hpp"
#include "sanitized.hpp"

using namespace einexpr;
using test::Sandbox;

namespace {

nlohmann::json cost_json(const Sandbox& box, std::vector<std::string> args) {
  args.insert(args.begin(), "cost");
  args.push_back("--json");
  const test::CliResult r = box.run(args);
  INFO(r);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());
  return nlohmann::json::parse(r.out);
}

std::uint64_t u64(const Count& c) { return c.u64(); }

}  // namespace

TEST_CASE("cost never fails for want of a gradient: diagonals, scalars, and what has none") {
  Sandbox box;
  // Once refused: a diagonal's gradient, and every scalar-output einsum's.
  struct Row {
    std::vector<std::string> args;
    std::uint64_t flops, backward_flops;
  };
  const Row rows[] = {
      {{"einsum", "i i ->", "i=5"}, 4, 0},                         // the trace; dX = dY on the diagonal
      {{"einsum", "i, i ->", "i=1048576"}, 2097152, 2097152},      // the lecture's dot product
      {{"einsum", "a a b, b c -> a c", "a=3", "b=4", "c=5"}, 120, 2 * 60 + 120},
      {{"einsum", "i j, j i ->", "i=3", "j=4"}, 24, 24},
      {{"einsum", "i j, j k, k i ->", "i=2", "j=3", "k=4"}, 2 * 24 + 2 * 6, 0},  // (2 3) first, then 1
  };
  for (const Row& r : rows) {
    CAPTURE(r.args);
    const nlohmann::json j = cost_json(box, r.args);
    CHECK(j["flops"].get<std::uint64_t>() == r.flops);
    if (r.backward_flops > 0) CHECK(j["backward_flops"].get<std::uint64_t>() == r.backward_flops);
    CHECK(j["backward_flops"].is_number());
    CHECK_FALSE(j.contains("backward_error"));
  }
  // reduce any has no gradient: the forward is costed all the same, and says why.
  const nlohmann::json any = cost_json(box, {"reduce", "a b -> a", "any", "a=3", "b=4", "--dtype", "bool"});
  CHECK(any["flops"].get<std::uint64_t>() == 12 - 3);
  CHECK(any["backward"].is_null());
  CHECK(any["backward_flops"].is_null());
  CHECK(any["backward_error"] == "backward on bool tensors is not defined");
  CHECK(any["roofline"].is_null());  // and H100's table has no peak for bool
  CHECK_THAT(any["roofline_error"].get<std::string>(), Catch::Contains("no peak FLOP/s for bool"));
  const test::CliResult table = box.run({"cost", "reduce", "a b -> a", "any", "a=3", "b=4", "--dtype", "bool", "--backward"});
  CHECK(table.status == 0);
  CHECK_THAT(table.out, Catch::Contains("backward: none (backward on bool tensors is not defined)"));
}

TEST_CASE("cost --json has the Cost API's numbers") {
  Sandbox box;
  const AxisLengths sizes = {{"b", 1024}, {"d", 256}, {"k", 64}};
  const Cost c = cost_einsum("b d, d k -> b k", sizes);
  const nlohmann::json j = cost_json(box, {"einsum", "b d, d k -> b k", "b=1024", "d=256", "k=64"});
  CHECK(j["op"] == "einsum");
  CHECK(j["pattern"] == "b d, d k -> b k");
  CHECK(j["dtype"] == "f32");
  CHECK(j["sizes"]["d"] == 256);
  CHECK(j["flops"].get<std::uint64_t>() == 2 * 1024 * 256 * 64);
  CHECK(j["flops"].get<std::uint64_t>() == u64(c.flops));
  CHECK(j["flops_exact"].get<std::uint64_t>() == u64(c.flops_exact));
  CHECK(j["naive_flops"].get<std::uint64_t>() == u64(c.naive_flops.value()));
  CHECK(j["flops_numpy"].get<std::uint64_t>() == u64(c.flops_numpy.value()));
  CHECK(j["macs"].get<std::uint64_t>() == 1024 * 256 * 64);
  CHECK(j["bytes_read"].get<std::uint64_t>() == u64(c.bytes_read));
  CHECK(j["bytes_written"].get<std::uint64_t>() == u64(c.bytes_written));
  CHECK(j["bytes_planned"].get<std::uint64_t>() == u64(c.bytes_planned));
  CHECK(j["peak_extra_bytes"].get<std::uint64_t>() == u64(c.peak_extra_bytes));
  CHECK(j["intensity"].get<double>() == Approx(c.intensity()));
  CHECK(j["formulas"]["flops"] == c.flops_formula.str());
  CHECK(j["formulas"]["bytes"] == c.bytes_formula.str());
  REQUIRE(j["steps"].size() == c.steps.size());
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    CHECK(j["steps"][i]["kind"] == c.steps[i].kind);
    CHECK(j["steps"][i]["is_view"] == c.steps[i].is_view);
    CHECK(j["steps"][i]["flops"].get<std::uint64_t>() == u64(c.steps[i].flops));
    CHECK(j["steps"][i]["bytes"].get<std::uint64_t>() == u64(c.steps[i].bytes_read + c.steps[i].bytes_written));
  }
  // forward 2·N·P, backward twice that: the seeds' 6·N·P for forward + backward
  CHECK(j["backward_flops"].get<std::uint64_t>() == 2 * u64(c.flops));
  CHECK_FALSE(j.contains("backward"));
  const Roofline r = roofline(c, find_device("h100"));
  CHECK(j["roofline"]["device"] == "h100");
  CHECK(j["roofline"]["peak_flops"].get<double>() == 67e12);
  CHECK(j["roofline"]["bandwidth"].get<double>() == 3.35e12);
  CHECK(j["roofline"]["bound"] == r.bound());
  CHECK(j["roofline"]["time_s"].get<double>() == Approx(r.time_s));
}

TEST_CASE("cost --json: bf16 on h100, reductions, --backward") {
  Sandbox box;
  nlohmann::json j = cost_json(box, {"einsum", "i j, j k -> i k", "i=1024", "j=1024", "k=1024", "--dtype", "bf16"});
  // the seeds' intensity matmul: n·n·(2n-1) / (3·2·n·n) = 341.17 > 295.37, compute-bound
  CHECK(j["flops_exact"].get<std::uint64_t>() == 1024ull * 1024 * (2 * 1024 - 1));
  CHECK(j["bytes_read"].get<std::uint64_t>() + j["bytes_written"].get<std::uint64_t>() == 6ull * 1024 * 1024);
  CHECK(j["roofline"]["peak_flops"].get<double>() == 989.5e12);
  CHECK(j["roofline"]["bound"] == "compute");

  j = cost_json(
      box, {"reduce", "c (h h2) (w w2) -> c h w", "mean", "c=3", "h=10", "h2=20", "w=10", "w2=20", "--device", "a100"});
  const Cost c = cost_reduce("c (h h2) (w w2) -> c h w", Reduction::mean,
                             {{"c", 3}, {"h", 10}, {"h2", 20}, {"w", 10}, {"w2", 20}});
  CHECK(j["reduction"] == "mean");
  CHECK(j["flops"].get<std::uint64_t>() == u64(c.flops));
  CHECK(j["roofline"]["device"] == "a100");
  CHECK(j["roofline"]["bound"] == "memory");

  j = cost_json(box, {"einsum", "b d, d k -> b k", "b=1024", "d=256", "k=64", "--backward"});
  REQUIRE(j["backward"].size() == 2);
  CHECK(j["backward"][0]["expression"] == "einsum(dY, B, 'b k, d k -> b d')");
  CHECK(j["backward"][0]["flops"].get<std::uint64_t>() + j["backward"][1]["flops"].get<std::uint64_t>() ==
        j["backward_flops"].get<std::uint64_t>());

  for (const char* op : {"rearrange", "repeat"}) {
    CAPTURE(op);
    j = cost_json(box, {op, std::string(op) == "repeat" ? "h w -> c h w" : "c h w -> c w h", "c=4", "h=5", "w=6"});
    CHECK(j["flops"] == 0);
  }
}

TEST_CASE("cost --json: maps with a pattern, var with a correction, and explain for both") {
  Sandbox box;
  nlohmann::json j = cost_json(box, {"map", "b s h -> b s h", "gelu", "b=64", "s=1024", "h=1024"});
  const Cost gelu = cost_map("b s h -> b s h", UnaryOp::gelu, {{"b", 64}, {"s", 1024}, {"h", 1024}});
  CHECK(j["op"] == "map");
  CHECK(j["function"] == "gelu");
  CHECK(j["flops"].get<std::uint64_t>() == u64(gelu.flops));
  CHECK(j["flops"].get<std::uint64_t>() == 20ull * 64 * 1024 * 1024);
  CHECK(j["bytes_read"].get<std::uint64_t>() == 4ull * 64 * 1024 * 1024);
  j = cost_json(box, {"map", "b s h, h -> b s h", "mul", "b=2", "s=3", "h=4", "--backward"});
  CHECK(j["flops"] == 2 * 3 * 4);
  CHECK(j["backward"].size() == 2);
  j = cost_json(box, {"reduce", "b s h -> b h", "var", "b=2", "s=3", "h=4", "--correction", "0"});
  CHECK(j["reduction"] == "var");
  CHECK(j["correction"] == 0);
  CHECK(j["flops"] == 4 * 2 * 3 * 4);
  test::CliResult r = box.run({"explain", "reduce", "b s h -> b h", "std", "b=2", "s=3", "h=4", "--correction", "2"});
  INFO(r);
  CHECK_THAT(r.out, Catch::Contains("reduce.std(correction=2)"));
  r = box.run({"explain", "map", "b s (h d) -> b h s d", "exp", "b=2", "s=3", "h=4", "d=5"});
  CHECK_THAT(r.out, Catch::Contains("map.exp") && Catch::Contains("[b=2, h=4, s=3, d=5]"));
}

TEST_CASE("cost --json and explain: normalizations along bracketed axes, --eps") {
  Sandbox box;
  const AxisLengths sizes = {{"b", 8}, {"h", 12}, {"q", 128}, {"k", 128}};
  nlohmann::json j = cost_json(box, {"softmax", "b h q [k]", "b=8", "h=12", "q=128", "k=128", "--backward"});
  const Cost c = cost_normalize("b h q [k]", Normalization::softmax, sizes);
  CHECK(j["op"] == "softmax");
  CHECK(j["flops"].get<std::uint64_t>() == u64(c.flops));
  CHECK(j["flops"].get<std::uint64_t>() == 5ull * 8 * 12 * 128 * 128 + 8 * 12 * 128);
  CHECK(j["backward"].size() == 1);
  j = cost_json(box, {"layer_norm", "b s [d]", "b=2", "s=3", "d=4", "--eps", "0.5"});
  CHECK(j["flops"] == 5 * 2 * 3 * 4 + 3 * 2 * 3);
  test::CliResult r = box.run({"explain", "rms_norm", "b s [d]", "b=2", "s=3", "d=4", "--eps", "0.5"});
  INFO(r);
  CHECK_THAT(r.out, Catch::Contains("rms_norm(eps=0.5) %0 along [d]"));
  r = box.run({"cost", "softmax", "b s [d]", "b=2", "s=3", "d=4", "--eps", "0.5"});
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--eps applies to layer_norm and rms_norm only"));
  r = box.run({"cost", "softmax", "b s d", "b=2", "s=3", "d=4"});
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("no brackets") && Catch::Contains("^"));
}

TEST_CASE("cost --json writes counts beyond 2^64 as exact integer literals") {
  Sandbox box;
  // 2·2^22·2^22·2^22 = 2^67 FLOPs
  const test::CliResult r =
      box.run({"cost", "einsum", "i j, j k -> i k", "i=4194304", "j=4194304", "k=4194304", "--json"});
  INFO(r);
  REQUIRE(r.status == 0);
  const Cost c = cost_einsum("i j, j k -> i k", {{"i", 4194304}, {"j", 4194304}, {"k", 4194304}});
  REQUIRE_FALSE(c.flops.fits_u64());
  CHECK(c.flops.str() == "147573952589676412928");
  CHECK_THAT(r.out, Catch::Contains("\"flops\": 147573952589676412928,"));
  CHECK_THAT(r.out, Catch::Contains("\"flops_exact\": " + c.flops_exact.str() + ","));
  CHECK_THAT(r.out, Catch::Contains("\"backward_flops\": 295147905179352825856,"));
  const nlohmann::json j = nlohmann::json::parse(r.out);  // still valid JSON
  CHECK(j["flops"].get<double>() == Approx(1.4757395258967641e20));
}

TEST_CASE("cost and explain of opt_einsum's 64-operand einsums: the naive count is 2^128 or more") {
  struct Row {
    const char* pattern;
    const char* lengths;
    const char* naive;
    const char* left;
    int seed;
  };
  const Row rows[] = {
#include "../lib/rand_equation_64.inc"
  };
  Sandbox box;
  // one of the three under a sanitizer (each is seconds of order search there; the library's
  // test costs all three in that build)
  for (const Row& row : std::span(rows, ::test::sanitized ? 1 : std::size(rows))) {
    CAPTURE(row.seed);
    std::vector<std::string> args = {"einsum", row.pattern};
    std::string lengths = row.lengths;
    for (std::size_t at = 0, comma = 0; at < lengths.size(); at = comma + 1) {
      comma = std::min(lengths.find(',', at), lengths.size());
      args.push_back(lengths.substr(at, comma - at));
    }
    const nlohmann::json j = cost_json(box, args);  // exit 0, nothing on stderr
    CHECK(j["naive_flops"].is_null());
    CHECK(j["naive_flops_error"] == "2^128 or more: does not fit in 128 bits, so it is not counted exactly");
    CHECK(j["flops"].get<std::uint64_t>() > 0);
    CHECK(j["flops_numpy"] == j["flops"]);
    CHECK(j["backward_flops"].get<std::uint64_t>() > 0);
    args.insert(args.begin(), "cost");
    const test::CliResult table = box.run(args);
    INFO(table);
    CHECK(table.status == 0);
    CHECK_THAT(table.out, Catch::Matches(R"([^]*\n  naive FLOPs +- +2\^128 or more, too large to count exactly )"
                                         R"(\(one loop nest\)\n[^]*)"));
    CHECK_THAT(table.out, Catch::Contains("(64 gradients)"));
    args[0] = "explain";
    const test::CliResult plan = box.run(args);
    CHECK(plan.status == 0);
    CHECK(plan.err.empty());
    CHECK_THAT(plan.out, Catch::Contains("): " + std::string(row.left) + "\n"));  // the note's left to right
    CHECK_THAT(plan.out, Catch::Contains("steps are views; FLOPs " + j["flops"].dump() + " = "));
  }
}

TEST_CASE("cost prints an aligned table with units and --backward lists the gradients") {
  Sandbox box;
  const test::CliResult r = box.run({"cost", "einsum", "b d, d k -> b k", "b=1024", "d=256", "k=64", "--backward"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::StartsWith("einsum 'b d, d k -> b k' (f32)  b=1024 d=256 k=64\n"));
  CHECK_THAT(r.out, Catch::Contains("  FLOPs            33.55  MFLOP   33554432 = 2·b·d·k\n"));
  CHECK_THAT(r.out, Catch::Contains("  bytes written   256.00  KiB     262144 (the output once)\n"));
  CHECK_THAT(r.out, Catch::Contains("h100 (f32): 67 TFLOP/s, 3.35 TB/s"));
  CHECK_THAT(r.out, Catch::Contains("einsum(dY, A, 'b k, b d -> d k')"));
  CHECK_THAT(r.out, Catch::Contains("forward + backward: 100.7 MFLOP = 100663296 (3 x forward)"));
}

TEST_CASE("explain prints the plan and each step's FLOPs and bytes") {
  Sandbox box;
  const AxisLengths sizes = {{"batch", 4}, {"seq1", 8}, {"seq2", 8}, {"hidden", 32}};
  const char* pattern = "batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2";
  const test::CliResult r = box.run({"explain", "einsum", pattern, "batch=4", "seq1=8", "seq2=8", "hidden=32"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::StartsWith(plan_from_sizes("einsum", pattern, sizes).str() + "steps\n"));
  CHECK_THAT(r.out, Catch::Contains("view (moves nothing)"));
  CHECK_THAT(r.out, Catch::Contains("contract              16.38 kFLOP  8.00 KiB  1.00 KiB"));
  CHECK_THAT(r.out, Catch::Contains("1 of 2 steps are views"));
  const test::CliResult v = box.run({"explain", "rearrange", "c h w -> c w h", "c=3", "h=4", "w=5"});
  CHECK(v.status == 0);
  CHECK_THAT(v.out, Catch::Contains("the output is a view of its input"));
}

TEST_CASE("check says ok with the op it checked for, or shows the caret") {
  Sandbox box;
  struct Row {
    std::vector<std::string> args;
    int status;
    std::string out, err;
  };
  const std::vector<Row> rows = {
      {{"check", "batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2"}, 0, "ok (einsum)\n", ""},
      {{"check", "c h w -> c w h"}, 0, "ok (rearrange)\n", ""},
      {{"check", "c (h h2) (w w2) -> c h w", "--op", "reduce"}, 0, "ok (reduce)\n", ""},
      {{"check", "h w -> c h w", "--op", "repeat"}, 0, "ok (repeat)\n", ""},
      {{"check", "b s h, h -> b s h", "--op", "map"}, 0, "ok (map)\n", ""},
      {{"check", "c (h h2) (w w2) -> c h w"}, 1, "", "checked as rearrange (the default for one operand)"},
      {{"check", "a (b -> b a"},
       1,
       "",
       "einexpr check: error: unbalanced parenthesis: '(' is never closed at "
       "position 2\n  a (b -> b a\n    ^\n"},
      {{"check", "a b, b c -> a d"}, 1, "", "\n  a b, b c -> a d\n"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.args);
    const test::CliResult r = box.run(row.args);
    INFO(r);
    CHECK(r.status == row.status);
    CHECK(r.out == row.out);
    CHECK_THAT(r.err, Catch::Contains(row.err));
  }
}
