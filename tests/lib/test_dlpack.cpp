// to_dlpack / from_dlpack: the fields a consumer reads, round trips that share memory for
// every dtype DLPack can express, deleters that run exactly once (when the last view lets
// go, or at once when from_dlpack refuses), and DLPack tensors as foreign producers make
// them (null strides, byte_offset, pinned host memory) or get them wrong.
#include <catch2/catch.hpp>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

#include "einexpr/config.hpp"
#include "einexpr/dlpack.hpp"
#include "einexpr/einexpr.hpp"
#include "matchers.hpp"

using namespace einexpr;
using testing_support::MessageHas;

namespace {

/// A DLManagedTensor as another framework would produce it, over `memory`, counting
/// how often its deleter runs.
struct Foreign {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  DLManagedTensor managed{};
  int deleted = 0;

  Foreign(void* data, DLDataType dtype, std::vector<std::int64_t> shape_, std::vector<std::int64_t> strides_ = {},
          DLDevice device = {kDLCPU, 0})
      : shape(std::move(shape_)), strides(std::move(strides_)) {
    DLTensor& t = managed.dl_tensor;
    t.data = data;
    t.device = device;
    t.ndim = static_cast<int>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<Foreign*>(self->manager_ctx)->deleted; };
  }
};

constexpr DLDataType f32_type{kDLFloat, 32, 1};

}  // namespace

TEST_CASE("to_dlpack describes the tensor and shares its memory", "[dlpack]") {
  struct Row {
    DType dtype;
    std::uint8_t code;
  };
  const std::vector<Row> rows = {{DType::f64, kDLFloat}, {DType::f32, kDLFloat}, {DType::f16, kDLFloat},
                                 {DType::bf16, kDLBfloat}, {DType::i64, kDLInt},   {DType::i32, kDLInt}};
  for (const Row& r : rows) {
    CAPTURE(name(r.dtype));
    const Tensor base = Tensor::randn({4, 5, 6}, r.dtype, 3);
    const Tensor x = base.permute({2, 0, 1}).slice(1, 1, 4);  // strided, with an offset
    DLManagedTensor* m = to_dlpack(x);
    const DLTensor& t = m->dl_tensor;
    CHECK(t.data == x.data_ptr());
    CHECK(t.byte_offset == 0);
    CHECK(t.device.device_type == kDLCPU);
    CHECK(t.dtype.code == r.code);
    CHECK(t.dtype.bits == 8 * element_size(r.dtype));
    CHECK(t.dtype.lanes == 1);
    REQUIRE(t.ndim == 3);
    CHECK(Shape(t.shape, t.shape + 3) == x.shape());
    CHECK(Strides(t.strides, t.strides + 3) == x.strides());
    const Tensor back = from_dlpack(m);  // the round trip: the same memory, the same values
    CHECK(back.data_ptr() == x.data_ptr());
    CHECK(back.dtype() == r.dtype);
    CHECK(back.strides() == x.strides());
    CHECK(back.to_vector<double>() == x.to_vector<double>());
  }
}

TEST_CASE("an exported tensor keeps its memory alive until the consumer's deleter runs", "[dlpack]") {
  std::vector<float> memory = {1, 2, 3, 4, 5, 6};
  int released = 0;
  DLManagedTensor* m = nullptr;
  {
    const Tensor t = Tensor::from_blob(memory.data(), {2, 3}, {}, DType::f32, Device::cpu(), [&] { ++released; });
    m = to_dlpack(t.transpose(0, 1));
  }
  CHECK(released == 0);
  {
    Tensor view;
    {
      const Tensor back = from_dlpack(m);
      view = back.select(0, 2);
    }
    CHECK(released == 0);
    CHECK(view.to_vector<float>() == std::vector<float>{3, 6});
    memory[5] = 60;
    CHECK(view.to_vector<float>() == std::vector<float>{3, 60});  // shared, not copied
  }
  CHECK(released == 1);
}

