#pragma once
// measure(): warm-up runs, then timed repeats with the device synchronized before each
// clock read; reports the median, min and max. Timings are measured, never asserted.
#include <functional>
#include <vector>

#include "einexpr/runtime/device.hpp"

namespace einexpr {

struct MeasureOptions {
  int warmup = 2;
  int min_repeats = 5;
  int max_repeats = 200;
  double min_seconds = 0.25;   // keep repeating until this much time was measured...
  double max_seconds = 10.0;   // ...but stop once this much has passed
  Device device = Device::cpu();  // synchronized before every clock read
  /// Called about every second while measuring: (repeats done, seconds elapsed).
  std::function<void(int, double)> progress;
};

struct Measurement {
  std::vector<double> samples_s;
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  double mean_s = 0;
  int repeats = 0;
  int warmup = 0;
};

Measurement measure(const std::function<void()>& fn, const MeasureOptions& options = {});

/// Seconds on a monotonic clock.
double now_seconds() noexcept;

}  // namespace einexpr
