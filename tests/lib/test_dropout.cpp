// dropout: the op (x and a 0-d i64 seed) against an f64 loop that draws the mask with its own
// SplitMix64 (checked against the published reference outputs); the mask's statistics and its
// independence from threads, strides and seeds; the gradient; and in a model program: the
// identity in a run, two statements in training (the 1-byte mask kept for the backward), the
// trainer's steps against an f64 reference with the same masks, micro-batches included.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "einexpr/codegen/lower.hpp"
#include "einexpr/codegen/random.hpp"
#include "einexpr/einexpr.hpp"

using namespace einexpr;

namespace {

// SplitMix64 written out again from Steele, Lea and Flood (2014) / Vigna's splitmix64.c, so
// that the kernels are checked against more than their own header.
std::uint64_t splitmix_output(std::uint64_t state, std::uint64_t index) {
  std::uint64_t z = state + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool kept(std::uint64_t seed, std::uint64_t index, double p) {
  const auto threshold = static_cast<std::uint64_t>(std::llround(p * 4294967296.0));
  return (splitmix_output(seed, index) >> 32) >= threshold;
}

std::uint64_t stream(std::uint64_t seed, std::uint64_t step, std::uint64_t k) {
  auto mix = [](std::uint64_t z) { return splitmix_output(z - 0x9E3779B97F4A7C15ull, 0); };
  return mix(mix(mix(seed) + step) + k);
}

Tensor seed_tensor(std::int64_t seed) { return Tensor::from_vector(std::vector<std::int64_t>{seed}, {}); }

Tensor run_dropout(const Tensor& x, double p, std::int64_t seed) {
  const std::vector<Layout> layouts{x.layout(), Layout::contiguous({})};
  const std::vector<DType> dtypes{x.dtype(), DType::i64};
  const Plan pl = plan(OpSpec::dropout(p), nullptr, layouts, std::span<const DType>(dtypes));
  const std::vector<Tensor> in{x, seed_tensor(seed)};
  return lower_cpu(pl).run(in);
}

}  // namespace

TEST_CASE("dropout: SplitMix64 is the published generator (seed 1234567's first outputs)") {
  // Vigna's splitmix64.c from state 1234567: the reference outputs other implementations test against
  const std::uint64_t published[] = {6457827717110365317ull, 3203168211198807973ull, 9817491932198370423ull,
                                     4593380528125082431ull, 16408922859458223821ull};
  for (std::uint64_t i = 0; i < 5; ++i) {
    CHECK(random::bits(1234567, i) == published[i]);
    CHECK(splitmix_output(1234567, i) == published[i]);
  }
  for (std::uint64_t s : {0ull, 1ull, 42ull, 0xFFFFFFFFFFFFFFFFull})
    for (std::uint64_t t : {0ull, 7ull})
      for (std::uint64_t k : {0ull, 3ull}) CHECK(random::stream(s, t, k) == stream(s, t, k));
  CHECK(random::threshold(0.0) == 0);
  CHECK(random::threshold(0.5) == 2147483648ull);
  CHECK(random::threshold(0.1) == 429496730ull);
}

TEST_CASE("dropout: y = x · mask / (1 - p), the mask drawn from the seed, on every dtype and layout") {
  for (DType dtype : {DType::f64, DType::f32, DType::bf16}) {
    const Tensor x = Tensor::randn({7, 33}, dtype, 5);
    const double p = 0.3;
    const Tensor y = run_dropout(x, p, 99);
    const std::vector<double> xv = x.to(DType::f64).to_vector<double>(), yv = y.to(DType::f64).to_vector<double>();
    REQUIRE(y.shape() == x.shape());
    REQUIRE(y.dtype() == dtype);
    int zeros = 0;
    for (std::size_t i = 0; i < xv.size(); ++i) {
      const double want = kept(99, i, p) ? xv[i] * (1 / (1 - p)) : 0.0;
      const double tol = dtype == DType::f64 ? 1e-15 : dtype == DType::f32 ? 1e-6 : 1e-2;
      CHECK(std::abs(yv[i] - want) <= tol * std::abs(want));
      zeros += kept(99, i, p) ? 0 : 1;
    }
    CHECK(zeros > 0);
    CHECK(zeros < static_cast<int>(xv.size()));
  }
  // A transposed view: the mask follows the output's row-major positions, x read through its strides.
  const Tensor base = Tensor::randn({6, 5}, DType::f64, 8);
  const Tensor xt = rearrange(base, "a b -> b a");
  REQUIRE(!xt.is_contiguous());
  const Tensor y = run_dropout(xt, 0.5, 3);
  const std::vector<double> xv = xt.contiguous().to_vector<double>(), yv = y.to_vector<double>();
  for (std::size_t i = 0; i < xv.size(); ++i) CHECK(yv[i] == (kept(3, i, 0.5) ? xv[i] * 2 : 0.0));
  // the named function: the same op, p = 0 the tensor itself
  CHECK(dropout(xt, 0.5, 3).to_vector<double>() == yv);
  CHECK(dropout(xt, 0.0, 3).data_ptr() == xt.data_ptr());
  // torch's rule: a dropped NaN stays NaN (x · 0), a kept one too
  const Tensor nan = Tensor::full({64}, std::nan(""), DType::f32);
  for (float v : run_dropout(nan, 0.5, 1).to_vector<float>()) CHECK(std::isnan(v));
}

TEST_CASE("dropout: the mask keeps 1 - p of the elements, the same on any thread count, another for another seed") {
  const std::int64_t n = 1 << 20;
  const Tensor x = Tensor::full({n}, 1.0, DType::f32);
  for (double p : {0.1, 0.5, 0.9}) {
    const std::vector<float> y = run_dropout(x, p, 2024).to_vector<float>();
    double keptn = 0;
    for (float v : y) keptn += v != 0 ? 1 : 0;
    const double mean = static_cast<double>(n) * (1 - p), sd = std::sqrt(static_cast<double>(n) * p * (1 - p));
    INFO("p " << p << ": kept " << keptn << " of " << n);
    CHECK(std::abs(keptn - mean) < 5 * sd);
  }
  const std::vector<float> a = run_dropout(x, 0.5, 1).to_vector<float>();
  const int threads = num_threads();
  set_num_threads(1);
  const std::vector<float> one = run_dropout(x, 0.5, 1).to_vector<float>();
  set_num_threads(threads);
  CHECK(a == one);
  const std::vector<float> b = run_dropout(x, 0.5, 2).to_vector<float>();
  double same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += (a[i] != 0) == (b[i] != 0) ? 1 : 0;
  CHECK(std::abs(same / static_cast<double>(n) - 0.5) < 0.005);  // independent masks agree half the time
}

TEST_CASE("dropout: its gradient is dY under the same mask, and p = 0 is the identity (a view)") {
  const Tensor x = Tensor::randn({4, 9}, DType::f64, 1);
  const Tensor dy = Tensor::randn({4, 9}, DType::f64, 2);
  const std::vector<Layout> layouts{x.layout(), Layout::contiguous({})};
  const std::vector<DType> dtypes{DType::f64, DType::i64};
  const Plan fwd = plan(OpSpec::dropout(0.25), nullptr, layouts, std::span<const DType>(dtypes));
  const std::vector<Tensor> in{x, seed_tensor(77)};
  const Tensor y = lower_cpu(fwd).run(in);
  const std::vector<Gradient> g = gradients(fwd);
  REQUIRE(g.size() == 1);
  CHECK(g[0].input == 0);
  const std::vector<Tensor> dx = run_gradients(fwd, in, y, dy);
  const std::vector<double> d = dx[0].to_vector<double>(), dyv = dy.to_vector<double>();
  for (std::size_t i = 0; i < d.size(); ++i) CHECK(d[i] == (kept(77, i, 0.25) ? dyv[i] * (1 / 0.75) : 0.0));
  const Cost c = cost(fwd);
  CHECK(c.flops == Count(36));  // a multiply an element
  const Plan none = plan(OpSpec::dropout(0.0), nullptr, layouts, std::span<const DType>(dtypes));
  CHECK(none.output_is_view());
  CHECK(run_gradients(none, in, x, dy)[0].to_vector<double>() == dyv);
}

TEST_CASE("dropout: errors name the probability, the dtype and the seed") {
  const std::vector<Layout> ok{Layout::contiguous({2, 3}), Layout::contiguous({})};
  const std::vector<DType> f32_i64{DType::f32, DType::i64};
  CHECK_THROWS_WITH(plan(OpSpec::dropout(1.0), nullptr, ok, std::span<const DType>(f32_i64)),
                    Catch::Contains("outside [0, 1)"));
  CHECK_THROWS_WITH(plan(OpSpec::dropout(-0.5), nullptr, ok, std::span<const DType>(f32_i64)),
                    Catch::Contains("outside [0, 1)"));
  const std::vector<DType> ints{DType::i32, DType::i64};
  CHECK_THROWS_AS(plan(OpSpec::dropout(0.5), nullptr, ok, std::span<const DType>(ints)), DTypeError);
  const std::vector<DType> f32_f32{DType::f32, DType::f32};
  CHECK_THROWS_WITH(plan(OpSpec::dropout(0.5), nullptr, ok, std::span<const DType>(f32_f32)),
                    Catch::Contains("seed is a 0-d i64"));
  const std::vector<Layout> vector_seed{Layout::contiguous({2, 3}), Layout::contiguous({2})};
  CHECK_THROWS_AS(plan(OpSpec::dropout(0.5), nullptr, vector_seed, std::span<const DType>(f32_i64)), ShapeError);
  const std::vector<Layout> bad_mask{Layout::contiguous({2, 3}), Layout::contiguous({3, 2})};
  const std::vector<DType> f32_bool{DType::f32, DType::boolean};
  CHECK_THROWS_AS(plan(OpSpec::dropout(0.5, DropoutPart::apply), nullptr, bad_mask, std::span<const DType>(f32_bool)),
                  ShapeError);
  // the pattern of the registry's form names x's dims and the seed's none
  CHECK_THROWS_WITH(parse_pattern(Op::dropout, "b d, s -> b d"), Catch::Contains("seed"));
  CHECK_THROWS_WITH(parse_pattern(Op::dropout, "b d, -> d b"), Catch::Contains("its input"));
  const ast::Pattern three = parse_pattern(Op::dropout, "a b c, -> a b c");
  CHECK_THROWS_AS(plan(OpSpec::dropout(0.5), &three, ok, std::span<const DType>(f32_i64)), ShapeError);
}

namespace {

const char* const kModel = R"ein(axes B=6 D=4 E=5
input x: B D
param w: D E
h = einsum(x, w, "B D, D E -> B E")
d = dropout(h, 0.25)
q = map(d, "B E -> B E", "square")
loss = reduce(q, "B E ->", "sum")
)ein";

struct Reference {
  double loss = 0;
  std::vector<double> dw;  // D×E
};

// loss = Σ (h·m/(1-p))², h = x·w over rows [r0, r1), the mask from `seed` over that block's
// B×E positions; dw = xᵀ · (2·d·m/(1-p)) · scale.
Reference reference(const std::vector<double>& x, const std::vector<double>& w, int r0, int r1, std::uint64_t seed,
                    double scale) {
  const int D = 4, E = 5;
  const double p = 0.25;
  Reference r;
  r.dw.assign(D * E, 0.0);
  for (int b = r0; b < r1; ++b)
    for (int e = 0; e < E; ++e) {
      double h = 0;
      for (int k = 0; k < D; ++k) h += x[static_cast<std::size_t>(b * D + k)] * w[static_cast<std::size_t>(k * E + e)];
      const double m = kept(seed, static_cast<std::uint64_t>((b - r0) * E + e), p) ? 1 / (1 - p) : 0.0;
      const double d = h * m;
      r.loss += d * d;
      for (int k = 0; k < D; ++k) r.dw[static_cast<std::size_t>(k * E + e)] += scale * x[static_cast<std::size_t>(b * D + k)] * 2 * d * m;
    }
  return r;
}

}  // namespace

