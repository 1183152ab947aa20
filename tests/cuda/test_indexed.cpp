// get_at, add_at, cross_entropy, concatenation and split on the GPU (index_cuda.cu): torch
// 1.13's values and autograd gradients (tests/lib/data/index_torch_values.hpp, the CPU's
// test data) in f64 and f32 with i64 and i32 indices; scatter-adds with many repeated indices
// against the CPU; a bad index is an IndexError before anything is written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "data/index_torch_values.hpp"
#include "einexpr/codegen/backward.hpp"
#include "einexpr/einexpr.hpp"
#include "gpu_check.hpp"

using namespace einexpr;
using test::cuda0;

namespace {

void check_values(const Tensor& t, const std::vector<double>& want, double tol, double floor) {
  const std::vector<double> got = test::download(t).to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i, got[i], want[i]);
    CHECK(std::fabs(got[i] - want[i]) <= tol * std::max(std::fabs(want[i]), floor));
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

OpSpec spec_of(const torch_values::IndexCase& c, int output) {
  const std::string op = c.op;
  if (op == "get_at") return OpSpec::get_at(c.lengths);
  if (op == "add_at") return OpSpec::add_at(c.lengths);
  if (op == "cross_entropy") return OpSpec::cross_entropy(c.ignore_index, c.lengths);
  return OpSpec::rearrange(c.lengths, Copy::if_needed, output);
}

}  // namespace

TEST_CASE("indexed ops, concatenation and split on the GPU match torch, gradients too", "[cuda][indexed]") {
  for (const torch_values::IndexCase& c : torch_values::index_cases) {
    for (const DType dtype : {DType::f64, DType::f32}) {
      CAPTURE(c.what, name(dtype));
      std::vector<Tensor> in;
      double input_scale = 0;
      for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        const bool index = is_index(c, i);
        in.push_back(Tensor::from_doubles(c.inputs[i].values, c.inputs[i].shape,
                                          index ? (dtype == DType::f32 ? DType::i32 : DType::i64) : dtype)
                         .to(cuda0));
        if (!index) input_scale = std::max(input_scale, largest(c.inputs[i].values));
      }
      const double eps = dtype == DType::f64 ? 0x1p-52 : 0x1p-23;
      std::vector<std::vector<double>> grads;
      for (std::size_t o = 0; o < c.outputs.size(); ++o) {
        const Compiled compiled(spec_of(c, static_cast<int>(o)), c.pattern);
        const Tensor y = compiled.run(std::span<const Tensor>(in));
        synchronize(cuda0);
        CHECK(y.device() == cuda0);
        const double scale = largest(c.outputs[o].values);
        check_values(y, c.outputs[o].values, std::max(dtype == DType::f64 ? 1e-12 : 4e-6, 8 * eps * input_scale / scale),
                     scale);
        const Tensor dy = Tensor::from_doubles(c.dys[o].values, c.dys[o].shape, dtype).to(cuda0);
        const std::vector<Tensor> g = test::gpu_gradients(compiled.plan(in), in, y, dy);
        synchronize(cuda0);
        for (std::size_t k = 0; k < g.size(); ++k) {
          const std::vector<double> v = test::download(g[k]).to_vector<double>();
          if (grads.size() <= k) grads.push_back(v);
          else
            for (std::size_t i = 0; i < v.size(); ++i) grads[k][i] += v[i];
        }
      }
      REQUIRE(grads.size() == c.grads.size());
      for (std::size_t k = 0; k < grads.size(); ++k) {
        const double floor = largest(c.grads[k].values);
        REQUIRE(grads[k].size() == c.grads[k].values.size());
        for (std::size_t i = 0; i < grads[k].size(); ++i)
          CHECK(std::fabs(grads[k][i] - c.grads[k].values[i]) <=
                std::max(dtype == DType::f64 ? 1e-12 : 1e-5, 8 * eps * input_scale) * floor);
      }
    }
  }
}

