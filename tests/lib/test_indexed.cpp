// get_at, add_at, cross_entropy, concatenation and split: against torch 1.13's values and its
// autograd gradients (tests/lib/data/make_index_torch.py, committed) in f64, f32 and bf16, on
// contiguous and strided inputs, i64 and i32 indices; against f64 loops at sizes that run on
// every thread; their plans, costs, bad inputs (messages and carets, nothing written), scalar
// operands.
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "data/index_torch_values.hpp"
#include "einexpr/codegen/backward.hpp"
#include "einexpr/einexpr.hpp"
#include "einexpr/runtime/strided.hpp"
#include "matchers.hpp"

using namespace einexpr;
using testing_support::MessageHas;

namespace {

/// The same values with other strides: dims 0 and last swapped in memory (rank >= 2), or
/// every other element of a longer buffer (rank 1).
Tensor strided(const Tensor& x) {
  if (x.dim() >= 2) return x.transpose(0, x.dim() - 1).contiguous().transpose(0, x.dim() - 1);
  if (x.dim() == 1) {
    Tensor two = Tensor::zeros({x.shape()[0], 2}, x.dtype());
    two.select(1, 0).copy_from(x);
    two.select(1, 1).copy_from(x);
    return two.select(1, 0);
  }
  return x;
}

void check_values(const std::vector<double>& got, const std::vector<double>& want, double tol, double floor) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i, got[i], want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else if (std::isinf(want[i])) CHECK(got[i] == want[i]);
    else CHECK(std::fabs(got[i] - want[i]) <= tol * std::max(std::fabs(want[i]), floor));
  }
}

double largest(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

bool is_index(const torch_values::IndexCase& c, std::size_t i) {
  return std::find(c.integer.begin(), c.integer.end(), static_cast<int>(i)) != c.integer.end();
}

/// unpack's "*" shapes: each output's shape less the dims the pattern names around its "*".
std::vector<Shape> star_shapes(const torch_values::IndexCase& c) {
  std::istringstream words(c.pattern);
  std::size_t before = 0, after = 0;
  bool star = false;
  for (std::string w; words >> w;) {
    if (w == "*") star = true;
    else ++(star ? after : before);
  }
  std::vector<Shape> shapes;
  for (const torch_values::Values& o : c.outputs)
    shapes.emplace_back(o.shape.begin() + static_cast<std::ptrdiff_t>(before),
                        o.shape.end() - static_cast<std::ptrdiff_t>(after));
  return shapes;
}

OpSpec spec_of(const torch_values::IndexCase& c, int output = 0) {
  const std::string op = c.op;
  if (op == "pack") return OpSpec::pack();
  if (op == "unpack") return OpSpec::unpack(star_shapes(c), output);
  if (op == "get_at") return OpSpec::get_at(c.lengths);
  if (op == "add_at") return OpSpec::add_at(c.lengths);
  if (op == "cross_entropy") return OpSpec::cross_entropy(c.ignore_index, c.lengths);
  return OpSpec::rearrange(c.lengths, Copy::if_needed, output);
}

/// The op through the public functions.
std::vector<Tensor> run_public(const torch_values::IndexCase& c, const std::vector<Tensor>& in) {
  const std::string op = c.op;
  if (op == "get_at") return {get_at(in[0], in[1], c.pattern, c.lengths)};
  if (op == "add_at") return {add_at(in[0], in[1], in[2], c.pattern, c.lengths)};
  if (op == "cross_entropy") return {cross_entropy(in[0], in[1], c.pattern, c.ignore_index, c.lengths)};
  if (op == "split") return split(in[0], c.pattern, c.lengths);
  if (op == "pack") return {pack(in, c.pattern).first};
  if (op == "unpack") return unpack(in[0], star_shapes(c), c.pattern);
  return {rearrange(std::span<const Tensor>(in), c.pattern, c.lengths)};
}

}  // namespace

