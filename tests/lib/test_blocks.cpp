// Blocks ("block layer(h, s) over L" ... "end", "h = layer(x, s)"): a program with a block
// runs, trains and costs exactly as the same program written out layer by layer (each layer's
// statements by hand, each stacked param given as its layers' slices), bit for bit; a block's
// statements are planned once however many layers it has; the planner's errors for blocks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "einexpr/einexpr.hpp"
#include "model_files.hpp"

using namespace einexpr;

namespace {

// One layer: a pre-norm MLP with a split, a shared param s (read whole by every layer) and
// a residual. `$` is the layer's suffix, `@` the tensor it reads (the carry).
const char* const kBody = R"ein(
  n$ = layer_norm(@, g$, b$, "B S [D]")
  u$ = einsum(n$, w1$, "B S D, D G -> B S G")
  a$, c$ = rearrange(u$, "B S (F + E) -> B S F, B S E")
  z$ = map(a$, "B S F -> B S F", "gelu")
  m$ = einsum(z$, w2$, "B S F, F D -> B S D")
  cs$ = reduce(c$, "B S E -> B S", "mean")
  y0$ = map(m$, cs$, "B S D, B S -> B S D", "mul")
  y1$ = map(y0$, s, "B S D, D -> B S D", "mul")
  y$ = map(@, y1$, "B S D, B S D -> B S D", "add")
)ein";

const char* const kHead = R"ein(
hn = layer_norm(h, gf, bf, "B S [D]")
sq = map(hn, "B S D -> B S D", "square")
loss = reduce(sq, "B S D ->", "mean")
)ein";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

std::string axes(int layers) {
  return "axes L=" + std::to_string(layers) + " B=2 S=3 D=8 F=16 E=8 G=24\ninput x: B S D\nparam s: D\nparam gf: D\nparam bf: D\n";
}

std::string with_block(int layers, const std::string& checkpoint = "", const std::string& output = "") {
  std::string body = replace_all(replace_all(kBody, "$", ""), "@", "h");
  return axes(layers) + "param g: L D\nparam b: L D\nparam w1: L D G\nparam w2: L F D\n" +
         "block layer(h) over L" + body + checkpoint + "end\nh = layer(x)\n" + kHead + output;
}

std::string unrolled(int layers, const std::string& output = "") {
  std::string text = axes(layers);
  for (int l = 0; l < layers; ++l) {
    const std::string n = std::to_string(l);
    text += "param g" + n + ": D\nparam b" + n + ": D\nparam w1" + n + ": D G\nparam w2" + n + ": F D\n";
  }
  for (int l = 0; l < layers; ++l)
    text += replace_all(replace_all(kBody, "@", l == 0 ? "x" : "y" + std::to_string(l - 1)), "$", std::to_string(l));
  text += "h = rearrange(y" + std::to_string(layers - 1) + ", \"B S D -> B S D\")\n";
  return text + kHead + output;
}

const std::vector<std::pair<std::string, Shape>> kStacked = {{"g", {8}}, {"b", {8}}, {"w1", {8, 24}}, {"w2", {16, 8}}};

/// The block's params (stacked over L) and the same values as the unrolled program's.
std::pair<TensorMap, TensorMap> params(int layers) {
  TensorMap block, flat;
  std::uint64_t seed = 10;
  for (const char* shared : {"s", "gf", "bf"}) block[shared] = flat[shared] = Tensor::randn({8}, DType::f32, seed++);
  for (const auto& [name, shape] : kStacked) {
    Shape full = shape;
    full.insert(full.begin(), layers);
    Tensor t = Tensor::randn(full, DType::f32, seed++);
    block[name] = t;
    for (int l = 0; l < layers; ++l) flat[name + std::to_string(l)] = t.select(0, l).contiguous();
  }
  return {block, flat};
}

void check_equal(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<float> x = a.contiguous().to_vector<float>(), y = b.contiguous().to_vector<float>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    CAPTURE(i);
    REQUIRE(x[i] == y[i]);
  }
}

/// A stacked param of the block equals the unrolled program's layers, bit for bit.
void check_stack(const TensorMap& block, const TensorMap& flat, int layers) {
  for (const auto& [name, shape] : kStacked)
    for (int l = 0; l < layers; ++l) {
      CAPTURE(name, l);
      check_equal(block.at(name).select(0, l), flat.at(name + std::to_string(l)));
    }
  for (const char* shared : {"s", "gf", "bf"}) check_equal(block.at(shared), flat.at(shared));
}

}  // namespace

