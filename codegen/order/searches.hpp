#pragma once
// The searches of codegen/order, each on a Network (network.hpp) under Weights:
//   subset_dp     exact over every tree of up to ~16 items (all 3^k splits): small einsums,
//                 and the subtrees the reconfiguration re-optimizes
//   chain_dp      the O(n^3) matrix-chain program, when the network is a chain
//   connected_dp  exact over connected subsets (with outer products where they can pay),
//                 under a cost cap: up to ~30 operands
//   greedy, random_greedy, reconfigure: the heuristic beyond
// Each returns trees over the network's leaves (Tree: Path-style steps).
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "order/network.hpp"

namespace einexpr::order::detail {

/// The wall clock a search may use; searches poll expired() between units of work.
class Deadline {
 public:
  explicit Deadline(double seconds)  // clamped to [0, 10^6] (NaN: 0)
      : end_(std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(
                 seconds > 0 ? (seconds < 1e6 ? seconds : 1e6) : 0.0))) {}
  bool expired() const { return std::chrono::steady_clock::now() >= end_; }
  /// A deadline `share` of the way from now to this one.
  Deadline part(double share) const {
    return Deadline(share * std::chrono::duration<double>(end_ - std::chrono::steady_clock::now()).count());
  }

 private:
  std::chrono::steady_clock::time_point end_;
};

/// A search's answer: the tree (if one was found within the limits) and its score.
struct Found {
  std::optional<Tree> tree;
  SatCount value = 0;
};

// ---- subset_dp.cpp -------------------------------------------------------------------
inline constexpr int kSubsetDpMax = 16;
/// Items (what each holds) to be contracted into one node; `outside`: the classes the
/// output or anything outside the items needs; `root`: the result is the final one.
struct Items {
  std::vector<AxisSet> sets;
  AxisSet outside;
  bool root = true;
};
/// Exact over all trees of the items. Steps use ids 0..k-1 for the items.
Found subset_dp(const Network& net, const Items& items, const Weights& w);
/// The items of the whole network (its leaves, root = true).
Items all_leaves(const Network& net);

// ---- chain_dp.cpp --------------------------------------------------------------------
/// The leaves in chain order when the network is a matrix chain (README), else nullopt.
std::optional<std::vector<int>> chain_order(const Network& net);
/// The textbook O(n^3) program over the chain (FLOPs objective, no memory limit).
Found chain_dp(const Network& net, const std::vector<int>& order);

// ---- connected_dp.cpp ----------------------------------------------------------------
struct DpLimits {
  SatCount cap;            // states scoring more are dropped
  std::size_t max_work;    // the search gives up past this many candidates looked at,
  std::size_t max_states;  // or this many states kept (memory: about 1 KB each at worst),
  const Deadline* deadline;  // or at this time
};
struct DpResult {
  Found found;
  bool gave_up = false;    // the deadline or the state limit stopped it
  std::size_t states = 0;  // kept, for the benchmark's notes
};
DpResult connected_dp(const Network& net, const Weights& w, const DpLimits& limits);

// ---- greedy.cpp ----------------------------------------------------------------------
/// opt_einsum's greedy: among pairs sharing an axis, the one whose result shrinks the
/// memory most (size of the result less the sizes of the pair), ties to the cheaper step;
/// outer products of the smallest when no pair shares one. Honours w.limit (nullopt when
/// it cannot).
Found greedy(const Network& net, const Weights& w);
/// Greedy with the choice perturbed (Boltzmann noise on the score, cotengra's idea).
Found random_greedy(const Network& net, const Weights& w, std::uint64_t seed, double temperature);

// ---- reconfigure.cpp -----------------------------------------------------------------
/// Re-optimizes every subtree of up to `leaves` items exactly (subset_dp) until no subtree
/// improves or the deadline passes (cotengra's subtree reconfiguration).
Found reconfigure(const Network& net, const Tree& tree, const Weights& w, int leaves, const Deadline& deadline);

// ---- heuristic.cpp ------------------------------------------------------------------
struct HeuristicWork {
  int restarts = 32;   // random-greedy runs after the greedy
  int polished = 4;    // the best trees reconfigured
  int leaves = 8;      // subtree size of the reconfiguration
  int final_leaves = 0;  // then the best tree again with subtrees this large (0: not)
  std::uint64_t seed = 1;
};
/// The best of greedy, `restarts` random greedies and their reconfigurations (nullopt tree
/// when none meets the memory limit).
Found heuristic(const Network& net, const Weights& w, const HeuristicWork& work, const Deadline& deadline);

}  // namespace einexpr::order::detail
