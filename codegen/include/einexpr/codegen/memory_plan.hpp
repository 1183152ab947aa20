#pragma once
// Buffers placed in one arena by their lifetimes: two buffers alive at the same step never
// share bytes, and any others may. This is how a program reuses memory instead of
// allocating per statement (codegen/program/memory_plan.cpp).
#include <cstdint>
#include <span>
#include <vector>

namespace einexpr {

/// A buffer of `bytes` alive from step `first` to step `last`, both included.
struct Lifetime {
  std::int64_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct MemoryPlan {
  std::vector<std::int64_t> offsets;  // per buffer: its byte offset in the arena
  std::int64_t arena_bytes = 0;       // max(offset + bytes): the arena to allocate
  std::int64_t live_peak_bytes = 0;   // the most bytes alive at one step: no arena is smaller
};

/// Offsets, each a multiple of `alignment`: greedy by size, as TensorFlow Lite's arena
/// planner does (largest buffer first, each at the lowest offset where it overlaps no buffer
/// already placed that is alive at a common step).
MemoryPlan plan_memory(std::span<const Lifetime> buffers, std::int64_t alignment = 64);

/// The most bytes alive at one step.
std::int64_t live_peak(std::span<const Lifetime> buffers);

}  // namespace einexpr
