// connected_dp (searches.hpp): the network's connected components (operands linked by
// shared axes) are searched separately and meet last, multiplied together in the best
// order (outer_table). A component whose result is a scalar (it sums every axis it holds)
// is better multiplied in early, into the smallest result on the way: the scalars are
// multiplied together first (σ), and every state of the other components carries a second
// score, with σ multiplied in somewhere inside it.
#include "cost/convention.hpp"
#include "einexpr/runtime/error.hpp"
#include "order/connected_dp.hpp"

namespace einexpr::order::detail {

namespace {

std::vector<Mask> components(const Network& net) {
  std::vector<Mask> out;
  Mask seen = 0;
  for (int i = 0; i < net.n; ++i) {
    if (seen >> i & 1) continue;
    Mask comp = Mask(1) << i, frontier = comp;
    while (frontier) {
      const int v = lowest(frontier);
      frontier &= frontier - 1;
      const Mask fresh = net.neighbours(v) & ~comp;
      comp |= fresh;
      frontier |= fresh;
    }
    seen |= comp;
    out.push_back(comp);
  }
  return out;
}

bool scalar(const Network& net, Mask comp) {
  AxisSet axes = net.empty();
  for (Mask m = comp; m; m &= m - 1)
    for (std::size_t i = 0; i < axes.size(); ++i) axes[i] |= net.leaf[static_cast<std::size_t>(lowest(m))][i];
  return !any(net.kept(axes, comp));
}

}  // namespace

DpResult connected_dp(const Network& net, const Weights& w, const DpLimits& limits) {
  DpResult r;
  std::vector<Mask> scalars, parts;
  for (Mask c : components(net)) (scalar(net, c) ? scalars : parts).push_back(c);
  if (parts.size() > kMaxParts) return r;  // many independent groups: the heuristic's job
  const bool sigma = !scalars.empty() && !parts.empty();
  const bool single = scalars.size() + parts.size() == 1;
  std::vector<ComponentDp> dps;
  for (Mask c : scalars) dps.emplace_back(net, w, limits, c, false, single);
  for (Mask c : parts) dps.emplace_back(net, w, limits, c, sigma, single);
  for (ComponentDp& dp : dps) {
    r.gave_up = !dp.run();
    r.states += dp.states();
    if (r.gave_up || !dp.found()) return r;
  }
  Tree tree;
  int next = net.n;
  auto add = [&](int a, int b) {
    tree.steps.emplace_back(a, b);
    return next++;
  };
  // σ: the scalar components, multiplied together.
  int sigma_node = -1;
  SatCount value = 0;
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    const int node = dps[i].emit(tree, next, false, -1);
    value = w.combine(value, dps[i].top().value[0]);
    if (sigma_node >= 0) {
      const bool last = parts.empty() && i + 1 == scalars.size();
      value = w.combine(value, w.step(convention::pairwise_flops<SatCount>(1, 1, 1, 1, 1, false), 1, last));
      sigma_node = add(sigma_node, node);
    } else {
      sigma_node = node;
    }
  }
  if (!parts.empty()) {
    std::vector<Part> table_parts;
    for (std::size_t i = scalars.size(); i < dps.size(); ++i) {
      const State& s = dps[i].top();
      table_parts.push_back({s.size, {s.value[0], s.value[1]}, {s.ok[0], s.ok[1]}});
    }
    const OuterTable t = outer_table(table_parts, w, sigma, true);
    if (!t.ok[sigma ? 1 : 0][t.full]) return r;
    value = w.combine(value, t.value[sigma ? 1 : 0][t.full]);
    emit_outer_table(
        t, sigma,
        [&](unsigned i, bool g) { return dps[scalars.size() + i].emit(tree, next, g, sigma_node); }, add,
        sigma_node);
  }
  r.found.tree = std::move(tree);
  r.found.value = value;
  return r;
}

}  // namespace einexpr::order::detail