TEST_CASE("indexed ops, concatenation, split, pack and unpack match torch: values and autograd's gradients", "[indexed]") {
  for (const torch_values::IndexCase& c : torch_values::index_cases) {
    for (const DType dtype : {DType::f64, DType::f32, DType::bf16}) {
      for (const bool strided_inputs : {false, true}) {
        CAPTURE(c.what, c.pattern, name(dtype), strided_inputs);
        const DType index_dtype = strided_inputs ? DType::i32 : DType::i64;
        std::vector<Tensor> in;
        for (std::size_t i = 0; i < c.inputs.size(); ++i) {
          Tensor t = Tensor::from_doubles(c.inputs[i].values, c.inputs[i].shape, is_index(c, i) ? index_dtype : dtype);
          in.push_back(strided_inputs ? strided(t) : t);
        }
        // The inputs as the dtype holds them (f32 and bf16 round): the torch values are for the f64
        // ones, so the tolerance allows for the inputs' rounding (relative to their largest value).
        const std::vector<Tensor> out = run_public(c, in);
        double input_scale = 0;
        for (std::size_t i = 0; i < c.inputs.size(); ++i)
          if (!is_index(c, i)) input_scale = std::max(input_scale, largest(c.inputs[i].values));
        const double eps = dtype == DType::f64 ? 0x1p-52 : dtype == DType::f32 ? 0x1p-23 : 0x1p-8;
        REQUIRE(out.size() == c.outputs.size());
        const bool copies = std::string(c.op) == "get_at" || std::string(c.op) == "rearrange" ||
                            std::string(c.op) == "split" || std::string(c.op) == "pack" ||
                            std::string(c.op) == "unpack";
        for (std::size_t o = 0; o < out.size(); ++o) {
          CAPTURE(o);
          REQUIRE(out[o].shape() == c.outputs[o].shape);
          CHECK(out[o].dtype() == dtype);
          const double scale = largest(c.outputs[o].values);
          if (copies) {  // moved bit for bit: exactly torch's values, rounded to the dtype as the inputs were
            const Tensor want = Tensor::from_doubles(c.outputs[o].values, c.outputs[o].shape, dtype);
            CHECK(out[o].to_vector<double>() == want.to_vector<double>());
          } else {
            const double tol = std::max(dtype == DType::f64 ? 1e-12 : dtype == DType::f32 ? 4e-6 : 4e-2,
                                        8 * eps * input_scale / std::max(scale, 1e-300));
            check_values(out[o].to_vector<double>(), c.outputs[o].values, tol, scale);
          }
        }
        if (dtype == DType::bf16) continue;  // gradients: f64 and f32
        // Gradients: each output's plan's gradients, summed over the outputs (a split's).
        std::vector<Tensor> grads;
        for (std::size_t o = 0; o < out.size(); ++o) {
          const Compiled compiled(spec_of(c, static_cast<int>(o)), c.pattern);
          const Plan& plan = compiled.plan(in);
          const Tensor dy = Tensor::from_doubles(c.dys[o].values, c.dys[o].shape, dtype);
          const std::vector<Gradient> gs = gradients(plan);
          const std::vector<Tensor> g = run_gradients(plan, gs, in, out[o], dy);
          std::size_t k = 0;
          for (std::size_t i = 0; i < in.size(); ++i) {
            if (is_index(c, i)) continue;
            REQUIRE(k < g.size());
            CHECK(gs[k].input == static_cast<int>(i));
            if (grads.size() <= k) grads.push_back(g[k].to(DType::f64));
            else grads[k] = map(grads[k], g[k].to(DType::f64), "..., ... -> ...", "add");
            ++k;
          }
          CHECK(k == g.size());
        }
        REQUIRE(grads.size() == c.grads.size());
        for (std::size_t k = 0; k < grads.size(); ++k) {
          CAPTURE(k);
          REQUIRE(grads[k].shape() == c.grads[k].shape);
          check_values(grads[k].to_vector<double>(), c.grads[k].values,
                       std::max(dtype == DType::f64 ? 1e-12 : 1e-5, 8 * eps * input_scale), largest(c.grads[k].values));
        }
      }
    }
  }
}

