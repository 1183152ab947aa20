#pragma once
// Private, CUDA builds only: per-device state shared by the runtime and the CUDA lowering.
//
// Every GPU has one stream, non-blocking (it does not synchronize with the legacy default
// stream), created on first use. All einexpr work on that GPU (copies, our kernels, cuBLAS)
// is queued on it, so work is ordered without events and a block the caching allocator
// hands out again is only touched by work queued after its previous uses. The streams and
// properties live until the process exits, like the allocators (tensors may outlive any
// static object's destructor).
#include <cuda_runtime_api.h>

namespace einexpr::gpu {

/// Visible CUDA devices; 0 when there is no driver or no GPU (never throws).
int device_count() noexcept;
/// DeviceError "cuda:N does not exist (M CUDA devices are visible)" unless 0 <= index < M.
void check_device(int index);

/// Makes `index` the calling thread's current device; restores the previous one after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard();

 private:
  int previous_ = -1;
};

/// The device's stream (created on first use).
cudaStream_t stream(int index);
/// The device's properties (read once).
const cudaDeviceProp& properties(int index);
/// Compute capability as major * 10 + minor (90 for H100 and H200).
int compute_capability(int index);

}  // namespace einexpr::gpu
