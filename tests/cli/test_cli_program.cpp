// program check | cost | run, end to end: the listing, every JSON field the issue names
// (parsed back and checked against the lecture's numbers), runs against the library, the
// files a run leaves (and does not leave when it fails), exit statuses.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>

#include "../lib/data/profiler_flops_values.hpp"
#include "cli_run.hpp"
#include "model_files.hpp"

using namespace einexpr;
using test::Sandbox;

namespace {

nlohmann::json json_of(const Sandbox& box, const std::vector<std::string>& args) {
  const test::CliResult r = box.run(args);
  INFO(r);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());
  return nlohmann::json::parse(r.out);
}

std::uint64_t u64(const nlohmann::json& j) { return j.get<std::uint64_t>(); }

/// The lecture's model in the sandbox as m.ein, with its inputs at B=8 as .npy files.
void lecture_files(const Sandbox& box) {
  box.write_bytes("m.ein", test::read_model("lecture2.ein"));
  box.write_npy("x.npy", Tensor::randn({8, 256}, DType::f32, 1));
  box.write_npy("w1.npy", Tensor::randn({256, 256}, DType::f32, 2));
  box.write_npy("w2.npy", Tensor::randn({256, 64}, DType::f32, 3));
}

}  // namespace

TEST_CASE("program check: the tensors with their shapes, or the fault under a caret", "[program]") {
  Sandbox box;
  lecture_files(box);
  const test::CliResult ok = box.run({"program", "check", "m.ein"});
  INFO(ok);
  CHECK(ok.status == 0);
  CHECK(ok.out ==
        "ok: m.ein (B=1024 D=256 E=256 K=64)\n"
        "  x     input        [B=1024, D=256] f32\n"
        "  w1    param        [D=256, E=256] f32\n"
        "  w2    param        [E=256, K=64] f32\n"
        "  h1    einsum       [B=1024, E=256] f32\n"
        "  h2    einsum       [B=1024, K=64] f32\n"
        "  sq    map square   [B=1024, K=64] f32\n"
        "  loss  reduce mean  [] f32               output\n");
  box.write_bytes("bad.ein", "axes B=4 D=3 E=5\ninput x: B D\nparam w: D E\nh = einsum(x, w, \"B D, D E -> B E\")\n"
                             "g = map(h, \"B D -> B D\", \"exp\")\n");
  const test::CliResult bad = box.run({"program", "check", "bad.ein"});
  CHECK(bad.status == 1);
  CHECK(bad.out.empty());
  CHECK(bad.err ==
        "einexpr program check: error: bad.ein:5:15: axis 'D' is 3 (line 1) but dim 1 of 'h' is 5 (E, line 4)\n"
        "  g = map(h, \"B D -> B D\", \"exp\")\n"
        "                ^\n"
        "bad.ein:4:1: note: 'h' is made here\n"
        "  h = einsum(x, w, \"B D, D E -> B E\")\n"
        "  ^\n");
  const test::CliResult missing = box.run({"program", "check", "nope.ein"});
  CHECK(missing.status == 1);
  CHECK(missing.err == "einexpr program check: error: cannot read nope.ein: no such file or it is not readable\n");
  // lengths replace the axes line's, as program cost takes them
  const test::CliResult sized = box.run({"program", "check", "m.ein", "B=8", "K=3"});
  INFO(sized);
  CHECK(sized.status == 0);
  CHECK_THAT(sized.out, Catch::StartsWith("ok: m.ein (B=8 D=256 E=256 K=3)\n  x     input        [B=8, D=256] f32\n"));
  const test::CliResult unknown = box.run({"program", "check", "m.ein", "Q=8"});
  CHECK(unknown.status == 1);
  CHECK_THAT(unknown.err, Catch::Contains("'Q'"));
}

