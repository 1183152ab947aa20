#include "einexpr/runtime/timing.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/storage.hpp"

namespace einexpr {

double now_seconds() noexcept {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

Measurement measure(const std::function<void()>& fn, const MeasureOptions& options) {
  if (options.min_repeats < 1 || options.max_repeats < options.min_repeats)
    throw Error("measure: need 1 <= min_repeats <= max_repeats");
  Measurement m;
  m.warmup = std::max(0, options.warmup);
  for (int i = 0; i < m.warmup; ++i) fn();
  synchronize(options.device);
  const double start = now_seconds();
  double last_report = start;
  for (int i = 0; i < options.max_repeats; ++i) {
    synchronize(options.device);
    const double t0 = now_seconds();
    fn();
    synchronize(options.device);
    const double t1 = now_seconds();
    m.samples_s.push_back(t1 - t0);
    const double elapsed = t1 - start;
    if (options.progress && t1 - last_report >= 1.0) {
      options.progress(i + 1, elapsed);
      last_report = t1;
    }
    const int done = i + 1;
    if (done >= options.min_repeats && (elapsed >= options.min_seconds || elapsed >= options.max_seconds)) break;
    if (elapsed >= options.max_seconds) break;
  }
  m.repeats = static_cast<int>(m.samples_s.size());
  std::vector<double> sorted = m.samples_s;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  m.median_s = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  m.min_s = sorted.front();
  m.max_s = sorted.back();
  m.mean_s = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  return m;
}

}  // namespace einexpr
