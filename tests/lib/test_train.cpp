// Trainer (train.hpp) and program train: gradients of programs of every kind of backward
// event (fresh, added, a view of dY, a broadcast copied, added from a view) against central
// finite differences of the loss in f64; torch.optim's steps against torch itself
// (train_torch_values.hpp, from make_train_torch.py); the arena and what a step allocates;
// the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "data/train_torch_values.hpp"
#include "einexpr/einexpr.hpp"
#include "model_files.hpp"

using namespace einexpr;

namespace {

double loss_of(const ast::Program& p, const TensorMap& all) {
  const CompiledProgram m(p, {.dtype = DType::f64});
  const ProgramRun r = m.run(all);
  return r.outputs.at(0).second.to(DType::f64).data<double>()[0];
}

/// Each param's gradient by central differences of the loss (f64, step h).
std::map<std::string, std::vector<double>> numeric_gradients(const ast::Program& p, const TensorMap& inputs,
                                                             const TensorMap& params, double h = 1e-6) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, w] : params) {
    std::vector<double>& g = out[name];
    for (std::int64_t i = 0; i < w.numel(); ++i) {
      TensorMap all = inputs;
      for (const auto& [n, t] : params) all[n] = t.clone();
      double* x = all[name].data<double>();
      const double x0 = x[i];
      x[i] = x0 + h;
      const double up = loss_of(p, all);
      x[i] = x0 - h;
      const double down = loss_of(p, all);
      g.push_back((up - down) / (2 * h));
    }
  }
  return out;
}

void check_gradients(const std::string& text, const TensorMap& inputs, const TensorMap& params, double tol = 1e-6) {
  const ast::Program p = parse_program(text, "fd.ein");
  Trainer t = compile_training(p, {.dtype = DType::f64}, {.kind = Optimizer::sgd, .lr = 0}, params);
  TensorMap all = inputs;
  for (const auto& [n, w] : params) all[n] = w;
  const double loss = t.step(inputs);
  CHECK(loss == Approx(loss_of(p, all)).epsilon(1e-12));
  const auto numeric = numeric_gradients(p, inputs, params);
  const TensorMap grads = t.gradients();
  for (const auto& [name, want] : numeric) {
    CAPTURE(name);
    REQUIRE(grads.count(name));
    const Tensor g = grads.at(name).contiguous();
    REQUIRE(g.numel() == static_cast<std::int64_t>(want.size()));
    double scale = 1e-3;
    for (double v : want) scale = std::max(scale, std::abs(v));
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i, want[i], g.data<double>()[i]);
      CHECK(std::abs(g.data<double>()[i] - want[i]) <= tol * scale);
    }
  }
  // lr 0: the params did not move
  for (const auto& [name, w] : params) {
    const Tensor now = t.parameters().at(name);
    for (std::int64_t i = 0; i < w.numel(); ++i) CHECK(now.data<double>()[i] == w.data<double>()[i]);
  }
}

const char* const kAddedViewBroadcast = R"ein(
axes B=3 D=4 E=5
input x: B D
param w: D E
param b: E
h = einsum(x, w, "B D, D E -> B E")
hb = map(h, b, "B E, E -> B E", "add")
f = rearrange(hb, "B E -> (B E)")
sq = map(hb, hb, "B E, B E -> B E", "mul")
t = rearrange(sq, "B E -> E B")
r = map(t, b, "E B, E -> E B", "sub")
l1 = reduce(r, "E B ->", "mean")
l2 = reduce(f, "(B E) ->", "max")
loss = map(l1, l2, ", -> ", "add")
)ein";

const char* const kNormsAndNumbers = R"ein(
axes B=2 S=3 D=4
input x: B S D
param g: D
param w: D D
n = layer_norm(x, "B S [D]")
a = map(n, g, "B S D, D -> B S D", "mul")
h = einsum(a, w, "B S D, D E -> B S E", E=4)
p = softmax(h, "B S [E]")
r = map(p, a, "B S E, B S E -> B S E", "add")
m = reduce(r, "B S E -> B S", "max")
e = map(m, 0.5, "B S, -> B S", "mul")
loss = reduce(e, "B S ->", "sum")
)ein";