TEST_CASE("program cost --json: the fields the issue names, with the lecture's figures", "[program]") {
  Sandbox box;
  lecture_files(box);
  const std::uint64_t B = 1024, D = 256, E = 256, K = 64, P = D * E + E * K;
  const nlohmann::json j = json_of(box, {"program", "cost", "m.ein", "--json"});
  CHECK(u64(j["forward_flops"]) == 2 * B * D * E + 2 * B * E * K + 2 * B * K);
  CHECK(u64(j["backward_flops"]) == 2 * B * D * E + 4 * B * E * K + 2 * B * K + 1);
  CHECK(u64(j["params"]) == P);
  CHECK(j["axes"] == nlohmann::json({{"B", 1024}, {"D", 256}, {"E", 256}, {"K", 64}}));
  const nlohmann::json& m = j["memory"];
  CHECK(u64(m["params_bytes"]) == 4 * P);
  CHECK(u64(m["grads_bytes"]) == 4 * P);
  CHECK(u64(m["optimizer_bytes"]) == 0);
  CHECK(u64(m["activations_bytes"]) == 4 * (B * E + B * K));
  CHECK(u64(m["peak_bytes"]) == 3801092);  // tests/codegen/test_program_cost.cpp counts it event by event
  // what is kept for the backward, and which gradients read it
  REQUIRE(j["activations"].size() == 2);
  CHECK(j["activations"][0]["tensor"] == "h1");
  CHECK(j["activations"][0]["shape"] == "[B=1024, E=256] f32");
  CHECK(u64(j["activations"][0]["bytes"]) == 4 * B * E);
  CHECK(j["activations"][0]["needed_by"] == nlohmann::json::array({"einsum(dh2, h1, 'B K, B E -> E K')"}));
  CHECK(j["activations"][1]["tensor"] == "h2");
  CHECK(u64(j["activations"][1]["bytes"]) == 4 * B * K);
  REQUIRE(j["statements"].size() == 4);
  const nlohmann::json& h1 = j["statements"][0];
  CHECK(h1["name"] == "h1");
  CHECK(h1["op"] == "einsum");
  CHECK(h1["pattern"] == "B D, D E -> B E");
  CHECK(u64(h1["flops"]) == 2 * B * D * E);
  CHECK(u64(h1["backward_flops"]) == 2 * B * D * E);
  CHECK(u64(h1["bytes_read"]) == 4 * (B * D + D * E));
  CHECK(u64(h1["bytes_written"]) == 4 * B * E);
  CHECK(h1["gradients"].size() == 1);
  CHECK(h1["gradients"][0]["tensor"] == "w1");
  CHECK(h1["roofline"]["bound"] == "compute");
  CHECK(j["roofline"]["device"] == "h100");
  CHECK(j["roofline"]["step_time_s"].get<double>() > 0);
  CHECK(u64(j["estimate"]["six_n_p"]) == 6 * B * P);
  CHECK(j["estimate"]["n"].get<double>() == 1024.0);
  CHECK(u64(j["estimate"]["skipped_flops"]) == 2 * B * D * E);

  // Overrides, dtype, optimizer, mixed precision.
  const nlohmann::json a = json_of(box, {"program", "cost", "m.ein", "B=64", "--dtype", "bf16", "--optimizer", "adam",
                                         "--mixed-precision", "--device", "a100", "--json"});
  CHECK(u64(a["forward_flops"]) == 2 * 64 * D * E + 2 * 64 * E * K + 2 * 64 * K);
  CHECK(u64(a["memory"]["params_bytes"]) == 2 * P);
  CHECK(u64(a["memory"]["optimizer_bytes"]) == 12 * P);  // two f32 states and f32 master weights
  CHECK(u64(a["optimizer_flops"]) == 14 * P);
  CHECK(a["roofline"]["device"] == "a100");
  CHECK(a["optimizer"] == "adam");
  CHECK(a["mixed_precision"] == true);
}

TEST_CASE("program cost: the table, and the GPT-2 block", "[program]") {
  Sandbox box;
  lecture_files(box);
  const test::CliResult r = box.run({"program", "cost", "m.ein"});
  INFO(r);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::StartsWith("program m.ein  B=1024 D=256 E=256 K=64\n"));
  CHECK_THAT(r.out, Catch::Contains("dw1 = einsum(dh1, x, 'B E, B D -> D E')   134.2 MFLOP  134217728"));
  CHECK_THAT(r.out, Catch::Contains("6·N·P estimate (N = 1024 data points, P = 81920 params)"));
  CHECK_THAT(r.out, Catch::Contains("difference               -133955583"));
  box.write_bytes("gpt2.ein", test::read_model("gpt2_block.ein"));
  const nlohmann::json g = json_of(box, {"program", "cost", "gpt2.ein", "--json"});
  std::uint64_t forward = 0;
  for (const nlohmann::json& s : g["statements"]) forward += u64(s["flops"]);
  CHECK(u64(g["forward_flops"]) == forward);
  CHECK(g["statements"].size() == 45);
  CHECK(u64(g["params"]) == 7087872);
}

