#pragma once
// The CPU kernels, one maker per step kind; lower_cpu.cpp visits the plan's steps and calls
// them. Each returns a Kernel whose run() captures, by value, everything it needs.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/program.hpp"
#include "lower/skeleton.hpp"

namespace einexpr::cpu {

/// A value as a kernel sees it: a program buffer and a layout relative to its base.
using Operand = lowering::Operand;

/// Appends a temporary of `bytes` to the program being lowered; returns its buffer index.
using AddTemp = std::function<int(std::size_t bytes)>;

/// The base address of `buffer` as T*.
template <class T>
T* buffer_ptr(const Workspace& ws, int buffer) {
  return reinterpret_cast<T*>(ws.buffers[static_cast<std::size_t>(buffer)]);
}

/// CopyStep: dst = src (src may broadcast), through the runtime's copy_strided.
Kernel copy_kernel(const Operand& src, const Operand& dst, DType dtype);
/// ContractStep: batched GEMM through Eigen maps, or a strided loop for kind generic.
Kernel contract_kernel(const ContractStep& step, const Operand& a, const Operand& b, const Operand& dst,
                       DType dtype, const AddTemp& add_temp);
/// ReduceStep over any axes of any strided source.
Kernel reduce_kernel(const ReduceStep& step, const Operand& src, const Operand& dst, DType dtype);
/// MapStep: a unary or binary elementwise function, sources broadcast to dst's shape.
Kernel map_kernel(const MapStep& step, const std::vector<Operand>& srcs, const Operand& dst, DType dtype);
/// MapStep with a GradOp (grad_map_cpu.cpp): a backward pass's elementwise derivative.
Kernel grad_map_kernel(const GradOp& op, const std::vector<Operand>& srcs, const Operand& dst, DType dtype);
/// NormStep (norm_cpu.cpp): a normalization along some dims, or its backward pass.
Kernel norm_kernel(const NormStep& step, const std::vector<Operand>& srcs, const Operand& dst, DType dtype);
/// EmbedStep: dst's buffer zeroed, then src copied into its view `into`.
Kernel embed_kernel(const Operand& src, const Operand& dst, std::int64_t dst_elements, const Layout& into, DType dtype);

/// FillStep (index_cpu.cpp): every element of dst = value.
Kernel fill_kernel(const Operand& dst, double value, DType dtype);
/// GatherStep: get_at's gather; IndexError for an index outside the axis, before any write.
Kernel gather_kernel(const GatherStep& step, const Operand& src, const Operand& index, const Operand& dst, DType dtype,
                     DType index_dtype);
/// ScatterAddStep: add_at's scatter-add into acc's buffer, in place.
Kernel scatter_add_kernel(const ScatterAddStep& step, const Operand& acc, const Operand& index, const Operand& updates,
                          DType dtype, DType index_dtype);
/// CrossEntropyStep: forward (srcs logits, targets) or backward (dY, logits, targets).
Kernel cross_entropy_kernel(const CrossEntropyStep& step, const std::vector<Operand>& srcs, const Operand& dst,
                            DType dtype, DType index_dtype);

/// RandomStep (dropout_cpu.cpp): dropout's keep mask from the seed's value when it runs.
Kernel random_kernel(const RandomStep& step, const Operand& seed, const Operand& dst);
/// MaskStep: dst = src · (mask ? scale : 0).
Kernel mask_kernel(const MaskStep& step, const Operand& src, const Operand& mask, const Operand& dst, DType dtype);

/// "[2, 3] strides [3, 1]": for kernel names.
std::string layout_str(const Layout& layout);

}  // namespace einexpr::cpu
