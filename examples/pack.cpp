// einops' pack and unpack, and parse_shape.
#include <einexpr/einexpr.hpp>

#include <iostream>

int main() {
  using namespace einexpr;
  const Tensor image = Tensor::randn({2, 4, 4, 3}, DType::f32, 1);  // b h w c
  const Tensor tokens = Tensor::randn({2, 7, 3}, DType::f32, 2);    // b t c
  const Tensor cls = Tensor::randn({2, 3}, DType::f32, 3);          // b c
  const std::array<Tensor, 3> parts{image, tokens, cls};
  auto [packed, shapes] = pack(parts, "b * c");
  std::cout << "pack([image, tokens, cls], \"b * c\") has shape " << shape_str(packed.shape()) << "; the '*' parts were";
  for (const Shape& s : shapes) std::cout << ' ' << shape_str(s);
  std::cout << '\n';
  const std::vector<Tensor> back = unpack(packed, shapes, "b * c");
  std::cout << "unpack gives shapes";
  for (const Tensor& t : back) std::cout << ' ' << shape_str(t.shape());
  std::cout << "\nparse_shape(image, \"b h w _\"):";
  for (const auto& [name, len] : parse_shape(image, "b h w _")) std::cout << ' ' << name << '=' << len;
  std::cout << '\n';
}
