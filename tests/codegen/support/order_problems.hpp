#pragma once
// Contraction-order problems for the order tests: random einsums in the spirit of
// opt_einsum's rand_equation (every summed axis in exactly two operands, n_out output axes
// in one operand each), general ones (axes in three or more operands, output axes shared,
// lengths 0 and 1), matrix chains, and an exhaustive reference written apart from the
// searches: every tree, by brute-force recursion over the ways to split a set of operands.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "order/order.hpp"

namespace order_testing {

using einexpr::order::Problem;
using einexpr::order::SatCount;

/// Options whose time budget never binds: the searches' own work limits decide, so a test
/// asking for the exact answer passes on a slow or loaded machine (sanitizers, CI).
inline einexpr::order::Options unhurried() {
  einexpr::order::Options o;
  o.time_budget_s = 600;
  return o;
}

inline int pick(std::mt19937_64& rng, int lo, int hi) {  // uniform in [lo, hi]
  return lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

/// n operands, about n·reg/2 summed axes each in two operands, n_out output axes.
inline Problem rand_equation(int n, int reg, int n_out, std::uint64_t seed, int dmin = 2, int dmax = 6) {
  std::mt19937_64 rng(seed);
  const int axes = n * reg / 2 + n_out;
  Problem p;
  std::vector<int> slots;
  for (int a = 0; a < axes; ++a) {
    p.lengths.push_back(pick(rng, dmin, dmax));
    if (a < n_out) {
      p.output.push_back(a);
      slots.push_back(a);
    } else {
      slots.insert(slots.end(), {a, a});
    }
  }
  std::shuffle(slots.begin(), slots.end(), rng);
  p.operands.assign(static_cast<std::size_t>(n), {});
  for (std::size_t i = 0; i < slots.size(); ++i) {
    int where = i < static_cast<std::size_t>(n) ? static_cast<int>(i) : pick(rng, 0, n - 1);
    for (int tries = 0; std::count(p.operands[static_cast<std::size_t>(where)].begin(),
                                   p.operands[static_cast<std::size_t>(where)].end(), slots[i]) > 0; ++tries)
      where = tries < 100 ? pick(rng, 0, n - 1) : (where + 1) % n;
    p.operands[static_cast<std::size_t>(where)].push_back(slots[i]);
  }
  return p;
}

/// n operands, each holding `per` axes of its own (kept) and one axis for each triple of
/// operands it belongs to among the first `triples` triples: many distinct axis classes.
inline Problem many_classes(int n, int triples, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Problem p;
  p.operands.resize(static_cast<std::size_t>(n));
  int made = 0;
  for (int a = 0; a < n && made < triples; ++a)
    for (int b = a + 1; b < n && made < triples; ++b)
      for (int c = b + 1; c < n && made < triples; ++c, ++made) {
        const int id = static_cast<int>(p.lengths.size());
        p.lengths.push_back(pick(rng, 2, 3));
        for (int o : {a, b, c}) p.operands[static_cast<std::size_t>(o)].push_back(id);
      }
  for (auto& o : p.operands) {
    const int id = static_cast<int>(p.lengths.size());
    p.lengths.push_back(pick(rng, 2, 3));
    o.push_back(id);
    p.output.push_back(id);
  }
  return p;
}

/// Anything goes: axes in 1..4 operands, some kept, lengths 1..6 (and rarely 0).
inline Problem general_problem(int n, std::uint64_t seed, bool zero_lengths = false) {
  std::mt19937_64 rng(seed);
  const int axes = pick(rng, n, 2 * n);
  Problem p;
  for (int a = 0; a < axes; ++a) p.lengths.push_back(zero_lengths && pick(rng, 0, 30) == 0 ? 0 : pick(rng, 1, 6));
  std::set<int> used;
  for (int i = 0; i < n; ++i) {
    std::set<int> ops;
    const int k = pick(rng, 1, std::min(4, axes));
    while (static_cast<int>(ops.size()) < k) ops.insert(pick(rng, 0, axes - 1));
    p.operands.emplace_back(ops.begin(), ops.end());
    used.insert(ops.begin(), ops.end());
  }
  for (int a : used)
    if (pick(rng, 0, 4) == 0) p.output.push_back(a);
  return p;
}

/// The problems side by side, sharing no axis (independent groups), their operands shuffled
/// together by `seed`; group[i] is the part operand i came from.
struct Union {
  Problem problem;
  std::vector<int> group;
};
inline Union disjoint_union(const std::vector<Problem>& parts, std::uint64_t seed) {
  Union u;
  std::vector<std::pair<std::vector<int>, int>> operands;
  for (std::size_t g = 0; g < parts.size(); ++g) {
    const int offset = static_cast<int>(u.problem.lengths.size());
    u.problem.lengths.insert(u.problem.lengths.end(), parts[g].lengths.begin(), parts[g].lengths.end());
    for (int a : parts[g].output) u.problem.output.push_back(a + offset);
    for (std::vector<int> o : parts[g].operands) {
      for (int& a : o) a += offset;
      operands.emplace_back(std::move(o), static_cast<int>(g));
    }
  }
  std::mt19937_64 rng(seed);
  std::shuffle(operands.begin(), operands.end(), rng);
  for (auto& [o, g] : operands) {
    u.problem.operands.push_back(std::move(o));
    u.group.push_back(g);
  }
  return u;
}

/// A chain of matrices d[i] x d[i+1], in the operand order `perm` (identity when empty).
inline Problem matrix_chain(const std::vector<std::int64_t>& d, std::vector<int> perm = {}) {
  const int n = static_cast<int>(d.size()) - 1;
  if (perm.empty())
    for (int i = 0; i < n; ++i) perm.push_back(i);
  Problem p;
  p.lengths = d;
  p.operands.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) p.operands[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])] = {i, i + 1};
  p.output = {0, n};
  return p;
}

