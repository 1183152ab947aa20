#include "direct.hpp"

#include <library_types.h>

#include "blas_context.hpp"
#include "cuda_check.hpp"
#include "device_context.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::bench {

namespace {

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::f32:
      return CUDA_R_32F;
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::f16:
      return CUDA_R_16F;
    default:
      throw DTypeError("bench_cuda: cuBLAS baselines take f32, bf16 or f16, not " + std::string(name(d)));
  }
}

void require(bool ok, const std::string& what) {
  if (!ok) throw ShapeError("bench_cuda: " + what);
}

/// Bytes from t's element [0, ...] to the end of its storage.
std::size_t bytes_from_data(const Tensor& t) {
  return t.storage()->nbytes() - static_cast<std::size_t>(t.storage_offset()) * t.element_size();
}

void require_gpu_contiguous(const Tensor& t, int device, const char* what) {
  require(t.device() == Device::cuda(device), std::string(what) + " is not on cuda:" + std::to_string(device));
  require(t.is_contiguous(), std::string(what) + " is not contiguous");
}

}  // namespace

bool f32_is_tf32() { return gpu::f32_compute_type() == CUBLAS_COMPUTE_32F_FAST_TF32; }

cublasComputeType_t compute_type_for(DType dtype) {
  return dtype == DType::f32 ? gpu::f32_compute_type() : CUBLAS_COMPUTE_32F;
}

const char* compute_type_name(cublasComputeType_t type) {
  switch (type) {
    case CUBLAS_COMPUTE_32F:
      return "CUBLAS_COMPUTE_32F";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return "CUBLAS_COMPUTE_32F_FAST_TF32";
    default:
      return "another compute type";
  }
}

DirectBlas::DirectBlas(int device, BlasSettings settings) : device_(device), settings_(settings) {
  gpu::DeviceGuard guard(device);
  cublasHandle_t h = nullptr;
  EINEXPR_CUBLAS_CHECK(cublasCreate(&h));
  handle_.reset(h);
  EINEXPR_CUBLAS_CHECK(cublasSetStream(h, gpu::stream(device)));  // resets to the default workspace
  if (settings == BlasSettings::raw) return;
  const std::size_t bytes = gpu::compute_capability(device) >= 90 ? std::size_t{32} << 20 : std::size_t{4} << 20;
  void* memory = nullptr;
  EINEXPR_CUDA_CHECK(cudaMalloc(&memory, bytes));
  workspace_.reset(memory);
  EINEXPR_CUBLAS_CHECK(cublasSetWorkspace(h, memory, bytes));
  EINEXPR_CUBLAS_CHECK(cublasSetMathMode(
      h, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
}

std::string DirectBlas::describe() const {
  int version = 0;
  EINEXPR_CUBLAS_CHECK(cublasGetVersion(handle_.get(), &version));
  return std::string("cuBLAS ") + std::to_string(version) +
         (settings_ == BlasSettings::raw ? " (default math mode and workspace)"
                                         : " (einexpr's settings: no reduced-precision reductions, own workspace)");
}

void DirectBlas::gemm(const Tensor& a, const Tensor& b, Tensor& c) const {
  require(a.dim() == 2 && b.dim() == 2 && c.dim() == 2, "gemm takes matrices");
  const std::int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  require(b.size(0) == k && c.size(0) == m && c.size(1) == n, "gemm shapes do not match");
  require(a.dtype() == b.dtype() && a.dtype() == c.dtype(), "gemm operands differ in dtype");
  require_gpu_contiguous(a, device_, "gemm's a");
  require_gpu_contiguous(b, device_, "gemm's b");
  require_gpu_contiguous(c, device_, "gemm's c");
  call(rowmajor_gemm(m, k, n), a, b, c);
}

void DirectBlas::scores(const Tensor& q, const Tensor& k, Tensor& s) const {
  require(q.dim() == 4 && k.dim() == 4 && s.dim() == 4, "scores take [b, h, i, d], [b, h, j, d], [b, h, i, j]");
  const std::int64_t nb = q.size(0), nh = q.size(1), ni = q.size(2), nd = q.size(3), nj = k.size(2);
  require(k.size(0) == nb && k.size(1) == nh && k.size(3) == nd, "scores: k does not match q");
  require(s.size(0) == nb && s.size(1) == nh && s.size(2) == ni && s.size(3) == nj, "scores: s has the wrong shape");
  require(q.dtype() == k.dtype() && q.dtype() == s.dtype(), "scores operands differ in dtype");
  require_gpu_contiguous(q, device_, "scores' q");
  require_gpu_contiguous(k, device_, "scores' k");
  require_gpu_contiguous(s, device_, "scores' s");
  call(scores_gemm(nb * nh, ni, nj, nd), q, k, s);
}

void DirectBlas::call(const ColMajorGemm& g, const Tensor& x, const Tensor& y, Tensor& out) const {
  const cudaDataType_t type = cuda_type(out.dtype());
  const Tensor* operands[2] = {&x, &y};
  const void* a = operands[g.a_operand]->data_ptr();
  const void* b = operands[g.b_operand]->data_ptr();
  const auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  const float alpha = 1, beta = 0;  // float for every CUBLAS_COMPUTE_32F* compute type
  gpu::DeviceGuard guard(device_);
  if (g.batch == 1) {
    EINEXPR_CUBLAS_CHECK(cublasGemmEx_64(handle_.get(), op(g.transa), op(g.transb), g.m, g.n, g.k, &alpha, a, type,
                                         g.lda, b, type, g.ldb, &beta, out.data_ptr(), type, g.ldc,
                                         compute_type_for(out.dtype()), CUBLAS_GEMM_DEFAULT));
    return;
  }
  EINEXPR_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(handle_.get(), op(g.transa), op(g.transb), g.m, g.n, g.k, &alpha,
                                                     a, type, g.lda, g.stride_a, b, type, g.ldb, g.stride_b, &beta,
                                                     out.data_ptr(), type, g.ldc, g.stride_c, g.batch,
                                                     compute_type_for(out.dtype()), CUBLAS_GEMM_DEFAULT));
}

void copy_d2d(Tensor& dst, const Tensor& src, std::size_t bytes) {
  require(dst.device().is_cuda() && src.device() == dst.device(), "copy_d2d: both tensors on one GPU");
  require(bytes <= bytes_from_data(dst) && bytes <= bytes_from_data(src), "copy_d2d: more bytes than stored");
  const int device = dst.device().index;
  gpu::DeviceGuard guard(device);
  EINEXPR_CUDA_CHECK(
      cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), bytes, cudaMemcpyDeviceToDevice, gpu::stream(device)));
}

void memset_device(Tensor& dst, int value, std::size_t bytes) {
  require(dst.device().is_cuda(), "memset_device: the tensor is not on a GPU");
  require(bytes <= bytes_from_data(dst), "memset_device: more bytes than stored");
  const int device = dst.device().index;
  gpu::DeviceGuard guard(device);
  EINEXPR_CUDA_CHECK(cudaMemsetAsync(dst.data_ptr(), value, bytes, gpu::stream(device)));
}

}  // namespace einexpr::bench
