#pragma once
// Private to connected_dp*.cpp: the dynamic program over the connected subsets of one
// component of the network (README, "Connected-subset dynamic programming").
#include <cstdint>
#include <functional>
#include <vector>

#include "order/searches.hpp"

namespace einexpr::order::detail {

/// How a state was reached: a leaf, a pair of states, a cluster (a state z and pieces that
/// each touch z and not one another, multiplied together first), or (with the scalar σ
/// inside) σ multiplied into the state's own result.
struct Split {
  enum Kind : std::uint8_t { leaf, pair, cluster, absorb } kind = leaf;
  std::uint8_t sigma_in_b = 0;  // σ: in b (pair) / in the pieces (cluster), else in a / z
  int a = -1, b = -1;           // pair: the two states; cluster: z, and where its pieces are
};

struct State {
  Mask mask = 0;           // its leaves
  int count = 0;           // how many
  Mask nbr = 0;            // leaves outside it that share an axis with it
  SatCount size = 1;       // elements of its result
  SatCount value[2];       // without / with σ inside
  SatCount least;          // the smaller of the two (once final)
  bool ok[2] = {false, false};
  Split split[2];
};

/// Open addressing from a leaf mask to a state id.
class MaskIndex {
 public:
  MaskIndex() : keys_(1024, 0), ids_(1024, -1) {}
  int find(Mask m) const;
  void insert(Mask m, int id);

 private:
  std::vector<Mask> keys_;
  std::vector<int> ids_;
  std::size_t used_ = 0;
};

/// The two scores (without / with σ inside) of a step joining parts a and b, each with its
/// two scores: σ may be in a or in b (in_b), whichever is cheaper.
struct Joined {
  SatCount value[2];
  bool ok[2] = {false, false};
  std::uint8_t in_b = 0;
};
inline Joined join(const Weights& w, bool sigma, const SatCount a[2], const bool a_ok[2], const SatCount b[2],
                   const bool b_ok[2], SatCount step) {
  Joined j;
  j.value[0] = w.combine(w.combine(a[0], b[0]), step);
  j.ok[0] = a_ok[0] && b_ok[0];
  if (!sigma) return j;
  const bool in_a = a_ok[1] && b_ok[0], in_b = a_ok[0] && b_ok[1];
  const SatCount va = in_a ? w.combine(a[1], b[0]) : SatCount::max();
  const SatCount vb = in_b ? w.combine(a[0], b[1]) : SatCount::max();
  j.in_b = in_b && (!in_a || vb < va);
  j.ok[1] = in_a || in_b;
  j.value[1] = w.combine(j.in_b ? vb : va, step);
  return j;
}

/// A factor of an outer product: its size, its score without / with σ inside.
struct Part {
  SatCount size;
  SatCount value[2];
  bool ok[2];
};
inline constexpr unsigned kMaxParts = 12;  // outer products are optimized exactly up to here
inline constexpr std::size_t kMaxPieces = 8;  // the most pieces in one cluster

/// The best trees multiplying parts together (no axis shared), over all 2^r subsets; with
/// `sigma` also with σ inside one part; `top`: the product is the final result, and σ may
/// be multiplied into any partial product (split[1] = 0 there).
struct OuterTable {
  unsigned full = 0;
  std::vector<SatCount> size;
  std::vector<SatCount> value[2];
  std::vector<bool> ok[2];
  std::vector<unsigned> split[2];
  std::vector<std::uint8_t> in_b;  // with σ: σ is in the split's second part
};
OuterTable outer_table(const std::vector<Part>& parts, const Weights& w, bool sigma, bool top);
/// Emits a table's tree: part(i, with σ) emits part i, add(a, b) appends a step.
int emit_outer_table(const OuterTable& t, bool with_sigma, const std::function<int(unsigned, bool)>& part,
                     const std::function<int(int, int)>& add, int sigma_node);

/// One component's program: `sigma` adds a second value per state (a scalar factor made
/// elsewhere multiplied in somewhere); `root_last`: the component's result is the final one.
class ComponentDp {
 public:
  ComponentDp(const Network& net, const Weights& w, const DpLimits& limits, Mask component, bool sigma,
              bool root_last);
  /// false: gave up (deadline, state limit). found() tells whether the component's own
  /// state was reached under the cap.
  bool run();
  bool found() const { return top_ >= 0; }
  const State& top() const { return states_[static_cast<std::size_t>(top_)]; }
  std::size_t states() const { return states_.size(); }
  /// Appends the top state's steps (with σ: `sigma_node` multiplied in) to `tree`; returns
  /// the node id of its result. `next`: the next node id.
  int emit(Tree& tree, int& next, bool with_sigma, int sigma_node) const;

