// Must NOT compile: einsum with the pattern first. The compiler must say how einsum is
// called in a few lines (tests/lib/compile_fail/check.cmake), not list every overload.
#include <einexpr/einexpr.hpp>

int main() {
  const einexpr::Tensor x = einexpr::Tensor::zeros({2, 3});
  const einexpr::Tensor y = einexpr::Tensor::zeros({3, 4});
  return static_cast<int>(einexpr::einsum("i j, j k -> i k", x, y).numel());
}
