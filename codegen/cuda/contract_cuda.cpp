// ContractStep on the GPU: cuBLAS strided-batched GEMMs, our kernels where cuBLAS has none.
//
// Row-major to column-major: a row-major C[m, n] is a column-major C^T[n, m], so where C
// has unit stride along n we compute C^T = B^T A^T; where it has unit stride along m we
// compute C = A B directly. Each operand is then used in place if one of its two matrix
// dims has unit stride (op N or T, with the other stride as leading dimension); only an
// operand with neither (or a broadcast matrix dim) is staged contiguously by a copy.
//
// Batch dims: length-1 dims are dropped and neighbours whose strides nest in all three
// operands are merged. One dim left: one strided-batched call. Several: either loop over
// all but the longest (one call each), or stage the operands whose batch dims do not nest
// so that everything merges into one call. We take the cheaper by a two-number model:
// a call costs ~5 us (launch, heuristics, tail), a staging copy moves its bytes twice
// (read + write) at ~2 TB/s. E.g. 64 x 128 batches of 256^2 f32 matrices strided apart:
// looping is 64 calls = 320 us; staging one 32 MiB operand is ~34 us: stage.
//
// Dtypes: f64 in f64 (CUBLAS_COMPUTE_64F); f32 in f32 (CUBLAS_COMPUTE_32F; TF32 only when
// EINEXPR_TF32=1, see blas_context.hpp); f16 and bf16 with f32 compute and output rounded
// once; fp8 in contract_fp8.cpp; i64 / i32 and ContractStep::generic by our kernels.
#include <algorithm>
#include <numeric>
#include <string>

#include "blas_context.hpp"
#include "cuda_check.hpp"
#include "gemm.hpp"
#include "kernels.hpp"

