#pragma once
// Private, CUDA builds only: the kernels of the CUDA lowering, as host functions that
// queue work on device `device`'s stream. Pointers are buffer bases; layouts (shape,
// strides and offset in elements) are relative to them, as in a Plan.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr::gpu {

// ---- copy_cuda.cu ----
/// dst = src over two views of one shape (src may broadcast with stride 0). Permutations
/// go through a shared-memory tile (both sides coalesced, 16-byte vectors where aligned);
/// everything else through the runtime's widened elementwise copy.
void copy_values(int device, std::byte* dst, const Layout& dst_layout, const std::byte* src,
                 const Layout& src_layout, std::size_t element_size);
/// dst = convert(src) (runtime's convert kernel).
void convert_values(int device, std::byte* dst, const Layout& dst_layout, DType dst_dtype, const std::byte* src,
                    const Layout& src_layout, DType src_dtype);
/// Sets `bytes` bytes at dst to zero.
void zero_bytes(int device, std::byte* dst, std::size_t bytes);

// ---- dropout_cuda.cu ----
/// dropout's keep mask: numel contiguous bytes from the i64 seed at `seed` (device memory).
void random_mask(int device, std::uint8_t* dst, std::int64_t numel, const std::int64_t* seed, double p);
/// dst = src · (mask ? scale : 0), every view of dst's shape.
void mask_values(int device, DType dtype, std::byte* dst, const Layout& dst_layout, const std::byte* src,
                 const Layout& src_layout, const std::byte* mask, const Layout& mask_layout, double scale);

// ---- map_cuda.cu ----
void map_unary(int device, UnaryOp op, DType dtype, std::byte* dst, const Layout& dst_layout, const std::byte* src,
               const Layout& src_layout);
void map_binary(int device, BinaryOp op, DType dtype, std::byte* dst, const Layout& dst_layout, const std::byte* a,
                const Layout& a_layout, const std::byte* b, const Layout& b_layout);

// ---- grad_map_cuda.cu ----
/// A GradOp (plan.hpp) over 1 to 3 sources (dY first) broadcast to dst's shape.
void map_grad(int device, const GradOp& op, DType dtype, std::byte* dst, const Layout& dst_layout,
              const std::vector<const std::byte*>& srcs, const std::vector<Layout>& src_layouts);

// ---- reduce_cuda.cu ----
/// A reduction planned once, at lowering (the layouts are the plan's).
struct ReducePlan {
  enum class Kind : unsigned char { inner, outer };
  Kind kind = Kind::outer;
  Reduction op = Reduction::sum;
  DType dtype = DType::f32;
  Shape kept;                         // output dims (collapsed), outermost first
  Strides kept_src, kept_dst;         // their strides in src and dst
  Shape reduced;                      // reduced dims (collapsed), outermost first
  Strides reduced_src;
  std::int64_t outputs = 0;           // product of kept
  std::int64_t count = 0;             // product of reduced (mean divides by it)
  std::int64_t correction = 1;        // var / std: divide by count - correction
  std::int64_t splits = 1;            // > 1: partial results, then a second pass
  std::int64_t chunk = 0;             // reduced elements per split
  std::size_t partial_bytes = 0;      // workspace for the partial results
  std::int64_t src_offset = 0, dst_offset = 0;
  /// Partial results, when split: inner kernel [output][split], outer [split][output].
  bool partials_by_output() const { return kind == Kind::inner; }
};
/// Bytes of one accumulator of `op` over `dtype` (reduce_ops.cuh): bool 1; sums and products
/// 8 (f32 and the reduced floats add in double); max and min of f32 and the reduced floats 4,
/// of the others 8.
std::size_t accumulator_size(DType dtype, Reduction op);
/// Plans the reduction of `src` over `axes` into `dst` for a GPU of `sm_count`
/// multiprocessors (reduce_plan.cpp). DeviceError for the sizes it does not support yet
/// (2^31 or more outputs; 2^31 or more reduced elements per output spread over several
/// non-collapsible dims).
ReducePlan plan_reduction(int sm_count, const Layout& src, const std::vector<int>& axes, const Layout& dst,
                          DType dtype, Reduction op);
