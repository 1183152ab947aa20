// ContractStep on the CPU: dst[B.., m, n] = sum_k a[B.., m, k] * b[B.., k, n].
//   gemm / batched_gemm  GEMMs (gemm.hpp: Eigen or OpenBLAS, EINEXPR_BLAS) on matrices mapped
//                        in place wherever one of their last two dims has unit stride; an
//                        operand that does not fit, or whose dtype the GEMM does not compute
//                        in (f16, bf16, fp8 -> f32; i32 -> i64), is staged once into a
//                        temporary. Stride-0 batch dims stay stride 0 in the staging, so a
//                        broadcast operand is not materialized per batch. Threads: einexpr's
//                        pool (runtime parallel.hpp) shares the batch items, or, when they
//                        are fewer than 2 per thread, parts of each GEMM (row or column
//                        blocks of the output, 2 per thread); every library call runs
//                        single-threaded, so no second thread pool competes.
//   generic              a strided loop over (B.., m, n) with the k sum innermost per output
//                        row, for Hadamard-like shapes where a GEMM call per element wastes.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "element.hpp"
#include "gemm.hpp"
#include "einexpr/runtime/strided.hpp"
#include "strided_loop.hpp"

namespace einexpr::cpu {

namespace {

/// Output blocks of a split GEMM start at multiples of this many rows (columns).
constexpr std::int64_t split_align = 16;

/// A GEMM operand: the value as planned, and what the GEMM maps in place (the value
/// itself or its staging temporary, in the GEMM's dtype).
struct GemmOperand {
  Operand value;
  Operand gemm;
  bool staged = false;
  Layout stage_value, stage_gemm;  // the staging copy's layouts (broadcast batch dims as 1)
  MatrixMap map;
};

std::optional<MatrixMap> fit_last_two(const Layout& l) {
  const auto r = l.shape.size();
  return fit_matrix(l.shape[r - 2], l.shape[r - 1], l.strides[r - 2], l.strides[r - 1]);
}

/// The operand as the GEMM sees it; appends a staging temporary where it must.
GemmOperand gemm_operand(const Operand& v, int batch_dims, DType dtype, DType gemm_dtype, const AddTemp& add_temp) {
  GemmOperand op{v, v, false, {}, {}, {}};
  if (const auto fit = fit_last_two(v.layout); fit && dtype == gemm_dtype) {
    op.map = *fit;
    return op;
  }
  // Row-major staging; a stride-0 batch dim keeps stride 0 and is copied once. (Not one of
  // length 0: staged as length 1 it would read an element the value does not have.)
  const Layout& l = v.layout;
  Layout staged{l.shape, Strides(l.shape.size(), 0), 0};
  op.stage_value = l;
  std::int64_t elements = 1, stride = 1;  // strides as if empty dims had length 1
  for (std::size_t d = l.shape.size(); d-- > 0;) {
    if (static_cast<int>(d) < batch_dims && l.strides[d] == 0 && l.shape[d] != 0) {
      op.stage_value.shape[d] = 1;
      continue;
    }
    staged.strides[d] = stride;
    stride *= std::max<std::int64_t>(l.shape[d], 1);
    elements *= l.shape[d];
  }
  op.stage_gemm = Layout{op.stage_value.shape, staged.strides, 0};
  op.gemm = Operand{add_temp(static_cast<std::size_t>(elements) * element_size(gemm_dtype)), staged};
  op.staged = true;
  op.map = *fit_last_two(staged);
  return op;
}

/// int64 GEMM results into an i32 value, wrapping as every integer kernel stores
/// (element.hpp; numpy too), where convert() would saturate.
void narrow_wrapping(std::byte* dst, const Layout& dst_l, const std::byte* src, const Layout& src_l) {
  const Nest<2> nest = Nest<2>::make(dst_l.shape, {dst_l.strides, src_l.strides});
  Odometer<2> odo(nest.shape, nest.strides, nest.shape.size() - 1);
  auto* d = reinterpret_cast<std::int32_t*>(dst) + dst_l.offset;
  const auto* s = reinterpret_cast<const std::int64_t*>(src) + src_l.offset;
  const std::int64_t n = nest.row_length(), ds = nest.row_stride(0), ss = nest.row_stride(1);
  for (std::int64_t r = 0, rows = nest.rows(); r < rows; ++r, odo.next()) {
    const auto& off = odo.offsets();
    for (std::int64_t i = 0; i < n; ++i) d[off[0] + i * ds] = Element<std::int32_t>::store(s[off[1] + i * ss]);
  }
}

/// Copies (converting) between a value and its staging temporary.
void restage(const Workspace& ws, const GemmOperand& op, DType dtype, DType gemm_dtype, bool into_gemm) {
  if (!op.staged) return;
  auto* value = buffer_ptr<std::byte>(ws, op.value.buffer);
  auto* gemm = buffer_ptr<std::byte>(ws, op.gemm.buffer);
  if (into_gemm) {
    if (dtype == gemm_dtype) copy_strided(gemm, op.stage_gemm, value, op.stage_value, element_size(dtype));
    else convert_strided(gemm, op.stage_gemm, gemm_dtype, value, op.stage_value, dtype);
  } else if (dtype == gemm_dtype) {
    copy_strided(value, op.stage_value, gemm, op.stage_gemm, element_size(dtype));
  } else if (dtype == DType::i32) {
    narrow_wrapping(value, op.stage_value, gemm, op.stage_gemm);
  } else {
    convert_strided(value, op.stage_value, dtype, gemm, op.stage_gemm, gemm_dtype);
  }
}

struct BatchedGemm {
  GemmOperand a, b, c;
  Nest<3> batch;  // batch dims of a, b, c as the GEMM sees them
  std::int64_t mnk = 0;  // saturated at INT64_MAX
  DType dtype = DType::f32, gemm_dtype = DType::f32;
};

Strides batch_strides(const Layout& l, int batch_dims) {
  return Strides(l.strides.begin(), l.strides.begin() + batch_dims);
}

/// Part `part` of `parts` of one GEMM: a block of c's rows (or columns, when c is wider
/// than tall), aligned to split_align.
template <class T>
void gemm_part(const BatchedGemm& p, const T* a, const T* b, T* c, int part, int parts) {
  MatrixMap am = p.a.map, bm = p.b.map, cm = p.c.map;
  const bool by_rows = cm.rows >= cm.cols;
  const std::int64_t len = by_rows ? cm.rows : cm.cols;
  const std::int64_t chunk = (len + parts * split_align - 1) / (parts * split_align) * split_align;
  const std::int64_t begin = std::min(len, part * chunk), end = std::min(len, begin + chunk);
  if (parts > 1 && begin == end) return;
  if (by_rows) {
    a += begin * am.row_step();
    c += begin * cm.row_step();
    am.rows = cm.rows = end - begin;
  } else {
    b += begin * bm.col_step();
    c += begin * cm.col_step();
    bm.cols = cm.cols = end - begin;
  }
  gemm(a, am, b, bm, c, cm);
}

/// Units [begin, end): unit u is part u % parts of batch item u / parts.
template <class T>
void gemm_units(const BatchedGemm& p, const T* a, const T* b, T* c, std::int64_t begin, std::int64_t end, int parts) {
  Odometer<3> odo(p.batch.shape, p.batch.strides, p.batch.shape.size());
  odo.seek(begin / parts);
  for (std::int64_t u = begin; u < end; ++u) {
    const auto& off = odo.offsets();
    const int part = static_cast<int>(u % parts);
    gemm_part(p, a + off[0], b + off[1], c + off[2], part, parts);
    if (part == parts - 1) odo.next();
  }
}

/// How many parts each GEMM is cut into for `threads` threads: whole GEMMs when the batch
/// items are many, else 2·threads parts of each (more parts than threads, so a thread the
/// machine keeps waiting leaves its share to the others: parallel.hpp).
int gemm_parts(std::int64_t batches, int threads) {
  if (batches >= 2 * threads) return 1;
  return 2 * threads;
}

template <class T>
void run_gemm(const BatchedGemm& p, const Workspace& ws) {
  restage(ws, p.a, p.dtype, p.gemm_dtype, true);
  restage(ws, p.b, p.dtype, p.gemm_dtype, true);
  const T* a = buffer_ptr<const T>(ws, p.a.gemm.buffer) + p.a.gemm.layout.offset;
  const T* b = buffer_ptr<const T>(ws, p.b.gemm.buffer) + p.b.gemm.layout.offset;
  T* c = buffer_ptr<T>(ws, p.c.gemm.buffer) + p.c.gemm.layout.offset;
  const std::int64_t batches = p.batch.numel();
  const int threads = num_threads();
  gemm_single_threaded();
  if (threads <= 1 || saturating_mul(batches, p.mnk) < parallel_threshold) {
    gemm_units(p, a, b, c, 0, batches, 1);
  } else {
    const int parts = gemm_parts(batches, threads);
    const std::int64_t units = batches * parts;
    parallel_for(units, pieces_for(units, 1),
                 [&](std::int64_t, std::int64_t begin, std::int64_t end) { gemm_units(p, a, b, c, begin, end, parts); });
  }
  restage(ws, p.c, p.dtype, p.gemm_dtype, false);
}

Kernel gemm_kernel(const ContractStep& step, const Operand& a, const Operand& b, const Operand& dst, DType dtype,
                   const AddTemp& add_temp) {
  BatchedGemm p;
  p.dtype = dtype;
  p.gemm_dtype = compute_dtype(dtype);
  p.a = gemm_operand(a, step.batch_dims, dtype, p.gemm_dtype, add_temp);
  p.b = gemm_operand(b, step.batch_dims, dtype, p.gemm_dtype, add_temp);
  p.c = gemm_operand(dst, step.batch_dims, dtype, p.gemm_dtype, add_temp);
  const Shape batch(dst.layout.shape.begin(), dst.layout.shape.begin() + step.batch_dims);
  p.batch = Nest<3>::make(batch, {batch_strides(p.a.gemm.layout, step.batch_dims),
                                  batch_strides(p.b.gemm.layout, step.batch_dims),
                                  batch_strides(p.c.gemm.layout, step.batch_dims)});
  p.mnk = saturating_mul(saturating_mul(p.a.map.rows, p.a.map.cols), p.b.map.cols);
  std::string label = "gemm " + std::string(name(dtype)) + " " + shape_str(a.layout.shape) + " x " +
                      shape_str(b.layout.shape) + " (" + gemm_library();
  for (const auto& [op, what] : {std::pair{&p.a, " staged a"}, {&p.b, " staged b"}, {&p.c, " staged dst"}})
    if (op->staged) label += what;
  label += ")";
  Kernel kernel{std::move(label), {}};
  switch (p.gemm_dtype) {
    case DType::f64: kernel.run = [p = std::move(p)](const Workspace& ws) { run_gemm<double>(p, ws); }; break;
    case DType::f32: kernel.run = [p = std::move(p)](const Workspace& ws) { run_gemm<float>(p, ws); }; break;
    default: kernel.run = [p = std::move(p)](const Workspace& ws) { run_gemm<std::int64_t>(p, ws); }; break;
  }
  return kernel;
}

// ---- kind generic: a strided loop ----

constexpr std::int64_t generic_block = 512;

struct GenericPlan {
  Nest<3> nest;  // (B.., m, n) with {dst, a, b} strides; a's n and b's m strides are 0
  std::int64_t k = 0, a_k = 0, b_k = 0;
};

template <class S>
void run_generic(const GenericPlan& p, S* dst, const S* a, const S* b) {
  using E = Element<S>;
  using A = accumulate_t<compute_t<S>>;
  const std::int64_t ds = p.nest.row_stride(0), as = p.nest.row_stride(1), bs = p.nest.row_stride(2);
  parallel_pieces(p.nest, generic_block, [&](const std::array<std::int64_t, 3>& off, std::int64_t n) {
    A acc[generic_block];
    std::fill(acc, acc + n, A(0));
    for (std::int64_t kk = 0; kk < p.k; ++kk) {
      const S* x = a + off[1] + kk * p.a_k;
      const S* y = b + off[2] + kk * p.b_k;
      for (std::int64_t i = 0; i < n; ++i) acc[i] += A(E::load(x[i * as])) * A(E::load(y[i * bs]));
    }
    for (std::int64_t i = 0; i < n; ++i) dst[off[0] + i * ds] = E::store(compute_t<S>(acc[i]));
  });
}

Kernel generic_kernel(const ContractStep& step, const Operand& a, const Operand& b, const Operand& dst, DType dtype) {
  const auto nb = static_cast<std::size_t>(step.batch_dims);
  const Layout &la = a.layout, &lb = b.layout, &lc = dst.layout;
  Strides sa = batch_strides(la, step.batch_dims), sb = batch_strides(lb, step.batch_dims);
  sa.insert(sa.end(), {la.strides[nb], 0});
  sb.insert(sb.end(), {0, lb.strides[nb + 1]});
  GenericPlan p;
  p.nest = Nest<3>::make_ordered(lc.shape, {lc.strides, sa, sb}, 0);
  p.k = la.shape[nb + 1];
  p.a_k = la.strides[nb + 1];
  p.b_k = lb.strides[nb];
  Kernel kernel{"contract generic " + std::string(name(dtype)) + " " + shape_str(la.shape) + " x " +
                    shape_str(lb.shape),
                {}};
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<S, bool_t>) {
      kernel.run = [p, a, b, dst](const Workspace& ws) {
        run_generic<S>(p, buffer_ptr<S>(ws, dst.buffer) + dst.layout.offset,
                       buffer_ptr<const S>(ws, a.buffer) + a.layout.offset,
                       buffer_ptr<const S>(ws, b.buffer) + b.layout.offset);
      };
    }
  });
  return kernel;
}

}  // namespace

Kernel contract_kernel(const ContractStep& step, const Operand& a, const Operand& b, const Operand& dst, DType dtype,
                       const AddTemp& add_temp) {
  if (dtype == DType::boolean) throw DTypeError("contractions are not defined on bool");
  const auto rank = static_cast<std::size_t>(step.batch_dims) + 2;
  EINEXPR_ASSERT(step.batch_dims >= 0 && a.layout.shape.size() == rank && b.layout.shape.size() == rank &&
                     dst.layout.shape.size() == rank,
                 "contract: operands are not [batch.., m, k] x [batch.., k, n]");
  if (step.kind == ContractStep::Kind::generic) return generic_kernel(step, a, b, dst, dtype);
  return gemm_kernel(step, a, b, dst, dtype, add_temp);
}

}  // namespace einexpr::cpu
