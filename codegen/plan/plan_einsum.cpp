// einsum: resolution (diagonals and compositions as views, resolve_multi.cpp), then the
// contraction core (contract.cpp), then the result merged into the output's dims (a view
// where the strides allow).
#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/builder.hpp"
#include "plan/contract.hpp"
#include "plan/resolve.hpp"

namespace einexpr {

Plan plan_einsum(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype, const AxisLengths& lengths,
                 ContractionOrder order) {
  if (dtype == DType::boolean)
    throw DTypeError("einsum on bool tensors is not supported; convert with .to(DType::i64) first");
  auto r = detail::resolve_multi(pattern, inputs, lengths);
  detail::PlanBuilder b(Op::einsum, pattern.text, dtype, std::move(r.axes));
  for (std::size_t i = 0; i < inputs.size(); ++i) b.add_input(inputs[i], r.input_dims[i]);
  const detail::Axes out_atoms = detail::flatten(r.output);
  const detail::AtomView result = detail::contract_all(b, r.inputs, out_atoms, order);
  const int out = b.merge(result.permuted(out_atoms), r.output);
  return std::move(b).finish(out);
}

}  // namespace einexpr
