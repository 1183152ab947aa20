#pragma once
// Program: what a lowering (codegen/lower_cpu, lower_cuda) produces from a Plan: buffers,
// an ordered list of kernels and the output's layout. run() knows no patterns: it binds
// the inputs' data to buffers 0..n-1, allocates the temporaries, runs each kernel in order
// and wraps the output buffer in a Tensor.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "einexpr/runtime/device.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/inline_vector.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/tensor.hpp"

namespace einexpr {

/// Collectives a kernel issues inside its own step: a run on a device mesh (lib's mesh run)
/// gives them, so that a cross_entropy along classes split over devices completes each row's
/// statistics over them; every other run gives none.
class KernelCollectives {
 public:
  virtual ~KernelCollectives() = default;
  /// `n` values of `dtype` at `data`, replaced by their elementwise max (else sum) over the
  /// devices, for the step whose AxisPart::tag is `tag`.
  virtual void all_reduce(int tag, void* data, std::int64_t n, DType dtype, bool max) = 0;
};

/// The buffers a kernel sees: the inputs' data pointers (element [0,...,0] of each input),
/// then the temporaries, in Program order.
struct Workspace {
  InlineVector<std::byte*, 8> buffers;  // up to 8 without an allocation
  Device device;
  KernelCollectives* collectives = nullptr;  // a mesh run's (plan.hpp's AxisPart)
};

struct Kernel {
  std::string name;                              // for printing and profiling
  std::function<void(const Workspace&)> run;
};

class Program {
 public:
  Device device = Device::cpu();
  DType dtype = DType::f32;                      // of the output (and of every input but
                                                 // those input_dtypes names otherwise)
  std::vector<Layout> input_layouts;             // the layouts the program was planned for
  std::vector<DType> input_dtypes;               // per input; empty: every input is `dtype`
  std::vector<std::size_t> temp_bytes;           // temporaries: buffer num_inputs() + i
  std::vector<Kernel> kernels;
  int output_buffer = 0;                         // may be an input's buffer (a view result)
  Layout output_layout;                          // relative to the output buffer's base

  int num_inputs() const noexcept { return static_cast<int>(input_layouts.size()); }
  /// The dtype input i must have.
  DType input_dtype(std::size_t i) const noexcept { return i < input_dtypes.size() ? input_dtypes[i] : dtype; }
  /// Bytes of all temporaries together.
  std::size_t workspace_bytes() const noexcept;

  /// Runs on `inputs`, which must match input_layouts' shapes and strides, dtype and device.
  /// (A span of Tensors or of pointers to them: TensorRefs.)
  Tensor run(TensorRefs inputs) const;
  Tensor run(std::span<const Tensor> inputs) const { return run(TensorRefs(inputs)); }
  /// Runs and writes the result into `out` (same shape and dtype). Where out's layout is
  /// the one the last kernel writes, the kernel writes into out directly; else the result
  /// is copied into it.
  void run_into(TensorRefs inputs, Tensor& out) const;
  void run_into(std::span<const Tensor> inputs, Tensor& out) const { run_into(TensorRefs(inputs), out); }
  /// One line per kernel, for debugging.
  std::string str() const;

 private:
  void check_inputs(TensorRefs inputs) const;
};

}  // namespace einexpr
