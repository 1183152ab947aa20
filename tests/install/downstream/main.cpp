// A downstream program built against the installed einexpr package, in a configuration
// where only what the README lists for downstream projects can be found (run_install_test
// disables find_package for everything else): the ops, from_blob and DLPack.
#include <einexpr/dlpack.hpp>
#include <einexpr/einexpr.hpp>

#include <iostream>
#include <vector>

int main() {
  using namespace einexpr;
  const Tensor x = Tensor::arange(24, DType::f32).view({2, 3, 4});
  std::cout << "einexpr " << version << ": x has " << x.numel() << " elements, " << x.nbytes() << " bytes\n";
  std::vector<float> memory = {1, 2, 3, 4, 5, 6};
  const Tensor w = Tensor::from_blob(static_cast<const float*>(memory.data()), {2, 3}, {}, DType::f32);
  const Tensor y = einsum(x, w, "b i k, j i -> b j k", {{"j", 2}});
  const Tensor back = from_dlpack(to_dlpack(y));  // DLPack without including dlpack.h
  const float want = 1 * 12 + 2 * 16 + 3 * 20;    // y[1, 0, 0]: x[1, i, 0] = 12 + 4i, w[0, i] = 1 + i
  std::cout << "y[1, 0, 0] = " << back.at<float>({1, 0, 0}) << " (want " << want
            << "), read-only w: " << w.is_read_only() << "\n";
  return x.nbytes() == 96 && back.at<float>({1, 0, 0}) == want && w.is_read_only() ? 0 : 1;
}
