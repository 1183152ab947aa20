// subset_dp: the exhaustive search. The best tree over a set S of items is the best split
// of S into two parts, each contracted at its best: a dynamic program over all 2^k subsets
// and their 3^k splits, every tree considered (outer products included), so it is exact
// for every objective and memory limit. The result of a part keeps the classes the output,
// the items outside it or anything outside the items still need.
#include <functional>

#include "cost/convention.hpp"
#include "einexpr/runtime/error.hpp"
#include "order/searches.hpp"

namespace einexpr::order::detail {

namespace {

struct Table {
  int words;
  std::vector<std::uint64_t> axes, res;  // per subset, `words` each
  std::vector<SatCount> size, value;
  std::vector<unsigned> split;
  std::vector<bool> ok;
  const std::uint64_t* res_of(unsigned s) const { return &res[s * static_cast<std::size_t>(words)]; }
};

/// Fills axes and res of every subset.
void fill_sets(const Network& net, const Items& it, Table& t) {
  const auto k = static_cast<unsigned>(it.sets.size());
  const unsigned full = (1u << k) - 1;
  const auto w = static_cast<std::size_t>(t.words);
  t.axes.assign((full + 1) * w, 0);
  t.res.assign((full + 1) * w, 0);
  for (unsigned s = 1; s <= full; ++s) {
    const unsigned low = s & (~s + 1);
    const auto i = static_cast<std::size_t>(__builtin_ctz(s));
    for (std::size_t j = 0; j < w; ++j) t.axes[s * w + j] = t.axes[(s ^ low) * w + j] | it.sets[i][j];
  }
  for (unsigned s = 1; s <= full; ++s)
    for (std::size_t j = 0; j < w; ++j)
      t.res[s * w + j] = t.axes[s * w + j] & (it.outside[j] | t.axes[(full ^ s) * w + j]);
  t.size.assign(full + 1, 1);
  for (unsigned s = 1; s <= full; ++s)
    for (std::size_t j = 0; j < w; ++j)
      for (std::uint64_t c = t.res[s * w + j]; c; c &= c - 1)
        t.size[s] *= net.length[j * 64 + static_cast<std::size_t>(__builtin_ctzll(c))];
}

/// The best split of s (t.value/t.split/t.ok of s).
void best_split(const Network& net, const Weights& w, bool last, unsigned s, Table& t) {
  const auto words = static_cast<std::size_t>(t.words);
  const unsigned low = s & (~s + 1);
  bool found = false;
  SatCount best = 0;
  for (unsigned a = (s - 1) & s; a > 0; a = (a - 1) & s) {
    if (!(a & low)) continue;  // each split once
    const unsigned b = s ^ a;
    if (!t.ok[a] || !t.ok[b]) continue;
    const SatCount parts = w.combine(t.value[a], t.value[b]);
    if (found && !(parts < best)) continue;  // the step only adds
    bool sums = false;
    SatCount only_b = 1;  // |a ∪ b| = |a| · only_b
    for (std::size_t j = 0; j < words; ++j) {
      const std::uint64_t ra = t.res_of(a)[j], rb = t.res_of(b)[j];
      sums = sums || ((ra | rb) & ~t.res_of(s)[j]) != 0;
      for (std::uint64_t c = rb & ~ra; c; c &= c - 1)
        only_b *= net.length[j * 64 + static_cast<std::size_t>(__builtin_ctzll(c))];
    }
    const SatCount flops =
        convention::pairwise_flops(t.size[a], t.size[a], t.size[b], t.size[b], t.size[a] * only_b, sums);
    const SatCount v = w.combine(parts, w.step(flops, t.size[s], last));
    if (!found || v < best) {
      found = true;
      best = v;
      t.split[s] = a;
    }
  }
  t.ok[s] = found;
  t.value[s] = best;
}

}  // namespace

Items all_leaves(const Network& net) { return Items{net.leaf, net.out, true}; }

Found subset_dp(const Network& net, const Items& it, const Weights& w) {
  const auto k = static_cast<unsigned>(it.sets.size());
  EINEXPR_ASSERT(k >= 1 && k <= static_cast<unsigned>(kSubsetDpMax), "subset_dp: 1 to 16 items");
  const unsigned full = (1u << k) - 1;
  Table t{net.words, {}, {}, {}, {}, {}, {}};
  fill_sets(net, it, t);
  t.value.assign(full + 1, 0);
  t.split.assign(full + 1, 0);
  t.ok.assign(full + 1, false);
  for (unsigned s = 1; s <= full; ++s) {
    if ((s & (s - 1)) == 0) {
      t.ok[s] = true;  // an item is given
      continue;
    }
    const bool last = s == full && it.root;
    if (!w.fits(t.size[s], last)) continue;
    best_split(net, w, last, s, t);
  }
  Found f;
  if (!t.ok[full]) return f;
  f.value = t.value[full];
  Tree tree;
  int next = static_cast<int>(k);
  std::function<int(unsigned)> emit = [&](unsigned s) -> int {
    if ((s & (s - 1)) == 0) return __builtin_ctz(s);
    const int a = emit(t.split[s]);
    const int b = emit(s ^ t.split[s]);
    tree.steps.emplace_back(a, b);
    return next++;
  };
  emit(full);
  f.tree = std::move(tree);
  return f;
}

}  // namespace einexpr::order::detail
