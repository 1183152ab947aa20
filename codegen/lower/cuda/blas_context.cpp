#include "blas_context.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "cuda_check.hpp"

namespace einexpr::gpu {

namespace {

struct OwnedBlas {
  std::once_flag once;
  Owned<cublasHandle_t, cublasDestroy> handle;
  Owned<cublasLtHandle_t, cublasLtDestroy> lt;
  OwnedDeviceMemory workspace;
  OwnedDeviceMemory one;
  BlasContext context;
};

void create(OwnedBlas& b, int device) {
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  const std::size_t bytes = compute_capability(device) >= 90 ? std::size_t{32} << 20 : std::size_t{4} << 20;
  void* memory = nullptr;
  EINEXPR_CUDA_CHECK(cudaMalloc(&memory, bytes));
  b.workspace.reset(memory);
  EINEXPR_CUDA_CHECK(cudaMalloc(&memory, sizeof(float)));
  b.one.reset(memory);
  const float one = 1.0f;
  EINEXPR_CUDA_CHECK(cudaMemcpyAsync(memory, &one, sizeof one, cudaMemcpyHostToDevice, s));
  EINEXPR_CUDA_CHECK(cudaStreamSynchronize(s));
  cublasHandle_t handle = nullptr;
  EINEXPR_CUBLAS_CHECK(cublasCreate(&handle));
  b.handle.reset(handle);
  EINEXPR_CUBLAS_CHECK(cublasSetStream(handle, s));
  EINEXPR_CUBLAS_CHECK(cublasSetWorkspace(handle, b.workspace.get(), bytes));
  EINEXPR_CUBLAS_CHECK(cublasSetMathMode(
      handle, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  cublasLtHandle_t lt = nullptr;
  EINEXPR_CUBLAS_CHECK(cublasLtCreate(&lt));
  b.lt.reset(lt);
  b.context = BlasContext{handle, lt, b.workspace.get(), bytes, static_cast<const float*>(b.one.get())};
}

struct BlasTable {
  int count = device_count();
  std::unique_ptr<OwnedBlas[]> entries{new OwnedBlas[static_cast<std::size_t>(count > 0 ? count : 1)]};
};

}  // namespace

const BlasContext& blas(int device) {
  check_device(device);
  static auto* table = new BlasTable();  // never destroyed: see blas_context.hpp
  OwnedBlas& b = table->entries[static_cast<std::size_t>(device)];
  std::call_once(b.once, [&] { create(b, device); });
  return b.context;
}

cublasComputeType_t f32_compute_type() {
  static const cublasComputeType_t type = [] {
    const char* v = std::getenv("EINEXPR_TF32");
    return v != nullptr && std::strcmp(v, "1") == 0 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  }();
  return type;
}

}  // namespace einexpr::gpu