TEST_CASE("dropout in a program: the identity in a run, a kept 1-byte mask in training") {
  const ast::Program program = parse_program(kModel, "drop.ein");
  CHECK(ast::to_string(program).find("d = dropout(h, 0.25)\n") != std::string::npos);
  CHECK(parse_program(ast::to_string(program), "again.ein").items.size() == program.items.size());

  ProgramOptions inference;
  inference.training = false;
  const ProgramPlan run_plan = plan_program(program, inference);
  REQUIRE(run_plan.tensor("d.mask") < 0);
  CHECK(run_plan.statements.at(1).plan.output_is_view());
  CHECK(run_plan.dropouts == 0);

  const ProgramPlan train_plan = plan_program(program, {});
  REQUIRE(train_plan.tensor("d.mask") >= 0);
  CHECK(train_plan.tensor(train_plan.tensor("d.mask")).dtype == DType::boolean);
  CHECK(!train_plan.tensor(train_plan.tensor("d.mask")).requires_grad);
  const ProgramTensor& seed = train_plan.tensor(train_plan.tensor("d.seed"));
  CHECK(seed.dropout == 0);
  CHECK(seed.dtype == DType::i64);
  CHECK(train_plan.dropouts == 1);

  // The backward keeps the mask (30 bytes: one an element), not d or h: square's gradient reads d.
  const ProgramCost c = cost(train_plan);
  bool mask_kept = false;
  for (const KeptActivation& k : c.memory.kept)
    if (k.tensor == "d.mask") {
      mask_kept = true;
      CHECK(k.bytes == Count(30));
      CHECK(k.shape.find("bool") != std::string::npos);
    }
  CHECK(mask_kept);

  // A run is torch's eval(): d = h.
  const Tensor x = Tensor::randn({6, 4}, DType::f32, 1), w = Tensor::randn({4, 5}, DType::f32, 2);
  const CompiledProgram compiled(program);
  const ProgramRun r = compiled.run({{"x", x}, {"w", w}});
  const std::vector<float> h = einsum(x, w, "b d, d e -> b e").to_vector<float>();
  double want = 0;
  for (float v : h) want += static_cast<double>(v) * v;
  CHECK(r["loss"].to(DType::f64).to_vector<double>()[0] == Approx(want).epsilon(1e-5));
}

