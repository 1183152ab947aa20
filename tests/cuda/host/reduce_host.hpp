#pragma once
// reduce_cuda.cu's folds (codegen/lower/cuda/reduce_ops.cuh) compiled by nvcc for the host:
// one output of an f32 reduction, folded in the kernels' order (lanes 32 apart and the warp's
// butterfly for the inner kernel, one thread's run for the outer one; partial results of the
// splits combined in order), so CPU tests check the GPU's arithmetic without a GPU.
#include <cstdint>

#include "einexpr/codegen/plan.hpp"

namespace einexpr::test {

struct HostReduce {
  Reduction op = Reduction::sum;
  bool inner = true;                // reduce_inner (warps) or reduce_outer (threads)
  std::int64_t count = 0, stride = 1;
  std::int64_t splits = 1, chunk = 0;  // as plan_reduction chose them
  std::int64_t correction = 1;
};

/// The value the kernels store for one output whose elements are p[0], p[stride], ...
float host_gpu_reduce(const HostReduce& r, const float* p);

}  // namespace einexpr::test
