// chain_dp: matrix chains `a b, b c, c d, ...` (in any operand order) by the textbook
// O(n^3) program over bracketings: m[i][j] = min_k m[i][k] + m[k+1][j] + cost(i, k, j), the
// cost of the last product being convention::pairwise_flops of the two partial results
// d[i]·d[k+1] and d[k+1]·d[j+1]: 2·d[i]·d[k+1]·d[j+1]. An outer product never pays in a
// chain whose lengths are all 2 or more, so this is the optimum over every tree there.
#include <functional>

#include "cost/convention.hpp"
#include "order/searches.hpp"

namespace einexpr::order::detail {

namespace {

/// The class shared by leaves a and b when it is their only bond (held by just these two,
/// summed); -1 otherwise.
int bond_between(const Network& net, int a, int b) {
  const Mask both = (Mask(1) << a) | (Mask(1) << b);
  int bond = -1;
  bool ok = true;
  each(net.leaf[static_cast<std::size_t>(a)], [&](int c) {
    const Mask h = net.holders[static_cast<std::size_t>(c)];
    if ((h & (Mask(1) << b)) == 0) return;
    if (h != both || has(net.out, c) || bond >= 0) ok = false;
    bond = c;
  });
  return ok ? bond : -1;
}

}  // namespace

std::optional<std::vector<int>> chain_order(const Network& net) {
  if (net.n < 3) return std::nullopt;
  std::vector<int> ends;
  for (int i = 0; i < net.n; ++i) {
    const int deg = popcount(net.neighbours(i));
    if (deg == 0 || deg > 2) return std::nullopt;
    if (deg == 1) ends.push_back(i);
  }
  if (ends.size() != 2) return std::nullopt;
  std::vector<int> order{ends[0]};
  Mask seen = Mask(1) << ends[0];
  while (static_cast<int>(order.size()) < net.n) {
    const Mask next = net.neighbours(order.back()) & ~seen;
    if (popcount(next) != 1) return std::nullopt;
    order.push_back(lowest(next));
    seen |= next;
  }
  // Each leaf: its bonds, plus classes of its own only at the two ends (kept: the output's).
  for (int p = 0; p < net.n; ++p) {
    const int i = order[static_cast<std::size_t>(p)];
    if (p > 0 && bond_between(net, order[static_cast<std::size_t>(p - 1)], i) < 0) return std::nullopt;
    int own = 0;
    each(net.leaf[static_cast<std::size_t>(i)], [&](int c) { own += popcount(net.holders[static_cast<std::size_t>(c)]) == 1; });
    if (own > 0 && p > 0 && p + 1 < net.n) return std::nullopt;
  }
  return order;
}

Found chain_dp(const Network& net, const std::vector<int>& order) {
  const std::size_t n = order.size();
  // d[p] x d[p+1] is leaf order[p]'s matrix; an end without axes of its own is 1.
  std::vector<SatCount> d(n + 1, 1);
  for (std::size_t p = 1; p < n; ++p)
    d[p] = net.length[static_cast<std::size_t>(bond_between(net, order[p - 1], order[p]))];
  auto own = [&](int leaf) {
    SatCount s = 1;
    each(net.leaf[static_cast<std::size_t>(leaf)], [&](int c) {
      if (popcount(net.holders[static_cast<std::size_t>(c)]) == 1) s *= net.length[static_cast<std::size_t>(c)];
    });
    return s;
  };
  d[0] = own(order.front());
  d[n] = own(order.back());
  std::vector<std::vector<SatCount>> m(n, std::vector<SatCount>(n, 0));
  std::vector<std::vector<std::size_t>> split(n, std::vector<std::size_t>(n, 0));
  for (std::size_t len = 2; len <= n; ++len)
    for (std::size_t i = 0; i + len <= n; ++i) {
      const std::size_t j = i + len - 1;
      for (std::size_t k = i; k < j; ++k) {
        const SatCount x = d[i] * d[k + 1], y = d[k + 1] * d[j + 1];
        const SatCount v = m[i][k] + m[k + 1][j] + convention::pairwise_flops(x, x, y, y, d[i] * d[k + 1] * d[j + 1], true);
        if (k == i || v < m[i][j]) {
          m[i][j] = v;
          split[i][j] = k;
        }
      }
    }
  Tree tree;
  int next = net.n;
  std::function<int(std::size_t, std::size_t)> emit = [&](std::size_t i, std::size_t j) -> int {
    if (i == j) return order[i];
    const int a = emit(i, split[i][j]);
    const int b = emit(split[i][j] + 1, j);
    tree.steps.emplace_back(a, b);
    return next++;
  };
  emit(0, n - 1);
  return Found{std::move(tree), m[0][n - 1]};
}

}  // namespace einexpr::order::detail
