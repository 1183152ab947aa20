// The lecture (CS336 lecture 2, "PyTorch & resource accounting", in shared/seeds/) walked
// with einexpr: every number it computes, computed here, on this machine.
//   example_lecture [OUTPUT_DIR]     (writes the roofline SVGs there; default: .)
#include <iostream>

#include "lecture.hpp"

int main(int argc, char** argv) {
  using namespace einexpr;
  lecture::Setup s;
  if (argc > 1) s.out_dir = argv[1];
  if (has_cuda && cuda_device_count() > 0) {  // the seeds' GPU sizes
    s.gpu = true;
    s.device = Device::cuda(0);
    s.B = 16384, s.D = 32768, s.K = 8192;
    s.spec = "h100";
  }
  try {
    std::cout << "einexpr " << version << " walks lecture 2 (resource accounting) on "
              << (s.gpu ? "a GPU" : "this CPU") << " with " << num_threads() << " thread(s)\n";
    lecture::memory_and_dtypes();
    lecture::strides_and_views();
    lecture::einops_ops();
    lecture::flops_of_models(s);
    const auto bound = lecture::arithmetic_intensity();
    write_roofline_svg(s.out_dir + "/lecture_roofline_h100.svg", find_device("h100"), DType::bf16, bound);
    std::cout << "\nwrote " << s.out_dir << "/lecture_roofline_h100.svg (the expressions above on H100's roofline)\n";
    const auto measured = lecture::measured_matmuls(s);
    const DeviceSpec& spec = find_device(s.spec);
    write_roofline_svg(s.out_dir + "/lecture_roofline_" + spec.name + ".svg", spec, DType::f32, measured);
    std::cout << "wrote " << s.out_dir << "/lecture_roofline_" << spec.name
              << ".svg (the measured runs on this machine's roofline)\n";
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
}