const char* const kTokenIds = R"ein(
axes B=2 S=3 D=4 V=5
input tok: B S i64
input tgt: B S i64
param wte: V D
param wpe: S D
e = get_at(wte, tok, "[V] D, B S -> B S D")
h = map(e, wpe, "B S D, S D -> B S D", "add")
logits = einsum(h, wte, "B S D, V D -> B S V")
l = cross_entropy(logits, tgt, "B S [V], B S -> B S")
loss = reduce(l, "B S ->", "mean")
)ein";

const char* const kAffineNorms = R"ein(
axes B=2 S=3 D=4
input x: B S D
param g: D
param b: D
param r: D
param w: D D
n = layer_norm(x, g, b, "B S [D]")
h = einsum(n, w, "B S D, D E -> B S E", E=4)
q = rms_norm(h, r, "B S [E]")
loss = reduce(q, "B S E ->", "mean")
)ein";

// A block over L: stacked params (w, g), a shared one (s) read whole by every layer, the stack
// w read whole outside the block too (its gradient: the layers' slices plus that read's).
const char* const kBlock = R"ein(
axes L=3 B=2 D=4 C=4
input x: B D
param w: L C D
param g: L D
param s: D
block layer(h, sc) over L
  a = einsum(h, w, "B C, C D -> B D")
  t = map(a, "B D -> B D", "tanh")
  u = map(t, g, "B D, D -> B D", "mul")
  v = map(u, sc, "B D, D -> B D", "add")
  y = map(h, v, "B D, B D -> B D", "add")
end
hL = layer(x, s)
sq = map(hL, "B D -> B D", "square")
l1 = reduce(sq, "B D ->", "mean")
w2 = map(w, "L C D -> L C D", "square")
l2 = reduce(w2, "L C D ->", "sum")
loss = map(l1, l2, ", -> ", "add")
)ein";

// A block whose result does not read its carry: only the last layer's params reach the loss,
// the other layers' slices of the stacks get no gradient (zero).
const char* const kBlockCut = R"ein(
axes L=3 B=2 D=4 C=4
input x: B D
param w: L C D
block layer(h, x0) over L
  a = einsum(x0, w, "B C, C D -> B D")
  y = map(a, "B D -> B D", "tanh")
end
hL = layer(x, x)
loss = reduce(hL, "B D ->", "sum")
)ein";

Tensor randn(Shape s, std::uint64_t seed, double scale = 1) {
  Tensor t = Tensor::randn(std::move(s), DType::f64, seed);
  double* p = t.data<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] *= scale;
  return t;
}

}  // namespace

TEST_CASE("program train: the gradients of a step equal finite differences of the loss", "[train]") {
  SECTION("a param read twice (added), views, a broadcast map, mean's broadcast copied") {
    check_gradients(kAddedViewBroadcast,
                    {{"x", randn({3, 4}, 1)}}, {{"w", randn({4, 5}, 2, 0.5)}, {"b", randn({5}, 3)}});
  }
  SECTION("max, exp, softmax, layer_norm, a residual, a number") {
    check_gradients(kNormsAndNumbers,
                    {{"x", randn({2, 3, 4}, 4)}}, {{"g", randn({4}, 5)}, {"w", randn({4, 4}, 6, 0.5)}});
  }
  SECTION("layer_norm with a gain and a bias, rms_norm with a gain, in one statement each") {
    check_gradients(kAffineNorms, {{"x", randn({2, 3, 4}, 9)}},
                    {{"g", randn({4}, 10)}, {"b", randn({4}, 11)}, {"r", randn({4}, 12)}, {"w", randn({4, 4}, 13, 0.5)}});
    // the backward keeps x and the einsum's input n, no normalized or scaled copy of x
    const ProgramPlan plan = plan_program(parse_program(kAffineNorms, "fd.ein"), {.dtype = DType::f64});
    const TrainingPlan t = plan_training(plan);
    std::set<std::string> kept;
    for (int b : t.activations) {
      const int tensor = plan.buffers[static_cast<std::size_t>(t.buffers[static_cast<std::size_t>(b)].program_buffer)].tensor;
      kept.insert(tensor >= 0 ? plan.tensor(tensor).name : "?");
    }
    CHECK(kept == std::set<std::string>{"n", "h"});  // x is an input (its own memory)
  }
  SECTION("a block over 3 layers: stacked params, a shared one, a stack read whole beside its layers") {
    check_gradients(kBlock, {{"x", randn({2, 4}, 14)}},
                    {{"w", randn({3, 4, 4}, 15, 0.5)}, {"g", randn({3, 4}, 16)}, {"s", randn({4}, 17)}});
    const ProgramPlan plan = plan_program(parse_program(kBlock, "fd.ein"), {.dtype = DType::f64});
    CHECK(plan_training(plan).zeroed.empty());
  }
  SECTION("a block whose layers but the last reach no loss: their slices' gradients are zero") {
    check_gradients(kBlockCut, {{"x", randn({2, 4}, 18)}}, {{"w", randn({3, 4, 4}, 19, 0.5)}});
    const ProgramPlan plan = plan_program(parse_program(kBlockCut, "fd.ein"), {.dtype = DType::f64});
    CHECK(plan_training(plan).zeroed == std::vector<int>{plan.tensor("w")});
  }
  SECTION("token ids: get_at, a tied head, cross_entropy on integer targets") {
    Tensor tok = Tensor::from_vector(std::vector<std::int64_t>{1, 4, 4, 0, 2, 3}, {2, 3});
    Tensor tgt = Tensor::from_vector(std::vector<std::int64_t>{4, 0, 2, 2, 1, 3}, {2, 3});
    check_gradients(kTokenIds,
                    {{"tok", tok}, {"tgt", tgt}}, {{"wte", randn({5, 4}, 7)}, {"wpe", randn({3, 4}, 8, 0.3)}});
  }
}

