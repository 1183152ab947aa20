// The runtime's CUDA entry points other than the allocator and the strided kernels:
// device count, copies between places, synchronization.
//
// Copies go through the device's stream. Host-to-device copies wait for the stream before
// returning, so the caller may free or overwrite its host memory at once (pageable memory
// would allow an early return, but only after staging; one rule is simpler). Device-to-host
// copies wait, since the host reads the data next. Copies within one GPU stay queued.
// Between two GPUs, both streams are drained and the peer copy is waited for.
#include <cstddef>

#include "../backend.hpp"
#include "cuda_check.hpp"
#include "device_context.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::backend {

int cuda_device_count() noexcept { return gpu::device_count(); }

void cuda_synchronize(int index) {
  gpu::DeviceGuard guard(index);
  EINEXPR_CUDA_CHECK(cudaStreamSynchronize(gpu::stream(index)));
}

void cuda_copy(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.is_cuda() && src_device.is_cuda() && dst_device.index == src_device.index) {
    const int i = dst_device.index;
    gpu::DeviceGuard guard(i);
    EINEXPR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, gpu::stream(i)));
  } else if (dst_device.is_cuda() && src_device.is_cuda()) {
    cuda_synchronize(src_device.index);
    const int i = dst_device.index;
    gpu::DeviceGuard guard(i);
    EINEXPR_CUDA_CHECK(cudaMemcpyPeerAsync(dst, i, src, src_device.index, bytes, gpu::stream(i)));
    EINEXPR_CUDA_CHECK(cudaStreamSynchronize(gpu::stream(i)));
  } else if (dst_device.is_cuda()) {
    const int i = dst_device.index;
    gpu::DeviceGuard guard(i);
    EINEXPR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, gpu::stream(i)));
    EINEXPR_CUDA_CHECK(cudaStreamSynchronize(gpu::stream(i)));
  } else if (src_device.is_cuda()) {
    const int i = src_device.index;
    gpu::DeviceGuard guard(i);
    EINEXPR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, gpu::stream(i)));
    EINEXPR_CUDA_CHECK(cudaStreamSynchronize(gpu::stream(i)));
  } else {
    EINEXPR_ASSERT(false, "cuda_copy: neither side is a GPU");
  }
}

}  // namespace einexpr::backend