TEST_CASE("cross_entropy over rows longer than a logsumexp block, the max growing block by block", "[indexed]") {
  // 5000 classes: three blocks of the one-pass logsumexp, the later two summed with the
  // running max as they are read, a block whose x - max leaves [-86, 8] summed again. Row 0
  // rises by 20 a block (each later block's max 20 above the running one: summed again, the
  // running sum rescaled), row 1 falls, row 2 is random with a -inf (in the first block), row
  // 3 holds -inf at its target (an infinite loss: its gradient takes the two-pass softmax),
  // row 4 rises by 4 a block (summed as read, terms up to e^4), row 5 spreads over [-300, 0]
  // (x - max below -86 in every block), row 6 is -inf but at its target in the second block
  // (a loss of exactly 0, a gradient of exactly 0), row 7 holds a NaN and row 8 a +inf in
  // the third block (a NaN loss and gradient, as the f64 loop gives). Loss and dlogits, f32
  // and f64, against f64 loops.
  const std::int64_t R = 9, V = 5000;
  const std::vector<double> noise = Tensor::randn({R, V}, DType::f64, 11).to_vector<double>();
  std::vector<double> lv(static_cast<std::size_t>(R * V));
  auto at_rv = [&](std::int64_t r, std::int64_t v) -> double& { return lv[static_cast<std::size_t>(r * V + v)]; };
  auto noise_rv = [&](std::int64_t r, std::int64_t v) { return noise[static_cast<std::size_t>(r * V + v)]; };
  for (std::int64_t v = 0; v < V; ++v) {
    at_rv(0, v) = 0.01 * static_cast<double>(v) + noise_rv(0, v);
    at_rv(1, v) = -0.01 * static_cast<double>(v) + noise_rv(1, v);
    at_rv(2, v) = 3 * noise_rv(2, v);
    at_rv(3, v) = noise_rv(3, v);
    at_rv(4, v) = 0.002 * static_cast<double>(v) + 0.1 * noise_rv(4, v);
    at_rv(5, v) = -300.0 * std::fabs(std::sin(static_cast<double>(v))) + noise_rv(5, v);
    at_rv(6, v) = -INFINITY;
    at_rv(7, v) = noise_rv(7, v);
    at_rv(8, v) = noise_rv(8, v);
  }
  at_rv(2, 17) = -INFINITY;
  const std::vector<std::int64_t> tv = {4999, 3, 2500, 42, 4000, 7, 3000, 10, 20};
  at_rv(3, 42) = -INFINITY;
  at_rv(6, 3000) = 1.5;
  at_rv(7, 4500) = NAN;
  at_rv(8, 4600) = INFINITY;
  const std::vector<double> dyv = {0.5, -1.25, 2.0, 0.75, 1.0, -0.5, 3.0, 1.0, 1.0};
  for (const DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(name(dtype));
    const Tensor x = Tensor::from_doubles(lv, {R, V}, dtype);
    const std::vector<double> xv = x.to_vector<double>();  // as the dtype holds them
    const Tensor t = Tensor::from_vector(tv, {R});
    const Tensor loss = cross_entropy(x, t, "r [v], r -> r");
    const Compiled compiled(OpSpec::cross_entropy(), "r [v], r -> r");
    const std::vector<Tensor> in = {x, t};
    const Plan& plan = compiled.plan(in);
    const Tensor dx = run_gradients(plan, in, loss, Tensor::from_doubles(dyv, {R}, dtype)).at(0);
    const std::vector<double> got = loss.to_vector<double>(), dg = dx.to_vector<double>();
    const double tol = dtype == DType::f64 ? 1e-12 : 2e-6;
    for (std::int64_t r = 0; r < R; ++r) {
      CAPTURE(r);
      auto at = [&](std::int64_t v) { return xv[static_cast<std::size_t>(r * V + v)]; };
      double m = -INFINITY, e = 0;
      for (std::int64_t v = 0; v < V; ++v) m = std::max(m, at(v));
      for (std::int64_t v = 0; v < V; ++v) e += std::exp(at(v) - m);
      const double lse = m + std::log(e), target = tv[static_cast<std::size_t>(r)];
      const double want = lse - at(static_cast<std::int64_t>(target));
      const double have = got[static_cast<std::size_t>(r)];
      if (r >= 7) {  // the NaN and the +inf
        CHECK(std::isnan(want));
        CHECK(std::isnan(have));
        for (std::int64_t v = 0; v < V; ++v) CHECK(std::isnan(dg[static_cast<std::size_t>(r * V + v)]));
        continue;
      }
      if (std::isinf(want) || want == 0) CHECK(have == want);
      else CHECK(std::fabs(have - want) <= tol * std::max(1.0, std::fabs(want)));
      double worst = 0;
      for (std::int64_t v = 0; v < V; ++v) {
        const double dy = dyv[static_cast<std::size_t>(r)];
        const double g = dy * std::exp(at(v) - lse) - (v == target ? dy : 0.0);
        const double d = dg[static_cast<std::size_t>(r * V + v)];
        if (r == 6) REQUIRE(d == g);  // exactly 0 (the target's dy - dy too)
        worst = std::max(worst, std::fabs(d - g));
      }
      CHECK(worst <= 4 * tol * std::fabs(dyv[static_cast<std::size_t>(r)]));
    }
  }
}

TEST_CASE("get_at, add_at and cross_entropy at sizes that run on every thread, against f64 loops", "[indexed]") {
  const std::int64_t V = 1001, D = 96, B = 7, S = 113;
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int64_t> pick(0, V - 1);
  std::vector<std::int64_t> tok(static_cast<std::size_t>(B * S));
  for (auto& t : tok) t = pick(rng) % 37;  // many repeats: scatter-adds collide
  const Tensor table = Tensor::randn({V, D}, DType::f32, 1);
  const Tensor idx = Tensor::from_vector(tok, {B, S});
  const std::vector<double> tv = table.to_vector<double>();

  const Tensor x = get_at(table, idx, "[v] d, b s -> b s d");
  const std::vector<double> xv = x.to_vector<double>();
  for (std::size_t p = 0; p < tok.size(); ++p)
    for (std::int64_t d = 0; d < D; ++d)
      REQUIRE(xv[p * D + static_cast<std::size_t>(d)] == tv[static_cast<std::size_t>(tok[p] * D + d)]);

  const Tensor upd = Tensor::randn({B, S, D}, DType::f32, 2);
  const Tensor sum = add_at(table, idx, upd, "[v] d, b s, b s d -> [v] d");
  std::vector<double> want = tv;  // in f32, in order: each element's adds happen in index order
  std::vector<float> acc(tv.begin(), tv.end());
  const std::vector<double> uv = upd.to_vector<double>();
  for (std::size_t p = 0; p < tok.size(); ++p)
    for (std::int64_t d = 0; d < D; ++d)
      acc[static_cast<std::size_t>(tok[p] * D + d)] += static_cast<float>(uv[p * D + static_cast<std::size_t>(d)]);
  const std::vector<double> sv = sum.to_vector<double>();
  for (std::size_t i = 0; i < acc.size(); ++i) REQUIRE(sv[i] == static_cast<double>(acc[i]));

  // cross_entropy over 1001 classes, rows strided (classes in the middle).
  const Tensor logits = map(Tensor::randn({B, V, S}, DType::f32, 3), 4.0, "b v s, -> b v s", "mul");
  const Tensor loss = cross_entropy(logits, idx, "b [v] s, b s -> b s");
  const std::vector<double> lv = logits.to_vector<double>(), got = loss.to_vector<double>();
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t s = 0; s < S; ++s) {
      double m = -INFINITY, e = 0;
      auto at = [&](std::int64_t v) { return lv[static_cast<std::size_t>((b * V + v) * S + s)]; };
      for (std::int64_t v = 0; v < V; ++v) m = std::max(m, at(v));
      for (std::int64_t v = 0; v < V; ++v) e += std::exp(at(v) - m);
      const double l = m + std::log(e) - at(tok[static_cast<std::size_t>(b * S + s)]);
      REQUIRE(std::fabs(got[static_cast<std::size_t>(b * S + s)] - l) <= 1e-5 * std::max(1.0, l));
    }
}

