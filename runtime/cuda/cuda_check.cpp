#include "cuda_check.hpp"

#include <string>
#include <string_view>

#include "einexpr/runtime/error.hpp"

namespace einexpr::gpu {

namespace {

// The last two components of a path ("cuda/storage_cuda.cpp"): enough to find the line.
std::string_view short_path(std::string_view file) {
  const auto last = file.rfind('/');
  if (last == std::string_view::npos || last == 0) return file;
  const auto before = file.rfind('/', last - 1);
  return before == std::string_view::npos ? file : file.substr(before + 1);
}

std::string where(const char* file, int line) {
  return " [" + std::string(short_path(file)) + ":" + std::to_string(line) + "]";
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // clear a non-sticky error so the next check does not see it
  throw DeviceError(std::string("CUDA call failed: ") + call + ": " + cudaGetErrorString(status) + " (" +
                    cudaGetErrorName(status) + ")" + where(file, line));
}

const char* cublas_status_name(cublasStatus_t status) noexcept {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw DeviceError(std::string("cuBLAS call failed: ") + call + ": " + cublas_status_name(status) + " (status " +
                    std::to_string(static_cast<int>(status)) + ")" + where(file, line));
}

void check_launch(const char* kernel, const char* file, int line) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw DeviceError(std::string("CUDA kernel launch failed: ") + kernel + ": " + cudaGetErrorString(status) +
                      " (" + cudaGetErrorName(status) + ")" + where(file, line));
}

}  // namespace einexpr::gpu