TEST_CASE("program train: those programs take every way a gradient goes", "[train]") {
  // fresh, added, a view of dY, added from a view, a broadcast copied: each at least once
  std::set<GradientInto> seen;
  for (const char* text : {kAddedViewBroadcast, kNormsAndNumbers, kTokenIds}) {
    const ProgramPlan plan = plan_program(parse_program(text, "fd.ein"), {.dtype = DType::f64});
    for (const TrainingGradient& g : plan_training(plan).backward) seen.insert(g.into);
  }
  CHECK(seen.count(GradientInto::fresh));
  CHECK(seen.count(GradientInto::add));
  CHECK(seen.count(GradientInto::view));
  CHECK(seen.count(GradientInto::copy));
  CHECK(seen.count(GradientInto::add_view));
}

TEST_CASE("program train: a step allocates nothing, and the arena holds the timeline", "[train]") {
  const ast::Program p = parse_program(kNormsAndNumbers, "fd.ein");
  const TensorMap params = {{"g", randn({4}, 5)}, {"w", randn({4, 4}, 6, 0.5)}};
  const TensorMap inputs = {{"x", randn({2, 3, 4}, 4)}};
  reset_storage_peak(Device::cpu());
  const std::size_t before = storage_usage(Device::cpu()).bytes_in_use;
  Trainer t = compile_training(p, {.dtype = DType::f64}, {.kind = Optimizer::adam, .lr = 1e-2}, params);
  const std::size_t compiled = storage_usage(Device::cpu()).bytes_in_use;
  CHECK(static_cast<std::int64_t>(compiled - before) == t.peak_bytes_predicted());
  for (int i = 0; i < 3; ++i) t.step(inputs);
  CHECK(storage_usage(Device::cpu()).bytes_in_use == compiled);  // nothing kept, nothing leaked
  CHECK(static_cast<std::int64_t>(storage_usage(Device::cpu()).peak_bytes_in_use - before) <= t.peak_bytes_predicted());
  // the arena is no smaller than the timeline's high-water mark, nor than its sum without reuse
  std::int64_t sum = 0;
  for (const TrainingBuffer& b : t.training().buffers) sum += b.bytes;
  CHECK(t.arena_bytes() >= t.training().peak_bytes());
  CHECK(t.arena_bytes() < sum);  // buffers of disjoint lifetimes share memory
  // the arena + params and adam's two states + the program's number 0.5
  CHECK(t.peak_bytes_predicted() == t.arena_bytes() + 3 * 8 * (4 + 16) + 8);
  CHECK(t.steps() == 3);
}

