// fp8 contractions (f8_e4m3, f8_e5m2): f32 accumulation, rounded to the dtype once.
//
// On compute capability 9.0 and later, e4m3 runs on the fp8 tensor cores through
// cublasLtMatmul. Its fp8 kernels want the "TN" layout (column-major A transposed, B not:
// both operands contiguous along k), k-leading dimensions that are multiples of 16 and
// scale pointers (ours point at a device 1.0f). So A is staged as [B.., m, k16] and B as
// B^T [B.., n, k16], zero-padded to k16 = k rounded up to 16 (zeros add nothing), the
// product is written as f32 and converted to e4m3 by our kernel (one rounding, saturating
// at +-448 as the CPU does). The algorithm is chosen once, at lowering.
//
// Everywhere else (e5m2, whose e5m2 x e5m2 product cuBLASLt does not offer; GPUs before
// Hopper; shapes for which cuBLASLt returns no algorithm) both operands are converted to
// f16, which holds every e4m3 and e5m2 value exactly, multiplied by cuBLAS with f32
// compute into an f32 result, and converted back: the same function, on the f16 tensor
// cores. So an fp8 contraction never fails for want of fp8 hardware.
#include <cstdint>
#include <memory>
#include <string>

#include "blas_context.hpp"
#include "cuda_check.hpp"
#include "gemm.hpp"
#include "kernels.hpp"

namespace einexpr::gpu {

namespace {

using LtDesc = Owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using LtLayout = Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using LtPreference = Owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

struct LtPlan {
  LtDesc desc;
  LtLayout a, b, d;
  cublasLtMatmulAlgo_t algo{};
  int a_buffer = 0, b_buffer = 0, d_buffer = 0;
};

std::int64_t round16(std::int64_t x) { return (x + 15) / 16 * 16; }

// [batch.., rows, cols] over contiguous matrices of `per_matrix` elements, element (r, c) at r * sr + c * sc.
Layout staged_view(const Shape& batch, std::int64_t per_matrix, std::int64_t rows, std::int64_t cols, std::int64_t sr,
                   std::int64_t sc) {
  Layout l;
  l.shape = batch;
  l.strides = contiguous_strides(batch);
  for (std::int64_t& s : l.strides) s *= per_matrix;
  l.shape.push_back(rows);
  l.shape.push_back(cols);
  l.strides.push_back(sr);
  l.strides.push_back(sc);
  return l;
}

LtLayout lt_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t count,
                   std::int64_t batch_stride) {
  cublasLtMatrixLayout_t l = nullptr;
  EINEXPR_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld));
  LtLayout owned(l);
  const auto n = static_cast<std::int32_t>(count);
  EINEXPR_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &n, sizeof n));
  EINEXPR_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride,
                                                        sizeof batch_stride));
  return owned;
}

// The cuBLASLt descriptors and algorithm for D[n x m16 col-major] = A8^T B8, or nullptr
// when cuBLASLt has no algorithm for them.
std::shared_ptr<LtPlan> plan_lt(int device, std::int64_t m, std::int64_t n, std::int64_t k16, std::int64_t m16,
                                std::int64_t count) {
  const BlasContext& ctx = blas(device);
  auto plan = std::make_shared<LtPlan>();
  cublasLtMatmulDesc_t desc = nullptr;
  EINEXPR_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  plan->desc.reset(desc);
  const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
  EINEXPR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  EINEXPR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
  EINEXPR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &ctx.one, sizeof ctx.one));
  EINEXPR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &ctx.one, sizeof ctx.one));
  plan->a = lt_layout(CUDA_R_8F_E4M3, k16, m, k16, count, m * k16);
  plan->b = lt_layout(CUDA_R_8F_E4M3, k16, n, k16, count, n * k16);
  plan->d = lt_layout(CUDA_R_32F, m, n, m16, count, n * m16);
  cublasLtMatmulPreference_t pref = nullptr;
  EINEXPR_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const LtPreference owned_pref(pref);
  const std::uint64_t bytes = ctx.workspace_bytes;
  EINEXPR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof bytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(ctx.lt, desc, plan->a.get(), plan->b.get(), plan->d.get(),
                                                               plan->d.get(), pref, 1, &result, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) return nullptr;  // the f16 path instead
  plan->algo = result.algo;
  return plan;
}