TEST_CASE("blocks: run equals the program written out layer by layer, bit for bit", "[block]") {
  const int layers = 3;
  const auto [bp, fp] = params(layers);
  TensorMap bi = bp, fi = fp;
  bi["x"] = fi["x"] = Tensor::randn({2, 3, 8}, DType::f32, 1);
  const CompiledProgram block(parse_program(with_block(layers, "", "output loss h\n"), "block.ein"));
  const CompiledProgram flat(parse_program(unrolled(layers, "output loss h\n"), "flat.ein"));
  const ProgramRun rb = block.run(bi), rf = flat.run(fi);
  check_equal(rb["loss"], rf["loss"]);
  check_equal(rb["h"], rf["h"]);
  CHECK(rb.peak_bytes_measured <= block.peak_bytes_predicted());
  // the layers' names: h[l].NAME, each stacked param's slice w1[l]
  const ProgramPlan& plan = block.plan();
  REQUIRE(plan.blocks.size() == 1);
  CHECK(plan.blocks[0].layers == layers);
  CHECK(plan.blocks[0].per_layer == 10);  // the split is two planned statements
  CHECK(plan.tensor("h[2].y") == plan.tensor("h"));
  CHECK(plan.tensor(plan.tensor("w1[1]")).role == TensorRole::layer);
  CHECK(plan.tensor(plan.tensor("w1[1]")).layout.offset == 8 * 24);
  CHECK(plan.statements[static_cast<std::size_t>(plan.blocks[0].first + 10 + 4)].name == "h[1].z");
}

TEST_CASE("blocks: training equals the program written out, bit for bit, and a block's checkpoints recompute", "[block]") {
  const int layers = 3;
  const auto [bp, fp] = params(layers);
  const Tensor x = Tensor::randn({2, 3, 8}, DType::f32, 1);
  const OptimizerOptions adam{.kind = Optimizer::adamw, .lr = 1e-2, .weight_decay = 0.1};
  Trainer block = compile_training(parse_program(with_block(layers), "block.ein"), {}, adam, bp);
  Trainer flat = compile_training(parse_program(unrolled(layers), "flat.ein"), {}, adam, fp);
  // the block's checkpoint line: each layer keeps y, the rest is made again
  Trainer rec = compile_training(parse_program(with_block(layers, "  checkpoint y\n"), "rec.ein"), {}, adam, bp);
  CHECK(rec.recompute().training.recompute);
  CHECK(rec.recompute().training.keep == std::vector<std::string>{"h[0].y", "h[1].y", "h[2].y"});
  CHECK(rec.recompute_flops() > Count{});
  for (int step = 0; step < 3; ++step) {
    const double lb = block.step({{"x", x}}), lf = flat.step({{"x", x}}), lr = rec.step({{"x", x}});
    CHECK(lb == lf);
    CHECK(lr == lb);
  }
  check_stack(block.gradients(), flat.gradients(), layers);
  check_stack(block.parameters(), flat.parameters(), layers);
  check_stack(rec.parameters(), flat.parameters(), layers);
  CHECK(rec.peak_bytes_predicted() < block.peak_bytes_predicted());
  const TensorMap state = block.optimizer_state();
  CHECK(state.at("w1.exp_avg").shape() == Shape{layers, 8, 24});  // one state per stacked param
}

