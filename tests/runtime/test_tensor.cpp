// Tensors as the seeds (shared/seeds/) describe them: memory accounting, strides, views.
#include <catch2/catch.hpp>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/tensor.hpp"

using namespace einexpr;

TEST_CASE("memory accounting: numel * element_size (the seeds' get_memory_usage)", "[tensor][seeds]") {
  const Tensor x = Tensor::zeros({4, 8});
  CHECK(x.dtype() == DType::f32);
  CHECK(x.numel() == 32);
  CHECK(x.element_size() == 4);
  CHECK(x.nbytes() == 128);
  CHECK(Tensor::zeros({4, 8, 20}).nbytes() == 2560);
  CHECK(Tensor::ones({4, 8, 20}, DType::f16).nbytes() == 1280);
}

TEST_CASE("strides of a (10, 10, 20) tensor are (200, 20, 1)", "[tensor][seeds]") {
  const Tensor t = Tensor::randn({10, 10, 20}, DType::i64, 3);
  CHECK(t.strides() == Strides{200, 20, 1});
  CHECK(t.stride(0) == 200);
  CHECK(t.stride(-1) == 1);
  CHECK(t.dim() == 3);
}

TEST_CASE("x[1][2] of a 4x4 tensor is storage element 6", "[tensor][seeds]") {
  const Tensor x = Tensor::arange(16).view({4, 4});
  CHECK(x.element_offset({1, 2}) == 6);
  CHECK(x.at<float>({1, 2}) == 6.0f);
}

TEST_CASE("views share storage and writes show through", "[tensor][seeds]") {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor row = x.select(0, 0);
  const Tensor col = x.slice(1, 1, 2).select(1, 0);
  const Tensor v = x.view({3, 2});
  const Tensor t = x.transpose(1, 0);
  for (const Tensor* y : {&row, &col, &v, &t}) CHECK(same_storage(x, *y));
  CHECK(row.to_vector<float>() == std::vector<float>{1, 2, 3});
  CHECK(col.to_vector<float>() == std::vector<float>{2, 5});
  CHECK(t.to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
  x.set({0, 0}, 100);
  CHECK(t.at<float>({0, 0}) == 100.0f);
  CHECK(v.at<float>({0, 0}) == 100.0f);
}

TEST_CASE("view of a transposed tensor fails, and contiguous() copies", "[tensor][seeds]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor y = x.transpose(1, 0);
  CHECK_FALSE(y.is_contiguous());
  CHECK_THROWS_WITH(y.view({2, 3}),
                    Catch::Contains("view size is not compatible with input tensor's size and stride") &&
                        Catch::Contains("dims 0 and 1"));
  const Tensor z = y.contiguous().view({2, 3});
  CHECK_FALSE(same_storage(x, z));
  CHECK(z.to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(x.contiguous().same_storage(x));
}
