// program train, end to end: the trained params against the library's Trainer (the same
// steps bit for bit), every JSON field, a folder of inputs taken one file per step, a loss
// that turns NaN (the last good params written, the step named), and the refusals, each
// leaving no file behind.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

#include "cli_run.hpp"
#include "einexpr/einexpr.hpp"
#include "model_files.hpp"

using namespace einexpr;
using test::Sandbox;

namespace {

/// The lecture's model at B=8 D=6 E=5 K=4 as m.ein, x and the initial params as .npy files.
void lecture_files(const Sandbox& box) {
  box.write_bytes("m.ein", test::read_model("lecture2.ein"));
  box.write_npy("x.npy", Tensor::randn({8, 6}, DType::f32, 1));
  box.write_npy("w1.npy", Tensor::randn({6, 5}, DType::f32, 2));
  box.write_npy("w2.npy", Tensor::randn({5, 4}, DType::f32, 3));
}

bool equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  for (std::int64_t i = 0; i < x.numel(); ++i)
    if (x.data<float>()[i] != y.data<float>()[i]) return false;
  return true;
}

}  // namespace

TEST_CASE("program train: the params of N steps, as the library's trainer makes them", "[program][train]") {
  Sandbox box;
  lecture_files(box);
  const test::CliResult r = box.run({"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "4",
                                     "--optimizer", "adamw", "--lr", "0.01", "--betas", "0.8,0.99", "--weight-decay",
                                     "0.1", "-o", "out", "--json"});
  INFO(r);
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  Trainer t = compile_training(parse_program(test::read_model("lecture2.ein"), "m.ein"), ProgramOptions{.axes = {{"B", 8}}},
                               {.kind = Optimizer::adamw, .lr = 0.01, .weight_decay = 0.1, .beta1 = 0.8, .beta2 = 0.99},
                               {{"w1", box.read_npy("w1.npy")}, {"w2", box.read_npy("w2.npy")}});
  REQUIRE(j["steps"].size() == 4);
  for (int s = 0; s < 4; ++s) {
    const double loss = t.step({{"x", box.read_npy("x.npy")}});
    CHECK(j["steps"][static_cast<std::size_t>(s)]["loss"].get<double>() == loss);
    CHECK(j["steps"][static_cast<std::size_t>(s)]["time_s"].get<double>() > 0);
  }
  CHECK(equal(box.read_npy("out/w1.npy"), t.parameters().at("w1")));
  CHECK(equal(box.read_npy("out/w2.npy"), t.parameters().at("w2")));
  CHECK(j["optimizer"] == "adamw");
  const ProgramCost c = cost(parse_program(test::read_model("lecture2.ein"), "m.ein"), {{"B", 8}, {"D", 6}, {"E", 5}, {"K", 4}},
                             {.device = "cpu", .optimizer = Optimizer::adamw});
  CHECK(j["flops_per_step"].get<std::uint64_t>() == c.step_flops.u64());
  CHECK(j["roofline_time_s"].get<double>() > 0);
  CHECK(j["mfu"].get<double>() > 0);
  CHECK(j["peak_bytes_predicted"].get<std::int64_t>() == t.peak_bytes_predicted());
  CHECK(j["peak_bytes_measured"].get<std::int64_t>() <= j["peak_bytes_predicted"].get<std::int64_t>());
  CHECK(j["peak_bytes_measured"].get<std::int64_t>() > 0);
  CHECK(j["activations_bytes"].get<std::int64_t>() == t.training().activations_bytes());
  CHECK(j["recompute_flops"].get<std::int64_t>() == 0);
  CHECK(box.files() == std::set<std::string>{"m.ein", "x.npy", "w1.npy", "w2.npy", "out", "out/w1.npy", "out/w2.npy",
                                             "out/w1.exp_avg.npy", "out/w1.exp_avg_sq.npy", "out/w2.exp_avg.npy",
                                             "out/w2.exp_avg_sq.npy", "out/trainer.steps.npy"});
}