TEST_CASE("dropout in training: each step draws random::stream(seed, step, k), loss and gradients as an f64 reference") {
  const ast::Program program = parse_program(kModel, "drop.ein");
  const Tensor x = Tensor::randn({6, 4}, DType::f64, 3), w0 = Tensor::randn({4, 5}, DType::f64, 4);
  const std::vector<double> xv = x.to_vector<double>();
  for (int k : {1, 2}) {
    INFO("micro-batches " << k);
    OptimizerOptions o{.kind = Optimizer::sgd, .lr = 0.01};
    o.micro_batches = k;
    o.seed = 12345;
    Trainer t = compile_training(program, {.dtype = DType::f64}, o, {{"w", w0}});
    std::vector<double> w = w0.to_vector<double>();
    for (int step = 0; step < 3; ++step) {
      Reference want;
      want.dw.assign(20, 0.0);
      for (int m = 0; m < k; ++m) {  // each micro-batch its own stream; the loss seeded 1/K
        const Reference part = reference(xv, w, m * 6 / k, (m + 1) * 6 / k,
                                         stream(12345, static_cast<std::uint64_t>(step * k + m), 0), 1.0 / k);
        want.loss += part.loss / k;
        for (std::size_t i = 0; i < 20; ++i) want.dw[i] += part.dw[i];
      }
      const double loss = t.step({{"x", x}});
      CHECK(loss == Approx(want.loss).epsilon(1e-12));
      const std::vector<double> dw = t.gradients().at("w").to_vector<double>();
      for (std::size_t i = 0; i < 20; ++i) CHECK(dw[i] == Approx(want.dw[i]).epsilon(1e-12).margin(1e-13));
      for (std::size_t i = 0; i < 20; ++i) w[i] -= 0.01 * want.dw[i];
    }
    const std::vector<double> final_w = t.parameters().at("w").to_vector<double>();
    for (std::size_t i = 0; i < 20; ++i) CHECK(final_w[i] == Approx(w[i]).epsilon(1e-12));
  }
}