void run_lt(int device, const LtPlan& p, const Workspace& ws) {
  const BlasContext& ctx = blas(device);
  DeviceGuard guard(device);
  const float alpha = 1, beta = 0;
  void* d = buffer_base(ws, p.d_buffer);
  EINEXPR_CUBLAS_CHECK(cublasLtMatmul(ctx.lt, p.desc.get(), &alpha, buffer_base(ws, p.a_buffer), p.a.get(),
                                      buffer_base(ws, p.b_buffer), p.b.get(), &beta, d, p.d.get(), d, p.d.get(), &p.algo,
                                      ctx.workspace, ctx.workspace_bytes, stream(device)));
}

bool try_lt(Lowering& low, const Value& a, const Value& b, const Value& c, int nb) {
  const auto b0 = static_cast<std::size_t>(nb);
  const std::int64_t m = c.layout.shape[b0], n = c.layout.shape[b0 + 1], k = a.layout.shape[b0 + 1];
  const Shape batch(c.layout.shape.begin(), c.layout.shape.begin() + nb);
  const std::int64_t count = checked_numel(batch), k16 = round16(k), m16 = round16(m);
  if (count > 0x7FFFFFFF) return false;
  const int device = low.device;
  std::shared_ptr<LtPlan> plan = plan_lt(device, m, n, k16, m16, count);
  if (!plan) return false;
  plan->a_buffer = low.add_temp(static_cast<std::size_t>(count * m * k16));
  plan->b_buffer = low.add_temp(static_cast<std::size_t>(count * n * k16));
  plan->d_buffer = low.add_temp(static_cast<std::size_t>(count * n * m16) * sizeof(float));
  const Layout a8 = staged_view(batch, m * k16, m, k, k16, 1);  // A row-major, k padded
  const Layout b8 = staged_view(batch, n * k16, k, n, 1, k16);  // B^T row-major, k padded
  const Layout d32 = staged_view(batch, n * m16, m, n, 1, m16);  // C column-major, m padded
  const bool pad = k16 != k;
  const Value av = a, bv = b, cv = c;
  low.add_kernel("stage fp8 operands", [=](const Workspace& ws) {
    std::byte* pa = buffer_base(ws, plan->a_buffer);
    std::byte* pb = buffer_base(ws, plan->b_buffer);
    if (pad) zero_bytes(device, pa, static_cast<std::size_t>(count * m * k16));
    if (pad) zero_bytes(device, pb, static_cast<std::size_t>(count * n * k16));
    copy_values(device, pa, a8, buffer_base(ws, av.buffer), av.layout, 1);
    copy_values(device, pb, b8, buffer_base(ws, bv.buffer), bv.layout, 1);
  });
  low.add_kernel("gemm (cuBLASLt fp8)", [=](const Workspace& ws) { run_lt(device, *plan, ws); });
  low.add_kernel("convert f32 -> e4m3", [=](const Workspace& ws) {
    convert_values(device, buffer_base(ws, cv.buffer), cv.layout, DType::f8_e4m3, buffer_base(ws, plan->d_buffer), d32,
                   DType::f32);
  });
  return true;
}

}  // namespace

void lower_fp8_contract(Lowering& low, const ContractStep& s) {
  const Value &a = low.value(s.a), &b = low.value(s.b), &c = low.value(s.dst);
  const DType dtype = low.plan.dtype;
  if (dtype == DType::f8_e4m3 && compute_capability(low.device) >= 90 && try_lt(low, a, b, c, s.batch_dims)) return;
  const cudaDataType_t t8 = cuda_type(dtype).value();
  const Operand a16 = stage(low, Operand{a.buffer, a.layout, t8, 1, dtype}, DType::f16);
  const Operand b16 = stage(low, Operand{b.buffer, b.layout, t8, 1, dtype}, DType::f16);
  Operand d32{0, Layout::contiguous(c.layout.shape), CUDA_R_32F, 4, DType::f32};
  d32.buffer = low.add_temp(static_cast<std::size_t>(checked_numel(c.layout.shape)) * 4);
  add_gemm(low, a16, b16, d32, GemmTypes{CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, false});
  const int device = low.device;
  const Value cv = c;
  low.add_kernel(std::string("convert f32 -> ") + std::string(name(dtype)), [=](const Workspace& ws) {
    convert_values(device, buffer_base(ws, cv.buffer), cv.layout, dtype, buffer_base(ws, d32.buffer), d32.layout, DType::f32);
  });
}

}  // namespace einexpr::gpu
