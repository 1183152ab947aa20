// The gradients of an einsum (backward.hpp): dX_i is the contraction of dY with the other
// operands down to X_i's axes, planned by the einsum core (plan/contract.cpp) like any
// einsum, then laid out in X_i's dims (Derivation::lay_out: broadcast along the axes only
// X_i had, written onto its diagonal where it holds an axis twice).
#include <algorithm>
#include <utility>
#include <vector>

#include "backward/derive.hpp"
#include "plan/contract.hpp"

namespace einexpr::detail::backward {

namespace {

/// The most operands a gradient's order search solves exactly (every tree, by the
/// exhaustive program; a matrix chain by its O(n^3) program at any length). Beyond, the
/// forward's order backpropagated (backprop_tree), or greedy's where that is cheaper: an
/// n-operand einsum has n gradients of n operands each, and with a search each they took
/// 4-32 times the forward's planning time, now 1-2 times up to 30 operands
/// (bench/RESULTS.md, "Gradients' order searches").
constexpr int kGradientExactLimit = 10;

/// dX_i's contraction tree from the forward's (`forward`: ContractionInfo::path over n
/// operands), as reverse-mode differentiation runs it: dY joined, nearest the root first,
/// with the sibling of each node on the forward's path from the root down to operand i,
/// each sibling contracted in the forward's own order. Each step's axes are those of a
/// forward step or fewer, so dX_i costs about what the forward does. Node ids as the
/// gradient's contraction numbers them: 0 dY, operand j at 1 + j (j < i) or j (j > i),
/// results from n on. Empty when `forward` is not a tree of n operands.
std::vector<std::pair<int, int>> backprop_tree(const std::vector<std::pair<int, int>>& forward, int n, int i) {
  if (n < 2 || forward.size() + 1 != static_cast<std::size_t>(n)) return {};
  const auto un = static_cast<std::size_t>(n);
  std::vector<int> parent(2 * un - 1, -1);
  for (std::size_t s = 0; s < forward.size(); ++s) {
    const auto [x, y] = forward[s];
    if (x < 0 || y < 0 || static_cast<std::size_t>(x) >= un + s || static_cast<std::size_t>(y) >= un + s) return {};
    parent[static_cast<std::size_t>(x)] = parent[static_cast<std::size_t>(y)] = n + static_cast<int>(s);
  }
  std::vector<int> siblings;  // from operand i up to the root's child
  for (int v = i; parent[static_cast<std::size_t>(v)] >= 0; v = parent[static_cast<std::size_t>(v)]) {
    const auto [x, y] = forward[static_cast<std::size_t>(parent[static_cast<std::size_t>(v)] - n)];
    siblings.push_back(x == v ? y : x);
  }
  std::vector<std::pair<int, int>> steps;
  int next = n;
  // A forward subtree without operand i, in the forward's order; returns its node id.
  const auto emit = [&](const auto& self, int u) -> int {
    if (u < n) return u < i ? 1 + u : u;
    const auto [x, y] = forward[static_cast<std::size_t>(u - n)];
    const int a = self(self, x), b = self(self, y);
    steps.emplace_back(a, b);
    return next++;
  };
  int g = 0;  // dY, then the gradient of each node down the path
  for (auto it = siblings.rbegin(); it != siblings.rend(); ++it) {
    const int s = emit(emit, *it);
    steps.emplace_back(g, s);
    g = next++;
  }
  if (steps.size() + 1 != un) return {};  // operand i was not a leaf of one tree
  return steps;
}

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
    SearchOverride search{kGradientExactLimit, {}, "the forward's order, backpropagated"};
    if (forward.contraction && forward.contraction->operands.size() == static_cast<std::size_t>(forward.num_inputs))
      search.tree = backprop_tree(forward.contraction->path, forward.num_inputs, i);
    const AtomView g = contract_all(d.builder(), std::move(nodes), keep, ContractionOrder::optimal, {}, &search);
    const int dx = d.lay_out(g);
    std::string expression = "einsum(" + operands + ", '" + texts + " -> " + d.x_text() + "')";
    out.push_back(std::move(d).finish(dx, std::move(expression)));
  }
  return out;
}

}  // namespace einexpr::detail::backward
