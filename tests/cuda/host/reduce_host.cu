#include "reduce_host.hpp"

#include <vector>

#include "reduce_ops.cuh"

namespace einexpr::test {

namespace {

/// The warp's butterfly (reduce_inner's shuffle_xor 16, 8, 4, 2, 1): lane l combines its
/// accumulator with lane l ^ m's, every lane at once; lane 0's ends it.
template <class Op>
typename Op::Acc butterfly(std::vector<typename Op::Acc> lanes) {
  for (int m = 16; m >= 1; m /= 2) {
    std::vector<typename Op::Acc> next(32);
    for (int l = 0; l < 32; ++l) next[static_cast<std::size_t>(l)] = Op::combine(lanes[static_cast<std::size_t>(l)], lanes[static_cast<std::size_t>(l ^ m)]);
    lanes = next;
  }
  return lanes[0];
}

/// Element i as the accumulator (host-and-device, as the kernels' loads: no host lambda in
/// the folds).
template <class Acc>
struct Strided {
  const float* p;
  std::int64_t stride;
  EINEXPR_HD Acc operator()(std::int64_t i) const { return static_cast<Acc>(p[i * stride]); }
};

template <class Op>
float run(const HostReduce& r, const float* p) {
  using Acc = typename Op::Acc;
  const Strided<Acc> load{p, r.stride};
  std::vector<Acc> partials;
  for (std::int64_t s = 0; s < r.splits; ++s) {
    const std::int64_t begin = s * r.chunk, end = std::min(r.count, begin + r.chunk);
    if (r.inner) {
      std::vector<Acc> lanes;
      for (int lane = 0; lane < 32; ++lane) lanes.push_back(gpu::lane_fold<Op>(load, begin, end, lane));
      partials.push_back(butterfly<Op>(lanes));
    } else {
      partials.push_back(gpu::thread_fold<Op>(load, begin, end));
    }
  }
  Acc acc = r.splits == 1 ? partials[0] : Op::identity();  // one split: the kernel stores its own
  if (r.splits > 1)
    for (const Acc& part : partials) acc = Op::combine(acc, part);  // reduce_partials, in split order
  return gpu::finish_value<Op, Acc, float>(acc, r.op == Reduction::mean, r.count, r.correction);
}

}  // namespace

float host_gpu_reduce(const HostReduce& r, const float* p) {
  switch (r.op) {
    case Reduction::sum:
    case Reduction::mean: return run<gpu::SumOp<float>>(r, p);
    case Reduction::var: return run<gpu::MomentsOp<float, false>>(r, p);
    case Reduction::std: return run<gpu::MomentsOp<float, true>>(r, p);
    case Reduction::logsumexp: return run<gpu::LogSumExpOp<float>>(r, p);
    case Reduction::max: return run<gpu::MaxOp<float>>(r, p);
    case Reduction::min: return run<gpu::MinOp<float>>(r, p);
    case Reduction::prod: return run<gpu::ProdOp<float>>(r, p);
    default: return 0;
  }
}

}  // namespace einexpr::test
