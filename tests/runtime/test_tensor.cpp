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

TEST_CASE("the seeds' 4x4 tensor: strides (4, 1) and x[1][2] at index 6", "[tensor][seeds]") {
  const Tensor x = Tensor::arange(16).view({4, 4});
  CHECK(x.stride(0) == 4);
  CHECK(x.stride(1) == 1);
  const std::int64_t r = 1, c = 2;
  CHECK(r * x.stride(0) + c * x.stride(1) == 6);
  CHECK(x.select(0, 1).select(0, 2).storage_offset() == 6);  // x[1][2]
  const Tensor t = Tensor::randn({10, 10, 20}, DType::i64, 1);
  CHECK(t.element_offset({2, 3, 4}) == 2 * 200 + 3 * 20 + 4);
}

TEST_CASE("the seeds' slicing examples on [[1, 2, 3], [4, 5, 6]]", "[tensor][seeds]") {
  const Tensor x = Tensor::from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(x.select(1, 1).to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 5});  // x[:, 1]
  CHECK(same_storage(x, x.select(1, 1)));
  const Tensor v = x.view({3, 2});
  CHECK(v.str() == "tensor([[1, 2],\n        [3, 4],\n        [5, 6]], shape=[3, 2], dtype=i64)");
  const Tensor y = x.transpose(1, 0).contiguous().view({2, 3});
  CHECK(y.to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 4, 2, 5, 3, 6});
  CHECK_FALSE(same_storage(x, y));
}

TEST_CASE("memory of torch.ones((4, 8, 20)) in each dtype, and two 32x32 f32 tensors", "[tensor][seeds]") {
  struct Row { DType dtype; std::size_t element, bytes; };
  const Row rows[] = {
      {DType::f64, 8, 5120}, {DType::f32, 4, 2560}, {DType::f16, 2, 1280}, {DType::bf16, 2, 1280},
      {DType::f8_e4m3, 1, 640}, {DType::f8_e5m2, 1, 640}, {DType::i64, 8, 5120}, {DType::i32, 4, 2560},
      {DType::boolean, 1, 640},
  };
  for (const Row& r : rows) {
    CAPTURE(name(r.dtype));
    const Tensor x = Tensor::ones({4, 8, 20}, r.dtype);
    CHECK(x.dtype() == r.dtype);
    CHECK(x.numel() == 640);
    CHECK(x.element_size() == r.element);
    CHECK(x.nbytes() == r.bytes);
    CHECK(x.storage()->nbytes() == r.bytes);
  }
  const Tensor y = Tensor::zeros({32, 32}), z = Tensor::zeros({32, 32});
  CHECK(y.nbytes() + z.nbytes() == 8192);
  CHECK(static_cast<double>(Tensor::zeros({4, 8, 20}).nbytes()) / (1 << 20) == Approx(0.00244140625));
}
