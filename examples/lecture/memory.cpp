// Memory accounting and tensors: dtypes, finfo, strides, views.
#include <iomanip>
#include <iostream>

#include "lecture.hpp"

namespace lecture {

using namespace einexpr;

void heading(const std::string& title) { std::cout << "\n== " << title << " ==\n"; }

void memory_and_dtypes() {
  heading("Memory accounting: numel() * element_size()");
  const Tensor x = Tensor::zeros({4, 8});
  std::cout << "zeros(4, 8): dtype " << name(x.dtype()) << ", " << x.numel() << " elements x " << x.element_size()
            << " bytes = " << x.nbytes() << " bytes\n";
  for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::f8_e4m3, DType::f8_e5m2}) {
    const Tensor t = Tensor::ones({4, 8, 20}, d);
    std::cout << "  ones(4, 8, 20) in " << std::setw(8) << std::left << name(d) << std::right << ": " << std::setw(5)
              << t.nbytes() << " bytes (" << t.element_size() << " per element)\n";
  }
  std::cout << "finfo:\n";
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::f8_e4m3, DType::f8_e5m2})
    std::cout << "  " << to_string(finfo(d)) << '\n';
  const Tensor tiny = Tensor::full({1}, 1e-8, DType::f64);
  std::cout << "1e-8 in f16:  " << tiny.to(DType::f16) << "   (underflows)\n";
  std::cout << "1e-8 in bf16: " << tiny.to(DType::bf16) << "   (bf16 keeps f32's range)\n";
  std::cout << "448 and 1000 in f8_e4m3: " << Tensor::from_doubles({448, 1000}, {2}, DType::f8_e4m3)
            << "   (E4M3 saturates at 448)\n";
}

void strides_and_views() {
  heading("Strides and views");
  const Tensor t = Tensor::randn({10, 10, 20}, DType::i64, 1);
  std::cout << "a (10, 10, 20) tensor has strides " << shape_str(t.strides()) << '\n';
  Tensor x = Tensor::arange(16, DType::f32).view({4, 4});
  std::cout << "in a 4x4 tensor, x[1][2] is storage element 1*" << x.stride(0) << " + 2*" << x.stride(1) << " = "
            << x.element_offset({1, 2}) << '\n';
  Tensor y = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor row = y.select(0, 0), col = y.slice(1, 1, 2), v = y.view({3, 2}), tr = y.transpose(1, 0);
  std::cout << std::boolalpha << "x[0], x[:, 1], view(3, 2), transpose share storage with x: " << same_storage(y, row)
            << ' ' << same_storage(y, col) << ' ' << same_storage(y, v) << ' ' << same_storage(y, tr) << '\n';
  y.set({0, 0}, 100);
  std::cout << "after x[0][0] = 100, the transposed view's [0][0] is " << tr.at<float>({0, 0}) << '\n';
  std::cout << "transpose is contiguous: " << tr.is_contiguous() << "; view(2, 3) of it:\n";
  try {
    tr.view({2, 3});
  } catch (const ShapeError& e) {
    std::cout << "  ShapeError: " << e.what() << '\n';
  }
  const Tensor c = tr.contiguous().view({2, 3});
  std::cout << "contiguous().view(2, 3) = " << c << ", same storage: " << same_storage(c, y) << '\n';
}

void einops_ops() {
  heading("einops: rearrange, reduce, repeat, einsum");
  const Tensor img = Tensor::randn({4, 1140, 1700}, DType::f32, 7);  // c h w, the seeds' image
  const Tensor t = rearrange(img, "c h w -> c w h");
  std::cout << "rearrange(img, \"c h w -> c w h\"): shape " << shape_str(t.shape()) << ", a view: " << std::boolalpha
            << same_storage(t, img) << '\n';
  const Tensor pooled = reduce(img, "c (h h2) (w w2) -> c h w", "mean", {{"h2", 20}, {"w2", 20}});
  std::cout << "reduce(img, \"c (h h2) (w w2) -> c h w\", \"mean\", h2=20, w2=20): shape " << shape_str(pooled.shape())
            << '\n';
  const Tensor rep = repeat(img.select(0, 1), "h w -> c h w", {{"c", 4}});
  std::cout << "repeat(img[1], \"h w -> c h w\", c=4): shape " << shape_str(rep.shape()) << ", strides "
            << shape_str(rep.strides()) << " (a stride-0 view)\n";
  const Tensor x = Tensor::arange(24, DType::i64).view({2, 3, 4});
  std::cout << "reduce(arange(24).view(2, 3, 4), \"batch seq hidden -> batch hidden\", \"sum\") = "
            << reduce(x, "batch seq hidden -> batch hidden", "sum") << '\n';
  const Tensor q = Tensor::randn({128, 100, 128}, DType::f32, 8), k = Tensor::randn({128, 200, 128}, DType::f32, 9);
  const Tensor z = einsum(q, k, "batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2");
  const Tensor z2 = einsum(q, k.transpose(-2, -1), "b i k, b k j -> b i j");  // x @ y.transpose(-2, -1)
  std::cout << "einsum(x, y, \"batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2\"): shape "
            << shape_str(z.shape()) << ", equal to x @ y.transpose(-2, -1): "
            << (z.to_vector<float>() == z2.to_vector<float>()) << '\n';
}

}  // namespace lecture