TEST_CASE("get_at and its gradient past the streaming size: rows prefetched and streamed, the fresh table streamed",
          "[indexed]") {
  // 3600 rows of 768 f32 (10.5 MiB out, above stream_output_bytes) from a 9 MiB table, the
  // indices with repeats and both ends; the gradient fills a fresh 9 MiB table, then adds.
  const std::int64_t V = 3001, D = 768, B = 4, S = 900;
  REQUIRE(B * S * D * 4 >= stream_output_bytes);
  REQUIRE(V * D * 4 >= stream_output_bytes);
  std::vector<std::int64_t> tok(static_cast<std::size_t>(B * S));
  for (std::size_t i = 0; i < tok.size(); ++i) tok[i] = static_cast<std::int64_t>((i * 7919 + 17) % 3001 % (i % 5 == 0 ? 61 : 3001));
  tok[0] = 0;
  tok[1] = V - 1;
  const Tensor table = Tensor::randn({V, D}, DType::f32, 8);
  const Tensor idx = Tensor::from_vector(tok, {B, S});
  const Tensor x = get_at(table, idx, "[v] d, b s -> b s d");
  const float* t = table.data<float>();
  const float* got = x.data<float>();
  for (std::size_t p = 0; p < tok.size(); ++p)
    REQUIRE(std::memcmp(got + p * D, t + tok[p] * D, D * sizeof(float)) == 0);
  // the gradient toward the table: zeros, then each row of dY added at its token, in order
  const Compiled compiled(OpSpec::get_at(), "[v] d, b s -> b s d");
  const std::vector<Tensor> in{table, idx};
  const Plan& plan = compiled.plan(in);
  const Tensor dy = Tensor::randn({B, S, D}, DType::f32, 9);
  const std::vector<Tensor> g = run_gradients(plan, gradients(plan), in, x, dy);
  REQUIRE(g.size() >= 1);
  std::vector<float> want(static_cast<std::size_t>(V * D), 0.0f);
  const float* dv = dy.data<float>();
  for (std::size_t p = 0; p < tok.size(); ++p)
    for (std::int64_t d = 0; d < D; ++d) want[static_cast<std::size_t>(tok[p] * D + d)] += dv[p * D + static_cast<std::size_t>(d)];
  const Tensor dt = g[0].contiguous();
  REQUIRE(dt.shape() == Shape{V, D});
  REQUIRE(std::memcmp(dt.data<float>(), want.data(), want.size() * sizeof(float)) == 0);
}

TEST_CASE("get_at of every dtype moves elements bit for bit", "[indexed]") {
  const Tensor idx = Tensor::from_vector(std::vector<std::int32_t>{2, 0, 2, 1}, {4});
  for (const DType dtype : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::f8_e4m3, DType::f8_e5m2, DType::i64,
                            DType::i32, DType::boolean}) {
    CAPTURE(name(dtype));
    const Tensor table = Tensor::from_doubles({1, 0, 3, -2, 0, 1}, {3, 2}, dtype);
    const Tensor got = get_at(table, idx, "[v] d, n -> n d");
    const std::vector<double> t = table.to_vector<double>();
    CHECK(got.to_vector<double>() == std::vector<double>{t[4], t[5], t[0], t[1], t[4], t[5], t[2], t[3]});
  }
}