TEST_CASE("program cost: GPT-2 with its layer written once, at every published size and at GPT-3's geometry", "[program][block]") {
  Sandbox box;
  box.write_bytes("gpt2.ein", test::read_model("gpt2.ein"));
  auto params_of = [&](const std::string& file, std::vector<std::string> sizes) {
    std::vector<std::string> args = {"program", "cost", file};
    args.insert(args.end(), sizes.begin(), sizes.end());
    args.push_back("--json");
    return u64(json_of(box, args)["params"]);
  };
  auto params = [&](std::vector<std::string> sizes) { return params_of("gpt2.ein", std::move(sizes)); };
  // the published checkpoints' counts (tied head, learned positions, biases)
  CHECK(params({}) == 124439808);
  CHECK(params({"L=24", "D=1024", "H=16", "F=4096"}) == 354823168);
  CHECK(params({"L=36", "D=1280", "H=20", "F=5120"}) == 774030080);
  CHECK(params({"L=48", "D=1600", "H=25", "F=6400"}) == 1557611200);
  // GPT-3 175B's geometry: Narayanan's 12·l·h² + 13·l·h + (V + s)·h plus the final norm's 2·h
  const std::uint64_t l = 96, h = 12288, V = 50257, s = 2048;
  CHECK(params({"L=96", "D=12288", "H=96", "K=128", "F=49152", "S=2048", "T=2048"}) ==
        12 * l * h * h + 13 * l * h + (V + s) * h + 2 * h);
  CHECK(12 * l * h * h + 13 * l * h + (V + s) * h + 2 * h == 174604259328ULL);

  // LLaMA-2 7B and 70B (grouped-query attention, SwiGLU, RMSNorm, an untied head), exactly
  box.write_bytes("llama2.ein", test::read_model("llama2.ein"));
  auto llama = [&](std::vector<std::string> sizes) { return params_of("llama2.ein", std::move(sizes)); };
  CHECK(llama({}) == 6738415616ULL);
  CHECK(llama({"L=80", "D=8192", "G=8", "R=8", "F=28672"}) == 68976648192ULL);

  // the table: a layer's statements once, with the layers they stand for
  const test::CliResult r = box.run({"program", "cost", "gpt2.ein", "L=3", "S=8", "T=8", "D=16", "H=2", "K=8", "F=64", "V=32"});
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("  hL[l].q0       0..2    einsum "));
  CHECK_THAT(r.out, Catch::Contains("  dw_q[l] = einsum(dhL[l].q0, hL[l].ln1, 'B S (H K), B S D -> D (H K)')"));
  CHECK_THAT(r.out, Catch::Contains("  hL[l].p                [B=1, H=2, S=8, T=8] f32     512  ×3"));
  // dropout's masks, 1 byte an element, read by the dropout's own gradient
  CHECK_THAT(r.out, Catch::Contains("  hL[l].pd.mask          [B=1, H=2, S=8, T=8] bool    128  ×3      "
                                    "dhL[l].pd · hL[l].pd.mask · 1.11111111"));
  CHECK_THAT(r.out, Catch::Contains("kept per layer of hL: "));
  const nlohmann::json j = json_of(box, {"program", "cost", "gpt2.ein", "L=3", "S=8", "T=8", "D=16", "H=2", "K=8",
                                         "F=64", "V=32", "--json"});
  std::uint64_t forward = 0, in_layers = 0;
  for (const nlohmann::json& st : j["statements"]) {
    forward += u64(st["flops"]);
    if (st.contains("block")) {
      CHECK(st["block"]["call"] == "hL");
      CHECK(st["block"]["layers"] == 3);
      ++in_layers;
    }
  }
  CHECK(u64(j["forward_flops"]) == forward);  // every layer's statements, each counted
  CHECK(in_layers == 3 * 32);  // 26 statements a layer, and 3 dropouts that are two each
  // what each layer keeps: its activations tagged with their layer, and the block's subtotal
  std::uint64_t kept_in_layers = 0, masks = 0;
  for (const nlohmann::json& a : j["activations"])
    if (a.contains("block")) {
      CHECK(a["block"]["call"] == "hL");
      kept_in_layers += u64(a["bytes"]);
      if (a["shape"].get<std::string>().ends_with("bool")) masks += u64(a["bytes"]);
    }
  REQUIRE(j["activations_per_block"].size() == 1);
  const nlohmann::json& per = j["activations_per_block"][0];
  CHECK(per["call"] == "hL");
  CHECK(per["layers"] == 3);
  CHECK(u64(per["bytes"]) == kept_in_layers);
  CHECK(u64(per["bytes_per_layer"]) * 3 == kept_in_layers);
  CHECK(masks == 3 * (2 * 8 * 8 + 2 * 8 * 16));  // per layer: attention's a·s²·b, two of s·b·h, a byte each
}