TEST_CASE("from_dlpack takes what other producers give: null strides, byte_offset, pinned memory", "[dlpack]") {
  std::vector<float> memory(24);
  for (std::size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<float>(i) * 0.5f;
  {
    Foreign f(memory.data(), f32_type, {2, 3, 4});  // strides null: compact row-major
    {
      const Tensor t = from_dlpack(&f.managed);
      CHECK(t.strides() == Strides{12, 4, 1});
      CHECK(t.to_vector<float>() == memory);
      CHECK(t.data_ptr() == memory.data());
      CHECK(f.deleted == 0);
    }
    CHECK(f.deleted == 1);
  }
  {
    Foreign f(memory.data(), f32_type, {3, 2}, {1, 3}, {kDLCUDAHost, 0});
    f.managed.dl_tensor.byte_offset = 4 * sizeof(float);
    const Tensor t = from_dlpack(&f.managed);
    CHECK(t.device() == Device::cpu());
    CHECK(t.to_vector<float>() == std::vector<float>{2, 3.5f, 2.5f, 4, 3, 4.5f});
  }
  {
    Foreign f(nullptr, f32_type, {0, 3});  // torch gives empty tensors no memory
    const Tensor t = from_dlpack(&f.managed);
    CHECK(t.shape() == Shape{0, 3});
    CHECK(f.deleted == 1);  // nothing to share: released at once
  }
  {
    Foreign f(memory.data(), f32_type, {});  // 0-d
    CHECK(from_dlpack(&f.managed).at<float>({}) == 0.0f);
    CHECK(f.deleted == 1);
  }
}

TEST_CASE("from_dlpack refuses what einexpr cannot hold, and still runs the deleter once", "[dlpack][errors]") {
  alignas(16) static float memory[16] = {};
  struct Row {
    const char* what;
    DLDataType dtype;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;
    DLDevice device;
    std::vector<std::string> message;
  };
  std::vector<Row> rows = {
      {"uint8", {kDLUInt, 8, 1}, {4}, {}, {kDLCPU, 0}, {"DLPack dtype uint8 has no einexpr dtype", "float32"}},
      {"int16", {kDLInt, 16, 1}, {4}, {}, {kDLCPU, 0}, {"DLPack dtype int16 has no einexpr dtype"}},
      {"complex64", {kDLComplex, 64, 1}, {4}, {}, {kDLCPU, 0}, {"DLPack dtype complex64"}},
      {"float8", {kDLFloat, 8, 1}, {4}, {}, {kDLCPU, 0}, {"DLPack dtype float8"}},
      {"vector lanes", {kDLFloat, 32, 4}, {4}, {}, {kDLCPU, 0}, {"DLPack dtype float32x4"}},
      {"opaque", {kDLOpaqueHandle, 64, 1}, {4}, {}, {kDLCPU, 0}, {"DLPack dtype code 3 64"}},
      {"OpenCL", f32_type, {4}, {}, {kDLOpenCL, 1}, {"DLPack device type 4 (device 1) is not supported"}},
      {"ROCm", f32_type, {4}, {}, {kDLROCM, 0}, {"device type 10"}},
      {"negative stride", f32_type, {2, 2}, {2, -1}, {kDLCPU, 0}, {"negative strides are not supported"}},
      {"negative length", f32_type, {-2}, {}, {kDLCPU, 0}, {"negative length -2"}},
      {"huge stride", f32_type, {3}, {std::int64_t{1} << 62}, {kDLCPU, 0}, {"the strides overflow"}},
  };
  if (!has_cuda) rows.push_back({"CUDA", f32_type, {4}, {}, {kDLCUDA, 0}, {"einexpr was built without CUDA"}});
  for (const Row& r : rows) {
    CAPTURE(r.what);
    Foreign f(memory, r.dtype, r.shape, r.strides, r.device);
    CHECK_THROWS_MATCHES(from_dlpack(&f.managed), Error, MessageHas(std::string("from_dlpack")));
    CHECK(f.deleted == 1);
    for (const std::string& part : r.message) {
      CAPTURE(part);
      Foreign again(memory, r.dtype, r.shape, r.strides, r.device);
      CHECK_THROWS_WITH(from_dlpack(&again.managed), Catch::Contains(part));
    }
  }
  {
    Foreign f(reinterpret_cast<char*>(memory) + 2, f32_type, {2});
    CHECK_THROWS_WITH(from_dlpack(&f.managed), Catch::Contains("not aligned to the 4-byte elements of f32"));
    CHECK(f.deleted == 1);
  }
  {
    Foreign f(nullptr, f32_type, {2});
    CHECK_THROWS_WITH(from_dlpack(&f.managed), Catch::Contains("the data pointer is null"));
    CHECK(f.deleted == 1);
  }
  {
    Foreign f(memory, f32_type, {2});
    f.managed.dl_tensor.shape = nullptr;
    CHECK_THROWS_WITH(from_dlpack(&f.managed), Catch::Contains("from_dlpack: ndim is 1 but shape is null"));
    CHECK(f.deleted == 1);
  }
  CHECK_THROWS_WITH(from_dlpack(nullptr), Catch::Contains("from_dlpack: the DLManagedTensor is null"));
}

TEST_CASE("to_dlpack refuses dtypes DLPack has no code for", "[dlpack][errors]") {
  for (DType dtype : {DType::f8_e4m3, DType::f8_e5m2}) {
    CAPTURE(name(dtype));
    CHECK_THROWS_MATCHES(to_dlpack(Tensor::zeros({2}, dtype)), DTypeError,
                         MessageHas({"to_dlpack: DLPack", "has no type for " + std::string(name(dtype)),
                                     "convert with .to() first"}));
  }
  CHECK_THROWS_WITH(to_dlpack(Tensor()), Catch::Contains("to_dlpack: the tensor is undefined"));
#if !(defined(DLPACK_MAJOR_VERSION) || (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80))
  CHECK_THROWS_WITH(to_dlpack(Tensor::zeros({2}, DType::boolean)), Catch::Contains("DLPack 0.6 has no type for bool"));
#endif
}

TEST_CASE("ops compute on DLPack tensors and their views stay DLPack-shareable", "[dlpack]") {
  const Tensor x = Tensor::randn({3, 4}, DType::f32, 5);
  const Tensor y = Tensor::randn({4, 2}, DType::f32, 6);
  const Tensor xd = from_dlpack(to_dlpack(x));
  const Tensor yd = from_dlpack(to_dlpack(y));
  CHECK(einsum(xd, yd, "i j, j k -> i k").to_vector<float>() == einsum(x, y, "i j, j k -> i k").to_vector<float>());
  const Tensor t = rearrange(xd, "i j -> j i");
  CHECK(t.data_ptr() == x.data_ptr());  // a view of the imported memory
  const Tensor again = from_dlpack(to_dlpack(t));
  CHECK(again.to_vector<float>() == x.transpose(0, 1).to_vector<float>());
}
