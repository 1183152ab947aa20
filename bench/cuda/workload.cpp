#include "workload.hpp"

#include <algorithm>
#include <cstdio>

#include "allocator_cuda.hpp"
#include "random_fill.hpp"

namespace einexpr::bench {

bool Env::record(Check check) {
  if (!current.empty()) check.what = current + ": " + check.what;
  std::printf("  check %s\n", check.str().c_str());
  std::fflush(stdout);
  const bool ok = check.ok();
  checks.push_back(std::move(check));
  return ok;
}

bool Env::record_inputs_random(const std::vector<Tensor>& inputs) {
  bool ok = true;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string problem = check_standard_normal(inputs[i]);
    ok &= record(Check{"input " + std::to_string(i + 1) + " is N(0, 1)" + (problem.empty() ? "" : ": " + problem),
                       problem.empty() ? 0.0 : 1.0, 0});
  }
  return ok;
}

double promised_peak(const Env& env, DType dtype) {
  if (dtype == DType::f32 && env.tf32) return env.spec->peak_flops.at("tf32");
  return env.spec->peak_for(dtype);
}

void print_case(const Case& c, const Plan& plan, const Env& env) {
  const double flops = c.cost.flops.to_double(), bytes = c.cost.ideal_bytes().to_double();
  const double compute_s = flops / promised_peak(env, c.dtype), memory_s = bytes / env.spec->bandwidth;
  std::printf("\n== %s  %s  %s\n", c.workload.c_str(), c.sizes.c_str(), std::string(name(c.dtype)).c_str());
  std::printf("  %.4g FLOPs, %.4g bytes ideal (%.4g planned): floor %.4g ms (%s; compute %.4g ms, memory %.4g ms)\n",
              flops, bytes, c.cost.bytes_planned.to_double(), 1e3 * std::max(compute_s, memory_s),
              compute_s > memory_s ? "compute-bound" : "memory-bound", 1e3 * compute_s, 1e3 * memory_s);
  std::printf("  plan:\n");
  const std::string text = to_string(plan);
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    std::printf("    %s\n", text.substr(begin, end - begin).c_str());
    begin = end + 1;
  }
  std::fflush(stdout);
}

namespace {

struct Timed {
  std::vector<double> samples;  // both rounds
  double round_median[2] = {0, 0};
  double median_ms() const { return median(samples); }
  double spread() const {
    const double lo = std::min(round_median[0], round_median[1]);
    return lo > 0 ? std::abs(round_median[0] - round_median[1]) / lo : 0;
  }
};

std::vector<Timed> time_rounds(const Env& env, const std::vector<const Contender*>& all) {
  std::vector<Timed> timed(all.size());
  for (int round = 0; round < 2; ++round)
    for (std::size_t i = 0; i < all.size(); ++i) {
      const std::vector<double> s = env.timer->time_ms(all[i]->run, env.timing);
      timed[i].round_median[round] = median(s);
      timed[i].samples.insert(timed[i].samples.end(), s.begin(), s.end());
    }
  return timed;
}

Row make_row(const Env& env, const Case& c, const Contender& form, const Timed& tf, const Contender& base,
             const Timed& tb, bool primary) {
  Row r;
  r.workload = c.workload;
  r.sizes = c.sizes;
  r.dtype = std::string(name(c.dtype));
  r.form = form.label;
  r.baseline = base.label;
  r.primary = primary;
  r.einexpr_ms = tf.median_ms();
  r.baseline_ms = tb.median_ms();
  r.einexpr_spread = tf.spread();
  r.baseline_spread = tb.spread();
  r.einexpr_repeats = static_cast<int>(tf.samples.size());
  r.baseline_repeats = static_cast<int>(tb.samples.size());
  r.ratio = r.baseline_ms / r.einexpr_ms;
  r.flops = c.cost.flops.to_double();
  r.bytes = c.cost.ideal_bytes().to_double();
  r.planned_bytes = c.cost.bytes_planned.to_double();
  r.flops_per_s = r.flops / (r.einexpr_ms * 1e-3);
  r.bytes_per_s = r.bytes / (r.einexpr_ms * 1e-3);
  const double peak = promised_peak(env, c.dtype);
  const double blas_ceiling = c.dtype == DType::f32 ? env.ceilings.f32_flops_per_s : env.ceilings.bf16_flops_per_s;
  r.mfu = r.flops_per_s / peak;
  r.of_blas = c.dtype == DType::f32 || c.dtype == DType::bf16 ? r.flops_per_s / blas_ceiling : 0;
  r.of_bandwidth = r.bytes_per_s / env.spec->bandwidth;
  r.of_copy = r.bytes_per_s / env.ceilings.copy_bytes_per_s;
  const double compute_s = r.flops / peak, memory_s = r.bytes / env.spec->bandwidth;
  r.floor_ms = 1e3 * std::max(compute_s, memory_s);
  r.bound = compute_s > memory_s ? "compute" : "memory";
  if (primary && c.ratio_target > 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, c.mfu_target > 0 ? "ratio >= %.2f, MFU >= %.2f" : "ratio >= %.2f", c.ratio_target,
                  c.mfu_target);
    r.target = buf;
    if (!env.quick) r.met = r.ratio >= c.ratio_target && (c.mfu_target <= 0 || r.mfu >= c.mfu_target) ? 1 : 0;
  }
  return r;
}

}  // namespace

std::vector<Row> time_case(const Env& env, const Case& c, const std::vector<Contender>& forms,
                           const std::vector<Contender>& baselines) {
  std::vector<const Contender*> all;
  for (const Contender& f : forms) all.push_back(&f);
  for (const Contender& b : baselines) all.push_back(&b);
  const std::vector<Timed> timed = time_rounds(env, all);
  const std::size_t nf = forms.size();
  std::vector<Row> rows;
  for (std::size_t f = 0; f < nf; ++f)
    rows.push_back(make_row(env, c, forms[f], timed[f], baselines[0], timed[nf], true));
  for (std::size_t b = 1; b < baselines.size(); ++b)
    rows.push_back(make_row(env, c, forms[0], timed[0], baselines[b], timed[nf + b], false));
  for (std::size_t i = 0; i < all.size(); ++i)
    std::printf("  %-10s median %.4g ms over %zu samples (rounds %.4g, %.4g)\n", all[i]->label.c_str(),
                timed[i].median_ms(), timed[i].samples.size(), timed[i].round_median[0], timed[i].round_median[1]);
  std::fflush(stdout);
  return rows;
}

std::pair<HostCopy, HostCopy> run_forms_poisoned(const std::function<void()>& into, Tensor& out,
                                                 const std::function<Tensor()>& fresh) {
  memset_device(out, 0xFF, out.nbytes());
  into();
  Tensor fresh_out;
  gpu::testing::poison_allocations(0xFF);
  try {
    fresh_out = fresh();
  } catch (...) {
    gpu::testing::poison_allocations(-1);
    throw;
  }
  gpu::testing::poison_allocations(-1);
  return {HostCopy(out), HostCopy(fresh_out)};  // each download waits for the stream
}

Tensor scratch_bytes(Env& env, std::size_t bytes) {
  const auto n = static_cast<std::int64_t>((bytes + 1) / 2);
  return random_gpu({std::max<std::int64_t>(n, 1)}, DType::bf16, env.next_seed(), env.device);
}

}  // namespace einexpr::bench
