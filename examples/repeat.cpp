// repeat: new axes (a stride-0 view where possible), and repeats inside compositions.
#include <einexpr/einexpr.hpp>

#include <iostream>

int main() {
  using namespace einexpr;
  const Tensor x = Tensor::arange(6, DType::f32).view({2, 3});  // h w
  const Tensor c = repeat(x, "h w -> c h w", {{"c", 4}});
  std::cout << "repeat(x, \"h w -> c h w\", {{\"c\", 4}}) has shape " << shape_str(c.shape()) << " and strides "
            << shape_str(c.strides()) << ": a view of x: " << std::boolalpha << same_storage(c, x) << "\n\n";
  std::cout << "repeat(x, \"h w -> (h 2) (w 2)\") = " << repeat(x, "h w -> (h 2) (w 2)") << "\n\n";
  std::cout << "repeat(x, \"h w -> h (w c)\", {{\"c\", 2}}) = " << repeat(x, "h w -> h (w c)", {{"c", 2}}) << '\n';
}
