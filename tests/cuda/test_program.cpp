// Whole Programs from lower_cuda: several steps in a row, view outputs, run_into, the
// caching allocator across runs, and the lowering's errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "einexpr/codegen/lower.hpp"
#include "einexpr/runtime/error.hpp"
#include "gpu_check.hpp"
#include "plan_builder.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

// relu(sum_s x[b, s, :] @ w) with x stored as [b, h, s]: copy (a permutation), contract
// (w broadcast over b), reduce, map.
struct Pipeline {
  Plan plan;
  std::vector<double> ref;
  std::vector<Tensor> inputs;
};

Pipeline pipeline(DType d) {
  const std::int64_t B = 3, S = 20, H = 32, K = 24;
  const Input x = make_input({B, H, S}, d, 71);  // stored [b, h, s]; read as [b, s, h]
  const Input w = make_input({H, K}, d, 72);
  PlanBuilder p(d, Op::einsum);
  const int xi = p.input({B, H, S});
  const int wi = p.input({H, K});
  const int xs = p.view(xi, Layout{{B, S, H}, {H * S, 1, S}, 0});
  const int xc = p.copy(xs);                                       // [b, s, h] contiguous
  const int wb = p.view(wi, Layout{{B, H, K}, {0, K, 1}, 0});      // w broadcast over b
  const int y = p.contract(xc, wb, 1, ContractStep::Kind::batched_gemm);  // [b, s, k]
  const int r = p.reduce(y, Reduction::sum, {1});                  // [b, k]
  const int out = p.unary(UnaryOp::relu, r);
  Pipeline pl{p.finish(out), {}, {x.gpu, w.gpu}};
  const std::vector<double> xv = values(x), wv = values(w);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t k = 0; k < K; ++k) {
      double s = 0;
      for (std::int64_t t = 0; t < S; ++t)
        for (std::int64_t h = 0; h < H; ++h)
          s += xv[static_cast<std::size_t>((b * H + h) * S + t)] * wv[static_cast<std::size_t>(h * K + k)];
      pl.ref.push_back(s < 0 ? 0 : s);
    }
  return pl;
}

}  // namespace

TEST_CASE("a program of several steps: copy, contract, reduce, map", "[cuda][program]") {
  for (DType d : {DType::f32, DType::f64, DType::bf16}) {
    CAPTURE(name(d));
    const Pipeline pl = pipeline(d);
    run_poisoned(pl.plan, pl.inputs, pl.ref, d == DType::bf16 ? 2e-2 : tolerance(d, 20 * 32));
  }
}

TEST_CASE("running a program again does no cudaMalloc", "[cuda][program]") {
  const Pipeline pl = pipeline(DType::f32);
  const Program program = lower_cuda(pl.plan, cuda0);
  { const Tensor first = program.run(pl.inputs); }  // warms the cache (and the cuBLAS handle)
  synchronize(cuda0);
  const AllocatorStats before = allocator_for(cuda0).stats();
  Tensor second = program.run(pl.inputs);
  check_close(second, pl.ref, tolerance(DType::f32, 640));
  second = Tensor();
  const AllocatorStats after = allocator_for(cuda0).stats();
  CHECK(after.requests > before.requests);
  CHECK(after.system_allocations == before.system_allocations);
}

TEST_CASE("run_into writes into a GPU tensor", "[cuda][program]") {
  const Pipeline pl = pipeline(DType::f32);
  const Program program = lower(pl.plan, cuda0);
  CHECK(program.device == cuda0);
  Tensor out = Tensor::full({3, 24}, std::nan(""), DType::f32, cuda0);
  program.run_into(pl.inputs, out);
  check_close(out, pl.ref, tolerance(DType::f32, 640));
  Tensor strided = Tensor::full({24, 3}, std::nan(""), DType::f32, cuda0).transpose(0, 1);  // copied into
  program.run_into(pl.inputs, strided);
  check_close(strided, pl.ref, tolerance(DType::f32, 640));
}

TEST_CASE("a view result shares its input's storage and runs no kernel", "[cuda][program]") {
  const Input x = make_input({4, 6}, DType::f32, 81);
  PlanBuilder p(DType::f32, Op::rearrange);
  const int xi = p.input({4, 6});
  const int v = p.view(xi, Layout{{6, 4}, {1, 6}, 0});
  const Program program = lower_cuda(p.finish(v), cuda0);
  CHECK(program.kernels.empty());
  const std::vector<Tensor> inputs = {x.gpu};
  const Tensor out = program.run(inputs);
  CHECK(out.same_storage(x.gpu));
  check_close(out, x.cpu.transpose(0, 1).to_vector<double>(), 0);
}

TEST_CASE("lower_cuda names a wrong device", "[cuda][program]") {
  const Pipeline pl = pipeline(DType::f32);
  CHECK_THROWS_AS(lower_cuda(pl.plan, Device::cpu()), DeviceError);
  CHECK_THROWS_WITH(lower_cuda(pl.plan, Device::cpu()), Catch::Contains("needs a CUDA device"));
  CHECK_THROWS_WITH(lower_cuda(pl.plan, Device::cuda(64)), Catch::Contains("cuda:64 does not exist"));
  const Program program = lower_cuda(pl.plan, cuda0);
  const std::vector<Tensor> wrong = {pl.inputs[0].to(Device::cpu()), pl.inputs[1]};
  CHECK_THROWS_WITH(program.run(wrong),
                    Catch::Contains("input 0 is on cpu but the program runs on cuda:0"));
}
