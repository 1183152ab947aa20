#pragma once
// Fresh random inputs made on the GPU: standard normal samples (a splitmix64 hash of the
// element index and the seed, then Box-Muller), rounded to the tensor's dtype. The
// benchmark's inputs are GBs; drawing them on the CPU and copying them over would cost
// more than all the timing. Never zeros: they hide unwritten outputs and can run faster.
#include <cstdint>

#include "einexpr/runtime/tensor.hpp"

namespace einexpr::bench {

/// Fills a contiguous GPU tensor of f32, bf16 or f16 with N(0, 1) samples (queued on
/// einexpr's stream of its device). The same seed gives the same values.
void fill_normal(Tensor& t, std::uint64_t seed);

/// A new contiguous GPU tensor filled by fill_normal.
Tensor random_gpu(const Shape& shape, DType dtype, std::uint64_t seed, int device = 0);

}  // namespace einexpr::bench
