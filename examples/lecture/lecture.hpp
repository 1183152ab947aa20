#pragma once
// The lecture demo's sections, each printing real values computed by einexpr.
#include <einexpr/einexpr.hpp>

#include <string>
#include <vector>

namespace lecture {

/// The sizes of the lecture: the CPU ones by default, the GPU ones when a GPU is there.
struct Setup {
  bool gpu = false;
  einexpr::Device device = einexpr::Device::cpu();
  std::int64_t B = 1024, D = 256, K = 64;   // the seeds' CPU-sized linear model
  std::string spec = "cpu";                 // the device-table entry measured runs compare to
  std::string out_dir = ".";
};

void heading(const std::string& title);
void memory_and_dtypes();
void strides_and_views();
void einops_ops();
void flops_of_models(const Setup& s);
/// Returns the points for the roofline plot (bound points on H100).
std::vector<einexpr::RooflinePoint> arithmetic_intensity();
/// Returns measured points on the setup's device.
std::vector<einexpr::RooflinePoint> measured_matmuls(const Setup& s);

}  // namespace lecture
