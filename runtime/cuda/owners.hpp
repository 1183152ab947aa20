#pragma once
// Private, CUDA builds only: RAII owners of CUDA and cuBLAS handles. An Owned<H, destroy>
// holds one handle and calls destroy(handle) once when it goes; move-only. Destroy errors
// are ignored: a destructor has nobody to tell (and at process exit the driver may
// already be gone).
#include <cuda_runtime_api.h>

#include <utility>

namespace einexpr::gpu {

template <class H, auto Destroy>
class Owned {
 public:
  Owned() = default;
  explicit Owned(H handle) noexcept : handle_(handle) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, H{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, H{});
    }
    return *this;
  }
  ~Owned() { reset(); }

  H get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != H{}; }
  void reset(H handle = H{}) noexcept {
    if (handle_ != H{}) (void)Destroy(handle_);
    handle_ = handle;
  }

 private:
  H handle_{};
};

using OwnedStream = Owned<cudaStream_t, cudaStreamDestroy>;
using OwnedEvent = Owned<cudaEvent_t, cudaEventDestroy>;
/// Device memory from cudaMalloc (not from the caching allocator).
using OwnedDeviceMemory = Owned<void*, cudaFree>;

}  // namespace einexpr::gpu