TEST_CASE("program cost: matmul_flops is torch's profiler's count (with_flops) of the same models", "[program][block]") {
  // tests/lib/data/make_profiler_flops.py: the zoo's block models at tiny sizes in torch, the
  // forward profiled, aten::mm and aten::bmm's FLOPs (the q k v, output, MLP and head products;
  // the attention's two batched ones)
  Sandbox box;
  for (const profiler_values::ProfiledModel& m : profiler_values::profiled_models) {
    CAPTURE(m.file);
    box.write_bytes(m.file, test::read_model(m.file));
    std::vector<std::string> args = {"program", "cost", m.file, "--json"};
    for (const auto& [axis, length] : m.sizes) args.push_back(axis + "=" + std::to_string(length));
    std::uint64_t profiled = 0;
    for (const auto& [op, flops] : m.matmul_flops) profiled += flops;
    CHECK(profiled > 0);
    CHECK(u64(json_of(box, args)["matmul_flops"]) == profiled);
  }
}

TEST_CASE("program cost --mesh --shard: per device, every collective in the JSON and the text", "[program][block]") {
  Sandbox box;
  box.write_bytes("gpt2.ein", test::read_model("gpt2.ein"));
  const std::vector<std::string> args = {"program", "cost", "gpt2.ein", "L=2", "B=4", "S=8", "T=8", "D=16", "H=4", "K=4",
                                         "F=64", "V=32", "--dtype", "bf16", "--mesh", "dp=2@ib tp=2@nvlink", "--shard",
                                         "B:dp H:tp F:tp"};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const nlohmann::json j = json_of(box, json_args);
  const nlohmann::json& m = j["mesh"];
  CHECK(m["devices"] == 4);
  CHECK(m["shard"]["H"] == "tp");
  std::uint64_t tp_forward = 0, dp_backward = 0, bus = 0;
  for (const nlohmann::json& c : m["collectives"]) {
    if (c["phase"] == "forward" && c["mesh_dim"] == "tp") {
      ++tp_forward;
      CHECK(u64(c["elements"]) == 2 * 8 * 16);  // b·s·h on a device: b = 4 / dp
      CHECK(u64(c["bus_bytes"]) == u64(c["bytes"]));  // 2(n−1)/n = 1 for n = 2
    }
    if (c["phase"] == "backward" && c["mesh_dim"] == "dp") dp_backward += u64(c["elements"]);
    if (c["phase"] == "backward") bus += u64(c["bus_bytes"]);
  }
  CHECK(tp_forward == 4);  // two a layer
  CHECK(bus == u64(m["backward_bus_bytes"]));
  CHECK(dp_backward > 0);
  CHECK(u64(m["params_bytes"]) < u64(j["memory"]["params_bytes"]));
  const test::CliResult r = box.run(args);
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("mesh dp=2@ib tp=2@nvlink; B:dp H:tp F:tp  (4 devices; per device)"));
  CHECK_THAT(r.out, Catch::Contains("forward  all-reduce over tp (2)  hL[l].a0  256 elements, 512 B sent  sums over H (split over tp)  ×2"));
  // a shard without a mesh, and a layout the program cannot take
  const test::CliResult no_mesh = box.run({"program", "cost", "gpt2.ein", "--shard", "B:dp"});
  CHECK(no_mesh.status == 1);
  CHECK_THAT(no_mesh.err, Catch::Contains("needs a mesh"));
  // the file's own mesh and shard lines, and the command line's in their place
  std::string text = test::read_model("gpt2.ein");
  const std::size_t axes_end = text.find('\n', text.find("\naxes ") + 1);
  text.insert(axes_end + 1, "mesh dp=2@ib tp=2@nvlink\nshard B:dp H:tp F:tp\n");
  box.write_bytes("meshed.ein", text);
  std::vector<std::string> from_file = args;
  from_file[2] = "meshed.ein";
  from_file.resize(from_file.size() - 4);  // without --mesh and --shard
  from_file.push_back("--json");
  CHECK(json_of(box, from_file)["mesh"] == m);
  std::vector<std::string> replaced = from_file;
  replaced.insert(replaced.end() - 1, {"--shard", "B:dp"});
  const nlohmann::json only_dp = json_of(box, replaced)["mesh"];
  CHECK(only_dp["shard"].size() == 1);
  CHECK(only_dp["devices"] == 4);
  // ZeRO-3 over dp: params split over dp as well, gathered forward and backward, gradients scattered
  std::vector<std::string> zero3 = json_args;
  zero3.insert(zero3.end() - 1, {"--zero", "3"});
  const nlohmann::json z = json_of(box, zero3)["mesh"];
  CHECK(z["zero"] == 3);
  CHECK(u64(z["params_bytes"]) < u64(m["params_bytes"]));
  std::map<std::string, int> kinds;
  for (const nlohmann::json& c : z["collectives"])
    if (c["mesh_dim"] == "dp") ++kinds[c["phase"].get<std::string>() + " " + c["kind"].get<std::string>()];
  CHECK(kinds["forward all-gather"] > 0);
  CHECK(kinds["backward all-gather"] == kinds["forward all-gather"]);
  CHECK(kinds["backward reduce-scatter"] == kinds["forward all-gather"]);
  CHECK(kinds["backward all-reduce"] == 0);
  std::vector<std::string> zero4 = args;
  zero4.insert(zero4.end(), {"--zero", "4"});
  CHECK(box.run(zero4).status == 2);
  const test::CliResult bad = box.run({"program", "cost", "gpt2.ein", "H=4", "--mesh", "tp=3", "--shard", "H:tp"});
  CHECK(bad.status == 1);
  CHECK_THAT(bad.err, Catch::Contains("axis H is 4, which does not split over tp=3"));
}

