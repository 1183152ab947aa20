#pragma once
// What every workload shares: the run's environment, the timing of einexpr's two forms
// beside the baselines (interleaved, in two rounds), and the checked run with poisoned
// outputs. workloads.cpp defines the workloads themselves.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "direct.hpp"
#include "einexpr/einexpr.hpp"
#include "gpu_timer.hpp"
#include "report.hpp"

namespace einexpr::bench {

/// The run's state, shared by the workloads.
struct Env {
  const DeviceSpec* spec = nullptr;  // promised numbers
  Ceilings ceilings;                 // measured numbers
  const GpuTimer* timer = nullptr;
  const DirectBlas* blas = nullptr;  // raw cuBLAS
  TimingOptions timing;
  bool quick = false;
  bool tf32 = false;
  int device = 0;
  std::uint64_t seed = 1;     // the next input's seed
  std::vector<Check> checks;  // every check made, in order
  std::string current;        // the workload running, prefixed to its checks

  Device gpu() const { return Device::cuda(device); }
  std::uint64_t next_seed() { return seed++; }
  /// Appends `check`, prints it, and returns whether it passed.
  bool record(Check check);
  /// Checks that each input looks like N(0, 1) samples (record()s one check per input).
  bool record_inputs_random(const std::vector<Tensor>& inputs);
};

/// Something timed: an einexpr form or a baseline.
struct Contender {
  std::string label;  // "into", "fresh", "cuBLAS", "memcpy D2D", "memset"
  std::function<void()> run;
};

/// One workload, ready to turn timings into rows.
struct Case {
  std::string workload, sizes;
  DType dtype = DType::f32;
  Cost cost;                // of einexpr's plan
  double ratio_target = 0;  // the target ratio to the primary baseline (0: none)
  double mfu_target = 0;    // and MFU (0: none)
};

/// Prints the plan and its cost (what the floor is made of) before the workload runs.
void print_case(const Case& c, const Plan& plan, const Env& env);

/// Times every contender twice, interleaved (forms and baselines of round 1, then of round
/// 2), and returns the rows: each form against baselines[0] (the primary, judged against
/// the target), then forms[0] against every other baseline.
std::vector<Row> time_case(const Env& env, const Case& c, const std::vector<Contender>& forms,
                           const std::vector<Contender>& baselines);

/// The promised peak FLOP/s for `dtype` (TF32's for f32 when env.tf32).
double promised_peak(const Env& env, DType dtype);

/// Runs einexpr's into form once with `out` filled with 0xFF bytes first, and the fresh form
/// once with every new GPU block poisoned with 0xFF bytes; returns both results downloaded.
std::pair<HostCopy, HostCopy> run_forms_poisoned(const std::function<void()>& into, Tensor& out,
                                                 const std::function<Tensor()>& fresh);

/// A GPU tensor holding at least `bytes` bytes of random values (a D2D baseline's buffer).
Tensor scratch_bytes(Env& env, std::size_t bytes);

}  // namespace einexpr::bench