TEST_CASE("program train: errors name what is wrong, and a failed step changes nothing", "[train][errors]") {
  const ast::Program lecture = parse_program(R"ein(
axes B=3 D=4 E=2
input x: B D
param w: D E
h = einsum(x, w, "B D, D E -> B E")
sq = map(h, "B E -> B E", "square")
loss = reduce(sq, "B E ->", "mean")
)ein",
                                             "l.ein");
  const Tensor w = Tensor::randn({4, 2}, DType::f32, 1);
  const Tensor x = Tensor::randn({3, 4}, DType::f32, 2);
  struct Row {
    std::function<void()> call;
    std::string message;
  };
  const Row rows[] = {
      {[&] { compile_training(parse_program("axes D=3\ninput x: D\nparam w: D\ny = map(x, w, \"D, D -> D\", \"mul\")", "v.ein"), {}, {}, {{"w", Tensor::randn({3})}}); },
       "program train needs the output to be the loss, a 0-d float; 'y' [D=3] f32 is not"},
      {[&] { compile_training(parse_program("axes D=3\ninput x: D\nparam w: D\ny = reduce(x, \"D ->\", \"sum\")", "v.ein"), {}, {}, {{"w", Tensor::randn({3})}}); },
       "the loss 'y' [] f32 does not depend on any param: nothing to train"},
      {[&] { compile_training(lecture, {}, {}, {}); }, "missing param 'w'"},
      {[&] { compile_training(lecture, {}, {}, {{"w", w}, {"x", x}}); }, "'x' names no param of the program (it is an input)"},
      {[&] { compile_training(lecture, {}, {}, {{"w", Tensor::randn({8})}}); }, "the tensor given for 'w'"},
      {[&] { compile_training(lecture, {.dtype = DType::bf16}, {}, {{"w", w.to(DType::bf16)}}); },
       "param 'w' is bf16: train it with mixed precision (f32 master weights and optimizer state); updates in bf16 "
       "itself are not implemented"},
      {[&] { compile_training(lecture, {}, {.lr = -1}, {{"w", w}}); }, "the learning rate must be >= 0, got -1.000000"},
      {[&] { compile_training(lecture, {}, {.kind = Optimizer::adam, .beta2 = 1}, {{"w", w}}); },
       "the betas must be in [0, 1), got 0.900000, 1.000000"},
      {[&] { compile_training(lecture, {}, {.eps = 0}, {{"w", w}}); }, "eps must be > 0, got 0.000000"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.message);
    CHECK_THROWS_WITH(r.call(), Catch::Contains(r.message));
  }
  Trainer t = compile_training(lecture, {}, {.kind = Optimizer::sgd, .lr = 0.1}, {{"w", w}});
  CHECK_THROWS_WITH(t.step({}), "missing input 'x'");
  CHECK_THROWS_WITH(t.step({{"x", x}, {"w", w}}), "'w' names no input of the program (it is a param)");
  CHECK_THROWS_WITH(t.step({{"x", x.to(DType::f64)}}), Catch::Contains("input 'x' is f64 but the program was compiled for"));
  t.step({{"x", x}});
  const Tensor after_one = t.parameters().at("w").clone();
  Tensor bad = x.clone();
  bad.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(t.step({{"x", bad}}),
                    "the loss is nan at step 2: stopped before its update (the params are those of step 1)");
  CHECK(t.steps() == 1);
  for (std::int64_t i = 0; i < 8; ++i) CHECK(t.parameters().at("w").data<float>()[i] == after_one.data<float>()[i]);
  t.step({{"x", x}});  // and it goes on from there
  CHECK(t.steps() == 2);
}

namespace {

Tensor from_named(const train_torch::Named& n) {
  const std::string dtype = n.dtype;
  const DType d = dtype == "f32" ? DType::f32 : dtype == "f64" ? DType::f64 : dtype == "bf16" ? DType::bf16 : DType::i64;
  return Tensor::from_vector(n.v.data, Shape(n.v.shape.begin(), n.v.shape.end())).to(d);
}

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-30); }

}  // namespace

