// einsum with einops' names: contractions as GEMMs, diagonals as views, chains in the cheap
// order, compositions numpy cannot express; and what each costs.
#include <einexpr/einexpr.hpp>

#include <iostream>

int main() {
  using namespace einexpr;
  const Tensor a = Tensor::from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::from_vector<std::int64_t>({7, 8, 9, 10, 11, 12}, {3, 2});
  std::cout << "einsum(a, b, \"i k, k j -> i j\") = " << einsum(a, b, "i k, k j -> i j") << "\n\n";

  const Tensor x = Tensor::randn({2, 3, 4}, DType::f32, 1);
  const Tensor y = Tensor::randn({2, 5, 4}, DType::f32, 2);
  const Tensor z = einsum(x, y, "batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2");
  std::cout << "attention scores: shape " << shape_str(z.shape()) << "\n\n";

  const Tensor m = Tensor::arange(9, DType::f32).view({3, 3});
  std::cout << "diagonal: " << einsum(m, "i i -> i") << ", trace: " << einsum(m, "i i ->") << "\n\n";

  const Tensor w = Tensor::randn({2, 3, 5}, DType::f32, 3);
  const Tensor v = Tensor::randn({4, 6}, DType::f32, 4);
  std::cout << "einsum(v, w, \"b (h d), h d k -> b k\") has shape " << shape_str(einsum(v, w, "b (h d), h d k -> b k").shape())
            << "\n\n";

  const AxisLengths chain = {{"i", 2048}, {"j", 64}, {"k", 2048}, {"l", 64}};
  std::cout << "plan of \"i j, j k, k l -> i l\" at i=2048 j=64 k=2048 l=64:\n"
            << plan_from_sizes("einsum", "i j, j k, k l -> i l", chain).str() << '\n'
            << cost_einsum("i j, j k, k l -> i l", chain).str() << '\n';
}
