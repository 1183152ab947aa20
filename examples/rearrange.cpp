// rearrange: permute, split and merge axes by name; views where the strides allow.
#include <einexpr/einexpr.hpp>

#include <iostream>

int main() {
  using namespace einexpr;
  const Tensor x = Tensor::arange(24, DType::f32).view({2, 3, 4});  // b h w
  std::cout << "x = " << x << "\n\n";

  const Tensor t = rearrange(x, "b h w -> b w h");
  std::cout << "rearrange(x, \"b h w -> b w h\") = " << t << "\n  a view of x: " << std::boolalpha
            << same_storage(t, x) << ", strides " << shape_str(t.strides()) << "\n\n";

  const Tensor merged = rearrange(x, "b h w -> b (h w)");
  std::cout << "rearrange(x, \"b h w -> b (h w)\") = " << merged << "\n  a view: " << same_storage(merged, x) << "\n\n";

  const Tensor split = rearrange(x, "b h (w1 w2) -> b w1 h w2", {{"w2", 2}});
  std::cout << "rearrange(x, \"b h (w1 w2) -> b w1 h w2\", {{\"w2\", 2}}) has shape " << shape_str(split.shape())
            << ", a view: " << same_storage(split, x) << "\n";

  const Tensor copied = rearrange(x, "b h w -> (w b) h");  // w and b cannot merge in place
  std::cout << "rearrange(x, \"b h w -> (w b) h\") = " << copied << "\n  a view: " << same_storage(copied, x)
            << " (one copy, as torch's reshape would make)\n\n";

  try {
    rearrange(x, "b h w -> (w b) h", {}, Copy::never);
  } catch (const ShapeError& e) {
    std::cout << "with Copy::never:\n  " << e.what() << '\n';
  }
}
