// ContractStep on the GPU: cuBLAS strided-batched GEMMs (mapped by gemm_plan.cpp, which
// explains the row-major to column-major mapping and the batch handling), our kernels
// where cuBLAS has none.
//
// Dtypes: f64 in f64 (CUBLAS_COMPUTE_64F); f32 in f32 (CUBLAS_COMPUTE_32F; TF32 only when
// EINEXPR_TF32=1, see blas_context.hpp); f16 and bf16 with f32 compute and output rounded
// once; fp8 in contract_fp8.cpp; i64 / i32 and ContractStep::generic by our kernels.
#include <string>

#include "blas_context.hpp"
#include "cuda_check.hpp"
#include "gemm.hpp"
#include "gemm_plan.hpp"
#include "kernels.hpp"

namespace einexpr::gpu {

void lower_fp8_contract(Lowering& low, const ContractStep& step);  // contract_fp8.cpp

namespace {

struct GemmRun {
  GemmPlan plan;
  GemmTypes types;
  int buffers[6] = {0, 0, 0, 0, 0, 0};  // by Source
  std::size_t ab_size = 4, c_size = 4;
};

std::byte* address(const Workspace& ws, const GemmRun& r, const MatrixArg& m, std::int64_t offset, std::size_t size) {
  return buffer_base(ws, r.buffers[static_cast<int>(m.source)]) + offset * static_cast<std::int64_t>(size);
}

void run_gemm(int device, const GemmRun& r, const Workspace& ws) {
  const BlasContext& ctx = blas(device);
  DeviceGuard guard(device);
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const void* alpha = r.types.f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = r.types.f64 ? static_cast<const void*>(&zero64) : &zero32;
  const GemmPlan& g = r.plan;
  const auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  for_each_gemm_call(g, [&](std::int64_t op_, std::int64_t oq, std::int64_t od, std::int64_t count, std::int64_t sp,
                            std::int64_t sq, std::int64_t sd) {
    EINEXPR_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(
        ctx.handle, op(g.p.transpose), op(g.q.transpose), g.m, g.n, g.k, alpha, address(ws, r, g.p, op_, r.ab_size),
        r.types.ab, g.p.ld, sp, address(ws, r, g.q, oq, r.ab_size), r.types.ab, g.q.ld, sq, beta,
        address(ws, r, g.d, od, r.c_size), r.types.c, g.d.ld, sd, count, r.types.compute, CUBLAS_GEMM_DEFAULT));
  });
}

void add_copy(Lowering& low, const char* name, int dst, const Layout& dst_layout, DType dst_dtype, int src,
              const Layout& src_layout, DType src_dtype) {
  const int device = low.device;
  low.add_kernel(name, [=](const Workspace& ws) {
    if (src_dtype == dst_dtype)
      copy_values(device, buffer_base(ws, dst), dst_layout, buffer_base(ws, src), src_layout, element_size(dst_dtype));
    else
      convert_values(device, buffer_base(ws, dst), dst_layout, dst_dtype, buffer_base(ws, src), src_layout, src_dtype);
  });
}

}  // namespace

std::optional<cudaDataType_t> cuda_type(DType d) {
  switch (d) {
    case DType::f64: return CUDA_R_64F;
    case DType::f32: return CUDA_R_32F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::f8_e4m3: return CUDA_R_8F_E4M3;
    case DType::f8_e5m2: return CUDA_R_8F_E5M2;
    default: return std::nullopt;
  }
}

Operand stage(Lowering& low, const Operand& op, DType to) {
  Operand out{0, Layout::contiguous(op.layout.shape), cuda_type(to).value_or(CUDA_R_32F), element_size(to), to};
  out.buffer = low.add_temp(static_cast<std::size_t>(checked_numel(op.layout.shape)) * out.element_size);
  add_copy(low, "stage", out.buffer, out.layout, to, op.buffer, op.layout, op.dtype);
  return out;
}

void add_gemm(Lowering& low, Operand a, Operand b, Operand c, const GemmTypes& types) {
  GemmRun r;
  r.plan = plan_gemm(a.layout, b.layout, c.layout, a.element_size, c.element_size);
  r.types = types;
  r.ab_size = a.element_size;
  r.c_size = c.element_size;
  const GemmPlan& g = r.plan;
  auto buffer = [&](Source s) -> int& { return r.buffers[static_cast<int>(s)]; };
  auto temp_for = [&](const Layout& l, std::size_t size) {
    return low.add_temp(static_cast<std::size_t>(checked_numel(l.shape)) * size);
  };
  buffer(Source::a) = a.buffer;
  buffer(Source::b) = b.buffer;
  buffer(Source::c) = c.buffer;
  if (g.stage_a) {
    buffer(Source::staged_a) = temp_for(g.staged_a, a.element_size);
    add_copy(low, "stage a", buffer(Source::staged_a), g.staged_a, a.dtype, a.buffer, a.layout, a.dtype);
  }
  if (g.stage_b) {
    buffer(Source::staged_b) = temp_for(g.staged_b, b.element_size);
    add_copy(low, "stage b", buffer(Source::staged_b), g.staged_b, b.dtype, b.buffer, b.layout, b.dtype);
  }
  if (g.stage_c) buffer(Source::staged_c) = temp_for(g.staged_c, c.element_size);
  const int device = low.device;
  low.add_kernel("gemm (cuBLAS)", [=](const Workspace& ws) { run_gemm(device, r, ws); });
  if (g.stage_c)
    add_copy(low, "unstage c", c.buffer, c.layout, c.dtype, buffer(Source::staged_c), g.staged_c, c.dtype);
}

void lower_contract(const ContractStep& s, Lowering& low) {
  const Value &a = low.value(s.a), &b = low.value(s.b), &c = low.value(s.dst);
  const DType dtype = low.plan.dtype;
  const int device = low.device, nb = s.batch_dims;
  const std::int64_t k = a.layout.shape[static_cast<std::size_t>(nb) + 1];
  if (checked_numel(c.layout.shape) == 0) return;
  if (k == 0) {  // empty sums: zeros (all-zero bytes are 0 in every dtype)
    const std::size_t bytes = low.buffer_bytes(c.buffer);
    low.add_kernel("zero", [=](const Workspace& ws) { zero_bytes(device, buffer_base(ws, c.buffer), bytes); });
    return;
  }
  if (is_integer(dtype) || s.kind == ContractStep::Kind::generic) {
    const bool integer = is_integer(dtype) && s.kind != ContractStep::Kind::generic;
    const Value av = a, bv = b, cv = c;
    const auto run = integer ? contract_integer : contract_loop;
    low.add_kernel(integer ? "gemm (integer tiles)" : "contract (loop)", [=](const Workspace& ws) {
      run(device, dtype, nb, buffer_base(ws, cv.buffer), cv.layout, buffer_base(ws, av.buffer), av.layout,
          buffer_base(ws, bv.buffer), bv.layout);
    });
    return;
  }
  if (dtype == DType::f8_e4m3 || dtype == DType::f8_e5m2) return lower_fp8_contract(low, s);
  const cudaDataType_t type = cuda_type(dtype).value();
  const std::size_t es = element_size(dtype);
  GemmTypes t{type, type, dtype == DType::f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, dtype == DType::f64};
  if (dtype == DType::f32) t.compute = f32_compute_type();
  add_gemm(low, Operand{a.buffer, a.layout, type, es, dtype}, Operand{b.buffer, b.layout, type, es, dtype},
           Operand{c.buffer, c.layout, type, es, dtype}, t);
}

}  // namespace einexpr::gpu
