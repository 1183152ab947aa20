#pragma once
// Private, CUDA builds only: test hooks of the caching CUDA allocator (the allocator itself
// is reached through einexpr::allocator_for(Device::cuda(i))).

namespace einexpr::gpu::testing {

/// From now on, every block the CUDA allocators hand out is first filled with `byte`
/// (queued on the device's stream), so a kernel that leaves an element unwritten shows it;
/// a negative value turns this off. 0xFF makes every float dtype NaN.
void poison_allocations(int byte) noexcept;

}  // namespace einexpr::gpu::testing