TEST_CASE("program cost --compare: the published formulas beside the exact counts, by cause", "[program][block]") {
  Sandbox box;
  box.write_bytes("gpt2.ein", test::read_model("gpt2.ein"));
  // GPT-3 175B's geometry, in bf16 (the activation formula's 2-byte convention)
  const nlohmann::json j = json_of(box, {"program", "cost", "gpt2.ein", "L=96", "D=12288", "H=96", "K=128", "F=49152",
                                         "S=2048", "T=2048", "--dtype", "bf16", "--compare", "--json"});
  const std::uint64_t l = 96, h = 12288, s = 2048, V = 50257, a = 96, b = 1;
  const nlohmann::json& c = j["compare"];
  CHECK(u64(c["geometry"]["l"]) == l);
  CHECK(u64(c["geometry"]["h"]) == h);
  auto row = [&](const std::string& what) {
    for (const nlohmann::json& r : c["rows"])
      if (r["what"] == what) return r;
    FAIL("no row " << what);
    return nlohmann::json();
  };
  auto part = [&](const nlohmann::json& r, std::size_t i) { return std::pair{u64(r["parts"][i]["published"]), u64(r["parts"][i]["exact"])}; };
  // parameters: every term of Narayanan's exactly, and the final norm's 2·h beside it
  const nlohmann::json p = row("parameters");
  CHECK(u64(p["published"]) == 12 * l * h * h + 13 * l * h + (V + s) * h);
  CHECK(u64(p["exact"]) == u64(p["published"]) + 2 * h);
  for (std::size_t i = 0; i < 3; ++i) CHECK(part(p, i).first == part(p, i).second);
  // training FLOPs: the contractions are the formulas' terms exactly (Korthikanti: no
  // recomputation; Narayanan: the layers' forward once more); the rest are the other ops
  for (const char* what : {"training FLOPs", "training FLOPs, full recomputation"}) {
    CAPTURE(what);
    const nlohmann::json t = row(what);
    for (std::size_t i = 0; i < 3; ++i) CHECK(part(t, i).first == part(t, i).second);
    CHECK(part(t, 3).first == 0);
  }
  CHECK(u64(row("training FLOPs")["published"]) == 72 * b * l * s * h * h + 12 * b * l * s * s * h + 6 * b * s * V * h);
  CHECK(u64(row("training FLOPs")["exact"]) == u64(j["forward_flops"]) + u64(j["backward_flops"]));
  // Chinchilla: the same contractions in a layer; it counts the embedding as a matmul too
  const nlohmann::json ch = row("training FLOPs, Chinchilla");
  for (std::size_t i = 0; i < 2; ++i) CHECK(part(ch, i).first == part(ch, i).second);
  CHECK(part(ch, 2).first - part(ch, 2).second == 3 * 2 * b * s * V * h);
  CHECK(part(ch, 3).first == 3 * l * 3 * a * s * s * b);
  // Kaplan: the weights' contractions exactly, attention's twice (Q·Kᵀ and P·V over every key)
  const nlohmann::json k = row("forward FLOPs");
  CHECK(part(k, 0).first == part(k, 0).second);
  CHECK(part(k, 1).second == 2 * part(k, 1).first);
  CHECK(u64(k["exact"]) == u64(j["forward_flops"]));
  // activations: Korthikanti's Megatron layer (dropout and its 1-byte masks, fused layer norms), exactly
  const nlohmann::json act = row("activations per layer (bytes)");
  CHECK(u64(act["published"]) == 34 * s * b * h + 5 * a * s * s * b);
  CHECK(part(act, 0).second == 34 * s * b * h);
  CHECK(part(act, 1).second == 5 * a * s * s * b);
  CHECK(u64(act["exact"]) == 34 * s * b * h + 5 * a * s * s * b);
  // the forward's contractions, a figure of their own
  CHECK(u64(j["matmul_flops"]) == part(k, 0).second + part(k, 1).second + part(k, 2).second);
  // the text, and a variable the program has no axis for
  const test::CliResult r = box.run({"program", "cost", "gpt2.ein", "--compare"});
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("published formulas (l=12 (L) h=768 (D) s=1024 (S) V=50257 (V) a=12 (H) k=64 (K) "
                                    "f=3072 (F) b=1 (B))"));
  CHECK_THAT(r.out, Catch::Contains("    vectors outside the layers (the final norm)          0       1536       +1536"));
  box.write_bytes("llama2.ein", test::read_model("llama2.ein"));
  const test::CliResult e = box.run({"program", "cost", "llama2.ein", "--compare"});
  CHECK(e.status == 1);
  CHECK_THAT(e.err, Catch::Contains("--compare: the program has no axis 'H' for a (the attention heads): name the axis, "
                                    "e.g. --compare-axes a=NAME (products as G*R)"));
  const nlohmann::json q = json_of(box, {"program", "cost", "llama2.ein", "--compare", "--compare-axes", "a=G*R", "--json"});
  CHECK(u64(q["compare"]["geometry"]["a"]) == 32);
  CHECK(u64(q["compare"]["rows"][0]["exact"]) == 6738415616ULL);
}