namespace einexpr::gpu {

void lower_fp8_contract(Lowering& low, const ContractStep& step);  // contract_fp8.cpp

namespace {

constexpr double kCallSeconds = 5e-6;
constexpr double kCopyBytesPerSecond = 2e12;

struct Mat {
  std::int64_t rows, cols, sr, sc;
};
Mat matrix_of(const Layout& l) {
  const auto n = l.shape.size();
  return {l.shape[n - 2], l.shape[n - 1], l.strides[n - 2], l.strides[n - 1]};
}
Mat transposed(const Mat& x) { return {x.cols, x.rows, x.sc, x.sr}; }

struct ColMajor {
  cublasOperation_t op;
  std::int64_t ld;
};
// op(stored) == x with `stored` column-major (element (r, c) at r + c * ld), if possible.
std::optional<ColMajor> as_colmajor(const Mat& x, bool allow_transpose = true) {
  if (x.sr == 1 || x.rows == 1) {  // x itself is column-major
    const std::int64_t ld = x.cols == 1 ? std::max<std::int64_t>(x.rows, 1) : x.sc;
    if (ld >= std::max<std::int64_t>(x.rows, 1)) return ColMajor{CUBLAS_OP_N, ld};
  }
  if (allow_transpose && (x.sc == 1 || x.cols == 1)) {  // x is the transpose of a column-major matrix
    const std::int64_t ld = x.rows == 1 ? std::max<std::int64_t>(x.cols, 1) : x.sr;
    if (ld >= std::max<std::int64_t>(x.cols, 1)) return ColMajor{CUBLAS_OP_T, ld};
  }
  return std::nullopt;
}

std::size_t batch_rank(const Layout& l) { return l.shape.size() - 2; }

// Drops length-1 batch dims of the three operands and merges neighbours that nest in all.
void simplify_batch(Layout& a, Layout& b, Layout& c) {
  Layout* ls[3] = {&a, &b, &c};
  for (std::size_t d = batch_rank(c); d-- > 0;) {
    const bool unit = c.shape[d] == 1;
    const bool merge = !unit && d + 1 < batch_rank(c) &&
                       std::all_of(ls, ls + 3, [&](const Layout* l) { return l->strides[d] == l->strides[d + 1] * l->shape[d + 1]; });
    if (!unit && !merge) continue;
    for (Layout* l : ls) {
      if (merge) {
        l->shape[d + 1] *= l->shape[d];
      }
      l->shape.erase(l->shape.begin() + static_cast<std::ptrdiff_t>(d));
      l->strides.erase(l->strides.begin() + static_cast<std::ptrdiff_t>(d));
    }
  }
}

bool batch_nests(const Layout& l) {
  for (std::size_t d = 0; d + 1 < batch_rank(l); ++d)
    if (l.strides[d] != l.strides[d + 1] * l.shape[d + 1]) return false;
  return true;
}

std::int64_t numel_of(const Layout& l) { return checked_numel(l.shape); }

// Which of a, b, c to stage so the batch dims merge, if that is cheaper than a loop of calls.
std::array<bool, 3> batch_staging(const Operand& a, const Operand& b, const Operand& c) {
  const Shape& batch = c.layout.shape;
  const std::size_t nb = batch_rank(c.layout);
  if (nb < 2) return {false, false, false};
  std::int64_t calls = 1, longest = 1;
  for (std::size_t d = 0; d < nb; ++d) {
    calls *= batch[d];
    longest = std::max(longest, batch[d]);
  }
  calls /= longest;
  const Operand* ops[3] = {&a, &b, &c};
  std::array<bool, 3> stage{};
  double bytes = 0;
  int copies = 0;
  for (int i = 0; i < 3; ++i) {
    stage[static_cast<std::size_t>(i)] = !batch_nests(ops[i]->layout);
    if (!stage[static_cast<std::size_t>(i)]) continue;
    bytes += 2.0 * static_cast<double>(numel_of(ops[i]->layout)) * static_cast<double>(ops[i]->element_size);
    ++copies;
  }
  const double loop_s = static_cast<double>(calls) * kCallSeconds;
  const double stage_s = bytes / kCopyBytesPerSecond + (copies + 1) * kCallSeconds;
  if (stage_s < loop_s) return stage;
  return {false, false, false};
}

struct GemmArg {
  int buffer = 0;
  std::int64_t offset = 0;
  cublasOperation_t op = CUBLAS_OP_N;
  std::int64_t ld = 1;
  Strides batch;
  std::size_t element_size = 4;
};
struct GemmCall {
  GemmTypes types;
  std::int64_t m = 0, n = 0, k = 0;
  GemmArg p, q, d;  // D[m x n] = op(P) op(Q), column-major
  Shape batch;
};

GemmArg arg_of(const Operand& o, const ColMajor& cm) {
  const std::size_t nb = batch_rank(o.layout);
  return GemmArg{o.buffer, o.layout.offset, cm.op, cm.ld, Strides(o.layout.strides.begin(), o.layout.strides.begin() + static_cast<std::ptrdiff_t>(nb)), o.element_size};
}

const std::byte* address(const Workspace& ws, const GemmArg& g, std::int64_t offset) {
  return buffer_base(ws, g.buffer) + offset * static_cast<std::int64_t>(g.element_size);
}

void run_gemm(int device, const GemmCall& g, const Workspace& ws) {
  const BlasContext& ctx = blas(device);
  DeviceGuard guard(device);
  const std::size_t nb = g.batch.size();
  const auto big = nb == 0 ? nb : static_cast<std::size_t>(std::max_element(g.batch.begin(), g.batch.end()) - g.batch.begin());
  const std::int64_t count = nb == 0 ? 1 : g.batch[big];
  auto stride = [&](const GemmArg& x) -> long long { return nb == 0 ? 0 : x.batch[big]; };
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const void* alpha = g.types.f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = g.types.f64 ? static_cast<const void*>(&zero64) : &zero32;
  std::vector<std::int64_t> index(nb, 0);
  while (true) {
    std::int64_t op = g.p.offset, oq = g.q.offset, od = g.d.offset;
    for (std::size_t i = 0; i < nb; ++i) {
      if (i == big) continue;
      op += index[i] * g.p.batch[i];
      oq += index[i] * g.q.batch[i];
      od += index[i] * g.d.batch[i];
    }
    EINEXPR_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(
        ctx.handle, g.p.op, g.q.op, g.m, g.n, g.k, alpha, address(ws, g.p, op), g.types.ab, g.p.ld, stride(g.p),
        address(ws, g.q, oq), g.types.ab, g.q.ld, stride(g.q), beta,
        const_cast<std::byte*>(address(ws, g.d, od)), g.types.c, g.d.ld, stride(g.d), count, g.types.compute,
        CUBLAS_GEMM_DEFAULT));
    std::size_t i = nb;  // next index, skipping cuBLAS's batch dim
    while (i-- > 0) {
      if (i == big) continue;
      if (++index[i] < g.batch[i]) break;
      index[i] = 0;
    }
    if (i == static_cast<std::size_t>(-1)) break;
  }
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
  out.buffer = low.add_temp(static_cast<std::size_t>(numel_of(op.layout)) * out.element_size);
  const int device = low.device;
  low.add_kernel("stage", [=](const Workspace& ws) {
    if (op.dtype == to)
      copy_values(device, buffer_base(ws, out.buffer), out.layout, buffer_base(ws, op.buffer), op.layout, out.element_size);
    else
      convert_values(device, buffer_base(ws, out.buffer), out.layout, to, buffer_base(ws, op.buffer), op.layout, op.dtype);
  });
  return out;
}

void add_gemm(Lowering& low, Operand a, Operand b, Operand c, const GemmTypes& types) {
  simplify_batch(a.layout, b.layout, c.layout);
  const std::array<bool, 3> merge = batch_staging(a, b, c);
  const bool stage_a = merge[0] || !as_colmajor(matrix_of(a.layout));
  const bool stage_b = merge[1] || !as_colmajor(matrix_of(b.layout));
  const bool c_col = as_colmajor(matrix_of(c.layout), false).has_value();
  const bool c_row = as_colmajor(transposed(matrix_of(c.layout)), false).has_value();
  const bool stage_c = merge[2] || (!c_col && !c_row);
  if (stage_a) a = stage(low, a, a.dtype);
  if (stage_b) b = stage(low, b, b.dtype);
  const Operand out = c;
  if (stage_c) {
    c.layout = Layout::contiguous(c.layout.shape);
    c.buffer = low.add_temp(static_cast<std::size_t>(numel_of(c.layout)) * c.element_size);
  }
  if (stage_a || stage_b || stage_c) simplify_batch(a.layout, b.layout, c.layout);
  GemmCall g;
  g.types = types;
  g.batch.assign(c.layout.shape.begin(), c.layout.shape.end() - 2);
  const Mat am = matrix_of(a.layout), bm = matrix_of(b.layout), cm = matrix_of(c.layout);
  const bool direct = as_colmajor(cm, false).has_value();  // D = C = A B, else D = C^T = B^T A^T
  const Mat pm = direct ? am : transposed(bm), qm = direct ? bm : transposed(am), dm = direct ? cm : transposed(cm);
  g.p = arg_of(direct ? a : b, *as_colmajor(pm));
  g.q = arg_of(direct ? b : a, *as_colmajor(qm));
  g.d = arg_of(c, *as_colmajor(dm, false));
  g.m = dm.rows;
  g.n = dm.cols;
  g.k = pm.cols;
  const int device = low.device;
  low.add_kernel("gemm (cuBLAS)", [=](const Workspace& ws) { run_gemm(device, g, ws); });
  if (stage_c) {
    low.add_kernel("unstage", [=](const Workspace& ws) {
      if (c.dtype == out.dtype)
        copy_values(device, buffer_base(ws, out.buffer), out.layout, buffer_base(ws, c.buffer), c.layout, c.element_size);
      else
        convert_values(device, buffer_base(ws, out.buffer), out.layout, out.dtype, buffer_base(ws, c.buffer), c.layout, c.dtype);
    });
  }
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
    low.add_kernel(integer ? "gemm (integer tiles)" : "contract (loop)", [=](const Workspace& ws) {
      (integer ? contract_integer : contract_loop)(device, dtype, nb, buffer_base(ws, cv.buffer), cv.layout,
                                                   buffer_base(ws, av.buffer), av.layout, buffer_base(ws, bv.buffer), bv.layout);
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
