// Tensors, dtypes and views, as the lecture's memory-accounting section shows them.
#include <einexpr/einexpr.hpp>

#include <iostream>

int main() {
  using namespace einexpr;
  const Tensor x = Tensor::zeros({4, 8, 20});
  std::cout << "zeros(4, 8, 20): " << x.numel() << " elements x " << x.element_size()
            << " bytes = " << x.nbytes() << " bytes\n";
  const Tensor y = Tensor::arange(6).view({2, 3});
  std::cout << y << "\ntransposed: " << y.transpose(0, 1) << '\n';
}
