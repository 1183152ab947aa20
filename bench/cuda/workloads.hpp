#pragma once
// The workloads of bench/cuda/README.md's table, each checked once and then timed beside
// its same-run baseline: GEMMs and attention scores beside cuBLAS called directly on the
// same matrices; permutations, the reduction and the repeat beside a cudaMemcpyAsync D2D
// moving as many bytes (read + written) as the workload's ideal bytes, the repeat also
// beside a cudaMemsetAsync of its output.
#include <functional>
#include <string>
#include <vector>

#include "workload.hpp"

namespace einexpr::bench {

struct Workload {
  /// "gemm-bf16: b d, d k -> b k bf16 B=16384 D=32768 K=8192": what --only matches. Ids:
  /// gemm-bf16, gemm-f32, gemm-bf16-cube, scores, permute-bchw, permute-bhsd, reduce, repeat.
  std::string name;
  /// Checks, then times; returns no rows when a check failed (nothing wrong is timed).
  std::function<std::vector<Row>(Env&)> run;
};

/// The README's workloads at their sizes, or at tiny ones for --quick.
std::vector<Workload> workloads(bool quick);

}  // namespace einexpr::bench