/// The textbook matrix-chain program: 2 FLOPs per multiply-add.
inline SatCount textbook_chain(const std::vector<std::int64_t>& d) {
  const std::size_t n = d.size() - 1;
  std::vector<std::vector<SatCount>> m(n, std::vector<SatCount>(n, 0));
  for (std::size_t len = 2; len <= n; ++len)
    for (std::size_t i = 0; i + len <= n; ++i) {
      const std::size_t j = i + len - 1;
      m[i][j] = SatCount::max();
      for (std::size_t k = i; k < j; ++k) {
        const SatCount c = m[i][k] + m[k + 1][j] + SatCount(2) * SatCount(static_cast<std::uint64_t>(d[i])) *
                                                       SatCount(static_cast<std::uint64_t>(d[k + 1])) *
                                                       SatCount(static_cast<std::uint64_t>(d[j + 1]));
        m[i][j] = c < m[i][j] ? c : m[i][j];
      }
    }
  return m[0][n - 1];
}

/// What the exhaustive reference minimizes: FLOPs, the largest intermediate, or FLOPs·2^16 +
/// byte_weight · the elements the steps write (Objective::flops_and_bytes's fixed point).
enum class Goal { flops, peak, flops_and_bytes };

/// The best over every binary tree of the operands (n <= 10), straight from the convention:
/// a step of x and y sums first what only x holds and nothing else needs (same for y), then
/// multiplies over the union, 2 per element when something is summed, else 1. With `limit`,
/// trees with a larger intermediate (the final result aside) are not counted; nullopt when
/// no tree is left. Goal::peak: the smallest largest intermediate.
inline std::optional<SatCount> exhaustive(const Problem& p, Goal goal = Goal::flops,
                                          std::optional<SatCount> limit = std::nullopt, std::uint64_t byte_weight = 0) {
  using Set = std::vector<int>;  // sorted axis ids
  const int n = static_cast<int>(p.operands.size());
  const unsigned full = (1u << n) - 1;
  auto size = [&](const Set& s) {
    SatCount v = 1;
    for (int a : s) v *= SatCount(static_cast<std::uint64_t>(p.lengths[static_cast<std::size_t>(a)]));
    return v;
  };
  auto has = [](const Set& s, int a) { return std::binary_search(s.begin(), s.end(), a); };
  // Every subset's axes, and what its result holds: its axes that the output or an operand
  // outside needs. A leaf as its step sees it holds all its axes.
  std::vector<Set> axes(full + 1), held(full + 1);
  for (unsigned s = 1; s <= full; ++s) {
    std::set<int> a;
    for (int i = 0; i < n; ++i)
      if (s >> i & 1) a.insert(p.operands[static_cast<std::size_t>(i)].begin(), p.operands[static_cast<std::size_t>(i)].end());
    axes[s].assign(a.begin(), a.end());
  }
  Set out = p.output;
  std::sort(out.begin(), out.end());
  for (unsigned s = 1; s <= full; ++s) {
    if ((s & (s - 1)) == 0) {
      held[s] = axes[s];
      continue;
    }
    for (int a : axes[s])
      if (has(out, a) || (s != full && has(axes[full & ~s], a))) held[s].push_back(a);
  }
  std::vector<std::optional<SatCount>> best(full + 1);
  for (unsigned s = 1; s <= full; ++s) {
    if ((s & (s - 1)) == 0) {
      best[s] = SatCount(0);
      continue;
    }
    const Set& kept = held[s];  // K within s
    const bool last = s == full;
    if (!last && limit && *limit < size(kept)) continue;
    for (unsigned x = (s - 1) & s; x > 0; x = (x - 1) & s) {
      const unsigned y = s ^ x;
      if (x < y || !best[x] || !best[y]) continue;
      Set xk, yk, u;  // x and y less what only one holds and nothing later needs
      for (int a : held[x])
        if (has(kept, a) || has(held[y], a)) xk.push_back(a);
      for (int a : held[y])
        if (has(kept, a) || has(held[x], a)) yk.push_back(a);
      std::set_union(xk.begin(), xk.end(), yk.begin(), yk.end(), std::back_inserter(u));
      const bool sums = u.size() != kept.size();
      const SatCount flops = (size(held[x]) - size(xk)) + (size(held[y]) - size(yk)) +
                             (sums ? SatCount(2) : SatCount(1)) * size(u);
      SatCount v;
      if (goal == Goal::flops) v = *best[x] + *best[y] + flops;
      if (goal == Goal::peak) v = std::max({*best[x], *best[y], last ? SatCount(0) : size(kept)});
      if (goal == Goal::flops_and_bytes)
        v = *best[x] + *best[y] + flops * SatCount(65536) + SatCount(byte_weight) * size(kept);
      if (!best[s] || v < *best[s]) best[s] = v;
    }
  }
  return best[full];
}

}  // namespace order_testing