TEST_CASE("program train: torch.optim's sgd, momentum, adam and adamw on torch's own runs, and mixed precision", "[train][torch]") {
  // every case of train_torch_values.hpp: the losses of each step, the first step's
  // gradients and the params after the last step, against torch 1.13 run in the same dtype
  for (const train_torch::Case& c : train_torch::cases) {
    CAPTURE(c.what);
    const std::string dt = c.dtype;
    const bool f32 = dt == "f32", bf16 = dt == "bf16";
    ProgramOptions o{.dtype = f32 ? DType::f32 : bf16 ? DType::bf16 : DType::f64};
    for (const auto& [axis, len] : c.sizes) o.axes.emplace_back(axis, len);
    const ast::Program p = parse_program(test::read_model(c.model), c.model);
    const ProgramPlan plan = plan_program(p, o);
    TensorMap params, inputs;
    for (const train_torch::Named& n : c.inputs)
      (plan.tensor(plan.tensor(n.name)).role == TensorRole::param ? params : inputs)[n.name] = from_named(n);
    OptimizerOptions opt;
    opt.kind = parse_optimizer(c.optimizer);
    opt.lr = c.lr;
    opt.momentum = c.momentum;
    opt.weight_decay = c.weight_decay;
    opt.beta1 = c.beta1;
    opt.beta2 = c.beta2;
    opt.eps = c.eps;
    opt.mixed_precision = bf16;
    Trainer t = compile_training(p, o, opt, params);
    // f32: one step's gradients and params within 1e-5 relative of the largest value, the
    // loss curve within 1e-4 (the issue's bounds); f64: 1e-12
    // bf16 (mixed precision: f32 master weights): 8 bits of mantissa, and torch's bf16 kernels
    // round at other places than einexpr's (a GEMM's output, a fused op's intermediates), so
    // a few units of the last place: 3e-2 of the largest gradient, 1e-2 for the loss and the
    // params (2-3 ulps)
    const double tol = bf16 ? 3e-2 : f32 ? 1e-5 : 1e-12, loss_tol = bf16 ? 1e-2 : f32 ? 1e-4 : 1e-12;
    const double param_tol = bf16 ? 1e-2 : tol;
    for (int s = 0; s < c.steps; ++s) {
      const double loss = t.step(inputs);
      CAPTURE(s, loss, c.losses[static_cast<std::size_t>(s)]);
      CHECK(rel(loss, c.losses[static_cast<std::size_t>(s)]) <= loss_tol);
      if (s > 0) continue;
      const TensorMap grads = t.gradients();
      // a gradient that is 0 exactly in exact arithmetic (gpt2.ein's key bias: softmax over T
      // ignores it) is rounding noise in both runs: each param's error is measured against its
      // own largest gradient, but no less than 1e-4 of the model's largest
      double largest = 0;
      for (const train_torch::Named& g : c.grads)
        for (double v : g.v.data) largest = std::max(largest, std::abs(v));
      for (const train_torch::Named& g : c.grads) {
        CAPTURE(g.name);
        const Tensor got = grads.at(g.name).to(DType::f64).contiguous();
        double scale = 1e-4 * largest;
        for (double v : g.v.data) scale = std::max(scale, std::abs(v));
        if (!bf16) {
          for (std::size_t i = 0; i < g.v.data.size(); ++i) CHECK(std::abs(got.data<double>()[i] - g.v.data[i]) <= tol * scale);
          continue;
        }
        // bf16: as close to the f64 run's gradient as torch's bf16 run is (both from the same
        // bf16-rounded inputs; rounding at other places makes them differ from each other)
        const train_torch::Case* twin = nullptr;
        for (const train_torch::Case& f : train_torch::cases)
          if (std::string(f.dtype) == "f64" && std::string(f.model) == c.model && std::string(f.optimizer) == c.optimizer)
            twin = &f;
        REQUIRE(twin != nullptr);
        const train_torch::Named* exact = nullptr;
        for (const train_torch::Named& x : twin->grads)
          if (std::string(x.name) == g.name) exact = &x;
        REQUIRE(exact != nullptr);
        double ours = 0, torchs = 0;
        for (std::size_t i = 0; i < g.v.data.size(); ++i) {
          ours = std::max(ours, std::abs(got.data<double>()[i] - exact->v.data[i]));
          torchs = std::max(torchs, std::abs(g.v.data[i] - exact->v.data[i]));
        }
        CAPTURE(ours / scale, torchs / scale);
        CHECK(ours <= 2 * torchs + 4e-3 * scale);
      }
    }
    for (const train_torch::Named& w : c.params) {
      CAPTURE(w.name);
      const Tensor got = t.parameters().at(w.name).to(DType::f64);
      double scale = 1e-30;
      for (double v : w.v.data) scale = std::max(scale, std::abs(v));
      // bf16 with adam: a gradient near 0 whose sign the two roundings disagree on moves a
      // param by up to lr a step the other way (|m / sqrt(v)| <= 1 at first), so a few such
      // elements may differ by up to 2·lr·steps; the rest by a few bf16 ulps
      const double allowed = bf16 && std::string(c.optimizer).starts_with("adam")
                                 ? std::max(param_tol * scale, 2 * c.lr * c.steps)
                                 : param_tol * scale;
      for (std::size_t i = 0; i < w.v.data.size(); ++i) CHECK(std::abs(got.data<double>()[i] - w.v.data[i]) <= allowed);
    }
  }
}

