// build_network: Problem -> Network (network.hpp), and the scores the searches compare.
#include "order/network.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "cost/convention.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::order::detail {

namespace {

void validate(const Problem& p) {
  EINEXPR_ASSERT(!p.operands.empty() && p.operands.size() <= 64, "order: 1 to 64 operands");
  const auto n_ids = static_cast<int>(p.lengths.size());
  for (std::int64_t l : p.lengths) EINEXPR_ASSERT(l >= 0, "order: negative axis length");
  std::vector<int> seen(p.lengths.size(), -1);
  for (std::size_t i = 0; i < p.operands.size(); ++i)
    for (int a : p.operands[i]) {
      EINEXPR_ASSERT(a >= 0 && a < n_ids, "order: axis id out of range");
      EINEXPR_ASSERT(seen[static_cast<std::size_t>(a)] != static_cast<int>(i), "order: an axis twice in one operand");
      seen[static_cast<std::size_t>(a)] = static_cast<int>(i);
    }
  std::vector<bool> in_out(p.lengths.size(), false);
  for (int a : p.output) {
    EINEXPR_ASSERT(a >= 0 && a < n_ids && seen[static_cast<std::size_t>(a)] >= 0, "order: an output axis no operand holds");
    EINEXPR_ASSERT(!in_out[static_cast<std::size_t>(a)], "order: an axis twice in the output");
    in_out[static_cast<std::size_t>(a)] = true;
  }
}

/// The axis classes being built: by (holders, kept by the output), their id, the product of
/// their axes' lengths, holders and whether kept.
struct Classes {
  std::map<std::pair<Mask, bool>, int> id;
  std::vector<SatCount> length;
  std::vector<Mask> holders;
  std::vector<bool> in_out;
};

}  // namespace

SatCount Network::size(const AxisSet& s) const {
  SatCount p = 1;
  each(s, [&](int c) { p *= length[static_cast<std::size_t>(c)]; });
  return p;
}

AxisSet Network::kept(const AxisSet& s, Mask inside) const {
  AxisSet r = empty();
  each(s, [&](int c) {
    if (has(out, c) || (holders[static_cast<std::size_t>(c)] & ~inside) != 0) add(r, c);
  });
  return r;
}

Mask Network::neighbours(int i) const {
  Mask m = 0;
  each(leaf[static_cast<std::size_t>(i)], [&](int c) { m |= holders[static_cast<std::size_t>(c)]; });
  return m & ~(Mask(1) << i);
}

Network build_network(const Problem& p) {
  validate(p);
  Network net;
  net.n = static_cast<int>(p.operands.size());
  const Mask all = net.all();
  std::vector<Mask> holders(p.lengths.size(), 0);
  std::vector<bool> in_out(p.lengths.size(), false);
  for (std::size_t i = 0; i < p.operands.size(); ++i)
    for (int a : p.operands[i]) holders[static_cast<std::size_t>(a)] |= Mask(1) << i;
  for (int a : p.output) in_out[static_cast<std::size_t>(a)] = true;
  Classes cl;
  std::vector<int> class_of(p.lengths.size(), -1);
  for (std::size_t a = 0; a < p.lengths.size(); ++a) {
    const Mask h = holders[a];
    if (h == 0) continue;
    const SatCount len = static_cast<std::uint64_t>(p.lengths[a]);
    if (!in_out[a] && popcount(h) == 1) continue;  // folded inside its operand
    if (in_out[a] && h == all && net.n > 1) {       // every step holds it: a factor
      net.factor *= len;
      continue;
    }
    auto [it, fresh] = cl.id.try_emplace({h, in_out[a]}, static_cast<int>(cl.length.size()));
    if (fresh) {
      cl.length.push_back(1);
      cl.holders.push_back(h);
      cl.in_out.push_back(in_out[a]);
    }
    cl.length[static_cast<std::size_t>(it->second)] *= len;
    class_of[a] = it->second;
  }
  const auto classes = static_cast<int>(cl.length.size());
  net.words = std::max(1, (classes + 63) / 64);
  net.length = cl.length;
  net.holders = cl.holders;
  net.out = net.empty();
  net.leaf.assign(static_cast<std::size_t>(net.n), net.empty());
  net.bond_regime = true;
  for (int c = 0; c < classes; ++c) {
    const auto cu = static_cast<std::size_t>(c);
    if (cl.in_out[cu]) add(net.out, c);
    for (Mask h = cl.holders[cu]; h; h &= h - 1) add(net.leaf[static_cast<std::size_t>(lowest(h))], c);
    const int k = popcount(cl.holders[cu]);
    if (cl.length[cu] < SatCount(2) || k != (cl.in_out[cu] ? 1 : 2)) net.bond_regime = false;
  }
  return net;
}

SatCount Weights::step(SatCount flops, SatCount elements, bool last) const {
  switch (objective) {
    case Objective::flops: return flops;
    case Objective::largest_intermediate: return last ? SatCount(0) : elements;
    case Objective::flops_and_bytes: return flops * SatCount(65536) + byte_weight * elements;
  }
  return flops;
}

Weights weights_for(const Options& o, const Network& net) {
  EINEXPR_ASSERT(std::isfinite(o.alpha) && o.alpha >= 0 && o.element_bytes > 0, "order: alpha and element_bytes");
  Weights w;
  w.objective = o.objective;
  const double bw = std::ldexp(o.alpha * o.element_bytes, 16);
  w.byte_weight = bw >= 1.8e19 ? SatCount::max() : SatCount(static_cast<std::uint64_t>(std::llround(bw)));
  if (o.memory_limit && net.factor > SatCount(0))
    w.limit = SatCount::from_u128(o.memory_limit->raw() / net.factor.raw());
  return w;
}

SatCount merge_flops(const Network& net, const AxisSet& a, const AxisSet& b, const AxisSet& result) {
  AxisSet u = a;
  bool sums = false;
  for (std::size_t i = 0; i < u.size(); ++i) {
    u[i] |= b[i];
    sums = sums || (u[i] & ~result[i]) != 0;
  }
  const SatCount sa = net.size(a), sb = net.size(b);
  return convention::pairwise_flops(sa, sa, sb, sb, net.size(u), sums);
}

std::optional<SatCount> score(const Network& net, const Tree& tree, const Weights& w) {
  std::vector<AxisSet> sets = net.leaf;
  std::vector<Mask> masks;
  for (int i = 0; i < net.n; ++i) masks.push_back(Mask(1) << i);
  SatCount total = 0;
  for (std::size_t s = 0; s < tree.steps.size(); ++s) {
    const auto x = static_cast<std::size_t>(tree.steps[s].first), y = static_cast<std::size_t>(tree.steps[s].second);
    const Mask m = masks[x] | masks[y];
    AxisSet u = sets[x];
    for (std::size_t i = 0; i < u.size(); ++i) u[i] |= sets[y][i];
    AxisSet r = net.kept(u, m);
    const bool last = s + 1 == tree.steps.size();
    const SatCount elements = net.size(r);
    if (!w.fits(elements, last)) return std::nullopt;
    total = w.combine(total, w.step(merge_flops(net, sets[x], sets[y], r), elements, last));
    sets.push_back(std::move(r));
    masks.push_back(m);
  }
  return total;
}

}  // namespace einexpr::order::detail