 private:
  struct Held {  // a final state in a leaf's list (Held_list)
    int id;
    std::uint64_t res0;  // the first word of its result's classes
    SatCount size;
  };
  const std::uint64_t* res(int id) const { return &res_[static_cast<std::size_t>(id) * words_]; }
  int leaf_state(int leaf);
  bool offer(Mask m, Mask nbr, const std::uint64_t* res_p, SatCount size, const SatCount v[2], const bool ok[2],
             Split split);
  void note_eligible(int z, int piece);
  bool pair(int x, int b, SatCount only_b);
  /// What a partner of x may add: its score plus unit · |x ∪ b| / |x| at most room;
  /// |x ∪ b| / |x| at most max_only (UINT64_MAX: no bound in 64 bits).
  struct Reach {
    SatCount room;
    SatCount unit = 0;
    std::uint64_t max_only = UINT64_MAX;
  };
  Reach reach_of(const State& X) const;
  void visit(int x, const Held& h, SatCount least_b, const Reach& reach);
  void scan(int x);
  void clusters(int level);
  struct Eligible {
    int id, count;
    SatCount least;  // its smaller score
    SatCount extra;  // the product over the axes the piece holds and z does not
  };
  struct Partial;  // a cluster being chosen
  SatCount least(int id) const { return states_[static_cast<std::size_t>(id)].least; }
  SatCount bound(SatCount values, SatCount outer, SatCount merged) const;
  void dfs(int z, std::size_t from, std::size_t end, std::vector<int>& pieces, const Partial& partial);
  void cluster(int z, const std::vector<int>& pieces);
  /// The pieces multiplied together: their size and scores (ok false: none fits).
  Joined product(const std::vector<int>& pieces, SatCount& size) const;
  struct Emitter;
  int emit_state(Emitter& e, int id, bool with_sigma) const;
  void finalize(int level);
  bool tick();
  SatCount absorb_step(SatCount size) const { return w_.step(size, size, false); }
  bool is_last(Mask m) const { return m == component_ && root_last_; }
  void kept(const std::uint64_t* u, Mask inside, std::uint64_t* dst) const;
  SatCount size_of(const std::uint64_t* s) const;

  const Network& net_;
  Weights w_;
  DpLimits limits_;
  Mask component_;
  bool sigma_, root_last_;
  bool no_zero_;     // no axis of length 0: products only grow as factors join
  bool swap_prune_;  // and FLOPs, no memory limit: skip clusters that cannot pay
  /// The least FLOPs per element of x ∪ b a scanned pair costs: 2 in the bond regime (two
  /// states sharing an axis sum it: its only other holder is inside the pair), else 1.
  SatCount pair_factor_;
  std::size_t words_;
  std::vector<std::uint64_t> length64_;  // the classes' lengths, UINT64_MAX where larger
  std::vector<State> states_;
  std::vector<std::uint64_t> res_;
  MaskIndex index_;
  std::vector<std::vector<int>> pending_;                // states created, by size
  std::vector<std::vector<int>> level_;                  // final states, by size
  /// The final states of one size holding leaf v, in buckets by which of v's first few
  /// neighbouring leaves they hold (a state holding one of x's leaves cannot pair with x:
  /// whole buckets are skipped), each bucket by score; what a scan reads, side by side.
  struct Held_list {
    std::vector<Mask> mask;
    std::vector<SatCount> least;
    std::vector<Held> held;
    std::vector<std::uint32_t> bucket;  // bucket i is [bucket[i], bucket[i + 1])
  };
  std::uint32_t pattern(int v, Mask m) const;
  std::vector<std::vector<Held_list>> by_leaf_;  // [leaf][size]
  std::vector<std::vector<int>> near_;            // [leaf]: up to 6 neighbouring leaves
  std::vector<std::vector<Eligible>> eligible_;          // by state: its possible pieces, by count
  std::vector<int> pieces_;                              // clusters' pieces: count, ids...
  std::vector<std::uint64_t> scratch_u_, scratch_r_;
  std::size_t work_ = 0;
  bool gave_up_ = false;
  int top_ = -1;
};

}  // namespace einexpr::order::detail
