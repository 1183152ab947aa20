// Tensor::from_blob: the caller's memory wrapped without copying, with any strides and
// every dtype; const memory makes read-only tensors that refuse every write; data<T>();
// and bad input (null or misaligned pointers, negative lengths, overflowing strides) is
// refused before anything is wrapped, so the release callback never runs for it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "einexpr/config.hpp"
#include "einexpr/runtime/tensor.hpp"
#include "matchers.hpp"

using namespace einexpr;
using testing_support::MessageHas;

namespace {

std::vector<double> random_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

/// What element `index` (row-major over `shape`) of a view with `strides` reads: the
/// reference from_blob must agree with.
std::vector<double> gather(const std::vector<double>& memory, const Shape& shape, const Strides& strides) {
  std::vector<double> out;
  std::vector<std::int64_t> index(shape.size(), 0);
  const std::int64_t n = checked_numel(shape);
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) off += index[d] * strides[d];
    out.push_back(memory[static_cast<std::size_t>(off)]);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("from_blob views the caller's memory with any strides, without copying", "[from_blob]") {
  struct Row {
    Shape shape;
    Strides strides;  // empty: row-major
    Strides expected_strides;
  };
  const std::vector<Row> rows = {
      {{2, 3}, {}, {3, 1}},
      {{2, 3}, {3, 1}, {3, 1}},
      {{3, 2}, {1, 3}, {1, 3}},            // a transposed view of a 2x3 block
      {{2, 2}, {6, 2}, {6, 2}},            // every other column of every other row
      {{4, 3}, {0, 1}, {0, 1}},            // a broadcast row
      {{2, 3, 4}, {12, 4, 1}, {12, 4, 1}},
      {{4, 2, 3}, {1, 12, 4}, {1, 12, 4}},  // permuted
      {{}, {}, {}},                        // 0-d: one element
      {{0, 5}, {5, 1}, {5, 1}},            // no elements
  };
  std::vector<double> memory = random_values(24, 7);
  for (const Row& r : rows) {
    CAPTURE(shape_str(r.shape), shape_str(r.strides));
    const Tensor t = Tensor::from_blob(memory.data(), r.shape, r.strides, DType::f64);
    CHECK(t.shape() == r.shape);
    CHECK(t.strides() == r.expected_strides);
    CHECK(t.data_ptr() == memory.data());
    CHECK_FALSE(t.is_read_only());
    CHECK(t.to_vector<double>() == gather(memory, r.shape, r.expected_strides));
  }
  // Writes through either side are seen by the other: nothing was copied.
  Tensor t = Tensor::from_blob(memory.data(), {4, 6}, {}, DType::f64);
  memory[7] = 42.5;
  CHECK(t.at<double>({1, 1}) == 42.5);
  t.set({3, 5}, -1.25);
  CHECK(memory[23] == -1.25);
  t.select(0, 2).fill(3.0);
  CHECK(memory[12] == 3.0);
  CHECK(memory[17] == 3.0);
}

TEST_CASE("from_blob reads every dtype's bytes as that dtype", "[from_blob]") {
  for (DType dtype : all_dtypes) {
    CAPTURE(name(dtype));
    const Tensor source = Tensor::randn({3, 4}, dtype, 11);
    const Tensor wrapped = Tensor::from_blob(source.data_ptr(), {4, 3}, {1, 4}, dtype);
    CHECK(wrapped.dtype() == dtype);
    CHECK(wrapped.to_vector<double>() == source.transpose(0, 1).to_vector<double>());
    CHECK(wrapped.nbytes() == 12 * element_size(dtype));
  }
}

TEST_CASE("release runs once, when the last tensor over the memory lets go", "[from_blob]") {
  std::vector<float> memory(12, 1.0f);
  int released = 0;
  {
    Tensor view;
    {
      const Tensor t = Tensor::from_blob(memory.data(), {3, 4}, {}, DType::f32, Device::cpu(), [&] { ++released; });
      view = t.transpose(0, 1).slice(0, 1, 3);
      CHECK(view.same_storage(t));
    }
    CHECK(released == 0);  // the view keeps the memory alive
    CHECK(view.to_vector<float>() == std::vector<float>(6, 1.0f));
  }
  CHECK(released == 1);
}

TEST_CASE("from_blob(const void*) makes read-only tensors that compute but refuse writes", "[from_blob][read-only]") {
  const std::vector<double> memory = random_values(12, 3);
  const Tensor t = Tensor::from_blob(static_cast<const void*>(memory.data()), {3, 4}, {}, DType::f64);
  CHECK(t.is_read_only());
  const Tensor view = t.transpose(0, 1).select(0, 1);
  CHECK(view.is_read_only());  // every view of it, too
  CHECK(view.to_vector<double>() == std::vector<double>{memory[1], memory[5], memory[9]});  // column 1
  // Computing from it works, and what it computes is writable.
  Tensor copy = t.clone();
  CHECK_FALSE(copy.is_read_only());
  CHECK(copy.to_vector<double>() == memory);
  CHECK_FALSE(t.to(DType::f32).is_read_only());
  CHECK(t.contiguous().is_read_only());  // already contiguous: the same tensor

  const std::vector<double> before = memory;
  Tensor writable_handle = view;  // a non-const handle changes nothing
  CHECK_THROWS_WITH(writable_handle.fill(1.0), Catch::Contains("fill: the tensor is read-only"));
  CHECK_THROWS_WITH(writable_handle.set({0}, 1.0), Catch::Contains("set: the tensor is read-only"));
  CHECK_THROWS_WITH(writable_handle.copy_from(Tensor::zeros({4}, DType::f64)),
                    Catch::Contains("copy_from: the tensor is read-only") &&
                        Catch::Contains("from_blob(const void*, ...)"));
  CHECK(memory == before);
  copy.copy_from(t);  // reading from it into a writable tensor is fine
}

TEST_CASE("data<T>() is typed and const-correct", "[from_blob][data]") {
  std::vector<float> memory = {1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::from_blob(memory.data(), {2, 3}, {}, DType::f32);
  static_assert(std::is_same_v<decltype(t.data<float>()), float*>);
  static_assert(std::is_same_v<decltype(t.data<const float>()), const float*>);
  static_assert(std::is_same_v<decltype(std::as_const(t).data<float>()), const float*>);
  CHECK(t.data<float>() == memory.data());
  t.data<float>()[4] = 50.0f;
  CHECK(t.at<float>({1, 1}) == 50.0f);
  CHECK(t.select(0, 1).data<const float>() == memory.data() + 3);
  CHECK_THROWS_MATCHES(t.data<double>(), DTypeError, MessageHas({"data<T>()", "f64", "the tensor is f32"}));
  CHECK_THROWS_MATCHES(Tensor().data<float>(), Error, MessageHas("the tensor is undefined"));

  Tensor ro = Tensor::from_blob(static_cast<const float*>(memory.data()), {6}, {}, DType::f32);
  CHECK(ro.data<const float>() == memory.data());
  CHECK(std::as_const(ro).data<float>() == memory.data());
  CHECK_THROWS_WITH(ro.data<float>(), Catch::Contains("data<T>() with a non-const T: the tensor is read-only"));
  const Tensor h = Tensor::zeros({2}, DType::bf16);
  CHECK(h.data<bfloat16_t>()[1].bits == 0);
}

TEST_CASE("from_blob refuses bad input before wrapping anything", "[from_blob][errors]") {
  alignas(16) static float memory[64] = {};
  void* const base = memory;
  void* const odd = static_cast<char*>(base) + 2;
  struct Row {
    const char* what;
    void* data;
    Shape shape;
    Strides strides;
    DType dtype;
    Device device;
    std::vector<std::string> message;
  };
  const std::int64_t big = std::int64_t{1} << 62;
  std::vector<Row> rows = {
      {"null", nullptr, {2}, {}, DType::f32, Device::cpu(), {"from_blob: the data pointer is null"}},
      {"misaligned", odd, {2}, {}, DType::f32, Device::cpu(), {"not aligned to the 4-byte elements of f32"}},
      {"misaligned f64", static_cast<char*>(base) + 4, {2}, {}, DType::f64, Device::cpu(),
       {"not aligned to the 8-byte elements of f64"}},
      {"negative length", base, {2, -3}, {}, DType::f32, Device::cpu(), {"negative length -3 in shape [2, -3]"}},
      {"rank mismatch", base, {2, 3}, {1}, DType::f32, Device::cpu(), {"shape [2, 3] and strides [1] differ in rank"}},
      {"negative stride", base, {2, 3}, {3, -1}, DType::f32, Device::cpu(), {"negative strides are not supported"}},
      {"numel overflow", base, {big, big}, {}, DType::f32, Device::cpu(), {"overflows 64 bits"}},
      {"stride overflow", base, {3, 2}, {big, 1}, DType::f32, Device::cpu(),
       {"from_blob: shape [3, 2] with strides [4611686018427387904, 1]", "the strides overflow"}},
      {"bytes overflow", base, {2}, {big}, DType::f64, Device::cpu(), {"the strides overflow"}},
  };
  if (!has_cuda)
    rows.push_back({"cuda without CUDA", base, {2}, {}, DType::f32, Device::cuda(0), {"einexpr was built without CUDA"}});
  else
    rows.push_back({"no such GPU", base, {2}, {}, DType::f32, Device::cuda(99), {"from_blob: memory on cuda:99"}});
  // A 2-byte odd address is fine for 1- and 2-byte elements.
  CHECK(Tensor::from_blob(odd, {2}, {}, DType::bf16).data_ptr() == odd);
  CHECK(Tensor::from_blob(odd, {2}, {}, DType::f8_e4m3).data_ptr() == odd);
  for (const Row& r : rows) {
    CAPTURE(r.what);
    int released = 0;
    const auto release = [&] { ++released; };
    for (const std::string& part : r.message) {
      CAPTURE(part);
      CHECK_THROWS_WITH(Tensor::from_blob(r.data, r.shape, r.strides, r.dtype, r.device, release),
                        Catch::Contains(part));
      CHECK_THROWS_WITH(
          Tensor::from_blob(static_cast<const void*>(r.data), r.shape, r.strides, r.dtype, r.device, release),
          Catch::Contains(part));
    }
    CHECK(released == 0);
  }
}
