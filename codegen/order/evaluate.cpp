// evaluate(): the counts of a given order, straight from the convention on the Problem's
// own axis ids (no classes, no bitsets): the independent check of what the searches report,
// and what Path's counts always come from.
#include <algorithm>

#include "cost/convention.hpp"
#include "einexpr/runtime/error.hpp"
#include "order/network.hpp"
#include "order/order.hpp"

namespace einexpr::order {

namespace {

using Ids = std::vector<int>;  // sorted axis ids

Ids sorted(Ids v) {
  std::sort(v.begin(), v.end());
  return v;
}
bool contains(const Ids& s, int a) { return std::binary_search(s.begin(), s.end(), a); }
Ids unite(const Ids& a, const Ids& b) {
  Ids u;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(u));
  return u;
}
/// The ids of s that `keep` holds.
Ids keep_only(const Ids& s, const Ids& keep) {
  Ids r;
  for (int a : s)
    if (contains(keep, a)) r.push_back(a);
  return r;
}
SatCount size_of(const Ids& s, const Problem& p) {
  SatCount n = 1;
  for (int a : s) n *= static_cast<std::uint64_t>(p.lengths[static_cast<std::size_t>(a)]);
  return n;
}

}  // namespace

Path evaluate(const Problem& p, const std::vector<std::pair<int, int>>& steps) {
  (void)detail::build_network(p);  // validates
  const std::size_t n = p.operands.size();
  EINEXPR_ASSERT(steps.size() + 1 == n, "order: a path of n operands has n - 1 steps");
  std::vector<Ids> nodes;
  std::vector<std::string> text;
  for (std::size_t i = 0; i < n; ++i) {
    nodes.push_back(sorted(p.operands[i]));
    text.push_back(std::to_string(i + 1));
  }
  std::vector<bool> alive(n, true);
  const Ids out = sorted(p.output);
  Path path;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const auto [xi, yi] = steps[s];
    const auto x = static_cast<std::size_t>(xi), y = static_cast<std::size_t>(yi);
    EINEXPR_ASSERT(xi >= 0 && yi >= 0 && x < nodes.size() && y < nodes.size() && x != y && alive[x] && alive[y],
                   "order: a step names a node that is not there");
    alive[x] = alive[y] = false;
    Ids keep = out;  // K: what the output or another remaining node needs
    for (std::size_t j = 0; j < nodes.size(); ++j)
      if (alive[j]) keep = unite(keep, nodes[j]);
    const Ids xk = keep_only(nodes[x], unite(keep, nodes[y]));  // x less its private axes not in K
    const Ids yk = keep_only(nodes[y], unite(keep, nodes[x]));
    const Ids u = unite(xk, yk);
    Ids result = keep_only(u, keep);
    const bool sums = result.size() != u.size();
    path.flops += convention::pairwise_flops(size_of(nodes[x], p), size_of(xk, p), size_of(nodes[y], p),
                                             size_of(yk, p), size_of(u, p), sums);
    const SatCount elements = size_of(result, p);
    path.elements_written += elements;
    if (s + 1 < steps.size()) path.largest_intermediate = max(path.largest_intermediate, elements);
    path.steps.emplace_back(xi, yi);
    text.push_back("(" + text[x] + " " + text[y] + ")");
    nodes.push_back(std::move(result));
    alive.push_back(true);
  }
  path.text = text.back();
  return path;
}

}  // namespace einexpr::order
