// reconfigure (searches.hpp): cotengra's subtree reconfiguration. For every internal node
// v of the tree, the subtree below v is cut at a frontier of up to `leaves` nodes (grown
// from v's children by repeatedly opening the largest internal frontier node) and the part
// above the frontier is re-solved exactly by subset_dp; a strictly better part replaces it.
// Passes repeat until one improves nothing, or the deadline passes; a part solved once is
// not solved again (its frontier's node ids name it).
#include <algorithm>
#include <set>

#include "cost/convention.hpp"
#include "einexpr/runtime/error.hpp"
#include "order/searches.hpp"

namespace einexpr::order::detail {

namespace {

struct Node {
  int left = -1, right = -1;  // -1: a leaf
  Mask mask = 0;
  AxisSet set;                // what its result holds
  SatCount size = 1;
};

class Forest {
 public:
  Forest(const Network& net, const Tree& tree) : net_(net) {
    for (int i = 0; i < net.n; ++i)
      nodes_.push_back({-1, -1, Mask(1) << i, net.leaf[static_cast<std::size_t>(i)],
                        net.size(net.leaf[static_cast<std::size_t>(i)])});
    for (const auto& [a, b] : tree.steps) root_ = add(a, b);
  }

  int add(int a, int b) {
    Node z;
    z.left = a;
    z.right = b;
    z.mask = nodes_[static_cast<std::size_t>(a)].mask | nodes_[static_cast<std::size_t>(b)].mask;
    AxisSet u = nodes_[static_cast<std::size_t>(a)].set;
    for (std::size_t i = 0; i < u.size(); ++i) u[i] |= nodes_[static_cast<std::size_t>(b)].set[i];
    z.set = net_.kept(u, z.mask);
    z.size = net_.size(z.set);
    nodes_.push_back(std::move(z));
    return static_cast<int>(nodes_.size()) - 1;
  }

  /// The score of the nodes above `frontier` in v's subtree.
  SatCount part_score(int v, const std::vector<int>& frontier, const Weights& w) const {
    if (std::find(frontier.begin(), frontier.end(), v) != frontier.end()) return 0;
    const Node& z = nodes_[static_cast<std::size_t>(v)];
    const Node& a = nodes_[static_cast<std::size_t>(z.left)];
    const Node& b = nodes_[static_cast<std::size_t>(z.right)];
    const SatCount step = w.step(merge_flops(net_, a.set, b.set, z.set), z.size, v == root_);
    return w.combine(w.combine(part_score(z.left, frontier, w), part_score(z.right, frontier, w)), step);
  }

  /// Up to `k` frontier nodes below v: v's children, the largest internal one opened first.
  std::vector<int> frontier(int v, int k) const {
    std::vector<int> f{nodes_[static_cast<std::size_t>(v)].left, nodes_[static_cast<std::size_t>(v)].right};
    while (static_cast<int>(f.size()) < k) {
      int open = -1;
      for (std::size_t i = 0; i < f.size(); ++i) {
        const Node& c = nodes_[static_cast<std::size_t>(f[i])];
        if (c.left >= 0 && (open < 0 || nodes_[static_cast<std::size_t>(f[static_cast<std::size_t>(open)])].size < c.size))
          open = static_cast<int>(i);
      }
      if (open < 0) break;
      const Node& c = nodes_[static_cast<std::size_t>(f[static_cast<std::size_t>(open)])];
      f[static_cast<std::size_t>(open)] = c.left;
      f.push_back(c.right);
    }
    return f;
  }

  /// Re-solves the part of v's subtree above its frontier; true if it improved.
  bool improve(int v, int k, const Weights& w) {
    const std::vector<int> f = frontier(v, k);
    if (f.size() < 3) return false;
    std::vector<int> key = f;  // a part already found optimal stays so: not solved again
    std::sort(key.begin(), key.end());
    key.push_back(v == root_);
    if (!solved_.insert(key).second) return false;
    const Node& top = nodes_[static_cast<std::size_t>(v)];
    Items items{{}, net_.out, v == root_};
    for (int leaf = 0; leaf < net_.n; ++leaf)
      if (!(top.mask >> leaf & 1))
        for (std::size_t i = 0; i < items.outside.size(); ++i) items.outside[i] |= net_.leaf[static_cast<std::size_t>(leaf)][i];
    for (int x : f) items.sets.push_back(nodes_[static_cast<std::size_t>(x)].set);
    const Found best = subset_dp(net_, items, w);
    if (!best.tree || !(best.value < part_score(v, f, w))) return false;
    std::vector<int> ids = f;
    for (const auto& [a, b] : best.tree->steps) ids.push_back(add(ids[static_cast<std::size_t>(a)], ids[static_cast<std::size_t>(b)]));
    // The new top takes v's place: v's parent (or the root) points at it.
    const int fresh = ids.back();
    for (Node& n : nodes_) {
      if (n.left == v) n.left = fresh;
      if (n.right == v) n.right = fresh;
    }
    if (root_ == v) root_ = fresh;
    return true;
  }

  /// The internal nodes reachable from the root, children before parents.
  std::vector<int> internal() const {
    std::vector<int> order, stack{root_};
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      const Node& z = nodes_[static_cast<std::size_t>(v)];
      if (z.left < 0) continue;
      order.push_back(v);
      stack.push_back(z.left);
      stack.push_back(z.right);
    }
    std::reverse(order.begin(), order.end());
    return order;
  }

  Tree tree() const {
    Tree t;
    std::vector<int> id(nodes_.size(), -1);
    for (int i = 0; i < net_.n; ++i) id[static_cast<std::size_t>(i)] = i;
    int next = net_.n;
    for (int v : internal()) {
      const Node& z = nodes_[static_cast<std::size_t>(v)];
      t.steps.emplace_back(id[static_cast<std::size_t>(z.left)], id[static_cast<std::size_t>(z.right)]);
      id[static_cast<std::size_t>(v)] = next++;
    }
    return t;
  }
  bool alive(int v) const {
    const std::vector<int> in = internal();
    return std::find(in.begin(), in.end(), v) != in.end();
  }

 private:
  const Network& net_;
  std::vector<Node> nodes_;
  int root_ = -1;
  std::set<std::vector<int>> solved_;
};

}  // namespace

Found reconfigure(const Network& net, const Tree& tree, const Weights& w, int leaves, const Deadline& deadline) {
  EINEXPR_ASSERT(leaves >= 3 && leaves <= kSubsetDpMax, "reconfigure: 3 to 16 leaves");
  Forest forest(net, tree);
  bool improved = net.n > 2;
  while (improved && !deadline.expired()) {
    improved = false;
    for (int v : forest.internal()) {
      if (deadline.expired()) break;
      if (!forest.alive(v)) continue;  // replaced by an improvement above it in this pass
      improved = forest.improve(v, leaves, w) || improved;
    }
  }
  Found f;
  f.tree = forest.tree();
  const auto s = score(net, *f.tree, w);
  EINEXPR_ASSERT(s.has_value(), "reconfigure: a subtree broke the memory limit");
  f.value = *s;
  return f;
}

}  // namespace einexpr::order::detail