TEST_CASE("blocks: the cost is the written-out program's, and the block is planned once for any number of layers", "[block]") {
  const ProgramPlan b3 = plan_program(parse_program(with_block(3), "block.ein"));
  const ProgramPlan f3 = plan_program(parse_program(unrolled(3), "flat.ein"));
  const ProgramCost cb = cost(b3, {.device = "h100"}), cf = cost(f3, {.device = "h100"});
  CHECK(cb.forward_flops == cf.forward_flops);
  CHECK(cb.backward_flops == cf.backward_flops);
  CHECK(cb.optimizer_flops == cf.optimizer_flops);
  CHECK(cb.params == cf.params);
  CHECK(cb.memory.params_bytes == cf.memory.params_bytes);
  CHECK(cb.memory.activations_bytes == cf.memory.activations_bytes);
  CHECK(cb.estimate.rule == cf.estimate.rule);
  CHECK(cb.timing.forward_s == Approx(cf.timing.forward_s).epsilon(1e-12));
  // planned once per body statement (and again for layer 0, whose carry is the input x only if
  // its layout differs; here it does not), not once per layer
  const ProgramPlan b12 = plan_program(parse_program(with_block(12), "block.ein"));
  CHECK(b12.statements.size() == b3.statements.size() + 9 * 10);
  CHECK(b12.plans_made == b3.plans_made);
  CHECK(b3.plans_made == 10 + 2);  // the body's ten and the head's square and mean (its layer_norm is the body's)
  // a plan is shared by statements of one op, pattern and input layouts, wherever they are:
  // the program written out plans its layers' statements once too, plus its copy of h
  CHECK(f3.plans_made == b3.plans_made + 1);
  CHECK(f3.statements.size() == b3.statements.size() + 1);
  // and only by those: two maps of one input with other functions are two plans
  const ProgramPlan two = plan_program(parse_program(
      "axes B=2 D=3\ninput x: B D\na = map(x, \"B D -> B D\", \"exp\")\nb = map(x, \"B D -> B D\", \"tanh\")\n"
      "c = map(x, \"B D -> B D\", \"exp\")\nd = reduce(x, \"B D -> B\", \"sum\")\ne = reduce(x, \"B D -> B\", \"max\")\n"
      "output a b c d e\n"));
  CHECK(two.plans_made == 4);
  const Tensor x = Tensor::randn({2, 3}, DType::f32, 3);
  const ProgramRun r = CompiledProgram(two.program).run({{"x", x}});
  const std::vector<float> xs = x.to_vector<float>(), a = r["a"].to_vector<float>(), b = r["b"].to_vector<float>(),
                           d = r["d"].to_vector<float>(), e = r["e"].to_vector<float>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    CHECK(a[i] == Approx(std::exp(xs[i])));
    CHECK(b[i] == Approx(std::tanh(xs[i])));
  }
  CHECK(d[0] == Approx(xs[0] + xs[1] + xs[2]));
  CHECK(e[0] == std::max({xs[0], xs[1], xs[2]}));
}

TEST_CASE("blocks: the planner's errors name the layer axis and the shapes", "[block][errors]") {
  const std::string head = "axes L=2 B=2 D=3\ninput x: B D\n";
  SECTION("a stacked param with the layer axis elsewhere than first") {
    const std::string text = head + "param w: D L\nblock f(h) over L\n  y = einsum(h, w, \"B D, D L -> B D\")\nend\nh = f(x)\n";
    try {
      (void)plan_program(parse_program(text, "m.ein"));
      FAIL("no error");
    } catch (const ProgramError& e) {
      CHECK(e.reason().find("'w' has the layer axis 'L' of block 'f' as dim 1: a tensor stacked over the layers has it as "
                            "its first dim") != std::string::npos);
      CHECK(e.place().line == 5);
      CHECK(e.place().column == 17);
      REQUIRE(e.note_place());
      CHECK(e.note_place()->line == 3);
    }
  }
  SECTION("a block whose result is not shaped as its carry") {
    const std::string text = head + "block f(h) over L\n  y = reduce(h, \"B D -> B\", \"sum\")\nend\nh = f(x)\n";
    try {
      (void)plan_program(parse_program(text, "m.ein"));
      FAIL("no error");
    } catch (const ProgramError& e) {
      CHECK(e.reason().find("block 'f' returns 'h[0].y' [B=2] f32 but takes 'h' as 'x' [B=2, D=3] f32") != std::string::npos);
      CHECK(e.place().line == 4);
      REQUIRE(e.note_place());
      CHECK(e.note_place()->line == 6);
    }
  }
  SECTION("a layer axis too long to unroll") {
    const std::string text = head + "block f(h) over L\n  y = map(h, \"B D -> B D\", \"tanh\")\nend\nh = f(x)\n";
    try {
      (void)plan_program(parse_program(text, "m.ein"), {.axes = {{"L", 1000000000}}});
      FAIL("no error");
    } catch (const ProgramError& e) {
      CHECK(e.reason() == "block 'f' over L=1000000000 unrolls into 1000000000 × 1 statements: a program plans at "
                          "most 32768 (here 32768 layers of this block)");
      CHECK(e.place().line == 6);
      CHECK(e.place().column == 5);
    }
    CHECK(plan_program(parse_program(text, "m.ein"), {.axes = {{"L", 32768}}}).statements.size() == 32768);
  }
  SECTION("a body statement's shapes, at the body's line") {
    const std::string text = head + "param w: L B\nblock f(h) over L\n  y = map(h, w, \"B D, D -> B D\", \"mul\")\nend\nh = f(x)\n";
    try {
      (void)plan_program(parse_program(text, "m.ein"));
      FAIL("no error");
    } catch (const ProgramError& e) {
      CAPTURE(e.what());
      CHECK(e.place().line == 5);
    }
  }
}

