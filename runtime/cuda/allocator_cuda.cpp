// The caching CUDA allocator, one per device.
//
// Freed blocks are kept in a free list keyed by their rounded size and handed out again,
// so a repeated expression does no cudaMalloc (stats().system_allocations stays put).
// Sizes round up to 512 bytes below 1 MiB and to 2 MiB steps above; a request takes a
// cached block of its rounded size, or one at most 1/4 larger. Reuse is safe without
// events because all einexpr work on a device runs on its one stream (device_context.hpp):
// whatever used a block before it was freed was queued before whatever uses it next.
// When cudaMalloc runs out of memory, the cache is given back (after the device finishes
// its queued work) and the allocation is tried once more; then AllocationError names the
// bytes asked for.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "allocator_cuda.hpp"
#include "../backend.hpp"
#include "cuda_check.hpp"
#include "device_context.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/storage.hpp"

namespace einexpr::gpu {

namespace {

constexpr std::size_t small_unit = 512;
constexpr std::size_t large_block = std::size_t{1} << 20;
constexpr std::size_t large_unit = std::size_t{2} << 20;

std::atomic<int> g_poison{-1};

class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int index) : index_(index) {}

  void* allocate(std::size_t bytes) override {
    const std::size_t size = rounded(bytes);
    std::lock_guard lock(mutex_);
    ++stats_.requests;
    void* p = take_cached(size);
    if (p == nullptr) p = system_allocate(size, bytes);
    poison(p);
    return p;
  }

  void deallocate(void* p, std::size_t) noexcept override {
    if (p == nullptr) return;
    std::lock_guard lock(mutex_);
    const auto it = live_.find(p);
    if (it == live_.end()) return;  // not ours: nothing sane to do in a noexcept function
    const std::size_t size = it->second;
    live_.erase(it);
    stats_.bytes_in_use -= size;
    cache_.emplace(size, p);
    stats_.bytes_cached += size;
  }

  Device device() const noexcept override { return Device::cuda(index_); }

  AllocatorStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  void release_cached() noexcept override {
    std::lock_guard lock(mutex_);
    release_cached_locked();
  }

 private:
  static std::size_t rounded(std::size_t bytes) {
    const std::size_t unit = bytes >= large_block ? large_unit : small_unit;
    if (bytes == 0) return small_unit;  // a unique pointer even for 0 bytes
    if (bytes > SIZE_MAX - unit) throw AllocationError(bytes, "a CUDA device (the size overflows)");
    return (bytes + unit - 1) / unit * unit;
  }

  // A cached block of `size` bytes, or up to a quarter larger; nullptr if none.
  void* take_cached(std::size_t size) {
    const auto it = cache_.lower_bound(size);
    if (it == cache_.end() || it->first > size + size / 4) return nullptr;
    void* p = it->second;
    const std::size_t block = it->first;
    cache_.erase(it);
    stats_.bytes_cached -= block;
    note_in_use(p, block);
    return p;
  }

  void* system_allocate(std::size_t size, std::size_t bytes) {
    DeviceGuard guard(index_);
    void* p = nullptr;
    cudaError_t status = cudaMalloc(&p, size);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      release_cached_locked();
      status = cudaMalloc(&p, size);
    }
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw AllocationError(bytes, "cuda:" + std::to_string(index_) + " (out of memory; " +
                                       std::to_string(stats_.bytes_in_use) + " bytes in use by einexpr)");
    }
    EINEXPR_CUDA_CHECK(status);
    ++stats_.system_allocations;
    note_in_use(p, size);
    return p;
  }

  void note_in_use(void* p, std::size_t size) {
    live_.emplace(p, size);
    stats_.bytes_in_use += size;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  }

  void poison(void* p) {
    const int byte = g_poison.load(std::memory_order_relaxed);
    if (byte < 0) return;
    DeviceGuard guard(index_);
    EINEXPR_CUDA_CHECK(cudaMemsetAsync(p, byte, live_.at(p), stream(index_)));
  }

  void release_cached_locked() noexcept {
    if (cache_.empty()) return;
    int previous = -1;
    const bool switched = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(index_) == cudaSuccess;
    (void)cudaDeviceSynchronize();  // queued work may still read blocks freed on the host
    for (auto& [size, p] : cache_) (void)cudaFree(p);
    cache_.clear();
    stats_.bytes_cached = 0;
    if (switched && previous >= 0) (void)cudaSetDevice(previous);
    (void)cudaGetLastError();
  }

  int index_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> cache_;      // rounded size -> free block
  std::unordered_map<void*, std::size_t> live_;  // block handed out -> its rounded size
  AllocatorStats stats_;
};

struct AllocatorTable {
  struct Entry {
    std::once_flag once;
    std::unique_ptr<CudaAllocator> allocator;
  };
  int count = device_count();
  std::unique_ptr<Entry[]> entries{new Entry[static_cast<std::size_t>(count > 0 ? count : 1)]};
};

}  // namespace

namespace testing {
void poison_allocations(int byte) noexcept { g_poison.store(byte < 0 ? -1 : (byte & 0xFF)); }
}  // namespace testing

}  // namespace einexpr::gpu

namespace einexpr::backend {

Allocator& cuda_allocator(int index) {
  gpu::check_device(index);
  static auto* table = new gpu::AllocatorTable();  // never destroyed: tensors may outlive statics
  auto& entry = table->entries[static_cast<std::size_t>(index)];
  std::call_once(entry.once, [&] { entry.allocator = std::make_unique<gpu::CudaAllocator>(index); });
  return *entry.allocator;
}

}  // namespace einexpr::backend
