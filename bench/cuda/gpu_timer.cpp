#include "gpu_timer.hpp"

#include <algorithm>

#include "cuda_check.hpp"
#include "device_context.hpp"

namespace einexpr::bench {

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

GpuTimer::GpuTimer(int device) : device_(device), stream_(gpu::stream(device)) {
  gpu::DeviceGuard guard(device);
  cudaEvent_t e = nullptr;
  EINEXPR_CUDA_CHECK(cudaEventCreate(&e));
  start_.reset(e);
  EINEXPR_CUDA_CHECK(cudaEventCreate(&e));
  stop_.reset(e);
}

std::vector<double> GpuTimer::time_ms(const std::function<void()>& fn, const TimingOptions& options) const {
  gpu::DeviceGuard guard(device_);
  for (int i = 0; i < options.warmup; ++i) fn();
  EINEXPR_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EINEXPR_CUDA_CHECK(cudaGetLastError());
  std::vector<double> samples;
  double total_ms = 0;
  while (static_cast<int>(samples.size()) < options.max_repeats) {
    EINEXPR_CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
    fn();
    EINEXPR_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
    EINEXPR_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    EINEXPR_CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    EINEXPR_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    samples.push_back(ms);
    total_ms += ms;
    if (static_cast<int>(samples.size()) >= options.min_repeats && total_ms >= options.min_seconds * 1e3) break;
  }
  return samples;
}

}  // namespace einexpr::bench