TEST_CASE("indexed ops: bad indices are IndexErrors naming the position and value, before any write", "[indexed]") {
  const Tensor table = Tensor::randn({5, 3}, DType::f32, 1);
  const Tensor bad = Tensor::from_vector(std::vector<std::int64_t>{0, 4, 5, 1}, {2, 2});
  CHECK_THROWS_MATCHES(get_at(table, bad, "[v] d, b s -> b s d"), IndexError,
                       MessageHas({"get_at's indices (operand 2)", "index 5 at position [1, 0]", "[0, 5)",
                                   "nothing was written", "get_at('[v] d, b s -> b s d')"}));
  const Tensor negative = Tensor::from_vector(std::vector<std::int32_t>{0, -1}, {2});
  CHECK_THROWS_MATCHES(get_at(table, negative, "[v] d, n -> n d"), IndexError,
                       MessageHas({"index -1 at position [1]", "negative indices do not count from the end"}));
  const Tensor upd = Tensor::randn({2, 2, 3}, DType::f32, 2);
  CHECK_THROWS_MATCHES(add_at(table, bad, upd, "[v] d, b s, b s d -> [v] d"), IndexError,
                       MessageHas({"add_at's indices (operand 2)", "index 5 at position [1, 0]"}));
  const Tensor logits = Tensor::randn({2, 2, 5}, DType::f32, 3);
  CHECK_THROWS_MATCHES(cross_entropy(logits, bad, "b s [v], b s -> b s"), IndexError,
                       MessageHas({"cross_entropy's targets (operand 2)", "index 5 at position [1, 0]"}));
  // ignore_index is no error; any other negative target is.
  const Tensor ignored = Tensor::from_vector(std::vector<std::int64_t>{0, -100, 4, 1}, {2, 2});
  const Tensor loss = cross_entropy(logits, ignored, "b s [v], b s -> b s");
  CHECK(loss.to_vector<float>()[1] == 0.0f);
  CHECK_THROWS_AS(cross_entropy(logits, ignored, "b s [v], b s -> b s", 0), IndexError);
  // A float index tensor is a DTypeError naming the operand.
  CHECK_THROWS_MATCHES(get_at(table, Tensor::zeros({2}, DType::f32), "[v] d, n -> n d"), DTypeError,
                       MessageHas({"operand 2 holds the indices", "i64 or i32, not f32"}));
  // An empty table has no row in range (fuzz_plan: corpus/plan/crash_get_at_empty_table; its
  // plan's row view reached past the table, an InternalError): the IndexError torch raises
  // too, from the planner. With no index to look up, the result is empty.
  const Tensor empty = Tensor::randn({0, 3}, DType::f32, 4);
  CHECK_THROWS_MATCHES(get_at(empty, bad, "[v] d, b s -> b s d"), IndexError,
                       MessageHas({"the indexed axis v has length 0", "no index is in range [0, 0)"}));
  CHECK_THROWS_MATCHES(add_at(empty, bad, upd, "[v] d, b s, b s d -> [v] d"), IndexError,
                       MessageHas({"the indexed axis v has length 0", "nothing was written"}));
  const Tensor none = Tensor::from_vector(std::vector<std::int64_t>{}, {2, 0});
  CHECK(get_at(empty, none, "[v] d, b s -> b s d").shape() == Shape{2, 0, 3});
  CHECK(add_at(empty, none, Tensor::randn({2, 0, 3}, DType::f32, 5), "[v] d, b s, b s d -> [v] d").shape() ==
        Shape{0, 3});
  // The fuzzer's case: the table a [0, 2] view of strides [1, 1], the indices strided.
  const Tensor strided_index = Tensor::from_vector(std::vector<std::int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {10})
                                   .as_strided({2, 1}, {9, 3}, 0);
  CHECK_THROWS_AS(get_at(Tensor::randn({0, 2}, DType::f32, 6).to(DType::f8_e4m3), strided_index, "[v]b , b a -> a b"),
                  IndexError);
}

TEST_CASE("indexed and concatenation patterns: errors with their carets", "[indexed]") {
  const Tensor t = Tensor::randn({5, 3}, DType::f32, 1);
  const Tensor i = Tensor::from_vector(std::vector<std::int64_t>{0, 1}, {2});
  struct Bad {
    const char* pattern;
    const char* message;
    std::size_t caret;
  };
  for (const Bad& b : std::vector<Bad>{
           {"v d, n -> n d", "no brackets", 13},
           {"[v] [d], n -> n d", "brackets exactly one axis", 4},
           {"[(v w)] d, n -> n d", "one named axis, not a composition", 1},
           {"[v] d, n -> n v d", "is the indexed axis: get_at replaces it", 14},
           {"[v] d, n -> n", "in the output lacks axis 'd'", 12},
           {"[v] d, v -> v d", "is the indexed axis: the indices select along it", 7},
           {"[v d, n -> n] d", "',' inside brackets", 4},
           {"[v d -> n] d, n", "'->' inside brackets", 5},
       }) {
    CAPTURE(b.pattern);
    try {
      (void)get_at(t, i, b.pattern);
      FAIL("no error");
    } catch (const PatternError& e) {
      CHECK_THAT(e, MessageHas(b.message));
      CHECK(e.position() == b.caret);
    }
  }
  // '+' means nothing in an einsum, and a concatenation needs one part per input.
  CHECK_THROWS_MATCHES(einsum(t, t, "a (b + c), a d -> d"), PatternError,
                       MessageHas({"'(a + b)' concatenates, which only rearrange does", "einsum"}));
  CHECK_THROWS_MATCHES(rearrange({t, t}, "a b, a c -> a (b + c + d)"), PatternError,
                       MessageHas("has 3 parts but 2 inputs are given"));
  CHECK_THROWS_MATCHES(rearrange({t, t}, "a b, a c -> a b c"), PatternError,
                       MessageHas("concatenates them: write the joined dim as '(a + b)'"));
  CHECK_THROWS_MATCHES(rearrange(t, "a (b + c) -> a b"), PatternError,
                       MessageHas("'(b + c)' has 2 parts but 1 output is given"));
  CHECK_THROWS_MATCHES(rearrange({t, t}, "a (b c), a d -> a ((b c) + d)"), PatternError,
                       MessageHas("nested parenthesis"));
  CHECK_THROWS_MATCHES(rearrange({t, t}, "a b, a c -> a (b + )"), PatternError,
                       MessageHas("'+' needs an axis on each side"));
  // The parts of a split must add up to the dim.
  CHECK_THROWS_MATCHES(split(t, "a (b + c) -> a b, a c", {{"b", 2}, {"c", 2}}), ShapeError,
                       MessageHas({"add up to 4", "has length 3"}));
  CHECK_THROWS_MATCHES(split(t, "a (b + c + d) -> a b, a c, a d", {{"b", 1}}), ShapeError,
                       MessageHas("give the lengths of all parts"));
  CHECK_THROWS_MATCHES(split(t, "a (b + c) -> a b, a c", {{"b", 4}}), ShapeError,
                       MessageHas("add up to 4, more than dim 1's length 3"));
  // Concatenated inputs must agree on the other axes.
  CHECK_THROWS_MATCHES(rearrange({t, Tensor::randn({4, 2}, DType::f32)}, "a b, a c -> a (b + c)"), ShapeError,
                       MessageHas("axis a is 5"));
}