TEST_CASE("program train: micro-batches equal the full batch", "[train]") {
  // a loss that averages over B: K micro-batches of B/K give the full batch's loss and
  // gradients (up to the order of the sums), so the same params after each step
  SECTION("the lecture's model, adam, 4 micro-batches") {
    const ast::Program p = parse_program(test::read_model("lecture2.ein"), "lecture2.ein");
    const ProgramOptions o{.axes = {{"B", 8}, {"D", 6}, {"E", 5}, {"K", 3}}, .dtype = DType::f64};
    const TensorMap params = {{"w1", randn({6, 5}, 2, 0.5)}, {"w2", randn({5, 3}, 3, 0.5)}};
    const TensorMap inputs = {{"x", randn({8, 6}, 1)}};
    Trainer whole = compile_training(p, o, {.kind = Optimizer::adam, .lr = 0.01}, params);
    Trainer micro = compile_training(p, o, {.kind = Optimizer::adam, .lr = 0.01, .micro_batches = 4}, params);
    CHECK(micro.plan().tensor(micro.plan().tensor("x")).shape == Shape{2, 6});
    for (int s = 0; s < 3; ++s) CHECK(micro.step(inputs) == Approx(whole.step(inputs)).epsilon(1e-13));
    for (const auto& [name, w] : whole.parameters())
      for (std::int64_t i = 0; i < w.numel(); ++i)
        CHECK(micro.parameters().at(name).data<double>()[i] == Approx(w.data<double>()[i]).epsilon(1e-12));
  }
  SECTION("gpt2_train: token ids and targets split, the mask (S T) not") {
    const ast::Program p = parse_program(test::read_model("gpt2_train.ein"), "gpt2_train.ein");
    const ProgramPlan plan = plan_program(p, {.dtype = DType::f64});
    TensorMap params, inputs;
    std::uint64_t seed = 10;
    for (const ProgramTensor& t : plan.tensors) {
      if (t.role == TensorRole::param) params[t.name] = randn(t.shape, seed++, 0.2);
    }
    std::vector<std::int64_t> tok, tgt;
    for (int i = 0; i < 16; ++i) tok.push_back((i * 7) % 32), tgt.push_back((i * 5 + 3) % 32);
    inputs["tok"] = Tensor::from_vector(tok, {2, 8});
    inputs["tgt"] = Tensor::from_vector(tgt, {2, 8});
    Tensor mask = Tensor::zeros({8, 8}, DType::f64);
    for (int i = 0; i < 8; ++i)
      for (int j = i + 1; j < 8; ++j) mask.data<double>()[i * 8 + j] = -1e9;
    inputs["mask"] = mask;
    Trainer whole = compile_training(p, {.dtype = DType::f64}, {.kind = Optimizer::adamw, .lr = 1e-3}, params);
    Trainer micro = compile_training(p, {.dtype = DType::f64}, {.kind = Optimizer::adamw, .lr = 1e-3, .micro_batches = 2}, params);
    for (int s = 0; s < 2; ++s) CHECK(micro.step(inputs) == Approx(whole.step(inputs)).epsilon(1e-12));
    for (const auto& [name, g] : whole.gradients()) {
      CAPTURE(name);
      const Tensor m = micro.gradients().at(name);
      for (std::int64_t i = 0; i < g.numel(); ++i)
        CHECK(m.contiguous().data<double>()[i] == Approx(g.contiguous().data<double>()[i]).margin(1e-12).epsilon(1e-9));
    }
  }
  SECTION("refusals") {
    const ast::Program p = parse_program(test::read_model("lecture2.ein"), "lecture2.ein");
    const ProgramOptions o{.axes = {{"B", 8}, {"D", 6}, {"E", 5}, {"K", 3}}, .dtype = DType::f64};
    const TensorMap params = {{"w1", randn({6, 5}, 2)}, {"w2", randn({5, 3}, 3)}};
    CHECK_THROWS_WITH(compile_training(p, o, {.micro_batches = 3}, params),
                      "axis 'B' is 8: it does not split into 3 equal micro-batches");
    CHECK_THROWS_WITH(compile_training(p, o, {.micro_batches = 2, .batch_axis = "N"}, params),
                      "the program has no axis 'N' to split into micro-batches");
    CHECK_THROWS_WITH(compile_training(p, o, {.micro_batches = 5, .batch_axis = "E"}, params),
                      "param 'w1' has the batch axis 'E': micro-batches split inputs only");
    CHECK_THROWS_WITH(compile_training(p, o, {.micro_batches = 2, .batch_axis = "D"}, params),
                      "input 'x' has the batch axis 'D' as dim 1: micro-batches cut inputs along their first dim");
    CHECK_THROWS_WITH(compile_training(p, o, {.micro_batches = 0}, params), "micro-batches must be at least 1, got 0");
    Trainer t = compile_training(p, o, {.micro_batches = 2}, params);
    CHECK_THROWS_WITH(t.step({{"x", randn({6, 6}, 1)}}),
                      "input 'x' has 6 rows along 'B' but the trainer was compiled for 8 (2 micro-batches of 4)");
  }
}

