#pragma once
// Timing on the GPU with CUDA events recorded on einexpr's stream of the device, the
// stream every einexpr kernel and copy is queued on and every baseline of this benchmark
// is queued on too. One sample = one call between two events, waited for before the next
// sample (so a sample is one call's latency, host-side launch work included, as a caller
// sees it). Warm-up calls first (module load, cuBLAS heuristics, the caching allocator's
// first cudaMalloc stay out of the numbers), then samples until both min_repeats and
// min_seconds of GPU time are reached, or max_repeats.
#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "owners.hpp"

namespace einexpr::bench {

struct TimingOptions {
  int warmup = 3;
  int min_repeats = 10;
  int max_repeats = 200;
  double min_seconds = 0.3;  // of summed sample time
};

/// Median of `samples` (0 for none).
double median(std::vector<double> samples);

class GpuTimer {
 public:
  explicit GpuTimer(int device);
  /// Milliseconds per call of `fn`, one sample per call. Throws DeviceError if a CUDA
  /// call fails or a launch inside `fn` left an error behind.
  std::vector<double> time_ms(const std::function<void()>& fn, const TimingOptions& options) const;
  cudaStream_t stream() const noexcept { return stream_; }
  int device() const noexcept { return device_; }

 private:
  int device_;
  cudaStream_t stream_;
  gpu::OwnedEvent start_, stop_;
};

}  // namespace einexpr::bench