TEST_CASE("split: views where the strides allow, and concatenation: one copy per input, no more", "[indexed]") {
  const Tensor qkv = Tensor::randn({2, 3, 9}, DType::f32, 4);
  const std::vector<Tensor> parts = split(qkv, "b s (q + k + v) -> b s q, b s k, b s v", {{"q", 2}, {"k", 3}});
  REQUIRE(parts.size() == 3);
  for (const Tensor& p : parts) CHECK(p.same_storage(qkv));
  CHECK(parts[2].shape() == Shape{2, 3, 4});
  CHECK_FALSE(split(qkv, "b s (q + k) -> b s q, b s k", {{"q", 2}}, Copy::always).at(0).same_storage(qkv));
  const Tensor a = Tensor::randn({2, 3}, DType::f32, 5), b = Tensor::randn({2, 4}, DType::f32, 6);
  const Compiled c(OpSpec::rearrange(), "n s, n t -> n (s + t)");
  const std::vector<Tensor> in{a, b};
  const Plan& plan = c.plan(in);
  int copies = 0, joins = 0;
  for (const Step& s : plan.steps) {
    copies += std::holds_alternative<CopyStep>(s);
    joins += std::holds_alternative<JoinStep>(s);
  }
  CHECK(copies == 2);
  CHECK(joins == 1);
  const Cost cost_of = cost(plan);
  CHECK(cost_of.flops == Count(0));
  CHECK(cost_of.bytes_planned == Count(2 * 2 * (3 + 4) * 4));  // each element read once and written once
  CHECK(cost_of.peak_extra_bytes == Count(2 * 7 * 4));
}

namespace {

/// a and b hold the same shape, dtype and bytes (b contiguous or not).
void require_same_bytes(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  REQUIRE(a.dtype() == b.dtype());
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  REQUIRE(std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0);
}

}  // namespace

TEST_CASE("a copied split: its outputs copied in one pass over the input, the bytes of the views", "[indexed]") {
  const char* qkv = "b s (q + k + v) -> b s q, b s k, b s v";
  const AxisLengths lengths{{"q", 5}, {"k", 7}};
  // 150 rows of 5 + 7 + 4 (copied together: 64 rows or more), in every float dtype
  for (const DType dtype : {DType::f32, DType::bf16, DType::f64, DType::f8_e4m3}) {
    CAPTURE(name(dtype));
    const Tensor x = Tensor::randn({3, 50, 16}, DType::f32, 11).to(dtype);
    const std::vector<Tensor> views = split(x, qkv, lengths);
    const std::vector<Tensor> copies = split(x, qkv, lengths, Copy::always);
    REQUIRE(copies.size() == 3);
    for (std::size_t j = 0; j < 3; ++j) {
      CHECK_FALSE(copies[j].same_storage(x));
      CHECK(copies[j].is_contiguous());
      require_same_bytes(copies[j], views[j]);
    }
  }
  // past the streaming size (3 x 12 MiB out), on every thread
  const Tensor big = Tensor::randn({4096, 3 * 768}, DType::f32, 12);
  REQUIRE(4096 * 3 * 768 * 4 >= stream_output_bytes);
  const std::vector<Tensor> big_views = split(big, "b (q + k + v) -> b q, b k, b v", {{"q", 768}, {"k", 768}});
  const std::vector<Tensor> big_copies = split(big, "b (q + k + v) -> b q, b k, b v", {{"q", 768}, {"k", 768}}, Copy::always);
  for (std::size_t j = 0; j < 3; ++j) require_same_bytes(big_copies[j], big_views[j]);
  // what is not copied together, each output's program in turn: a split along the first axis
  // (each output one long row), a transposed input, fewer than 64 rows
  const Tensor y = Tensor::randn({90, 12}, DType::f32, 13);
  const std::vector<Tensor> first = split(y, "(a + b) d -> a d, b d", {{"a", 40}}, Copy::always);
  require_same_bytes(first[0], y.slice(0, 0, 40));
  require_same_bytes(first[1], y.slice(0, 40, 90));
  const Tensor yt = Tensor::randn({12, 90}, DType::f32, 14).transpose(0, 1);
  const std::vector<Tensor> across = split(yt, "n (c + d) -> n c, n d", {{"c", 5}}, Copy::always);
  require_same_bytes(across[0], yt.slice(1, 0, 5));
  require_same_bytes(across[1], yt.slice(1, 5, 12));
  const std::vector<Tensor> few = split(y.slice(0, 0, 10), "n (c + d) -> n c, n d", {{"c", 5}}, Copy::always);
  require_same_bytes(few[1], y.slice(0, 0, 10).slice(1, 5, 12));
  // unpack of a transposed packed tensor (its outputs cannot all be views) gives the same values
  const Tensor packed = Tensor::randn({9, 70}, DType::f32, 15).transpose(0, 1);
  const std::vector<Shape> shapes{{2, 2}, {5}};
  const std::vector<Tensor> parts = unpack(packed, shapes, "n *");
  REQUIRE(parts.size() == 2);
  require_same_bytes(parts[0], packed.slice(1, 0, 4).contiguous().reshape({70, 2, 2}));
  require_same_bytes(parts[1], packed.slice(1, 4, 9));
}