TEST_CASE("program train: an input given as a folder is read one file per step, in name order", "[program][train]") {
  Sandbox box;
  lecture_files(box);
  std::filesystem::create_directory(box.path("batches"));
  for (int s = 0; s < 3; ++s) box.write_npy("batches/b" + std::to_string(s) + ".npy", Tensor::randn({8, 6}, DType::f32, 10 + s));
  const test::CliResult r = box.run({"program", "train", "m.ein", "x=batches", "w1=w1.npy", "w2=w2.npy", "--steps", "3",
                                     "--optimizer", "momentum", "--lr", "0.05", "--momentum", "0.5", "-o", "out", "--json"});
  INFO(r);
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  Trainer t = compile_training(parse_program(test::read_model("lecture2.ein"), "m.ein"), ProgramOptions{.axes = {{"B", 8}}},
                               {.kind = Optimizer::momentum, .lr = 0.05, .momentum = 0.5},
                               {{"w1", box.read_npy("w1.npy")}, {"w2", box.read_npy("w2.npy")}});
  for (int s = 0; s < 3; ++s)
    CHECK(j["steps"][static_cast<std::size_t>(s)]["loss"].get<double>() ==
          t.step({{"x", box.read_npy("batches/b" + std::to_string(s) + ".npy")}}));
  CHECK(equal(box.read_npy("out/w1.npy"), t.parameters().at("w1")));
  // fewer files than steps: refused before any step
  const test::CliResult few = box.run({"program", "train", "m.ein", "x=batches", "w1=w1.npy", "w2=w2.npy", "--steps", "4", "-o", "o2"});
  CHECK(few.status == 1);
  CHECK(few.err == "einexpr program train: error: the folder given for 'x' holds 3 .npy files, fewer than the 4 steps (one per step)\n");
  CHECK_FALSE(std::filesystem::exists(box.path("o2")));
}

TEST_CASE("program train: a loss that turns NaN stops the run, the last good params written", "[program][train][errors]") {
  Sandbox box;
  lecture_files(box);
  // w1 so large that the squares overflow f32 after the first sgd step (lr 1e4)
  const test::CliResult r = box.run({"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "50",
                                     "--lr", "1e4", "-o", "out"});
  INFO(r);
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::StartsWith("einexpr program train: error: the loss is "));
  CHECK_THAT(r.err, Catch::Contains(": stopped before its update (the params are those of step "));
  CHECK_THAT(r.err, Catch::Contains(" were written to out\n"));
  CHECK(box.files().count("out/w1.npy"));
  const Tensor w = box.read_npy("out/w1.npy");
  for (std::int64_t i = 0; i < w.numel(); ++i) CHECK(std::isfinite(w.data<float>()[i]));
}