TEST_CASE("program run: OUTDIR/NAME.npy per output, as the library computes them", "[program]") {
  Sandbox box;
  lecture_files(box);
  const nlohmann::json j =
      json_of(box, {"program", "run", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "-o", "out", "--json"});
  CHECK(j["outputs"].size() == 1);
  CHECK(j["outputs"][0]["name"] == "loss");
  CHECK(j["outputs"][0]["path"] == "out/loss.npy");
  CHECK(j["outputs"][0]["shape"] == nlohmann::json::array());
  CHECK(u64(j["peak_bytes_measured"]) <= u64(j["peak_bytes_predicted"]));
  CHECK(u64(j["peak_bytes_predicted"]) == 4 * (8 * 256 + 8 * 64) + 4);  // h1 and h2 at once, then the loss
  const Tensor loss = box.read_npy("out/loss.npy");
  CHECK(loss.dim() == 0);  // a 0-d output is a 0-d array
  const Tensor x = box.read_npy("x.npy"), w1 = box.read_npy("w1.npy"), w2 = box.read_npy("w2.npy");
  const Tensor want = reduce(map(einsum(einsum(x, w1, "b d, d e -> b e"), w2, "b e, e k -> b k"), UnaryOp::square),
                             "b k ->", "mean");
  CHECK(loss.to_vector<float>()[0] == Approx(want.to_vector<float>()[0]).epsilon(1e-5));
  CHECK(box.files() == std::set<std::string>{"m.ein", "x.npy", "w1.npy", "w2.npy", "out", "out/loss.npy"});

  // Several outputs; an axis given by NAME=LEN beside the files.
  box.write_bytes("m2.ein", test::read_model("lecture2.ein") + "output h2 loss\n");
  const test::CliResult r = box.run({"program", "run", "m2.ein", "K=64", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "-o", "o2"});
  INFO(r);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(box.read_npy("o2/h2.npy").shape() == Shape{8, 64});
  CHECK(box.read_npy("o2/loss.npy").dim() == 0);
}

