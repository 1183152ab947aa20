// plan_memory(): greedy-by-size offset assignment over lifetimes; live_peak(): a sweep.
#include "einexpr/codegen/memory_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr {

namespace {

std::int64_t align_up(std::int64_t bytes, std::int64_t alignment) {
  return checked_mul((checked_add(bytes, alignment - 1)) / alignment, alignment);
}

bool overlap_in_time(const Lifetime& a, const Lifetime& b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

std::int64_t live_peak(std::span<const Lifetime> buffers) {
  std::map<int, std::int64_t> delta;  // step -> bytes that start minus bytes that ended before it
  for (const Lifetime& b : buffers) {
    delta[b.first] = checked_add(delta[b.first], b.bytes);
    delta[b.last + 1] -= b.bytes;
  }
  std::int64_t live = 0, peak = 0;
  for (const auto& [step, d] : delta) peak = std::max(peak, live += d);
  return peak;
}

MemoryPlan plan_memory(std::span<const Lifetime> buffers, std::int64_t alignment) {
  if (alignment <= 0) throw Error("plan_memory: the alignment must be positive");
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  plan.live_peak_bytes = live_peak(buffers);
  std::vector<std::size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<std::size_t> placed;
  for (const std::size_t i : order) {
    const Lifetime& b = buffers[i];
    if (b.bytes == 0) continue;
    std::vector<std::size_t> rivals;  // placed buffers alive at a common step, by offset
    for (const std::size_t j : placed)
      if (overlap_in_time(b, buffers[j])) rivals.push_back(j);
    std::sort(rivals.begin(), rivals.end(), [&](std::size_t x, std::size_t y) { return plan.offsets[x] < plan.offsets[y]; });
    std::int64_t offset = 0;
    for (const std::size_t j : rivals) {
      if (checked_add(offset, b.bytes) <= plan.offsets[j]) break;  // fits in the gap below j
      offset = std::max(offset, align_up(checked_add(plan.offsets[j], buffers[j].bytes), alignment));
    }
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, checked_add(offset, b.bytes));
    placed.push_back(i);
  }
  return plan;
}

}  // namespace einexpr
