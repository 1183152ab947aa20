// Trainer (train.hpp) and program train: gradients of programs of every kind of backward
// event (fresh, added, a view of dY, a broadcast copied, added from a view) against central
// finite differences of the loss in f64; torch.optim's steps against torch itself
// (train_torch_values.hpp, from make_train_torch.py); the arena and what a step allocates;
// the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "einexpr/einexpr.hpp"

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