namespace {

/// Random inputs and params of a zoo model at tiny sizes: token ids below V, a causal mask,
/// rotary tables where the model has them, params ~ 0.1·N(0, 1).
TensorMap zoo_values(const ProgramPlan& plan, std::int64_t vocab) {
  TensorMap out;
  std::uint64_t seed = 40;
  for (const ProgramTensor& t : plan.tensors) {
    if (t.role != TensorRole::input && t.role != TensorRole::param) continue;
    if (t.dtype == DType::i64) {
      std::vector<std::int64_t> ids(static_cast<std::size_t>(checked_numel(t.shape)));
      for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>((i * 7 + seed) % static_cast<std::uint64_t>(vocab));
      out[t.name] = Tensor::from_vector(ids, t.shape);
    } else if (t.name == "mask") {
      std::vector<float> m(static_cast<std::size_t>(checked_numel(t.shape)));
      const std::int64_t n = t.shape[0];
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) m[static_cast<std::size_t>(i * n + j)] = j > i ? -1e9f : 0.f;
      out[t.name] = Tensor::from_vector(m, t.shape);
    } else {
      Tensor r = Tensor::randn(t.shape, DType::f32, seed);
      float* p = r.data<float>();
      for (std::int64_t i = 0; i < r.numel(); ++i) p[i] *= 0.1f;
      out[t.name] = r;
    }
    ++seed;
  }
  return out;
}

}  // namespace

TEST_CASE("blocks: the zoo's models at small sizes run and train within their predicted peaks", "[block]") {
  const std::vector<std::pair<std::string, AxisLengths>> zoo = {
      {"gpt2.ein", {{"L", 3}, {"B", 2}, {"S", 8}, {"T", 8}, {"D", 16}, {"H", 2}, {"K", 8}, {"F", 32}, {"V", 40}}},
      {"llama2.ein",
       {{"L", 3}, {"B", 2}, {"S", 8}, {"T", 8}, {"D", 16}, {"G", 2}, {"R", 2}, {"K", 4}, {"K1", 2}, {"K2", 2}, {"F", 24}, {"V", 40}}}};
  for (const auto& [file, axes] : zoo) {
    CAPTURE(file);
    const ast::Program p = parse_program(test::read_model(file), file);
    const ProgramOptions o{.axes = axes};
    const CompiledProgram m(p, o);
    const TensorMap all = zoo_values(m.plan(), 40);
    const ProgramRun r = m.run(all);
    CHECK(std::isfinite(r["loss"].to(DType::f64).data<double>()[0]));
    CHECK(r.peak_bytes_measured <= m.peak_bytes_predicted());
    TensorMap params, inputs;
    for (const auto& [name, t] : all)
      (m.plan().tensor(m.plan().tensor(name)).role == TensorRole::param ? params : inputs)[name] = t;
    reset_storage_peak(Device::cpu());
    const std::size_t before = storage_usage(Device::cpu()).bytes_in_use;
    Trainer t = compile_training(p, o, {.kind = Optimizer::adam, .lr = 1e-3}, params);
    const std::size_t compiled = storage_usage(Device::cpu()).bytes_in_use;
    CHECK(static_cast<std::int64_t>(compiled - before) == t.peak_bytes_predicted());
    const double first = t.step(inputs);
    if (t.plan().dropouts == 0)  // the run is inference: the same loss as training's first forward
      CHECK(first == Approx(r["loss"].to(DType::f64).data<double>()[0]).epsilon(1e-6));
    else  // GPT-2's dropouts: training's forward drops what the run keeps
      CHECK(first != r["loss"].to(DType::f64).data<double>()[0]);
    for (int i = 0; i < 4; ++i) t.step(inputs);
    CHECK(storage_usage(Device::cpu()).bytes_in_use == compiled);  // the steps allocate nothing
    CHECK(t.step(inputs) < first);                                 // and it learns
  }
}
