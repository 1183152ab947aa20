// reduce: sum, mean, max, min, prod over named axes; average pooling as in the lecture.
#include <einexpr/einexpr.hpp>

#include <iostream>

int main() {
  using namespace einexpr;
  const Tensor x = Tensor::arange(24, DType::i64).view({2, 3, 4});  // batch seq hidden
  std::cout << "x = " << x << "\n\n";
  std::cout << "reduce(x, \"batch seq hidden -> batch hidden\", \"sum\") = "
            << reduce(x, "batch seq hidden -> batch hidden", "sum") << "\n\n";
  std::cout << "reduce(x, \"... hidden -> ...\", \"max\") = " << reduce(x, "... hidden -> ...", "max") << "\n\n";

  const Tensor img = Tensor::arange(4 * 6 * 8, DType::f32).view({4, 6, 8});  // c h w
  const Tensor pooled = reduce(img, "c (h h2) (w w2) -> c h w", Reduction::mean, {{"h2", 2}, {"w2", 2}});
  std::cout << "2x2 average pooling of a (4, 6, 8) image: shape " << shape_str(pooled.shape()) << ", channel 0 = "
            << pooled.select(0, 0) << '\n';
}
