// heuristic (searches.hpp): greedy, then seeded random-greedy restarts, then the best few
// trees polished by subtree reconfiguration, and the best of those once more with larger
// subtrees; the best tree wins. The amount of work is fixed
// by the arguments (so the answer does not depend on the machine), the deadline only cuts
// it short.
#include <algorithm>

#include "order/searches.hpp"

namespace einexpr::order::detail {

namespace {

/// A deterministic temperature in [0.05, 1.55) for restart i.
double temperature(std::uint64_t seed, int i) {
  std::uint64_t x = (seed + static_cast<std::uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return 0.05 + 1.5 * static_cast<double>(x >> 11) * 0x1.0p-53;
}

}  // namespace

Found heuristic(const Network& net, const Weights& w, const HeuristicWork& work, const Deadline& deadline) {
  std::vector<Found> pool;
  auto keep = [&](Found f) {
    if (!f.tree) return;
    for (const Found& g : pool)
      if (g.tree->steps == f.tree->steps) return;
    pool.push_back(std::move(f));
    std::stable_sort(pool.begin(), pool.end(), [](const Found& a, const Found& b) { return a.value < b.value; });
    if (static_cast<int>(pool.size()) > work.polished) pool.pop_back();
  };
  keep(greedy(net, w));
  for (int i = 0; i < work.restarts && !deadline.expired(); ++i)
    keep(random_greedy(net, w, work.seed * 1000003u + static_cast<std::uint64_t>(i), temperature(work.seed, i)));
  Found best;
  for (const Found& f : pool) {
    if (deadline.expired() && best.tree) break;
    Found g = net.n > 3 ? reconfigure(net, *f.tree, w, work.leaves, deadline) : f;
    if (!best.tree || g.value < best.value) best = std::move(g);
  }
  if (best.tree && work.final_leaves > work.leaves && net.n > work.leaves && !deadline.expired())
    best = reconfigure(net, *best.tree, w, work.final_leaves, deadline);
  return best;
}

}  // namespace einexpr::order::detail
