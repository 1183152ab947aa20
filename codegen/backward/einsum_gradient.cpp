// The gradients of an einsum (backward.hpp): dX_i is the contraction of dY with the other
// operands down to X_i's axes, planned by the einsum core (plan/contract.cpp) like any
// einsum, then laid out in X_i's dims (Derivation::lay_out: broadcast along the axes only
// X_i had, written onto its diagonal where it holds an axis twice).
#include <algorithm>

#include "backward/derive.hpp"
#include "plan/contract.hpp"

namespace einexpr::detail::backward {

namespace {
/// The most operands a gradient's order search solves exactly (every tree, by the
/// exhaustive program); beyond, random greedy with reconfiguration. An n-operand einsum has
/// n gradients of n operands each, and with the forward's exact programs (connected-subset
/// dynamic programming up to 30 operands) their searches took 4-30 times the forward's:
/// `cost` of random 20- to 30-operand einsums took 3-9 s where their forward plans took
/// 0.2-0.4 s; now 0.4-0.9 s (bench/RESULTS.md, "Gradients' order searches").
constexpr int kGradientExactLimit = 10;
}  // namespace

std::vector<Gradient> einsum_gradients(const Plan& forward) {
  std::vector<Gradient> out;
  for (int i = 0; i < forward.num_inputs; ++i) {
    Derivation d(forward, i, Op::einsum);
    std::vector<int> sources = {d.add_dy()};
    std::string operands = "dY", texts = d.y_text();
    for (int j = 0; j < forward.num_inputs; ++j) {
      if (j == i) continue;
      sources.push_back(d.add_input(j));
      const GradientSource s{GradientSource::Kind::input, j, ""};
      operands += ", " + d.source_name(s);
      texts += ", " + d.dims_text(forward.value(j).dims);
    }
    std::vector<AtomView> nodes;
    for (int v : sources) nodes.push_back(d.atoms(v));
    // X_i's axes that dY or another operand holds; the others were summed by the forward.
    Axes keep;
    for (AxisId id : d.x_axes())
      if (std::any_of(nodes.begin(), nodes.end(), [&](const AtomView& n) { return n.has(id); })) keep.push_back(id);
    const AtomView g =
        contract_all(d.builder(), std::move(nodes), keep, ContractionOrder::optimal, {}, kGradientExactLimit);
    const int dx = d.lay_out(g);
    std::string expression = "einsum(" + operands + ", '" + texts + " -> " + d.x_text() + "')";
    out.push_back(std::move(d).finish(dx, std::move(expression)));
  }
  return out;
}

}  // namespace einexpr::detail::backward