TEST_CASE("scatter-adds with many repeated indices on the GPU equal the CPU's sums", "[cuda][indexed]") {
  std::vector<std::int64_t> tok(4096);
  for (std::size_t i = 0; i < tok.size(); ++i) tok[i] = static_cast<std::int64_t>((i * 7919) % 13);
  const Tensor idx = Tensor::from_vector(tok, {64, 64});
  const Tensor table = Tensor::randn({50, 96}, DType::f64, 1), upd = Tensor::randn({64, 64, 96}, DType::f64, 2);
  const Tensor cpu = add_at(table, idx, upd, "[v] d, b s, b s d -> [v] d");
  const Tensor gpu = add_at(table.to(cuda0), idx.to(cuda0), upd.to(cuda0), "[v] d, b s, b s d -> [v] d");
  synchronize(cuda0);
  check_values(gpu, cpu.to_vector<double>(), 1e-12, largest(cpu.to_vector<double>()));
  // f32, bf16 (compare-and-swap on 32-bit words): within rounding of a sum of ~315 terms.
  for (const DType dtype : {DType::f32, DType::bf16}) {
    const Tensor c = add_at(table.to(dtype), idx, upd.to(dtype), "[v] d, b s, b s d -> [v] d");
    const Tensor g = add_at(table.to(dtype).to(cuda0), idx.to(cuda0), upd.to(dtype).to(cuda0), "[v] d, b s, b s d -> [v] d");
    synchronize(cuda0);
    check_values(g, c.to_vector<double>(), dtype == DType::f32 ? 1e-4 : 5e-2, 20);
  }
}

TEST_CASE("a bad index on the GPU is an IndexError naming its position, and nothing is written", "[cuda][indexed]") {
  const Tensor table = Tensor::randn({5, 3}, DType::f32, 1).to(cuda0);
  const Tensor bad = Tensor::from_vector(std::vector<std::int64_t>{0, 4, 5, 1}, {2, 2}).to(cuda0);
  CHECK_THROWS_AS(get_at(table, bad, "[v] d, b s -> b s d"), IndexError);
  try {
    (void)get_at(table, bad, "[v] d, b s -> b s d");
  } catch (const IndexError& e) {
    CHECK_THAT(e.what(), Catch::Contains("index 5 at position [1, 0]"));
  }
  const Tensor logits = Tensor::randn({2, 2, 5}, DType::f32, 3).to(cuda0);
  CHECK_THROWS_AS(cross_entropy(logits, bad, "b s [v], b s -> b s"), IndexError);
  const Tensor ignored = Tensor::from_vector(std::vector<std::int32_t>{0, -100, 4, 1}, {2, 2}).to(cuda0);
  const Tensor loss = cross_entropy(logits, ignored, "b s [v], b s -> b s");
  synchronize(cuda0);
  CHECK(test::download(loss).to_vector<float>()[1] == 0.0f);
}

TEST_CASE("dropout on the GPU draws the CPU's mask bit for bit, and its gradient", "[cuda][dropout]") {
  for (const DType dtype : {DType::f64, DType::f32, DType::bf16}) {
    CAPTURE(name(dtype));
    const Compiled op(OpSpec::dropout(0.3), "b s d, -> b s d");
    const Tensor x = Tensor::randn({3, 70, 33}, dtype, 11);
    const Tensor seed = Tensor::from_vector(std::vector<std::int64_t>{987654321}, {});
    const std::vector<Tensor> cpu_in{x, seed};
    const std::vector<Tensor> gpu_in{x.to(cuda0), seed.to(cuda0)};
    const Tensor want = op.run(std::span<const Tensor>(cpu_in));
    const Tensor got = op.run(std::span<const Tensor>(gpu_in));
    synchronize(cuda0);
    CHECK(test::download(got).to(DType::f64).to_vector<double>() == want.to(DType::f64).to_vector<double>());
    // a transposed input: the mask follows the output's positions on both
    const Tensor xt = rearrange(x, "b s d -> d s b");
    const Compiled t(OpSpec::dropout(0.5), "d s b, -> d s b");
    const std::vector<Tensor> cpu_t{xt, seed}, gpu_t{rearrange(x.to(cuda0), "b s d -> d s b"), seed.to(cuda0)};
    const Tensor want_t = t.run(std::span<const Tensor>(cpu_t));
    const Tensor got_t = t.run(std::span<const Tensor>(gpu_t));
    synchronize(cuda0);
    CHECK(test::download(got_t).to(DType::f64).to_vector<double>() == want_t.to(DType::f64).to_vector<double>());
    // the gradient: dY under the same mask, drawn again from the seed
    const Tensor dy = Tensor::randn({3, 70, 33}, dtype, 12);
    const std::vector<Tensor> g_cpu = run_gradients(op.plan(cpu_in), cpu_in, want, dy);
    const std::vector<Tensor> g_gpu = test::gpu_gradients(op.plan(gpu_in), gpu_in, got, dy.to(cuda0));
    synchronize(cuda0);
    REQUIRE(g_gpu.size() == 1);
    CHECK(test::download(g_gpu[0]).to(DType::f64).to_vector<double>() == g_cpu[0].to(DType::f64).to_vector<double>());
  }
}
