#pragma once
// Private to codegen/backward: what every gradient derivation shares (derive.cpp). A
// Derivation builds the gradient plan of one forward input: it adds the sources (dY, Y,
// forward inputs) as the plan's inputs, offers elementwise maps over a given atom order,
// and lays a result out in the input's dims.
#include <string>
#include <variant>
#include <vector>

#include "einexpr/codegen/backward.hpp"
#include "plan/builder.hpp"

namespace einexpr::detail::backward {

class Derivation {
 public:
  /// The gradient of forward input `input`; the gradient plan computes `op` (for printing).
  Derivation(const Plan& forward, int input, Op op);

  // ---- sources: call before anything else, in the order the plan should take them ----
  int add_dy();
  int add_y();
  int add_input(int j);

  // ---- what the derivations read ----
  const Plan& forward() const noexcept { return forward_; }
  int input() const noexcept { return input_; }
  PlanBuilder& builder() noexcept { return b_; }
  const AxisTable& axes() const noexcept { return b_.axes(); }
  /// The atoms of a value of the gradient plan.
  AtomView atoms(int value) const { return atoms_of(b_.plan(), value); }
  /// The input's axes a gradient has: its atoms except those it only broadcast ('...' dims
  /// of length 1), in the input's order.
  const Axes& x_axes() const noexcept { return x_axes_; }
  /// The forward output's atoms, in its order.
  Axes y_axes() const;
  /// A source's name: "dY", "Y", "X", "A", "B", ...
  std::string source_name(const GradientSource& s) const;
  /// "b s h": a value's dims by the table's names.
  std::string dims_text(const std::vector<DimAxes>& dims) const;
  std::string x_text() const { return dims_text(forward_.value(input_).dims); }
  std::string y_text() const { return dims_text(forward_.output_value().dims); }

  // ---- building ----
  /// f over `order`'s atoms: each source broadcast (stride 0) along the atoms it lacks; the
  /// result contiguous in `order`.
  AtomView map(std::variant<UnaryOp, BinaryOp, GradOp> f, const std::vector<int>& srcs, const Axes& order);
  /// The backward pass of the forward's NormStep over `order`'s atoms, normalized along the
  /// atoms `along`: srcs dY, then Y or X, each viewed in `order`; the result contiguous.
  AtomView normalization(const NormStep& forward, const std::vector<int>& srcs, const Axes& order, const Axes& along);
  /// The forward's NormStep itself over `order`'s atoms (X̂ = normalize(X) along `along`):
  /// src viewed in `order`; the result contiguous. For the affine part's gain gradient.
  AtomView normalized(const NormStep& forward, int src, const Axes& order, const Axes& along);
  /// dX from g, whose atoms are among x_axes(): laid out in X's dims (a view where the
  /// strides allow), broadcast along the x_axes() g lacks, written onto X's diagonal (an
  /// EmbedStep) where X holds an axis twice. Returns the output value.
  int lay_out(const AtomView& g);
  /// The finished gradient, with `output` as its plan's output.
  Gradient finish(int output, std::string expression) &&;

 private:
  /// Each source viewed with `order`'s atoms (stride 0 along those it lacks).
  std::vector<int> in_order(const std::vector<int>& srcs, const Axes& order);
  /// A new contiguous value with `order`'s atoms.
  AtomView new_result(const Axes& order);
  /// A NormStep of the forward's kind over `order`'s atoms (backward: its backward pass).
  AtomView norm_step(const NormStep& forward, const std::vector<int>& srcs, const Axes& order, const Axes& along,
                     bool backward);

  const Plan& forward_;
  int input_;
  PlanBuilder b_;
  std::vector<GradientSource> sources_;
  Axes x_axes_;
};

/// The gradient of each input, by forward op (einsum_gradient.cpp, op_gradients.cpp).
std::vector<Gradient> einsum_gradients(const Plan& forward);
std::vector<Gradient> rearrange_gradients(const Plan& forward);
std::vector<Gradient> repeat_gradients(const Plan& forward);
std::vector<Gradient> reduce_gradients(const Plan& forward);
std::vector<Gradient> map_gradients(const Plan& forward);
std::vector<Gradient> normalize_gradients(const Plan& forward);
std::vector<Gradient> get_at_gradients(const Plan& forward);     // index_gradients.cpp
std::vector<Gradient> add_at_gradients(const Plan& forward);
std::vector<Gradient> cross_entropy_gradients(const Plan& forward);
std::vector<Gradient> dropout_gradients(const Plan& forward);
std::vector<Gradient> concat_gradients(const Plan& forward);
std::vector<Gradient> split_gradients(const Plan& forward);

}  // namespace einexpr::detail::backward
