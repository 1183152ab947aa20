#pragma once
// dropout's random numbers, one definition for the CPU, the GPU, the trainer and the tests:
// counter-based (each element's bits a function of the seed and its index alone), so a mask
// is the same on every device, thread count and split of the work, and the backward or a
// recomputation draws it again bit for bit.
//
//   bits(s, i)   = mix(s + (i + 1)·γ)            SplitMix64's i-th output from state s
//   keep(s, i)   = (bits(s, i) >> 32) >= t,      t = threshold(p) = round(p · 2^32)
//   stream(seed, step, k) = mix(mix(mix(seed) + step) + k)
//                                                the seed of the k-th dropout of a program
//                                                (its statements in planning order, a
//                                                block's layers unrolled) at training step
//                                                `step` (micro-batches count as steps)
// mix is SplitMix64's finalizer (Steele, Lea and Flood 2014), γ = 0x9E3779B97F4A7C15.
// An element is kept with probability 1 - t / 2^32, which is 1 - p to within 2^-33.
#include <cstdint>

#ifdef __CUDACC__
#define EINEXPR_HOST_DEVICE __host__ __device__
#else
#define EINEXPR_HOST_DEVICE
#endif

namespace einexpr::random {

inline constexpr std::uint64_t gamma = 0x9E3779B97F4A7C15ull;

EINEXPR_HOST_DEVICE constexpr std::uint64_t mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

EINEXPR_HOST_DEVICE constexpr std::uint64_t bits(std::uint64_t seed, std::uint64_t index) noexcept {
  return mix(seed + (index + 1) * gamma);
}

/// round(p · 2^32) for p in [0, 1): an element is dropped when its top 32 bits are below it.
constexpr std::uint64_t threshold(double p) noexcept {
  const double t = p * 4294967296.0 + 0.5;
  return t <= 0 ? 0 : t >= 4294967296.0 ? 4294967296ull : static_cast<std::uint64_t>(t);
}

EINEXPR_HOST_DEVICE constexpr bool keep(std::uint64_t seed, std::uint64_t index, std::uint64_t threshold) noexcept {
  return (bits(seed, index) >> 32) >= threshold;
}

constexpr std::uint64_t stream(std::uint64_t seed, std::uint64_t step, std::uint64_t k) noexcept {
  return mix(mix(mix(seed) + step) + k);
}

}  // namespace einexpr::random
