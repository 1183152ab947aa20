// greedy and random_greedy (searches.hpp). Nodes merge one pair at a time; a pair's score
// is opt_einsum's "memory removed": size(result) - size(x) - size(y), the smaller the
// better, ties to the cheaper step (then the lower ids). Pairs that share no axis are
// considered only when no pair shares one, the two smallest first. random_greedy perturbs
// the choice: key = signed log of (size(result) - costmod·(size(x) + size(y))) minus
// temperature times Gumbel noise (cotengra's random-greedy), from a seeded generator.
#include <cmath>
#include <limits>
#include <random>

#include "order/searches.hpp"

namespace einexpr::order::detail {

namespace {

struct Node {
  AxisSet set;
  Mask mask;
  SatCount size;
};

struct Candidate {
  int a, b;
  AxisSet result;
  SatCount size, flops;
  double key = 0;  // random_greedy only
};

struct Noise {
  std::mt19937_64 rng;
  double costmod, temperature;
  double gumbel() {
    const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    return -std::log(-std::log(u));
  }
};

Candidate make(const Network& net, const std::vector<Node>& nodes, int a, int b) {
  const Node& x = nodes[static_cast<std::size_t>(a)];
  const Node& y = nodes[static_cast<std::size_t>(b)];
  AxisSet u = x.set;
  for (std::size_t i = 0; i < u.size(); ++i) u[i] |= y.set[i];
  Candidate c{a, b, net.kept(u, x.mask | y.mask), 0, 0, 0};
  c.size = net.size(c.result);
  c.flops = merge_flops(net, x.set, y.set, c.result);
  return c;
}

bool shares(const Node& x, const Node& y) {
  for (std::size_t i = 0; i < x.set.size(); ++i)
    if (x.set[i] & y.set[i]) return true;
  return false;
}

/// c is better than d under opt_einsum's rule (exact: size_c - in_c < size_d - in_d).
bool better(const std::vector<Node>& nodes, const Candidate& c, const Candidate& d) {
  const auto in = [&](const Candidate& e) {
    return nodes[static_cast<std::size_t>(e.a)].size + nodes[static_cast<std::size_t>(e.b)].size;
  };
  const SatCount l = c.size + in(d), r = d.size + in(c);
  if (l != r) return l < r;
  if (c.flops != d.flops) return c.flops < d.flops;
  return std::make_pair(c.a, c.b) < std::make_pair(d.a, d.b);
}

double noisy_key(const std::vector<Node>& nodes, const Candidate& c, Noise& noise) {
  const double in = nodes[static_cast<std::size_t>(c.a)].size.to_double() + nodes[static_cast<std::size_t>(c.b)].size.to_double();
  const double s = c.size.to_double() - noise.costmod * in;
  return std::copysign(std::log1p(std::fabs(s)), s) - noise.temperature * noise.gumbel();
}

Found run(const Network& net, const Weights& w, Noise* noise) {
  std::vector<Node> nodes;
  for (int i = 0; i < net.n; ++i)
    nodes.push_back({net.leaf[static_cast<std::size_t>(i)], Mask(1) << i, net.size(net.leaf[static_cast<std::size_t>(i)])});
  std::vector<bool> alive(nodes.size(), true);
  std::vector<Candidate> cands;
  auto consider = [&](int a, int b, bool last) {
    Candidate c = make(net, nodes, a, b);
    if (!w.fits(c.size, last)) return;
    if (noise) c.key = noisy_key(nodes, c, *noise);
    cands.push_back(std::move(c));
  };
  for (int a = 0; a < net.n; ++a)
    for (int b = a + 1; b < net.n; ++b)
      if (shares(nodes[static_cast<std::size_t>(a)], nodes[static_cast<std::size_t>(b)])) consider(a, b, net.n == 2);
  Found f;
  Tree tree;
  SatCount total = 0;
  for (int step = 1; step < net.n; ++step) {
    const bool last = step + 1 == net.n;
    if (cands.empty()) {  // nothing shares an axis: the two smallest nodes (outer product)
      int s1 = -1, s2 = -1;
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!alive[i]) continue;
        const int ii = static_cast<int>(i);
        if (s1 < 0 || nodes[i].size < nodes[static_cast<std::size_t>(s1)].size) {
          s2 = s1;
          s1 = ii;
        } else if (s2 < 0 || nodes[i].size < nodes[static_cast<std::size_t>(s2)].size) {
          s2 = ii;
        }
      }
      consider(std::min(s1, s2), std::max(s1, s2), last);
      if (cands.empty()) return f;  // over the memory limit
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < cands.size(); ++i)
      if (noise ? cands[i].key < cands[best].key : better(nodes, cands[i], cands[best])) best = i;
    Candidate c = std::move(cands[best]);
    total = w.combine(total, w.step(c.flops, c.size, last));
    tree.steps.emplace_back(c.a, c.b);
    alive[static_cast<std::size_t>(c.a)] = alive[static_cast<std::size_t>(c.b)] = false;
    const Mask m = nodes[static_cast<std::size_t>(c.a)].mask | nodes[static_cast<std::size_t>(c.b)].mask;
    std::erase_if(cands, [&](const Candidate& d) { return d.a == c.a || d.a == c.b || d.b == c.a || d.b == c.b; });
    nodes.push_back({std::move(c.result), m, c.size});
    alive.push_back(true);
    const int z = static_cast<int>(nodes.size()) - 1;
    // The remaining nodes' results may keep fewer axes now: rescore every pair with z only
    // (a pair not touching z keeps its result: what its two nodes hold is unchanged).
    for (int i = 0; i < z; ++i)
      if (alive[static_cast<std::size_t>(i)] && shares(nodes[static_cast<std::size_t>(i)], nodes.back()))
        consider(i, z, step + 2 == net.n);
  }
  f.tree = std::move(tree);
  f.value = total;
  return f;
}

}  // namespace

Found greedy(const Network& net, const Weights& w) { return run(net, w, nullptr); }

Found random_greedy(const Network& net, const Weights& w, std::uint64_t seed, double temperature) {
  Noise noise{std::mt19937_64(seed), 1, temperature};
  noise.costmod = 0.5 + 1.5 * (static_cast<double>(noise.rng() >> 11) * 0x1.0p-53);
  return run(net, w, &noise);
}

}  // namespace einexpr::order::detail