TEST_CASE("dropout in a block: one seed per layer, numbered in planning order") {
  const char* const text = R"ein(axes L=3 B=2 D=4 C=4
input x: B D
param w: L D C
block layer(h) over L
  a = einsum(h, w, "B D, D C -> B C")
  b = dropout(a, 0.1)
  c = dropout(b, 0.2)
end
y = layer(x)
s = map(y, "B D -> B D", "square")
loss = reduce(s, "B D ->", "sum")
)ein";
  const ProgramPlan p = plan_program(parse_program(text, "layers.ein"), {});
  CHECK(p.dropouts == 6);
  int k = 0;
  for (int l = 0; l < 3; ++l)
    for (const char* name : {".b.seed", ".c.seed"}) {
      const int id = p.tensor("y[" + std::to_string(l) + "]" + name);
      REQUIRE(id >= 0);
      CHECK(p.tensor(id).dropout == k++);
    }
  CHECK(p.blocks.at(0).per_layer == 5);  // the einsum, two masks, two dropouts
  // an integer tensor has nothing to scale: the statement's fault
  try {
    (void)plan_program(parse_program("axes B=2\ninput t: B i64\nd = dropout(t, 0.5)\n", "int.ein"), {});
    FAIL("no error");
  } catch (const ProgramError& e) {
    CHECK_THAT(e.what(), Catch::Contains("int.ein:3:13: 't' is i64: dropout scales what it keeps, so it needs a float tensor"));
  }
  ProgramOptions inference;
  inference.training = false;
  CHECK(plan_program(parse_program(text, "layers.ein"), inference).blocks.at(0).per_layer == 3);
}
