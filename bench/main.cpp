// einexpr_bench: the peak memory of a 128 MiB permutation (measured first, while the
// process peak is still this op's), then every registered pair (bench.hpp).
#include <sys/resource.h>

#include <cstdlib>

#include "bench.hpp"
#include "einexpr/codegen/lower.hpp"

namespace {

using einexpr::Tensor;

struct Peak {
  double allocator_extra = 0;  // peak bytes in use during the op, less input and output
  double rss_extra = 0;        // growth of the peak resident set, less the output
};

double max_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

Peak measure_peak() {
  auto& alloc = einexpr::allocator_for(einexpr::Device::cpu());
  const Tensor x = bench::pattern_f32({32, 64, 128, 128});
  const auto before = alloc.stats();
  const double rss_before = max_rss_bytes();
  const Tensor y = einexpr::rearrange(x, "b c h w -> b h w c", {}, einexpr::Copy::always);
  const auto after = alloc.stats();
  Peak p;
  p.allocator_extra = static_cast<double>(after.peak_bytes_in_use) - static_cast<double>(before.bytes_in_use) -
                      static_cast<double>(y.nbytes());
  p.rss_extra = max_rss_bytes() - rss_before - static_cast<double>(y.nbytes());
  return p;
}

void register_peak(const Peak& p) {
  benchmark::RegisterBenchmark("memory peak rearrange b c h w -> b h w c 32x64x128x128 | peak | t2",
                               [p](benchmark::State& state) {
                                 for (auto _ : state) benchmark::DoNotOptimize(p);
                                 state.counters["allocator_extra_bytes"] = p.allocator_extra;
                                 state.counters["rss_extra_bytes"] = p.rss_extra;
                                 state.counters["target"] = 1024.0 * 1024.0;
                                 state.counters["threads"] = 2;
                               })
      ->Iterations(1);
}

}  // namespace

int main(int argc, char** argv) {
  const Peak peak = measure_peak();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("einexpr_gemm_backend", einexpr::cpu_gemm_backend());
  benchmark::AddCustomContext("openblas_limit", bench::have_openblas() ? "yes" : "no");
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  benchmark::AddCustomContext("omp_wait_policy", wait ? wait : "(default)");
  benchmark::AddCustomContext("cpu_device_peak_f32",
                              std::to_string(einexpr::find_device("cpu").peak_flops.at("f32")));
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  benchmark::AddCustomContext("gomp_spincount", spin ? spin : "(default)");
  register_peak(peak);
  bench::register_gemm();
  bench::register_memory();
  bench::register_overhead();
  bench::register_fma();
  bench::register_maps();
  bench::register_norms();
  bench::register_block();
  bench::register_model();
  bench::register_indexed();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
