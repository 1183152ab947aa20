// DLPack on the GPU: a GPU tensor exported as kDLCUDA and taken back shares its memory; GPU
// memory another framework allocated (cudaMalloc) becomes a GPU tensor that einexpr computes
// on in place, and the producer's deleter runs once, when the last view lets go.
#include <catch2/catch.hpp>
#include <cuda_runtime.h>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

#include "einexpr/dlpack.hpp"
#include "einexpr/einexpr.hpp"
#include "gpu_check.hpp"
#include "reference.hpp"

using namespace einexpr;
using namespace einexpr::test;

TEST_CASE("to_dlpack of a GPU tensor: kDLCUDA, its pointer and strides, and from_dlpack shares it back", "[cuda][dlpack]") {
  for (const DType d : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i64, DType::i32}) {
    CAPTURE(name(d));
    const Tensor cpu = Tensor::randn({4, 5, 6}, d, 7);
    const Tensor x = cpu.to(cuda0).permute({2, 0, 1}).slice(1, 1, 4);  // strided, with an offset
    DLManagedTensor* m = to_dlpack(x);
    const DLTensor& t = m->dl_tensor;
    CHECK(t.device.device_type == kDLCUDA);
    CHECK(t.device.device_id == 0);
    CHECK(t.data == x.data_ptr());
    REQUIRE(t.ndim == 3);
    CHECK(Shape(t.shape, t.shape + 3) == x.shape());
    CHECK(Strides(t.strides, t.strides + 3) == x.strides());
    const Tensor back = from_dlpack(m);
    CHECK(back.device() == cuda0);
    CHECK(back.data_ptr() == x.data_ptr());
    CHECK(back.to(Device::cpu()).to_vector<double>() == cpu.permute({2, 0, 1}).slice(1, 1, 4).to_vector<double>());
  }
}

TEST_CASE("from_dlpack of cudaMalloc'd memory: computed on in place, released once", "[cuda][dlpack]") {
  struct Producer {  // what another framework hands over: its memory and its deleter
    DLManagedTensor managed{};
    std::int64_t shape[2] = {8, 5};
    std::int64_t strides[2] = {1, 8};  // column-major, as a Fortran-order producer gives it
    int deleted = 0;
  };
  std::vector<float> host(40);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = 0.25f * static_cast<float>(i % 13) - 1.0f;
  void* memory = nullptr;
  REQUIRE(cudaMalloc(&memory, host.size() * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMemcpy(memory, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  Producer p;
  DLTensor& t = p.managed.dl_tensor;
  t.data = memory;
  t.device = {kDLCUDA, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = p.shape;
  t.strides = p.strides;
  p.managed.manager_ctx = &p;
  p.managed.deleter = [](DLManagedTensor* self) {
    auto* owner = static_cast<Producer*>(self->manager_ctx);
    ++owner->deleted;
    cudaFree(self->dl_tensor.data);
  };
  // The same values on the CPU, in the producer's layout: element (i, j) at i + 8 j.
  const Tensor cpu = Tensor::from_vector(std::vector<double>(host.begin(), host.end()), {5, 8}).transpose(0, 1);
  Tensor y, row;
  {
    const Tensor x = from_dlpack(&p.managed);
    CHECK(x.device() == cuda0);
    CHECK(x.data_ptr() == memory);
    CHECK(x.strides() == Strides{1, 8});
    y = einsum(x, x, "i j, k j -> i k");  // on the GPU, reading the foreign memory in place
    row = x.select(0, 3);
  }
  CHECK(p.deleted == 0);  // the view `row` keeps the producer's memory alive
  CHECK(row.to(Device::cpu()).to_vector<double>() == cpu.select(0, 3).to_vector<double>());
  row = Tensor();
  CHECK(p.deleted == 1);
  CHECK(y.device() == cuda0);
  const reference::Result want = reference::einsum({cpu, cpu}, "i j, k j -> i k");
  CHECK(reference::max_rel_error(y.to(Device::cpu()), want) < 1e-5);
  CHECK(p.deleted == 1);
}