TEST_CASE("a split part that is the whole dim, beside a unit dim the outputs drop, under every copy policy",
          "[indexed]") {
  // fuzz_plan (corpus/plan/crash_split_whole_part_drops_unit_dim): with q = 0 the k part is
  // the whole input, whose trailing unit dim has no atom; the plan copied from the input value
  // itself (5 dims into 4: "a copy changes shape", an InternalError).
  const Tensor x = Tensor::randn({5, 4, 3, 2, 1}, DType::f32, 21).to(DType::bf16);
  const Tensor xt = Tensor::randn({2, 3, 4, 5, 1}, DType::f32, 22).permute({3, 2, 1, 0, 4});
  for (const Tensor& in : {x, xt}) {
    const Tensor want = rearrange(in, "b1 b2 b3 k 1 -> b1 b2 b3 k", {}, Copy::always);
    const char* pattern = "b1 b2 b3 (q + k) 1 -> b1 b2 b3 q, b1 b2 b3 k";
    for (const Copy copy : {Copy::if_needed, Copy::always, Copy::never}) {
      CAPTURE(static_cast<int>(copy), in.is_contiguous());
      const AxisLengths lengths{{"q", 0}, {"k", 2}};
      const std::vector<Tensor> parts = split(in, pattern, lengths, copy);
      REQUIRE(parts.size() == 2);
      CHECK(parts[0].shape() == Shape{5, 4, 3, 0});
      require_same_bytes(parts[1], want);
      require_same_bytes(apply(OpSpec::rearrange(lengths, copy, 1), {in}, pattern), want);
      if (copy == Copy::always) CHECK_FALSE(parts[1].same_storage(in));
      if (copy == Copy::never) CHECK(parts[1].same_storage(in));
    }
  }
}

