// Every op's gradients lowered for the GPU (lower_cuda of backward.hpp's gradient plans) and
// run there, against the same gradients run on the CPU (whose own tests check them against
// finite differences and f64 references): einsum (a GEMM pair, a diagonal, a scalar output),
// rearrange, repeat, every differentiable reduction (var, std and logsumexp included), unary
// and broadcast binary maps, and a normalization; in f32 and f64.
#include <catch2/catch.hpp>

#include <string>

#include "einexpr/einexpr.hpp"
#include "gpu_check.hpp"

using namespace einexpr;
using test::cuda0;

TEST_CASE("every op's gradients run on the GPU and equal the CPU's", "[cuda][gradients]") {
  struct Row {
    const char* what;
    OpSpec spec;
    const char* pattern;
    std::vector<Shape> shapes;
  };
  const std::vector<Row> rows = {
      {"a GEMM pair", OpSpec::einsum(), "b d, d k -> b k", {{6, 40}, {40, 5}}},
      {"a diagonal", OpSpec::einsum(), "a a b, b c -> a c", {{4, 4, 3}, {3, 5}}},
      {"a scalar output", OpSpec::einsum(), "i, i ->", {{300}, {300}}},
      {"a permutation", OpSpec::rearrange(), "b h w c -> b c (h w)", {{2, 3, 4, 5}}},
      {"a repeat", OpSpec::repeat({{"c", 3}}), "h w -> h c w", {{4, 6}}},
      {"sum", OpSpec::reduce(Reduction::sum), "b s h -> b h", {{3, 50, 7}}},
      {"mean", OpSpec::reduce(Reduction::mean), "b s h -> s", {{3, 50, 7}}},
      {"max", OpSpec::reduce(Reduction::max), "b s h -> b h", {{3, 50, 7}}},
      {"min", OpSpec::reduce(Reduction::min), "b s h -> h", {{3, 50, 7}}},
      {"prod", OpSpec::reduce(Reduction::prod), "b s -> b", {{4, 6}}},
      {"var", OpSpec::reduce(Reduction::var), "b s h -> b h", {{3, 50, 7}}},
      {"std", OpSpec::reduce(Reduction::std, {}, 0), "b s h -> s", {{3, 50, 7}}},
      {"logsumexp", OpSpec::reduce(Reduction::logsumexp), "b s h -> b h", {{3, 50, 7}}},
      {"gelu", OpSpec::map(UnaryOp::gelu), "b s h -> b s h", {{3, 5, 7}}},
      {"gelu_erf", OpSpec::map(UnaryOp::gelu_erf), "b s h -> b s h", {{3, 5, 7}}},
      {"a broadcast product", OpSpec::map(BinaryOp::mul), "b s h, h -> b s h", {{3, 5, 7}, {7}}},
      {"layer_norm", OpSpec::normalize(Normalization::layer_norm, 1e-5), "b s [h]", {{3, 5, 64}}},
  };
  std::uint64_t seed = 1;
  for (const Row& row : rows)
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(row.what, row.pattern, name(dtype));
      std::vector<Tensor> cpu, gpu;
      for (const Shape& s : row.shapes) {
        const test::Input in = test::make_input(s, dtype, seed++);
        cpu.push_back(in.cpu);
        gpu.push_back(in.gpu);
      }
      const Compiled f(row.spec, row.pattern);
      const Tensor y_cpu = f.run(cpu), y_gpu = f.run(gpu);
      const test::Input dy = test::make_input(y_cpu.shape(), dtype, seed++);
      const std::vector<Tensor> want = run_gradients(f.plan(cpu), cpu, y_cpu, dy.cpu);
      const std::vector<Tensor> got = test::gpu_gradients(f.plan(gpu), gpu, y_gpu, dy.gpu);
      synchronize(cuda0);
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(got[i].device() == cuda0);
        REQUIRE(got[i].shape() == want[i].shape());
        test::check_close(got[i], want[i].to_vector<double>(), dtype == DType::f64 ? 1e-11 : 1e-5);
      }
    }
}
