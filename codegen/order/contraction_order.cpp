// Contraction order: a pairwise step costs what cost/convention.hpp says (private axes summed
// first, then 2 per multiply-add, or 1 per output element where nothing is summed), the
// same count cost() charges the planned steps; a result keeps only the atoms the output or
// a remaining operand still needs.
#include <algorithm>
#include <limits>
#include <functional>
#include <set>

#include "einexpr/runtime/error.hpp"
#include "cost/convention.hpp"
#include "order/order.hpp"

namespace einexpr::detail {

namespace {

using AtomSet = std::set<AxisId>;

AtomSet unite(const AtomSet& a, const AtomSet& b) {
  AtomSet u = a;
  u.insert(b.begin(), b.end());
  return u;
}

struct Problem {
  std::vector<AtomSet> operands;
  AtomSet output;
  const AxisTable& axes;

  long double size(const AtomSet& s) const {
    long double p = 1;
    for (AxisId n : s) p *= static_cast<long double>(axes.length(n));
    return p;
  }
  /// The FLOPs of contracting a and b when `keep` holds what the result must keep.
  long double flops(const AtomSet& a, const AtomSet& b, const AtomSet& keep) const {
    auto kept = [&](const AtomSet& x, const AtomSet& other) {
      AtomSet k;
      for (AxisId n : x)
        if (other.count(n) || keep.count(n)) k.insert(n);
      return k;
    };
    const AtomSet ak = kept(a, b), bk = kept(b, a), u = unite(ak, bk);
    bool sums = false;
    for (AxisId n : u) sums = sums || !keep.count(n);
    return convention::pairwise_flops<long double>(size(a), size(ak), size(b), size(bk), size(u), sums);
  }
};

/// The atoms a contraction of `a` and `b` keeps: those `keep` (output + others) holds.
AtomSet kept(const AtomSet& a, const AtomSet& b, const AtomSet& keep) {
  AtomSet out;
  for (AxisId n : unite(a, b))
    if (keep.count(n)) out.insert(n);
  return out;
}

struct Node {
  AtomSet atoms;
  std::string text;
};

/// Appends the contraction of nodes x and y to `path`, returning the new node.
Node contract(const Problem& pb, std::vector<Node>& nodes, std::vector<bool>& alive, int x, int y,
              ContractionPath& path) {
  AtomSet keep = pb.output;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (alive[i] && static_cast<int>(i) != x && static_cast<int>(i) != y)
      keep.insert(nodes[i].atoms.begin(), nodes[i].atoms.end());
  path.flops += pb.flops(nodes[static_cast<std::size_t>(x)].atoms, nodes[static_cast<std::size_t>(y)].atoms, keep);
  path.steps.emplace_back(x, y);
  alive[static_cast<std::size_t>(x)] = alive[static_cast<std::size_t>(y)] = false;
  return Node{kept(nodes[static_cast<std::size_t>(x)].atoms, nodes[static_cast<std::size_t>(y)].atoms, keep),
              "(" + nodes[static_cast<std::size_t>(x)].text + " " + nodes[static_cast<std::size_t>(y)].text + ")"};
}

ContractionPath run_greedy(const Problem& pb, bool naive) {
  ContractionPath path;
  std::vector<Node> nodes;
  for (std::size_t i = 0; i < pb.operands.size(); ++i) nodes.push_back({pb.operands[i], std::to_string(i + 1)});
  std::vector<bool> alive(nodes.size(), true);
  for (std::size_t round = 1; round < pb.operands.size(); ++round) {
    int bx = -1, by = -1;
    long double best = std::numeric_limits<long double>::infinity();
    if (naive) {  // left to right: the last result with the next operand
      bx = round == 1 ? 0 : static_cast<int>(nodes.size()) - 1;
      by = static_cast<int>(round);
    } else {
      for (std::size_t i = 0; i < nodes.size(); ++i)
        for (std::size_t j = i + 1; j < nodes.size(); ++j) {
          if (!alive[i] || !alive[j]) continue;
          AtomSet keep = pb.output;
          for (std::size_t o = 0; o < nodes.size(); ++o)
            if (alive[o] && o != i && o != j) keep.insert(nodes[o].atoms.begin(), nodes[o].atoms.end());
          const long double f = pb.flops(nodes[i].atoms, nodes[j].atoms, keep);
          if (f < best) {
            best = f;
            bx = static_cast<int>(i);
            by = static_cast<int>(j);
          }
        }
    }
    nodes.push_back(contract(pb, nodes, alive, bx, by, path));
    alive.push_back(true);
  }
  path.text = nodes.back().text;
  return path;
}

ContractionPath run_optimal(const Problem& pb) {
  const int n = static_cast<int>(pb.operands.size());
  const unsigned full = (1u << n) - 1;
  std::vector<AtomSet> all(full + 1), result(full + 1);
  for (unsigned s = 1; s <= full; ++s)
    for (int i = 0; i < n; ++i)
      if (s & (1u << i)) all[s].insert(pb.operands[static_cast<std::size_t>(i)].begin(), pb.operands[static_cast<std::size_t>(i)].end());
  for (unsigned s = 1; s <= full; ++s) {
    AtomSet keep = unite(pb.output, all[full & ~s]);
    for (AxisId a : all[s])
      if (keep.count(a)) result[s].insert(a);
  }
  std::vector<long double> cost(full + 1, 0);
  std::vector<unsigned> split(full + 1, 0);
  for (unsigned s = 1; s <= full; ++s) {
    if ((s & (s - 1)) == 0) continue;  // a single operand costs nothing
    cost[s] = std::numeric_limits<long double>::infinity();
    const unsigned low = s & (~s + 1);
    for (unsigned t = (s - 1) & s; t > 0; t = (t - 1) & s) {
      if (!(t & low)) continue;  // each split once
      const long double c = cost[t] + cost[s ^ t] + pb.flops(result[t], result[s ^ t], result[s]);
      if (c < cost[s]) {
        cost[s] = c;
        split[s] = t;
      }
    }
  }
  // Emit the tree bottom-up as node ids.
  ContractionPath path;
  path.flops = cost[full];
  int next = n;
  std::function<std::pair<int, std::string>(unsigned)> emit = [&](unsigned s) -> std::pair<int, std::string> {
    if ((s & (s - 1)) == 0) {
      const int i = __builtin_ctz(s);
      return {i, std::to_string(i + 1)};
    }
    auto [a, ta] = emit(split[s]);
    auto [b, tb] = emit(s ^ split[s]);
    path.steps.emplace_back(a, b);
    return {next++, "(" + ta + " " + tb + ")"};
  };
  path.text = emit(full).second;
  return path;
}

/// Two operands have one path, costed without a search. Each
/// operand's atoms are distinct (resolve takes diagonals).
ContractionPath pair_path(const Problem& pb) {
  return ContractionPath{{{0, 1}}, pb.flops(pb.operands[0], pb.operands[1], pb.output), "(1 2)"};
}

}  // namespace

ContractionPath find_path(const std::vector<std::vector<AxisId>>& operands, const std::vector<AxisId>& output,
                          const AxisTable& axes, ContractionOrder order) {
  EINEXPR_ASSERT(!operands.empty(), "find_path: no operands");
  if (operands.size() == 1) return ContractionPath{{}, 0, "1"};
  Problem pb{{}, AtomSet(output.begin(), output.end()), axes};
  for (const auto& o : operands) pb.operands.emplace_back(o.begin(), o.end());
  if (operands.size() == 2) return pair_path(pb);
  if (order == ContractionOrder::optimal && operands.size() <= 8) return run_optimal(pb);
  return run_greedy(pb, order == ContractionOrder::naive);
}

}  // namespace einexpr::detail
