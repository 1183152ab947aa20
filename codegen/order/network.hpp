#pragma once
// The search's view of a Problem (network.cpp builds it): leaves with their axes as
// bitsets over axis *classes* (axes held by the same operands and kept or summed alike
// always travel together, so a class is one axis whose length is their product), with the
// axes every operand and the output hold factored out (they scale every step alike), and
// each operand's private summed axes folded away (a constant cost). What the searches
// compare is a Score (Weights): the FLOPs, the largest intermediate, or FLOPs + bytes.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "order/order.hpp"

namespace einexpr::order::detail {

using Mask = std::uint64_t;  // a set of leaves (at most 64 operands)
using AxisSet = std::vector<std::uint64_t>;

inline bool has(const AxisSet& s, int c) { return (s[static_cast<std::size_t>(c) / 64] >> (c % 64)) & 1u; }
inline void add(AxisSet& s, int c) { s[static_cast<std::size_t>(c) / 64] |= std::uint64_t(1) << (c % 64); }
inline bool any(const AxisSet& s) {
  for (std::uint64_t w : s)
    if (w) return true;
  return false;
}
/// Calls f(c) for every class c in s.
template <class F>
void each(const AxisSet& s, F&& f) {
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::uint64_t w = s[i]; w; w &= w - 1) f(static_cast<int>(i * 64) + __builtin_ctzll(w));
}
inline int popcount(Mask m) { return __builtin_popcountll(m); }
inline int lowest(Mask m) { return __builtin_ctzll(m); }

struct Network {
  int n = 0;                         // leaves
  int words = 1;                     // 64-bit words per AxisSet
  std::vector<SatCount> length;      // by class
  std::vector<Mask> holders;         // by class: the leaves that hold it
  AxisSet out;                       // the classes the result keeps
  std::vector<AxisSet> leaf;         // by leaf
  SatCount factor = 1;               // product of the factored-out axes
  bool bond_regime = false;          // see README ("When the search is exact")

  AxisSet empty() const { return AxisSet(static_cast<std::size_t>(words), 0); }
  SatCount size(const AxisSet& s) const;
  /// The classes of `s` that the output or a leaf outside `inside` still needs.
  AxisSet kept(const AxisSet& s, Mask inside) const;
  Mask all() const { return n == 64 ? ~Mask(0) : (Mask(1) << n) - 1; }
  /// Leaves sharing a class with leaf i.
  Mask neighbours(int i) const;
};

Network build_network(const Problem& problem);

/// What a search compares. A step's score and how scores of parts combine.
struct Weights {
  Objective objective = Objective::flops;
  SatCount byte_weight = 0;           // flops_and_bytes: alpha * element_bytes * 2^16
  std::optional<SatCount> limit;      // largest intermediate, in the network's elements
  bool bottleneck() const { return objective == Objective::largest_intermediate; }
  /// The score of one step: `flops` spent, `elements` written; `last`: the final result.
  SatCount step(SatCount flops, SatCount elements, bool last) const;
  SatCount combine(SatCount a, SatCount b) const { return bottleneck() ? max(a, b) : a + b; }
  /// Whether an intermediate of `elements` may exist (the final result always may).
  bool fits(SatCount elements, bool last) const { return last || !limit || elements <= *limit; }
};

Weights weights_for(const Options& options, const Network& net);

/// The FLOPs of merging nodes holding `a` and `b` into one holding `result` (a ∪ b ⊇
/// result; in the network nothing is private to one node, so there is no fold).
SatCount merge_flops(const Network& net, const AxisSet& a, const AxisSet& b, const AxisSet& result);

/// A binary contraction tree over the network's leaves, as Path::steps.
struct Tree {
  std::vector<std::pair<int, int>> steps;
};

/// A tree's score under w (w.fits checked: nullopt if some intermediate is too large).
std::optional<SatCount> score(const Network& net, const Tree& tree, const Weights& w);

}  // namespace einexpr::order::detail
