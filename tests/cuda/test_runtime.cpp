// The runtime's CUDA entry points on a GPU: copies, strided copies, conversions, fills,
// the caching allocator and the status macros.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cuda_check.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/storage.hpp"
#include "einexpr/runtime/tensor.hpp"
#include "gpu_check.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

// Raw element bytes of a CPU tensor, in logical order.
std::vector<unsigned char> element_bytes(const Tensor& cpu) {
  const Tensor c = cpu.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  return std::vector<unsigned char>(p, p + c.nbytes());
}

bool same_elements(const Tensor& a, const Tensor& b) {
  const auto x = element_bytes(a), y = element_bytes(b);
  if (x.size() != y.size()) return false;
  const std::size_t es = a.element_size();
  for (std::size_t i = 0; i < x.size(); i += es) {
    if (std::memcmp(&x[i], &y[i], es) == 0) continue;
    if (is_floating(a.dtype()) && std::isnan(load_as_double(&x[i], a.dtype())) &&
        std::isnan(load_as_double(&y[i], b.dtype())))
      continue;
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("tensors of every dtype round-trip through the GPU unchanged", "[cuda][runtime]") {
  for (DType d : all_dtypes) {
    CAPTURE(name(d));
    const Tensor x = Tensor::randn({37, 19}, d, 5);
    const Tensor back = x.to(cuda0).to(Device::cpu());
    CHECK(back.device().is_cpu());
    CHECK(element_bytes(back) == element_bytes(x));
  }
}

TEST_CASE("strided copies on the GPU give the CPU's elements", "[cuda][runtime]") {
  struct Row {
    Shape shape;
    Strides strides;
    std::int64_t offset;
  };
  const std::vector<Row> rows = {
      {{64, 48}, {1, 64}, 0},          // a transpose
      {{5, 7, 9}, {1, 5, 35}, 3},      // reversed dims, offset
      {{8, 33}, {66, 2}, 1},           // every other column
      {{6, 40}, {0, 1}, 0},            // broadcast rows (stride 0)
      {{4, 5, 16}, {80, 16, 1}, 8},    // contiguous with an offset
      {{3, 1, 128}, {256, 7, 2}, 0},   // a unit dim with an odd stride
  };
  for (DType d : {DType::f64, DType::f32, DType::bf16, DType::f8_e4m3, DType::i64, DType::boolean}) {
    for (const Row& r : rows) {
      CAPTURE(name(d), r.shape, r.strides, r.offset);
      const Input in = make_input(r.shape, r.strides, d, 17, r.offset);
      CHECK(same_elements(download(in.gpu.contiguous()), in.cpu));
      if (r.shape.size() == 2) {
        Tensor dst = Tensor::empty({r.shape[1], r.shape[0]}, d, cuda0).transpose(0, 1);  // a strided destination
        dst.copy_from(in.gpu);
        CHECK(same_elements(download(dst), in.cpu));
      }
    }
  }
}

TEST_CASE("conversions on the GPU are the CPU's, for every pair of dtypes", "[cuda][runtime]") {
  std::vector<double> v = {0.0, -0.0, 1.0, -1.5, 448.0, 449.0, 500.0, 57344.0, 65504.0, 65520.0, 1e-8, 3e38, 1e300,
                           2147483647.0, -2147483649.0, 9.3e18, 0.1, std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  const Tensor noise = Tensor::randn({4000}, DType::f64, 9);
  for (double x : noise.to_vector<double>()) v.push_back(x * 300.0);
  const auto n = static_cast<std::int64_t>(v.size());
  for (DType sd : all_dtypes) {
    const Tensor src = Tensor::from_doubles(v, {n}, sd);
    const Tensor src_gpu = src.to(cuda0);
    for (DType dd : all_dtypes) {
      CAPTURE(name(sd), name(dd));
      CHECK(same_elements(download(src_gpu.to(dd)), src.to(dd)));
    }
  }
  // A strided source and destination.
  const Tensor m = Tensor::randn({30, 20}, DType::f32, 4);
  Tensor dst = Tensor::empty({20, 30}, DType::bf16, cuda0).transpose(0, 1);
  dst.copy_from(m.to(cuda0));
  CHECK(same_elements(download(dst), m.to(DType::bf16)));
}

TEST_CASE("fill and zeros on the GPU", "[cuda][runtime]") {
  for (DType d : all_dtypes) {
    for (std::int64_t n : {1, 7, 64, 1001}) {
      CAPTURE(name(d), n);
      CHECK(same_elements(download(Tensor::full({n}, 3.5, d, cuda0)), Tensor::full({n}, 3.5, d)));
      CHECK(same_elements(download(Tensor::zeros({n}, d, cuda0)), Tensor::zeros({n}, d)));
      CHECK(same_elements(download(Tensor::full({n}, -1.0, d, cuda0)), Tensor::full({n}, -1.0, d)));
    }
  }
  Tensor t = Tensor::zeros({6, 8}, DType::f32, cuda0).slice(1, 2, 6);  // a strided fill
  t.fill(2.0);
  CHECK(download(t).to_vector<float>() == std::vector<float>(24, 2.0f));
}

TEST_CASE("the CUDA allocator reuses freed blocks instead of calling cudaMalloc", "[cuda][runtime]") {
  Allocator& a = allocator_for(cuda0);
  CHECK(a.device() == cuda0);
  { const Tensor warm = Tensor::empty({3 << 20}, DType::f32, cuda0); }
  const AllocatorStats before = a.stats();
  for (int i = 0; i < 5; ++i) {
    const Tensor t = Tensor::empty({3 << 20}, DType::f32, cuda0);
    const Tensor u = Tensor::empty({100}, DType::f32, cuda0);
  }
  const AllocatorStats after = a.stats();
  CHECK(after.requests >= before.requests + 10);
  CHECK(after.system_allocations <= before.system_allocations + 1);  // the small block, at most once
  CHECK(after.bytes_cached > 0);
  a.release_cached();
  CHECK(a.stats().bytes_cached == 0);
  const Tensor again = Tensor::empty({3 << 20}, DType::f32, cuda0);
  CHECK(a.stats().system_allocations > after.system_allocations);
}

TEST_CASE("an allocation the GPU cannot hold is an AllocationError naming the bytes", "[cuda][runtime]") {
  const std::int64_t huge = std::int64_t{1} << 50;  // 1 PiB
  CHECK_THROWS_AS(Tensor::empty({huge}, DType::boolean, cuda0), AllocationError);
  CHECK_THROWS_WITH(Tensor::empty({huge}, DType::boolean, cuda0),
                    Catch::Contains("could not allocate 1125899906842624 bytes on cuda:0"));
  const Tensor fine = Tensor::ones({10}, DType::f32, cuda0);  // the device is still usable
  CHECK(download(fine).to_vector<float>() == std::vector<float>(10, 1.0f));
}

TEST_CASE("a failing CUDA call is a DeviceError naming the call", "[cuda][runtime]") {
  const auto bad = [] { EINEXPR_CUDA_CHECK(cudaSetDevice(9999)); };
  CHECK_THROWS_AS(bad(), DeviceError);
  CHECK_THROWS_WITH(bad(), Catch::Contains("cudaSetDevice(9999)") && Catch::Contains("invalid device ordinal") &&
                               Catch::Contains("test_runtime.cpp:"));
  CHECK_NOTHROW([] { EINEXPR_CUDA_CHECK(cudaGetLastError()); }());  // the error was cleared
  CHECK_THROWS_WITH(Tensor::zeros({2}, DType::f32, Device::cuda(99)), Catch::Contains("cuda:99 does not exist"));
  CHECK(cuda_device_count() >= 1);
}

TEST_CASE("copies between two GPUs", "[cuda][runtime]") {
  if (cuda_device_count() < 2) {
    WARN("one GPU: the copy between two GPUs is not tested");
    return;
  }
  const Tensor x = Tensor::randn({300, 7}, DType::f32, 2);
  const Tensor y = x.to(cuda0).to(Device::cuda(1));
  CHECK(y.device() == Device::cuda(1));
  CHECK(y.to(Device::cpu()).to_vector<float>() == x.to_vector<float>());
}