TEST_CASE("program run: a failed run leaves no file behind, and exit statuses", "[program][errors]") {
  Sandbox box;
  lecture_files(box);
  box.write_npy("bad_w2.npy", Tensor::randn({128, 64}, DType::f32, 4));
  std::filesystem::create_directory(box.path("keep"));
  box.write_bytes("keep/loss.npy", "old");
  struct Row {
    std::vector<std::string> args;
    int status;
    std::string err;  // stderr starts with it
  };
  const std::vector<Row> rows = {
      {{"x=x.npy", "w1=w1.npy", "-o", "out"}, 1, "einexpr program run: error: missing param 'w2'"},
      {{"x=x.npy", "w1=w1.npy", "w2=bad_w2.npy", "-o", "keep"}, 1,
       "einexpr program run: error: m.ein:5:11: w2=bad_w2.npy gives axis 'E' length 128 (dim 0 of param w2: E K) but "
       "it is 256 (from w1=w1.npy)"},
      {{"x=x.npy", "w1=w1.npy", "w2=w2.npy", "B=9", "-o", "out"}, 1,
       "einexpr program run: error: m.ein:3:10: x=x.npy gives axis 'B' length 8 (dim 0 of input x: B D) but it is 9 "
       "(given as B=9)"},
      {{"x=x.npy", "w1=w1.npy", "w2=w2.npy", "h1=x.npy", "-o", "out"}, 1,
       "einexpr program run: error: 'h1' is computed by the program: give its inputs and params, not h1=x.npy"},
      {{"x=x.npy", "w1=w1.npy", "w2=nope.npy", "-o", "out"}, 1, "einexpr program run: error: nope.npy: cannot open"},
      {{"x=x.npy", "w1=w1.npy", "w2=w2.npy", "B=abc", "-o", "out"}, 2, "einexpr program run: error: bad NAME=LEN 'B=abc'"},
      {{"x=x.npy", "w1=w1.npy", "w2=w2.npy", "z=z.npy", "-o", "out"}, 1,
       "einexpr program run: error: 'z' in z=z.npy names no input, param or axis of the program"},
      {{"x=x.npy", "w1=w1.npy", "w2=w2.npy"}, 2, "einexpr program run: error: --output is required"},
      {{"x=x.npy", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "-o", "out"}, 2,
       "einexpr program run: error: tensor 'x' is given twice"},
  };
  for (const Row& r : rows) {
    std::vector<std::string> args = {"program", "run", "m.ein"};
    args.insert(args.end(), r.args.begin(), r.args.end());
    CAPTURE(args);
    const test::CliResult got = box.run(args);
    CHECK(got.status == r.status);
    CHECK(got.out.empty());
    CHECK_THAT(got.err, Catch::StartsWith(r.err));
    CHECK(box.files() == std::set<std::string>{"m.ein", "x.npy", "w1.npy", "w2.npy", "bad_w2.npy", "keep",
                                               "keep/loss.npy"});
    CHECK(box.read_bytes("keep/loss.npy") == "old");
  }
  // An output path that is a directory: found before any output is written.
  std::filesystem::create_directories(box.path("o3/loss.npy"));
  box.write_bytes("m2.ein", test::read_model("lecture2.ein") + "output h2 loss\n");
  const test::CliResult dir = box.run({"program", "run", "m2.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "-o", "o3"});
  CHECK(dir.status == 1);
  CHECK(dir.err == "einexpr program run: error: cannot write o3/loss.npy: it is a directory\n");
  CHECK_FALSE(std::filesystem::exists(box.path("o3/h2.npy")));
  const test::CliResult unknown = box.run({"program", "frob"});
  CHECK(unknown.status == 2);
  CHECK(unknown.err ==
        "einexpr program: error: unknown command 'frob' (commands: check, cost, run, train) (see 'einexpr program --help')\n");
  const test::CliResult none = box.run({"program"});
  CHECK(none.status == 2);
  const test::CliResult help = box.run({"program", "cost", "--help"});
  CHECK(help.status == 0);
  CHECK_THAT(help.out, Catch::Contains("--optimizer"));
}

TEST_CASE("program cost --search: the fastest layouts that fit, the first term by term, and the time of each collective", "[program][block]") {
  Sandbox box;
  box.write_bytes("gpt2.ein", test::read_model("gpt2.ein"));
  const std::vector<std::string> args = {"program", "cost", "gpt2.ein", "L=2", "B=8", "S=8", "T=8", "D=16", "H=4", "K=4",
                                         "F=64", "V=32", "--dtype", "bf16", "--optimizer", "adam", "--mixed-precision",
                                         "--mesh", "dp=1@ib tp=1@nvlink", "--shard", "B:dp H:tp F:tp", "--search",
                                         "--devices", "8", "--node", "4"};
  const test::CliResult r = box.run(args);
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("layouts on 8 h100 (80 GB each): 48 tried, 48 fit"));
  CHECK_THAT(r.out, Catch::Contains("the first, term by term ("));
  CHECK_THAT(r.out, Catch::Contains("  compute      "));
  CHECK_THAT(r.out, Catch::Contains("  memory       "));
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const nlohmann::json j = json_of(box, json_args);
  CHECK(j["tried"] == 48);
  REQUIRE(j["fastest"].size() == 5);
  double last = 0;
  for (const nlohmann::json& c : j["fastest"]) {
    CHECK(c["step_s"].get<double>() >= last);
    last = c["step_s"].get<double>();
    CHECK(u64(c["memory_bytes"]) == u64(c["params_bytes"]) + u64(c["grads_bytes"]) + u64(c["optimizer_bytes"]) +
                                        u64(c["activations_bytes"]));
  }
  // the times: the α-β model on the mesh's links, in --mesh's report too
  const nlohmann::json m = json_of(box, {"program", "cost", "gpt2.ein", "L=2", "B=8", "S=8", "T=8", "D=16", "H=4", "K=4",
                                         "F=64", "V=32", "--dtype", "bf16", "--mesh", "dp=2@ib tp=2@nvlink", "--shard",
                                         "B:dp H:tp F:tp", "--json"})["mesh"];
  CHECK(m["timing"]["device"] == "h100");
  CHECK(m["timing"]["step_s"].get<double>() > m["timing"]["compute_s"].get<double>());
  for (const nlohmann::json& c : m["collectives"]) CHECK(c["time_s"].get<double>() > 8.4e-6);
  // --devices without --search, and a search without a mesh
  std::vector<std::string> no_search(args.begin(), args.end() - 5);  // without --search --devices 8 --node 4
  no_search.insert(no_search.end(), {"--devices", "8"});
  CHECK(box.run(no_search).status == 2);
  const test::CliResult no_mesh = box.run({"program", "cost", "gpt2.ein", "--search", "--devices", "8"});
  CHECK(no_mesh.status == 2);
  CHECK_THAT(no_mesh.err, Catch::Contains("--search sizes a mesh"));
}
