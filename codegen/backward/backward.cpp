// gradients(): the backward pass of a forward plan, by op (derive.hpp); backward_cost():
// each gradient plan costed by cost(); run_gradients(): each lowered and run on the CPU.
#include "einexpr/codegen/backward.hpp"

#include <algorithm>

#include "backward/derive.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

std::vector<Gradient> gradients(const Plan& forward) {
  if (forward.dtype == DType::boolean) throw Error("backward on bool tensors is not defined");
  switch (forward.op) {
    case Op::einsum: return detail::backward::einsum_gradients(forward);
    case Op::rearrange:
      for (const Step& s : forward.steps)
        if (std::holds_alternative<JoinStep>(s)) return detail::backward::concat_gradients(forward);
      if (forward.slice) return detail::backward::split_gradients(forward);
      return detail::backward::rearrange_gradients(forward);
    case Op::repeat: return detail::backward::repeat_gradients(forward);
    case Op::reduce: return detail::backward::reduce_gradients(forward);
    case Op::map: return detail::backward::map_gradients(forward);
    case Op::normalize: return detail::backward::normalize_gradients(forward);
    case Op::get_at: return detail::backward::get_at_gradients(forward);
    case Op::add_at: return detail::backward::add_at_gradients(forward);
    case Op::cross_entropy: return detail::backward::cross_entropy_gradients(forward);
    case Op::pack: return detail::backward::concat_gradients(forward);
    case Op::unpack: return detail::backward::split_gradients(forward);
    case Op::dropout: return detail::backward::dropout_gradients(forward);
  }
  throw Error(std::string("backward of '") + name(forward.op) + "' is not supported");
}

BackwardCost backward_cost(const Plan& forward) { return backward_cost(gradients(forward)); }

BackwardCost backward_cost(std::span<const Gradient> gradients) {
  BackwardCost out;
  for (const Gradient& g : gradients) {
    Cost c = cost(g.plan);
    c.op = "backward";
    c.pattern = g.expression;
    out.flops += c.flops;
    out.bytes += c.ideal_bytes();
    out.gradients.push_back({g.label, g.expression, std::move(c)});
  }
  return out;
}

std::vector<Tensor> run_gradients(const Plan& forward, std::span<const Tensor> inputs, const Tensor& y,
                                  const Tensor& dy) {
  return run_gradients(forward, gradients(forward), inputs, y, dy);
}

std::vector<Tensor> run_gradients(const Plan& forward, std::span<const Gradient> gradients,
                                  std::span<const Tensor> inputs, const Tensor& y, const Tensor& dy) {
  if (inputs.size() != static_cast<std::size_t>(forward.num_inputs))
    throw Error("run_gradients: the plan takes " + std::to_string(forward.num_inputs) + " inputs, got " +
                std::to_string(inputs.size()));
  if (dy.shape() != forward.output_value().layout.shape)
    throw ShapeError("run_gradients: dY has shape " + shape_str(dy.shape()) + " but the output has shape " +
                     shape_str(forward.output_value().layout.shape));
  std::vector<Tensor> out;
  for (const Gradient& g : gradients) {
    std::vector<Tensor> sources;
    for (const GradientSource& s : g.sources) {
      switch (s.kind) {
        case GradientSource::Kind::output_gradient: sources.push_back(dy.contiguous()); break;
        case GradientSource::Kind::output: sources.push_back(y.contiguous()); break;
        case GradientSource::Kind::input:
          if (s.input < 0 || static_cast<std::size_t>(s.input) >= inputs.size())
            throw Error("run_gradients: " + g.label + "'s gradient reads input " + std::to_string(s.input) +
                        ", which this plan does not have");
          sources.push_back(inputs[static_cast<std::size_t>(s.input)]);
          break;
      }
    }
    out.push_back(lower_cpu(g.plan).run(sources));
  }
  return out;
}

}  // namespace einexpr
