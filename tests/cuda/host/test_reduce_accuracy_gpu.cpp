// The GPU's reductions as accurate as numpy's, checked without a GPU: reduce_cuda.cu's folds
// (reduce_ops.cuh, compiled for the host in reduce_host.cu) run on every reduction case of
// tests/lib/reduce_accuracy.inc in the kernels' order, with the splits plan_reduction picks
// for an H100 (132 multiprocessors), and their largest relative error must be at most twice
// numpy 1.24's on the same values.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "einexpr/runtime/dtype.hpp"
#include "kernels.hpp"
#include "reduce_accuracy_data.hpp"
#include "reduce_host.hpp"

using namespace einexpr;

TEST_CASE("the GPU's f32 sums, means, variances and logsumexps: at most twice numpy's error", "[cuda_host][reduce]") {
  int checked = 0;
  for (const accuracy::Case& c : accuracy::cases) {
    const std::string shape = c.shape, op = c.op;
    if (shape == "norm" || op == "dot") continue;
    const std::vector<float> v = accuracy::make(c.dist, accuracy::N, c.seed);
    const Shape dims = shape == "flat" ? Shape{accuracy::N} : shape == "rows" ? Shape{1024, 4096} : Shape{4096, 1024};
    const std::vector<int> axes = {shape == "strided" ? 0 : static_cast<int>(dims.size()) - 1};
    const Shape out = shape == "flat" ? Shape{} : Shape{1024};
    const Reduction r = parse_reduction(op);
    const gpu::ReducePlan plan = gpu::plan_reduction(132, Layout::contiguous(dims), axes, Layout::contiguous(out), DType::f32, r);
    test::HostReduce h;
    h.op = r;
    h.inner = plan.kind == gpu::ReducePlan::Kind::inner;
    h.count = plan.count;
    h.stride = shape == "strided" ? 1024 : 1;
    h.splits = plan.splits;
    h.chunk = plan.chunk;
    const std::int64_t outputs = accuracy::N / plan.count;
    double worst = 0;
    for (std::int64_t o = 0; o < outputs; ++o) {
      const float* p = v.data() + (shape == "strided" ? o : o * plan.count);
      worst = std::max(worst, accuracy::relative(test::host_gpu_reduce(h, p), accuracy::exact(op, p, plan.count, h.stride)));
    }
    CAPTURE(c.name, plan.splits, h.inner, worst, c.numpy_error);
    CHECK(worst <= 2 * c.numpy_error);
    ++checked;
  }
  CHECK(checked == 54);
}
