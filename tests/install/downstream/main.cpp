// A downstream program built against the installed einexpr package.
#include <einexpr/einexpr.hpp>

#include <iostream>

int main() {
  using namespace einexpr;
  const Tensor x = Tensor::arange(24, DType::f32).view({2, 3, 4});
  std::cout << "einexpr " << version << ": x has " << x.numel() << " elements, " << x.nbytes()
            << " bytes\n";
  return x.nbytes() == 96 ? 0 : 1;
}