namespace {

// gpt2_train.ein at small sizes with random params, token ids and the causal mask.
struct Gpt2Case {
  ast::Program p;
  ProgramOptions o;
  TensorMap params, inputs;
};

Gpt2Case gpt2_case() {
  Gpt2Case c{parse_program(test::read_model("gpt2_train.ein"), "gpt2_train.ein"),
             {.axes = {{"B", 2}, {"S", 16}, {"T", 16}, {"D", 32}, {"H", 4}, {"K", 8}, {"F", 128}, {"V", 64}}},
             {},
             {}};
  const ProgramPlan plan = plan_program(c.p, c.o);
  std::uint64_t seed = 30;
  for (const ProgramTensor& t : plan.tensors)
    if (t.role == TensorRole::param) c.params[t.name] = Tensor::randn(t.shape, DType::f32, seed++);
  std::vector<std::int64_t> tok, tgt;
  for (int i = 0; i < 32; ++i) tok.push_back((i * 7) % 64), tgt.push_back((i * 5 + 3) % 64);
  c.inputs["tok"] = Tensor::from_vector(tok, {2, 16});
  c.inputs["tgt"] = Tensor::from_vector(tgt, {2, 16});
  Tensor mask = Tensor::zeros({16, 16});
  for (int i = 0; i < 16; ++i)
    for (int j = i + 1; j < 16; ++j) mask.data<float>()[i * 16 + j] = -1e9f;
  c.inputs["mask"] = mask;
  return c;
}

}  // namespace

TEST_CASE("program train: recomputation equals keeping everything, bit for bit, in less memory", "[train]") {
  const auto [p, o, params, inputs] = gpt2_case();
  struct Row {
    std::string what;
    std::vector<std::string> keep;
  };
  const Row rows[] = {{"nothing kept but the loss", {}},
                      {"the block's residual stream kept", {"h", "y"}},
                      {"the attention probabilities and the MLP's input kept", {"p", "ln2", "f1"}}};
  Trainer all = compile_training(p, o, {.kind = Optimizer::adamw, .lr = 1e-3}, params);
  std::vector<double> want;
  for (int s = 0; s < 3; ++s) want.push_back(all.step(inputs));
  CHECK(all.recompute_flops() == Count(0));
  for (const Row& r : rows) {
    CAPTURE(r.what);
    Trainer t = compile_training(p, o, {.kind = Optimizer::adamw, .lr = 1e-3,
                                                 .recompute = RecomputeOptions{.mode = RecomputeMode::checkpoints, .checkpoints = r.keep}}, params);
    for (int s = 0; s < 3; ++s) CHECK(t.step(inputs) == want[static_cast<std::size_t>(s)]);
    for (const auto& [name, w] : all.parameters()) {
      CAPTURE(name);
      const Tensor got = t.parameters().at(name);
      CHECK(std::memcmp(got.data_ptr(), w.data_ptr(), w.nbytes()) == 0);
    }
    CHECK(t.recompute_flops() > Count(0));
    CHECK(t.training().activations_bytes() < all.training().activations_bytes());
    // with nothing kept the first gradient needs the whole forward made again at once (one
    // segment): no lower peak; checkpoints cut the forward into segments made again in turn
    CHECK(t.training().peak_bytes() <= all.training().peak_bytes());
    if (!r.keep.empty()) CHECK(t.training().peak_bytes() < all.training().peak_bytes());
  }
  CHECK_THROWS_WITH(compile_training(p, o, {.recompute = RecomputeOptions{.mode = RecomputeMode::checkpoints, .checkpoints = {"x", "tok"}}}, params),
                    "'tok' is no statement's result: only those can be kept for the backward");
}

