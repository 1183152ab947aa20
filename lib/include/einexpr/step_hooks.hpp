#pragma once
// What a run on a device mesh adds to one device's run of a program (lib/mpi/, mesh_run.hpp):
// the collectives, called by CompiledProgram::run and the Trainer at the places the mesh's
// cost puts them. A plain run passes none. Each tensor is given where it lives: a pointer to
// its first element and its layout (strides in elements; offset already applied).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/program.hpp"

namespace einexpr {

class StepHooks : public KernelCollectives {
 public:
  ~StepHooks() override = default;
  /// A kernel's own collective (a cross_entropy on a part of its classes: AxisPart); only a
  /// mesh's hooks have them.
  void all_reduce(int /*tag*/, void* /*data*/, std::int64_t /*n*/, DType /*dtype*/, bool /*max*/) override {
    throw InternalError("a kernel's collective outside a run on a device mesh", __FILE__, __LINE__);
  }
  /// Before the forward's first statement (ZeRO-3: the params gathered).
  virtual void begin_forward() {}
  /// Forward statement `statement` has written its result (partial sums: all-reduced here).
  virtual void statement_done(int /*statement*/, std::byte* /*data*/, const Layout& /*layout*/, DType /*dtype*/) {}
  /// Forward statement `statement` has been made again for the backward (recomputation) and
  /// written its result here (partial sums: all-reduced again).
  virtual void statement_recomputed(int /*statement*/, std::byte* /*data*/, const Layout& /*layout*/, DType /*dtype*/) {}
  /// After the loss's gradient is seeded, before the backward's first gradient (ZeRO-3).
  virtual void begin_backward() {}
  /// Before the first gradient through statement `statement`: the gradient of its result (a
  /// mean over split axes scales it here).
  virtual void output_gradient(int /*statement*/, std::byte* /*grad*/, const Layout& /*layout*/, DType /*dtype*/) {}
  /// The gradient of tensor `tensor` is complete: every contribution added (partial sums:
  /// all-reduced, or reduce-scattered under ZeRO, here). With micro-batches, a param's (or a
  /// layer's slice of one) once a step, after the last micro-batch: the micro-batches' sum
  /// (under mixed precision rounded to the param's dtype, and back into the f32 sum after);
  /// or, where params_once_a_step() is false, each micro-batch's, before it is added to the sum.
  virtual void gradient_done(int /*tensor*/, std::byte* /*grad*/, const Layout& /*layout*/, DType /*dtype*/) {}
  /// With micro-batches: whether the params' gradients complete once a step (their sum; ZeRO
  /// 0-1), or each micro-batch (ZeRO-2/3: reduce-scattered each time, this device's part of
  /// each added into its part of the sum, the rest of the sum never read).
  virtual bool params_once_a_step() const { return true; }
  /// The element ranges [begin, end) of param `tensor` (numel elements) this device updates
  /// and keeps optimizer state for (ZeRO's partition); the whole param by default.
  virtual std::vector<std::pair<std::int64_t, std::int64_t>> update_ranges(int /*tensor*/, std::int64_t numel) {
    return {{0, numel}};
  }
  /// Param `tensor` is updated in its ranges (ZeRO-1/2: the other parts gathered here).
  virtual void param_updated(int /*tensor*/, std::byte* /*data*/, DType /*dtype*/) {}
  /// Dropout `k`'s mask on this device is the elements from this index on of the whole
  /// tensor's (its seed is advanced by as many draws).
  virtual std::uint64_t dropout_offset(int /*k*/) { return 0; }
  /// With micro-batches: this device's micro-batch `micro` of `micro_batches` draws dropout
  /// `k`'s mask as one process's micro-batch `.first` does, from element `.second` on (a
  /// device's micro-batch is a run of rows inside one of one process's).
  virtual std::pair<int, std::uint64_t> dropout_draws(int k, int micro, int /*micro_batches*/) { return {micro, dropout_offset(k)}; }
};

}  // namespace einexpr