TEST_CASE("concatenation, split, pack and unpack whose joined dim has length 1: gradients", "[indexed][backward]") {
  // A joined dim of length 1 is an anonymous axis of length 1, which no atom of the plan
  // names: the gradients found no joined axis in X (an InternalError, fuzz_order's and
  // fuzz_plan's corpus/plan/crash_unpack_gradient_joined_length_1). Each gradient is dY
  // in its place, or zeros where the output is empty.
  const Tensor x = Tensor::randn({2, 1, 3}, DType::f64, 7);
  const Tensor dy = Tensor::randn({2, 3}, DType::f64, 8);
  const Tensor empty_dy = Tensor::zeros({2, 0, 3}, DType::f64);
  struct Row {
    const char* what;
    OpSpec spec;
    const char* pattern;
    std::vector<Tensor> in;
    Tensor dy;
    std::vector<Tensor> want;
  };
  const Tensor x2 = Tensor::randn({2, 3}, DType::f64, 9), none = Tensor::zeros({2, 0, 3}, DType::f64);
  const Tensor col = Tensor::randn({2, 1}, DType::f64, 10), no_col = Tensor::zeros({2, 0}, DType::f64);
  const Tensor dcol = Tensor::randn({2, 1}, DType::f64, 11);
  const std::vector<Row> rows = {
      {"unpack (), (0): output 1", OpSpec::unpack({{}, {0}}, 0), "b * d", {x}, dy, {dy.reshape({2, 1, 3})}},
      {"unpack (), (0): output 2", OpSpec::unpack({{}, {0}}, 1), "b * d", {x}, empty_dy, {Tensor::zeros({2, 1, 3}, DType::f64)}},
      {"unpack (0), (-1): output 2", OpSpec::unpack({{0}, {-1}}, 1), "b * d", {x}, dy.reshape({2, 1, 3}), {dy.reshape({2, 1, 3})}},
      {"pack (), (0)", OpSpec::pack(), "b * d", {x2, none}, dy.reshape({2, 1, 3}), {dy, Tensor::zeros({2, 0, 3}, DType::f64)}},
      {"pack of one", OpSpec::pack(), "b * d", {x2}, dy.reshape({2, 1, 3}), {dy}},
      {"split 1 + 0: part 1", OpSpec::rearrange({{"p", 1}}, Copy::if_needed, 0), "a (p + q) -> a p, a q", {col}, dcol, {dcol}},
      {"split 1 + 0: part 2", OpSpec::rearrange({{"p", 1}}, Copy::if_needed, 1), "a (p + q) -> a p, a q", {col}, no_col,
       {Tensor::zeros({2, 1}, DType::f64)}},
      {"concatenation 1 + 0", OpSpec::rearrange(), "a p, a q -> a (p + q)", {col, no_col}, dcol, {dcol, no_col}},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    const Compiled compiled(r.spec, r.pattern);
    const Tensor y = compiled.run(r.in);
    REQUIRE(y.shape() == r.dy.shape());
    const Plan& plan = compiled.plan(r.in);
    const std::vector<Tensor> got = run_gradients(plan, r.in, y, r.dy);
    REQUIRE(got.size() == r.want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      REQUIRE(got[i].shape() == r.want[i].shape());
      CHECK(got[i].to_vector<double>() == r.want[i].to_vector<double>());
    }
    CHECK(backward_cost(plan).gradients.size() == r.in.size());
  }
}

TEST_CASE("indexed ops: their costs", "[indexed]") {
  // get_at: 0 FLOPs; the rows it reads and the indices; add_at: one add per update.
  const Cost g = cost(plan_from_sizes(OpSpec::get_at(), "[v] d, b s -> b s d", {{"v", 50257}, {"d", 768}, {"b", 8}, {"s", 1024}}));
  CHECK(g.flops == Count(0));
  CHECK(g.bytes_planned == Count(8 * 1024 * 768 * 4 * 2 + 8 * 1024 * 8));
  // Its ideal bytes (the roofline's) read the 8192 rows gathered, not the 50257-row table:
  // below what the run moves, as a lower bound must be.
  CHECK(g.bytes_read == Count(8 * 1024 * 768 * 4 + 8 * 1024 * 8));
  CHECK(g.bytes_written == Count(8 * 1024 * 768 * 4));
  CHECK(g.bytes_formula.str() == "8·(b·d·s + b·s)");
  // More lookups than table rows: the table is read once, whole, as any other input.
  const Cost small = cost(plan_from_sizes(OpSpec::get_at(), "[v] d, b s -> b s d", {{"v", 5}, {"d", 768}, {"b", 8}, {"s", 1024}}));
  CHECK(small.bytes_read == Count(5 * 768 * 4 + 8 * 1024 * 8));
  CHECK(small.bytes_formula.str() == "4·(b·d·s + 2·b·s + d·v)");
  const Cost a = cost(plan_from_sizes(OpSpec::add_at(), "[v] d, b s, b s d -> [v] d",
                                      {{"v", 100}, {"d", 16}, {"b", 2}, {"s", 3}}));
  CHECK(a.flops == Count(2 * 3 * 16));
  // cross_entropy: 4 per logit and 1 per row forward; 3 and 2 backward (one pass: the loss
  // gives each row's log-sum-exp back).
  const Plan x = plan_from_sizes(OpSpec::cross_entropy(), "b s [v], b s -> b s", {{"b", 2}, {"s", 5}, {"v", 11}});
  CHECK(cost(x).flops == Count(4 * 2 * 5 * 11 + 2 * 5));
  CHECK(cost(x).bytes_read == Count(2 * 5 * 11 * 4 + 2 * 5 * 8));
  CHECK(backward_cost(x).flops == Count(3 * 2 * 5 * 11 + 2 * 2 * 5));
  // The plan keeps nothing of B S V size but the logits: one step, the loss its only temporary.
  CHECK(cost(x).peak_extra_bytes == Count(2 * 5 * 4));
}

TEST_CASE("scalar operands: a number beside a tensor", "[indexed]") {
  const Tensor x = Tensor::randn({3, 4}, DType::f32, 7);
  const std::vector<float> xv = x.to_vector<float>();
  const std::vector<float> twice = map(x, 2.0, "a b, -> a b", "mul").to_vector<float>();
  const std::vector<float> minus = map(1.0, x, ", a b -> a b", BinaryOp::sub).to_vector<float>();
  for (std::size_t i = 0; i < xv.size(); ++i) {
    CHECK(twice[i] == xv[i] * 2.0f);
    CHECK(minus[i] == 1.0f - xv[i]);
  }
  CHECK(map(Tensor::randn({2}, DType::bf16), 0.5, "a, -> a", "mul").dtype() == DType::bf16);
}