TEST_CASE("program train: recompute auto fits its limit and equals keeping everything, bit for bit", "[train]") {
  const auto [p, o, params, inputs] = gpt2_case();
  Trainer all = compile_training(p, o, {.kind = Optimizer::adam, .lr = 1e-3}, params);
  std::vector<double> want;
  for (int s = 0; s < 3; ++s) want.push_back(all.step(inputs));
  const std::int64_t full = all.peak_bytes_predicted();
  int fitted = 0;
  // the search's budget 1000 timelines, not 20000: what is chosen is not what this test checks
  for (const double f : {0.98, 0.95, 0.9, 0.85}) {
    const auto limit = static_cast<std::int64_t>(static_cast<double>(full) * f);
    CAPTURE(f, limit, full);
    const RecomputeOptions r{.mode = RecomputeMode::automatic, .memory_limit = limit, .search_budget = 1000};
    reset_storage_peak(Device::cpu());
    const std::size_t before = storage_usage(Device::cpu()).bytes_in_use;
    std::optional<Trainer> t;
    try {
      t.emplace(compile_training(p, o, {.kind = Optimizer::adam, .lr = 1e-3, .recompute = r}, params));
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Catch::Contains("memory limit"));  // below what any choice reaches
      continue;
    }
    ++fitted;
    CHECK(t->peak_bytes_predicted() <= limit);
    CHECK(t->recompute().mode == RecomputeMode::automatic);
    CHECK(t->recompute_flops() > Count(0));
    for (int s = 0; s < 3; ++s) CHECK(t->step(inputs) == want[static_cast<std::size_t>(s)]);
    CHECK(static_cast<std::int64_t>(storage_usage(Device::cpu()).peak_bytes_in_use - before) <= t->peak_bytes_predicted());
    for (const auto& [name, w] : all.parameters()) {
      CAPTURE(name);
      CHECK(std::memcmp(t->parameters().at(name).data_ptr(), w.data_ptr(), w.nbytes()) == 0);
    }
  }
  CHECK(fitted >= 2);
  // a limit the whole step fits: nothing made again
  Trainer roomy = compile_training(
      p, o, {.kind = Optimizer::adam, .recompute = RecomputeOptions{.mode = RecomputeMode::automatic, .memory_limit = 2 * full}},
      params);
  CHECK(roomy.recompute_flops() == Count(0));
  CHECK(roomy.peak_bytes_predicted() == full);
  CHECK_THROWS_WITH(
      compile_training(p, o, {.kind = Optimizer::adam, .recompute = RecomputeOptions{.mode = RecomputeMode::automatic, .memory_limit = full / 4, .search_budget = 1000}},
                       params),
      Catch::Contains("no choice of what to keep for the backward fits; the smallest peak found is"));
}

TEST_CASE("program train: the file's checkpoint lines are the default, --recompute none overrides them", "[train]") {
  auto [p, o, params, inputs] = gpt2_case();
  const ast::Program marked = parse_program(test::read_model("gpt2_train.ein") + "checkpoint h, y\n", "gpt2_train.ein");
  Trainer lines = compile_training(marked, o, {.kind = Optimizer::sgd, .lr = 0.1}, params);
  CHECK(lines.recompute().mode == RecomputeMode::checkpoints);
  CHECK(lines.recompute().training.keep == std::vector<std::string>{"h", "y"});
  Trainer named = compile_training(
      p, o, {.kind = Optimizer::sgd, .lr = 0.1, .recompute = RecomputeOptions{.mode = RecomputeMode::checkpoints, .checkpoints = {"h", "y"}}},
      params);
  Trainer none = compile_training(marked, o, {.kind = Optimizer::sgd, .lr = 0.1, .recompute = RecomputeOptions{}}, params);
  CHECK(none.recompute_flops() == Count(0));
  CHECK(lines.recompute_flops() == named.recompute_flops());
  CHECK(lines.peak_bytes_predicted() == named.peak_bytes_predicted());
  CHECK(lines.peak_bytes_predicted() < none.peak_bytes_predicted());
  const double a = lines.step(inputs), b = named.step(inputs), c = none.step(inputs);
  CHECK(a == b);
  CHECK(a == c);
}
