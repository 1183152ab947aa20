// The CPU allocator and Storage. Small blocks come from malloc, aligned by hand (see
// small_alloc); blocks of 1 MiB and more are rounded to 2 MiB, aligned to 2 MiB, advised as
// huge pages, and cached when freed (up to a bound: the blocks freed longest ago go first),
// so a repeated expression reuses warm pages instead of faulting in fresh ones. Also:
// allocator_for(), copy_bytes(), synchronize().
// A Storage and its count are one make_shared block: if making it fails, wrap()'s release
// callback never runs (from_blob and from_dlpack rely on that: the caller still owns the data).
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "backend.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/storage.hpp"

namespace einexpr {

namespace {

constexpr std::size_t large_block = std::size_t{1} << 20;   // cached and huge-page advised
constexpr std::size_t huge_page = std::size_t{2} << 20;
constexpr std::size_t max_cached_bytes = std::size_t{1} << 30;

std::atomic<long> g_fail_after{-1};

// storage_usage(): the bytes Storage::allocate handed out, per device (CPU and 64 CUDA
// indices; a larger index is not counted, and reads as zero). Atomics, no lock: an
// allocation pays two relaxed read-modify-writes.
constexpr int usage_slots = 65;
struct UsageSlot {
  std::atomic<std::size_t> in_use{0};
  std::atomic<std::size_t> peak{0};
};
UsageSlot g_usage[usage_slots];

UsageSlot* usage_slot(Device device) noexcept {
  const int slot = device.is_cpu() ? 0 : device.index + 1;
  return slot >= 0 && slot < usage_slots ? &g_usage[slot] : nullptr;
}

void note_storage(Device device, std::size_t bytes, bool allocated) noexcept {
  UsageSlot* u = usage_slot(device);
  if (u == nullptr) return;
  if (!allocated) {
    u->in_use.fetch_sub(bytes, std::memory_order_relaxed);
    return;
  }
  const std::size_t now = u->in_use.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::size_t peak = u->peak.load(std::memory_order_relaxed);
  while (now > peak && !u->peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// A block under 1 MiB: malloc'd with cpu_alignment bytes to spare, the pointer rounded up to
// cpu_alignment and malloc's own kept in the 8 bytes before it (malloc aligns to 16, so they
// lie inside the block). glibc's aligned_alloc splits a chunk and frees the pieces on every
// call: about 700 instructions against malloc's 100, a tenth of a cached 8x8 einsum call.
void* small_alloc(std::size_t size) noexcept {
  static_assert(alignof(std::max_align_t) >= sizeof(void*) && cpu_alignment % alignof(std::max_align_t) == 0);
  void* raw = std::malloc(size + cpu_alignment);
  if (raw == nullptr) return nullptr;
  const auto at = (reinterpret_cast<std::uintptr_t>(raw) + cpu_alignment) & ~std::uintptr_t{cpu_alignment - 1};
  void* p = reinterpret_cast<void*>(at);
  std::memcpy(static_cast<std::byte*>(p) - sizeof(void*), &raw, sizeof(void*));
  return p;
}

void small_free(void* p) noexcept {
  void* raw = nullptr;
  std::memcpy(&raw, static_cast<std::byte*>(p) - sizeof(void*), sizeof(void*));
  std::free(raw);
}

class CpuAllocator final : public Allocator {
 public:
  ~CpuAllocator() override { release_cached(); }

  void* allocate(std::size_t bytes) override {
    maybe_inject_failure(bytes);
    const std::size_t size = rounded(bytes);
    std::lock_guard lock(mutex_);
    ++stats_.requests;
    if (size >= large_block) {
      if (auto [first, last] = cache_.equal_range(size); first != last) {  // the last freed: warmest
        const auto it = std::prev(last);
        void* p = it->second->second;
        freed_.erase(it->second);
        cache_.erase(it);
        stats_.bytes_cached -= size;
        note_in_use(size);
        return p;
      }
    }
    void* p = system_alloc(size);
    if (p == nullptr && !cache_.empty()) {  // give the cache back and try once more
      release_cached_locked();
      p = system_alloc(size);
    }
    if (p == nullptr) throw AllocationError(bytes, "the CPU");
    if (size >= large_block) madvise(p, size, MADV_HUGEPAGE);  // advice; failure is harmless
    ++stats_.system_allocations;
    note_in_use(size);
    return p;
  }

  void deallocate(void* p, std::size_t bytes) noexcept override {
    if (p == nullptr) return;
    const std::size_t size = rounded(bytes);
    std::lock_guard lock(mutex_);
    stats_.bytes_in_use -= size;
    if (size >= large_block && size <= max_cached_bytes) {
      // Room is made from the blocks freed longest ago: the sizes in use now are the ones
      // freed last. (Refusing the new block instead left a loop whose sizes changed, f32 then
      // f64 transposes of 200 MB, faulting in a fresh 400 MB output every call: 0.13-0.5 of
      // a streaming copy where a cached one ran at 0.8; bench/RESULTS.md.)
      while (stats_.bytes_cached + size > max_cached_bytes) evict_oldest();
      freed_.emplace_front(size, p);
      cache_.emplace(size, freed_.begin());
      stats_.bytes_cached += size;
      return;
    }
    if (size < large_block)
      small_free(p);
    else
      std::free(p);
  }

  Device device() const noexcept override { return Device::cpu(); }

  AllocatorStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  void release_cached() noexcept override {
    std::lock_guard lock(mutex_);
    release_cached_locked();
  }

 private:
  static void* system_alloc(std::size_t size) noexcept {
    return size < large_block ? small_alloc(size) : std::aligned_alloc(huge_page, size);
  }
  /// Small blocks round up to cpu_alignment; a block that reaches large_block that way is
  /// large and rounds up to huge_page (so that aligned_alloc's size is a multiple of its
  /// alignment, which ASan's aligned_alloc insists on).
  static std::size_t rounded(std::size_t bytes) {
    if (bytes == 0) return cpu_alignment;
    if (bytes > SIZE_MAX - huge_page) throw AllocationError(bytes, "the CPU");
    const std::size_t small = (bytes + cpu_alignment - 1) / cpu_alignment * cpu_alignment;
    if (small < large_block) return small;
    return (bytes + huge_page - 1) / huge_page * huge_page;
  }
  static void maybe_inject_failure(std::size_t bytes) {
    long n = g_fail_after.load();
    while (n >= 0) {
      if (g_fail_after.compare_exchange_weak(n, n - 1)) {
        if (n == 0) throw AllocationError(bytes, "the CPU (injected failure)");
        return;
      }
    }
  }
  void note_in_use(std::size_t size) {
    stats_.bytes_in_use += size;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  }
  void release_cached_locked() noexcept {
    for (auto& [size, p] : freed_) std::free(p);
    freed_.clear();
    cache_.clear();
    stats_.bytes_cached = 0;
  }
  void evict_oldest() noexcept {
    const auto oldest = std::prev(freed_.end());
    auto [first, last] = cache_.equal_range(oldest->first);
    while (first != last && first->second != oldest) ++first;
    cache_.erase(first);
    stats_.bytes_cached -= oldest->first;
    std::free(oldest->second);
    freed_.erase(oldest);
  }

  using Freed = std::list<std::pair<std::size_t, void*>>;
  mutable std::mutex mutex_;
  Freed freed_;                                     // cached blocks, the last freed first
  std::multimap<std::size_t, Freed::iterator> cache_;  // the same blocks by size
  AllocatorStats stats_;
};

}  // namespace

namespace testing {
void fail_cpu_allocation_after(long n) noexcept { g_fail_after.store(n < 0 ? -1 : n); }
}  // namespace testing

StorageUsage storage_usage(Device device) {
  const UsageSlot* u = usage_slot(device);
  if (u == nullptr) return {};
  return {u->in_use.load(std::memory_order_relaxed), u->peak.load(std::memory_order_relaxed)};
}

void reset_storage_peak(Device device) {
  if (UsageSlot* u = usage_slot(device)) u->peak.store(u->in_use.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

Allocator& allocator_for(Device device) {
  if (device.is_cpu()) {
    static CpuAllocator* cpu = new CpuAllocator();  // never destroyed: tensors may outlive statics
    return *cpu;
  }
  return backend::cuda_allocator(device.index);
}

Storage::Storage(Key, std::byte* data, std::size_t bytes, Device device, std::function<void(void*)> release,
                 bool read_only)
    : data_(data), bytes_(bytes), device_(device), release_(std::move(release)), read_only_(read_only) {}

Storage::~Storage() {
  if (release_) release_(data_);
}

std::shared_ptr<Storage> Storage::allocate(std::size_t bytes, Device device) {
  Allocator& alloc = allocator_for(device);
  void* p = alloc.allocate(bytes);
  note_storage(device, bytes, true);
  // Two words of capture (the device is the allocator's), so std::function keeps it inline,
  // and one allocation for the Storage and its count: a small tensor costs two mallocs.
  auto release = [a = &alloc, bytes](void* q) {
    a->deallocate(q, bytes);
    note_storage(a->device(), bytes, false);
  };
  try {
    return std::make_shared<Storage>(Key{}, static_cast<std::byte*>(p), bytes, device, release);
  } catch (...) {
    release(p);
    throw;
  }
}

std::shared_ptr<Storage> Storage::wrap(void* data, std::size_t bytes, Device device,
                                       std::function<void(void*)> release) {
  return std::make_shared<Storage>(Key{}, static_cast<std::byte*>(data), bytes, device, std::move(release));
}

std::shared_ptr<Storage> Storage::wrap(const void* data, std::size_t bytes, Device device,
                                       std::function<void(void*)> release) {
  // The one const_cast: the pointer is kept as std::byte* but read_only_ guards every write.
  return std::make_shared<Storage>(Key{}, static_cast<std::byte*>(const_cast<void*>(data)), bytes, device,
                                   std::move(release), true);
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  backend::cuda_copy(dst, dst_device, src, src_device, bytes);
}

void synchronize(Device device) {
  if (device.is_cuda()) backend::cuda_synchronize(device.index);
}

}  // namespace einexpr