void run_reduction(int device, const ReducePlan& plan, std::byte* dst, const std::byte* src, std::byte* partials);

// ---- norm_cuda.cu ----
/// A NormStep planned once, at lowering: its rows (the kept dims) and each row's elements
/// (the normalized dims), both collapsed, in three views: dst, src 0 and src 1 (src 0's
/// again for a forward step, which reads one source).
struct NormPlan {
  Normalization kind = Normalization::softmax;
  bool backward = false;
  double eps = 0;
  DType dtype = DType::f32;
  std::int64_t n = 0;                   // elements per row
  Shape inner;                          // a row's dims, collapsed
  std::array<Strides, 3> inner_strides;
  Shape outer;                          // the rows' dims, collapsed
  std::array<Strides, 3> outer_strides;
  std::array<std::int64_t, 3> base{};   // the views' offsets
};
/// DTypeError for a dtype that is not floating; DeviceError for rows of 2^31 or more
/// elements, or over more than 12 dims that do not collapse.
NormPlan plan_normalization(const NormStep& step, const Layout& dst, const std::vector<const Layout*>& srcs,
                            DType dtype);
/// Forward: dst = f(src0); backward: dst = dX from dY (src0) and Y or X (src1).
void run_normalization(int device, const NormPlan& plan, std::byte* dst, const std::byte* src0,
                       const std::byte* src1);

// ---- index_cuda.cu ----
/// Every element of dst = value.
void fill_values(int device, DType dtype, std::byte* dst, const Layout& dst_layout, double value);
/// IndexError for the first index of `layout` (distinct elements, row-major) outside
/// [0, length) (and not *allowed, where given); waits for the stream. `scratch`: 8 bytes of
/// device memory.
void check_indices(int device, const std::byte* index, const Layout& layout, DType index_dtype, std::int64_t length,
                   const std::string& what, std::byte* scratch, const std::int64_t* allowed = nullptr);
/// GatherStep: dst = src at index · stride, elements of `element_bytes` moved bit for bit.
void gather_values(int device, std::size_t element_bytes, std::byte* dst, const Layout& dst_layout,
                   const std::byte* src, const Layout& src_layout, const std::byte* index, const Layout& index_layout,
                   DType index_dtype, std::int64_t stride);
/// ScatterAddStep: acc at index · stride += updates, atomically.
void scatter_add_values(int device, DType dtype, std::byte* acc, const Layout& acc_layout, const std::byte* index,
                        const Layout& index_layout, DType index_dtype, const std::byte* updates,
                        const Layout& updates_layout, std::int64_t stride);
/// A CrossEntropyStep's rows, planned at lowering: views logits, targets, per-row (loss or
/// dY), dlogits over the rows (collapsed), and the classes' dim.
struct XentGeometry {
  Shape shape;
  std::array<Strides, 4> strides;
  std::array<std::int64_t, 4> base{};
  std::int64_t classes = 0, x_stride = 0, dx_stride = 0;
};
XentGeometry plan_cross_entropy_rows(const CrossEntropyStep& step, const Layout& logits, const Layout& targets,
                                     const Layout& per_row, const Layout* dlogits);
/// Forward: out = the loss per row; backward: out = dlogits from dY.
void cross_entropy_rows(int device, DType dtype, const XentGeometry& g, bool backward, std::int64_t ignore_index,
                        DType index_dtype, std::byte* out, const std::byte* logits, const std::byte* targets,
                        const std::byte* dy);

// ---- contract_kernels.cu ----
/// dst[B.., m, n] = sum_k a[B.., m, k] * b[B.., k, n] for i64 / i32: a tiled kernel, exact,
/// wrapping like numpy.
void contract_integer(int device, DType dtype, int batch_dims, std::byte* dst, const Layout& dst_layout,
                      const std::byte* a, const Layout& a_layout, const std::byte* b, const Layout& b_layout);
/// The same for any dtype but bool, one thread per output element: ContractStep::generic.
void contract_loop(int device, DType dtype, int batch_dims, std::byte* dst, const Layout& dst_layout,
                   const std::byte* a, const Layout& a_layout, const std::byte* b, const Layout& b_layout);

}  // namespace einexpr::gpu