TEST_CASE("program train: refusals name the fault and leave no file behind", "[program][train][errors]") {
  Sandbox box;
  lecture_files(box);
  box.write_bytes("y.ein", "axes B=8 D=6\ninput x: B D\nparam w: D\ny = map(x, w, \"B D, D -> B D\", \"mul\")\n");
  box.write_npy("w.npy", Tensor::randn({6}, DType::f32, 5));
  struct Row {
    std::vector<std::string> args;
    int status;
    std::string err;  // stderr starts with it
  };
  const std::vector<Row> rows = {
      {{"m.ein", "x=x.npy", "w1=w1.npy", "--steps", "2", "-o", "out"}, 1, "einexpr program train: error: missing param 'w2'"},
      {{"y.ein", "x=x.npy", "w=w.npy", "--steps", "2", "-o", "out"}, 1,
       "einexpr program train: error: program train needs the output to be the loss, a 0-d float; 'y' [B=8, D=6] f32 is not"},
      {{"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "0", "-o", "out"}, 2,
       "einexpr program train: error: --steps must be at least 1, got 0"},
      {{"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "-o", "out"}, 2, "einexpr program train: error: --steps is required"},
      {{"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "2", "--optimizer", "lion", "-o", "out"}, 1,
       "einexpr program train: error: unknown optimizer 'lion' (expected sgd, momentum, adam or adamw)"},
      {{"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "2", "--optimizer", "adam", "--betas", "0.9", "-o", "out"}, 2,
       "einexpr program train: error: --betas expects B1,B2, got '0.9'"},
      {{"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "2", "--optimizer", "adam", "--betas", "0.9,1", "-o", "out"}, 1,
       "einexpr program train: error: the betas must be in [0, 1), got 0.900000, 1.000000"},
      {{"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "2", "--momentum", "0.5", "-o", "out"}, 2,
       "einexpr program train: error: --momentum is for --optimizer momentum (sgd has none)"},
      {{"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "2", "--lr", "-1", "-o", "out"}, 1,
       "einexpr program train: error: the learning rate must be >= 0, got -1.000000"},
      {{"m.ein", "x=x.npy", "w1=x.npy", "w2=w2.npy", "--steps", "2", "-o", "out"}, 1, "einexpr program train: error: m.ein:"},
      {{"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "2", "--device", "cuda", "-o", "out"}, 1,
       "einexpr program train: error: program train runs on the CPU only for now, not cuda\n"},
  };
  for (const Row& r : rows) {
    std::vector<std::string> args = {"program", "train"};
    args.insert(args.end(), r.args.begin(), r.args.end());
    CAPTURE(args);
    const test::CliResult got = box.run(args);
    CHECK(got.status == r.status);
    CHECK(got.out.empty());
    CHECK_THAT(got.err, Catch::StartsWith(r.err));
    CHECK(box.files() == std::set<std::string>{"m.ein", "y.ein", "x.npy", "w.npy", "w1.npy", "w2.npy"});
  }
}

TEST_CASE("program train: --seed draws dropout's masks, as the library's trainer with it, and --resume continues them",
          "[program][train]") {
  Sandbox box;
  box.write_bytes("d.ein", "axes B=8 D=6 E=5\ninput x: B D\nparam w1: D E\nh = einsum(x, w1, \"B D, D E -> B E\")\n"
                           "d = dropout(h, 0.5)\nq = map(d, \"B E -> B E\", \"square\")\nloss = reduce(q, \"B E ->\", \"mean\")\n");
  box.write_npy("x.npy", Tensor::randn({8, 6}, DType::f32, 1));
  box.write_npy("w1.npy", Tensor::randn({6, 5}, DType::f32, 2));
  auto run = [&](std::vector<std::string> more) {
    std::vector<std::string> args = {"program", "train", "d.ein", "x=x.npy", "--lr", "0.1", "--json"};
    args.insert(args.end(), more.begin(), more.end());
    const test::CliResult r = box.run(args);
    INFO(r);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json seven = run({"w1=w1.npy", "--steps", "4", "--seed", "7", "-o", "s7"});
  OptimizerOptions o{.kind = Optimizer::sgd, .lr = 0.1};
  o.seed = 7;
  Trainer t = compile_training(parse_program(box.read_bytes("d.ein"), "d.ein"), {}, o, {{"w1", box.read_npy("w1.npy")}});
  for (int s = 0; s < 4; ++s)
    CHECK(seven["steps"][static_cast<std::size_t>(s)]["loss"].get<double>() == t.step({{"x", box.read_npy("x.npy")}}));
  CHECK(equal(box.read_npy("s7/w1.npy"), t.parameters().at("w1")));
  // another seed, other masks: other losses
  const nlohmann::json eight = run({"w1=w1.npy", "--steps", "4", "--seed", "8", "-o", "s8"});
  CHECK(eight["steps"][0]["loss"].get<double>() != seven["steps"][0]["loss"].get<double>());
  // two steps, then two more from the checkpoint with the same seed: the four steps' masks
  run({"w1=w1.npy", "--steps", "2", "--seed", "7", "-o", "half"});
  const nlohmann::json rest = run({"--resume", "half", "--steps", "2", "--seed", "7", "-o", "rest"});
  CHECK(rest["steps"][1]["loss"].get<double>() == seven["steps"][3]["loss"].get<double>());
  CHECK(box.read_bytes("rest/w1.npy") == box.read_bytes("s7/w1.npy"));
}

TEST_CASE("program train: --resume continues as an uninterrupted run, bit for bit", "[program][train]") {
  Sandbox box;
  lecture_files(box);
  for (const char* optimizer : {"adam", "momentum", "sgd"}) {
    CAPTURE(optimizer);
    const std::vector<std::string> common = {"program", "train", "m.ein", "x=x.npy", "--optimizer", optimizer,
                                             "--lr", "0.01", "--weight-decay", "0.01", "--json"};
    auto run = [&](std::vector<std::string> more) {
      std::vector<std::string> args = common;
      args.insert(args.end(), more.begin(), more.end());
      const test::CliResult r = box.run(args);
      INFO(r);
      REQUIRE(r.status == 0);
      return nlohmann::json::parse(r.out);
    };
    const std::string o = optimizer;
    const nlohmann::json whole = run({"w1=w1.npy", "w2=w2.npy", "--steps", "5", "-o", o + "_whole"});
    const nlohmann::json first = run({"w1=w1.npy", "w2=w2.npy", "--steps", "2", "-o", o + "_half"});
    const nlohmann::json rest = run({"--resume", o + "_half", "--steps", "3", "-o", o + "_rest"});
    for (int s = 0; s < 5; ++s) {
      const nlohmann::json& got = s < 2 ? first["steps"][static_cast<std::size_t>(s)] : rest["steps"][static_cast<std::size_t>(s - 2)];
      CHECK(got["loss"].get<double>() == whole["steps"][static_cast<std::size_t>(s)]["loss"].get<double>());
    }
    int compared = 0;
    for (const std::string& f : box.files()) {
      if (f.rfind(o + "_whole/", 0) != 0) continue;
      CAPTURE(f);
      const std::string twin = o + "_rest/" + f.substr(o.size() + 7);
      CHECK(box.read_bytes(f) == box.read_bytes(twin));
      ++compared;
    }
    CHECK(compared == (o == "adam" ? 7 : o == "momentum" ? 5 : 3));  // params, state, the step count
    CHECK(box.read_npy(o + "_rest/trainer.steps.npy").data<std::int64_t>()[0] == 5);
  }
  // refusals: a param given beside --resume, state of another optimizer, no checkpoint
  const test::CliResult both = box.run({"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "--resume", "sgd_whole", "--steps", "1", "-o", "o"});
  CHECK(both.status == 2);
  CHECK(both.err == "einexpr program train: error: 'w1=w1.npy' gives a param, but --resume reads the params from sgd_whole (see 'einexpr program train --help')\n");
  box.run({"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "1", "--optimizer", "adam", "-o", "adam1"});
  const test::CliResult other = box.run({"program", "train", "m.ein", "x=x.npy", "--resume", "adam1", "--steps", "1", "--optimizer", "momentum", "-o", "o"});
  CHECK(other.status == 1);
  CHECK(other.err == "einexpr program train: error: the checkpoint has no 'w1.momentum_buffer' (momentum keeps it for each param)\n");
  const test::CliResult sgd = box.run({"program", "train", "m.ein", "x=x.npy", "--resume", "adam1", "--steps", "1", "-o", "o"});
  CHECK(sgd.status == 1);
  CHECK_THAT(sgd.err, Catch::StartsWith("einexpr program train: error: the checkpoint's 'w1.exp_avg' is no state of sgd (it keeps none)"));
  const test::CliResult none = box.run({"program", "train", "m.ein", "x=x.npy", "--resume", "nowhere", "--steps", "1", "-o", "o"});
  CHECK(none.status == 1);
  CHECK(none.err == "einexpr program train: error: --resume nowhere: not a directory\n");
  CHECK_FALSE(std::filesystem::exists(box.path("o")));
}

TEST_CASE("program train: --micro-batches accumulates K cuts of the batch into one update", "[program][train]") {
  Sandbox box;
  lecture_files(box);
  auto losses = [&](std::vector<std::string> more) {
    std::vector<std::string> args = {"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "3",
                                     "--optimizer", "adam", "--lr", "0.01", "--json"};
    args.insert(args.end(), more.begin(), more.end());
    const test::CliResult r = box.run(args);
    INFO(r);
    REQUIRE(r.status == 0);
    std::vector<double> out;
    const nlohmann::json j = nlohmann::json::parse(r.out);  // kept: a range-for over a temporary's member dangles
    for (const nlohmann::json& s : j["steps"]) out.push_back(s["loss"].get<double>());
    return out;
  };
  const std::vector<double> whole = losses({"-o", "whole"});
  const std::vector<double> micro = losses({"--micro-batches", "4", "-o", "micro"});
  for (std::size_t s = 0; s < whole.size(); ++s) CHECK(micro[s] == Approx(whole[s]).epsilon(1e-5));  // f32 sums in another order
  const Tensor a = box.read_npy("whole/w1.npy"), b = box.read_npy("micro/w1.npy");
  for (std::int64_t i = 0; i < a.numel(); ++i) CHECK(b.data<float>()[i] == Approx(a.data<float>()[i]).epsilon(1e-4).margin(1e-6));
  const test::CliResult bad = box.run({"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "1",
                                       "--micro-batches", "3", "-o", "o"});
  CHECK(bad.status == 1);
  CHECK(bad.err == "einexpr program train: error: axis 'B' is 8: it does not split into 3 equal micro-batches\n");
  CHECK_FALSE(std::filesystem::exists(box.path("o")));
}

TEST_CASE("program train: --recompute checkpoints gives the same run in less memory", "[program][train]") {
  Sandbox box;
  lecture_files(box);
  auto run = [&](std::vector<std::string> more) {
    std::vector<std::string> args = {"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "2",
                                     "--optimizer", "adam", "--json"};
    args.insert(args.end(), more.begin(), more.end());
    const test::CliResult r = box.run(args);
    INFO(r);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json all = run({"-o", "all"});
  const nlohmann::json re = run({"--recompute", "checkpoints", "--checkpoint", "h2", "-o", "re"});
  for (std::size_t s = 0; s < 2; ++s) CHECK(re["steps"][s]["loss"].get<double>() == all["steps"][s]["loss"].get<double>());
  CHECK(box.read_bytes("re/w1.npy") == box.read_bytes("all/w1.npy"));
  CHECK(all["recompute_flops"].get<std::int64_t>() == 0);
  CHECK(re["recompute_flops"].get<std::int64_t>() == 2 * 8 * 6 * 5);  // h1 = x w1 made again for dw2
  CHECK(re["activations_bytes"].get<std::int64_t>() < all["activations_bytes"].get<std::int64_t>());
  // --checkpoint alone means checkpoints; the file's checkpoint lines are the default
  const nlohmann::json implied = run({"--checkpoint", "h2", "-o", "implied"});
  CHECK(implied["recompute"] == "checkpoints");
  CHECK(implied["checkpoints"] == nlohmann::json::array({"h2"}));
  CHECK(implied["recompute_flops"] == re["recompute_flops"]);
  box.write_bytes("m.ein", test::read_model("lecture2.ein") + "checkpoint h2\n");
  const nlohmann::json lines = run({"-o", "lines"});
  CHECK(lines["recompute"] == "checkpoints");
  CHECK(lines["recompute_flops"] == re["recompute_flops"]);
  const nlohmann::json kept = run({"--recompute", "none", "-o", "kept"});
  CHECK(kept["recompute"] == "none");
  CHECK(kept["recompute_flops"].get<std::int64_t>() == 0);
  CHECK(box.read_bytes("lines/w1.npy") == box.read_bytes("all/w1.npy"));
  struct Bad {
    std::vector<std::string> args;
    std::string err;
  };
  const Bad usage[] = {
      {{"--recompute", "none", "--checkpoint", "h2"}, "--checkpoint names what --recompute checkpoints keeps, not --recompute none"},
      {{"--recompute", "sometimes"}, "--recompute is none, checkpoints or auto, not 'sometimes'"},
      {{"--recompute", "auto"}, "--recompute auto needs --memory-limit BYTES: the most the step may hold at once"},
      {{"--recompute", "checkpoints", "--memory-limit", "1MiB"},
       "--memory-limit is what --recompute auto fits the step into, not --recompute checkpoints"},
      {{"--memory-limit", "12 parsecs"}, "--memory-limit: memory size '12 parsecs' is not a byte count"},
      {{"--progress", "-1"}, "--progress must be >= 0 seconds"},
      {{"--recompute", "checkpoints", "--search-budget", "10"}, "--search-budget is for --recompute auto's search"}};
  for (const Bad& b : usage) {
    std::vector<std::string> args = {"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "1", "-o", "o"};
    args.insert(args.end(), b.args.begin(), b.args.end());
    const test::CliResult bad = box.run(args);
    CAPTURE(b.err);
    CHECK(bad.status == 2);
    CHECK_THAT(bad.err, Catch::StartsWith("einexpr program train: error: " + b.err));
  }
  const test::CliResult unknown = box.run({"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "1",
                                           "--recompute", "checkpoints", "--checkpoint", "x", "-o", "o"});
  CHECK(unknown.status == 1);
  CHECK(unknown.err == "einexpr program train: error: 'x' is no statement's result: only those can be kept for the backward\n");
  CHECK_FALSE(std::filesystem::exists(box.path("o")));
}

TEST_CASE("program train: --recompute auto fits --memory-limit, the run unchanged, as program cost chose", "[program][train]") {
  Sandbox box;
  box.write_bytes("g.ein", test::read_model("gpt2_train.ein"));
  const AxisLengths axes = {{"B", 2}, {"S", 16}, {"T", 16}, {"D", 32}, {"H", 4}, {"K", 8}, {"F", 128}, {"V", 64}};
  const ProgramPlan plan = plan_program(parse_program(test::read_model("gpt2_train.ein"), "g.ein"), {.axes = axes});
  std::vector<std::string> base = {"program", "train", "g.ein", "--steps", "2", "--optimizer", "adam", "--json", "H=4", "T=16"};
  std::uint64_t seed = 7;
  for (const ProgramTensor& t : plan.tensors) {
    if (t.role != TensorRole::param) continue;
    box.write_npy(t.name + ".npy", Tensor::randn(t.shape, DType::f32, seed++));
    base.push_back(t.name + "=" + t.name + ".npy");
  }
  std::vector<std::int64_t> tok, tgt;
  for (int i = 0; i < 32; ++i) tok.push_back((i * 7) % 64), tgt.push_back((i * 5 + 3) % 64);
  box.write_npy("tok.npy", Tensor::from_vector(tok, {2, 16}));
  box.write_npy("tgt.npy", Tensor::from_vector(tgt, {2, 16}));
  Tensor mask = Tensor::zeros({16, 16});
  for (int i = 0; i < 16; ++i)
    for (int j = i + 1; j < 16; ++j) mask.data<float>()[i * 16 + j] = -1e9f;
  box.write_npy("mask.npy", mask);
  for (const char* in : {"tok", "tgt", "mask"}) base.push_back(std::string(in) + "=" + in + ".npy");
  auto run = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return box.run(args);
  };
  const test::CliResult all_run = run({"-o", "all"});
  INFO(all_run);
  REQUIRE(all_run.status == 0);
  const nlohmann::json all = nlohmann::json::parse(all_run.out);
  const auto full = all["peak_bytes_predicted"].get<std::int64_t>();
  int fitted = 0;
  // a search budget of 500 timelines (the default's 20000 is seconds each here, a minute under
  // a sanitizer): train and cost make the same choice under any budget
  for (const double f : {0.95, 0.9}) {
    const std::string limit = std::to_string(static_cast<std::int64_t>(static_cast<double>(full) * f));
    CAPTURE(limit, full);
    const test::CliResult r =
        run({"--recompute", "auto", "--memory-limit", limit, "--search-budget", "500", "-o", "auto" + limit});
    if (r.status != 0) {
      CHECK(r.status == 1);
      CHECK_THAT(r.err, Catch::Contains("no choice of what to keep for the backward fits"));
      continue;
    }
    ++fitted;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["recompute"] == "auto");
    CHECK(j["memory_limit"].get<std::int64_t>() == std::stoll(limit));
    CHECK(j["peak_bytes_predicted"].get<std::int64_t>() <= std::stoll(limit));
    CHECK(j["peak_bytes_measured"].get<std::int64_t>() <= j["peak_bytes_predicted"].get<std::int64_t>());
    CHECK(j["recompute_flops"].get<std::int64_t>() > 0);
    CHECK(j["checkpoints"].is_array());
    for (std::size_t s = 0; s < 2; ++s) CHECK(j["steps"][s]["loss"].get<double>() == all["steps"][s]["loss"].get<double>());
    CHECK(box.read_bytes("auto" + limit + "/w_fc.npy") == box.read_bytes("all/w_fc.npy"));
    // program cost makes the same choice, and shows its FLOPs
    const test::CliResult c = box.run({"program", "cost", "g.ein", "B=2", "S=16", "T=16", "D=32", "H=4", "K=8", "F=128", "V=64",
                                       "--optimizer", "adam", "--recompute", "auto", "--memory-limit", limit, "--search-budget", "500", "--json"});
    INFO(c);
    REQUIRE(c.status == 0);
    const nlohmann::json cj = nlohmann::json::parse(c.out);
    CHECK(cj["recompute_flops"] == j["recompute_flops"]);
    CHECK(cj["recompute"]["checkpoints"] == j["checkpoints"]);
    CHECK(cj["memory"]["peak_bytes"].get<std::int64_t>() <= std::stoll(limit));
    const test::CliResult text = box.run({"program", "cost", "g.ein", "B=2", "S=16", "T=16", "D=32", "H=4", "K=8", "F=128",
                                          "V=64", "--optimizer", "adam", "--recompute", "auto", "--memory-limit", limit, "--search-budget", "500"});
    CHECK_THAT(text.out, Catch::Contains("  recompute ") && Catch::Contains("chosen for the limit"));
  }
  CHECK(fitted >= 1);
  const test::CliResult none = run({"--recompute", "auto", "--memory-limit", "1KiB", "--search-budget", "500", "-o", "none"});
  CHECK(none.status == 1);
  CHECK_THAT(none.err, Catch::StartsWith("einexpr program train: error: memory limit 1024 bytes (1.00 KiB): no choice of what to "
                                         "keep for the backward fits; the smallest peak found is "));
  CHECK_FALSE(std::filesystem::exists(box.path("none")));
  // a progress line per step with --progress 0
  const test::CliResult progress = run({"--progress", "0", "-o", "progress"});
  REQUIRE(progress.status == 0);
  CHECK_THAT(progress.err, Catch::StartsWith("step 1/2  loss ") && Catch::Contains("\nstep 2/2  loss ") && Catch::EndsWith(" ms\n"));
}

TEST_CASE("program cost: --recompute-bound writes the bound of auto's search, its FLOPs auto's", "[program][recompute]") {
  Sandbox box;
  box.write_bytes("g.ein", test::read_model("gpt2_train.ein"));
  const std::vector<std::string> base = {"program", "cost", "g.ein", "--optimizer", "adam", "--recompute", "auto",
                                         "--memory-limit", "72KiB", "--search-budget", "200"};
  std::vector<std::string> args = base;
  for (const char* a : {"--json", "--recompute-bound", "b.json"}) args.push_back(a);
  const test::CliResult r = box.run(args);
  INFO(r);
  REQUIRE(r.status == 0);
  const nlohmann::json cost = nlohmann::json::parse(r.out);
  const nlohmann::json b = nlohmann::json::parse(box.read_bytes("b.json"));
  CHECK(b["memory_limit"].get<std::int64_t>() == 72 * 1024);
  CHECK(b["fixed_bytes"] == cost["recompute"]["fixed_bytes"]);
  const std::size_t nc = b["candidates"].size(), ns = b["statements"].size();
  CHECK(nc == cost["recompute"]["candidates"].get<std::size_t>());
  CHECK(ns == cost["statements"].size());
  CHECK(b["first_reader"].size() == nc);
  CHECK(b["last_reader"].size() == nc);
  REQUIRE(!b["points"].empty());
  // auto's choice through the file's rows: the statements made again and their FLOPs are the
  // cost's (the rows count FLOPs exactly), and its bytes at each point under the limit
  std::vector<bool> keep(nc, false);
  for (const auto& name : cost["recompute"]["checkpoints"])
    for (std::size_t c = 0; c < nc; ++c)
      if (b["candidates"][c]["name"] == name) keep[c] = true;
  std::vector<bool> made(ns, false);
  for (const auto& n : b["needed"])
    if (!keep[n[1].get<std::size_t>()]) made[n[0].get<std::size_t>()] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& ch : b["chains"])
      if (made[ch[0].get<std::size_t>()] && !keep[ch[1].get<std::size_t>()] && !made[ch[2].get<std::size_t>()])
        made[ch[2].get<std::size_t>()] = changed = true;
  }
  std::int64_t flops = 0;
  for (std::size_t s = 0; s < ns; ++s)
    if (made[s]) flops += std::stoll(b["statements"][s]["flops"].dump());
  CHECK(flops == cost["recompute_flops"].get<std::int64_t>());
  CHECK(flops > 0);
  // made again by the gradient at `point`: each dropped candidate read by then, and what its
  // recomputation reads (the chains' least fixpoint), as the file's rows define it
  const auto made_by = [&](std::int64_t point) {
    std::vector<bool> by(ns, false);
    for (std::size_t c = 0; c < nc; ++c) {
      const std::int64_t first = b["first_reader"][c].get<std::int64_t>();
      if (!keep[c] && first >= 0 && first <= point) by[b["candidates"][c]["statement"].get<std::size_t>()] = true;
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& ch : b["chains"])
        if (by[ch[0].get<std::size_t>()] && !keep[ch[1].get<std::size_t>()] && !by[ch[2].get<std::size_t>()])
          by[ch[2].get<std::size_t>()] = changed = true;
    }
    return by;
  };
  CHECK(made_by(std::numeric_limits<std::int64_t>::max()) == made);
  // every point's bytes under the limit, with the terms of copies read again and made early
  std::size_t read_again_rows = 0, early_rows = 0;
  for (std::size_t e = 0; e < b["points"].size(); ++e) {
    const nlohmann::json& p = b["points"][e];
    const std::vector<bool> by = made_by(static_cast<std::int64_t>(e));
    std::int64_t bytes = p["base"].get<std::int64_t>();
    for (const auto& t : p["kept"])
      if (keep[t[0].get<std::size_t>()]) bytes += t[1].get<std::int64_t>();
    for (const auto& t : p["read_again"]) {
      ++read_again_rows;
      const std::size_t st = t[1].get<std::size_t>();
      if (keep[t[0].get<std::size_t>()] && made[st] && !by[st]) bytes += t[2].get<std::int64_t>();
    }
    for (const auto& t : p["early"]) {
      ++early_rows;
      const std::size_t c = t[0].get<std::size_t>();
      CHECK(static_cast<std::int64_t>(e) < b["first_reader"][c].get<std::int64_t>());  // before its first reader
      if (!keep[c] && by[b["candidates"][c]["statement"].get<std::size_t>()]) bytes += t[1].get<std::int64_t>();
    }
    CHECK(bytes + b["fixed_bytes"].get<std::int64_t>() <= 72 * 1024);
  }
  CHECK(read_again_rows > 0);
  CHECK(early_rows > 0);
  // refused without auto's search, nothing written
  for (const std::vector<std::string>& more :
       {std::vector<std::string>{"--recompute", "none"}, std::vector<std::string>{"--recompute", "checkpoints"}}) {
    std::vector<std::string> a = {"program", "cost", "g.ein", "--recompute-bound", "c.json"};
    a.insert(a.end(), more.begin(), more.end());
    const test::CliResult bad = box.run(a);
    CHECK(bad.status == 2);
    CHECK_THAT(bad.err, Catch::Contains("--recompute-bound writes the bound of --recompute auto's search"));
  }
  std::vector<std::string> none = base;
  for (const char* a : {"--recompute-bound", "no/such/dir/b.json"}) none.push_back(a);
  const test::CliResult unwritable = box.run(none);
  CHECK(unwritable.status == 1);
  CHECK_THAT(unwritable.err, Catch::Contains("--recompute-bound: cannot write 'no/such/dir/b.json'"));
  // a limit no choice fits: refused, and the bound written all the same (here its fixed bytes
  // alone exceed the limit)
  std::vector<std::string> tight = {"program", "cost", "g.ein", "--optimizer", "adam", "--recompute", "auto",
                                    "--memory-limit", "40KiB", "--search-budget", "50", "--recompute-bound", "t.json"};
  const test::CliResult refused = box.run(tight);
  CHECK(refused.status == 1);
  CHECK_THAT(refused.err, Catch::Contains("no choice of what to keep for the backward fits"));
  const nlohmann::json t = nlohmann::json::parse(box.read_bytes("t.json"));
  CHECK(t["fixed_bytes"].get<std::int64_t>() > t["memory_limit"].get<std::int64_t>());
  CHECK(box.files() == std::set<std::string>{"g.ein", "b.json", "t.json"});
}
