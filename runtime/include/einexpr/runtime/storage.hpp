#pragma once
// Storage: one owned block of memory on one device, shared by every tensor viewing it.
// Memory comes from one Allocator per device. CPU memory is 64-byte aligned; large CPU
// blocks are backed by transparent huge pages where the kernel allows. The CUDA allocator
// caches freed blocks, so a repeated expression does not call cudaMalloc again.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "einexpr/runtime/device.hpp"

namespace einexpr {

struct AllocatorStats {
  std::uint64_t requests = 0;            // allocate() calls
  std::uint64_t system_allocations = 0;  // calls that reached the system (malloc / cudaMalloc)
  std::size_t bytes_in_use = 0;
  std::size_t peak_bytes_in_use = 0;
  std::size_t bytes_cached = 0;          // freed blocks kept for reuse
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns memory for `bytes` bytes (a unique non-null pointer even for 0), or throws
  /// AllocationError naming the bytes asked for.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* pointer, std::size_t bytes) noexcept = 0;
  virtual Device device() const noexcept = 0;
  virtual AllocatorStats stats() const = 0;
  /// Returns cached blocks to the system.
  virtual void release_cached() noexcept {}
};

/// The allocator of `device` (DeviceError for a CUDA device in a build without CUDA).
Allocator& allocator_for(Device device);

/// The bytes held by live Storage::allocate blocks on one device, as they were asked for
/// (before the allocator rounds them up or serves them from its cache), and the most held at
/// once since the last reset_storage_peak(device). Process-wide: a measured window counts
/// every thread's allocations. (AllocatorStats counts the allocator's rounded blocks.)
struct StorageUsage {
  std::size_t bytes_in_use = 0;
  std::size_t peak_bytes_in_use = 0;
};
StorageUsage storage_usage(Device device);
/// Starts a measured window: the peak becomes the bytes in use now.
void reset_storage_peak(Device device);

/// CPU allocation alignment in bytes.
inline constexpr std::size_t cpu_alignment = 64;

class Storage {
 public:
  /// Allocates `bytes` bytes on `device` (uninitialized).
  static std::shared_ptr<Storage> allocate(std::size_t bytes, Device device);
  /// Wraps memory the caller owns; `release` runs when the last tensor lets go.
  static std::shared_ptr<Storage> wrap(void* data, std::size_t bytes, Device device,
                                       std::function<void(void*)> release);
  /// Wraps memory einexpr may only read: read_only() is true, and every tensor over it
  /// refuses to be written (copy_from, fill, set, data<T>() with a non-const T, and an
  /// op's *_into output).
  static std::shared_ptr<Storage> wrap(const void* data, std::size_t bytes, Device device,
                                       std::function<void(void*)> release);

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  /// Constructible only by allocate() and wrap() (the key is private), but public so that
  /// std::make_shared can put the Storage and its count in one allocation.
  struct Key {
   private:
    friend class Storage;
    Key() = default;
  };
  Storage(Key, std::byte* data, std::size_t bytes, Device device, std::function<void(void*)> release,
          bool read_only = false);

  std::byte* data() const noexcept { return data_; }
  std::size_t nbytes() const noexcept { return bytes_; }
  Device device() const noexcept { return device_; }
  /// True for memory wrapped from a const pointer: einexpr reads it and never writes it.
  bool read_only() const noexcept { return read_only_; }

 private:
  std::byte* data_;
  std::size_t bytes_;
  Device device_;
  std::function<void(void*)> release_;
  bool read_only_;
};

/// Copies `bytes` bytes between any two devices (host<->device, device<->device).
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes);

/// Waits until all queued work on `device` has finished (no-op on the CPU).
void synchronize(Device device);

namespace testing {
/// Makes the (n+1)-th CPU allocation from now throw AllocationError; n < 0 disables.
/// For tests of failure paths only.
void fail_cpu_allocation_after(long n) noexcept;
}  // namespace testing

}  // namespace einexpr
