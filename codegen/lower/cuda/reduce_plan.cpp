// plan_reduction(): the host half of reduce_cuda.cu, run once at lowering. Pure C++ (the
// multiprocessor count is a parameter), so CPU tests emulate its plans (tests/cuda/host).
#include <algorithm>
#include <string>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/strided.hpp"
#include "kernels.hpp"

namespace einexpr::gpu {

namespace {

constexpr std::int64_t kMaxIndex = 0x7FFFFFFF;
constexpr std::size_t kMaxRank = 12;  // as indexing.cuh

struct Dim {
  std::int64_t length, src_stride, dst_stride;
};

// Sorted by source stride, outermost (largest) first, then collapsed where strides nest.
CollapsedDims collapse_sorted(std::vector<Dim> dims, bool with_dst) {
  std::stable_sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) { return a.src_stride > b.src_stride; });
  Shape shape;
  Strides src, dst;
  for (const Dim& d : dims) {
    shape.push_back(d.length);
    src.push_back(d.src_stride);
    dst.push_back(d.dst_stride);
  }
  if (with_dst) return collapse_dims(shape, {&src, &dst});
  return collapse_dims(shape, {&src});
}

// How many pieces to cut each output's reduced range into, so the GPU has enough threads
// (two full waves of 2048 threads per multiprocessor).
void choose_splits(int sm_count, ReducePlan& p) {
  const std::int64_t target = static_cast<std::int64_t>(sm_count) * 2048 * 2;
  const std::int64_t threads = p.outputs * (p.kind == ReducePlan::Kind::inner ? 32 : 1);
  const std::int64_t min_per_split = p.kind == ReducePlan::Kind::inner ? 1024 : 64;
  // var, std and logsumexp accumulate pairs and triples: one pass per output, not split.
  const bool splittable = p.op != Reduction::var && p.op != Reduction::std && p.op != Reduction::logsumexp;
  std::int64_t splits = 1;
  if (splittable && threads < target && p.count > min_per_split)
    splits = std::min((target + threads - 1) / threads, (p.count + min_per_split - 1) / min_per_split);
  splits = std::max<std::int64_t>(1, splits);
  p.chunk = p.count == 0 ? 0 : (p.count + splits - 1) / splits;
  p.splits = p.count == 0 ? 1 : (p.count + p.chunk - 1) / p.chunk;
  p.partial_bytes = p.splits > 1 ? static_cast<std::size_t>(p.outputs * p.splits) * accumulator_size(p.dtype, p.op) : 0;
}

}  // namespace

std::size_t accumulator_size(DType dtype, Reduction op) {
  if (dtype == DType::boolean) return 1;
  if (dtype == DType::f64 || is_integer(dtype)) return 8;
  return op == Reduction::max || op == Reduction::min ? 4 : 8;
}

ReducePlan plan_reduction(int sm_count, const Layout& src, const std::vector<int>& axes, const Layout& dst, DType dtype,
                          Reduction op) {
  ReducePlan p;
  p.op = op;
  p.dtype = dtype;
  p.src_offset = src.offset;
  p.dst_offset = dst.offset;
  std::vector<bool> reduced(src.shape.size(), false);
  for (int a : axes) {
    EINEXPR_ASSERT(a >= 0 && a < src.dim() && !reduced[static_cast<std::size_t>(a)], "reduce: bad axis list");
    reduced[static_cast<std::size_t>(a)] = true;
  }
  std::vector<Dim> kept_dims, reduced_dims;
  std::size_t out_dim = 0;
  p.outputs = 1;
  p.count = 1;
  for (std::size_t d = 0; d < src.shape.size(); ++d) {
    const std::int64_t len = src.shape[d];
    if (reduced[d]) {
      p.count *= len;
      if (len != 1) reduced_dims.push_back({len, src.strides[d], 0});
      continue;
    }
    EINEXPR_ASSERT(out_dim < dst.shape.size() && dst.shape[out_dim] == len, "reduce: output shape mismatch");
    p.outputs *= len;
    if (len != 1) kept_dims.push_back({len, src.strides[d], dst.strides[out_dim]});
    ++out_dim;
  }
  EINEXPR_ASSERT(out_dim == dst.shape.size(), "reduce: output rank mismatch");
  if (p.outputs == 0) return p;
  const CollapsedDims k = collapse_sorted(kept_dims, true);
  p.kept = k.shape;
  p.kept_src = k.strides[0];
  p.kept_dst = k.strides[1];
  const CollapsedDims r = collapse_sorted(reduced_dims, false);
  p.reduced = p.count == 0 ? Shape{} : r.shape;
  p.reduced_src = p.count == 0 ? Strides{} : r.strides[0];
  if (p.outputs > kMaxIndex || p.kept.size() > kMaxRank || p.reduced.size() > kMaxRank ||
      (p.reduced.size() > 1 && p.count > kMaxIndex))
    throw DeviceError("reductions on the GPU do not support this size yet: " + std::to_string(p.outputs) +
                      " outputs of " + std::to_string(p.count) + " elements each over " +
                      std::to_string(p.reduced.size()) + " non-contiguous dims (limits: 2^31 - 1 outputs; " +
                      "2^31 - 1 elements per output unless they collapse into one strided dim)");
  const bool inner_contiguous = !p.reduced.empty() && p.reduced_src.back() == 1;
  const bool kept_contiguous = !p.kept.empty() && p.kept_src.back() == 1;
  p.kind = inner_contiguous && !kept_contiguous && p.count >= 32 ? ReducePlan::Kind::inner : ReducePlan::Kind::outer;
  choose_splits(sm_count, p);
  return p;
}

}  // namespace einexpr::gpu
