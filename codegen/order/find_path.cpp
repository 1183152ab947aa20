// find_path (order.hpp): picks the search (README, "Which search runs"), runs it on the
// Network, and reports the tree's counts as evaluate() computes them on the Problem itself.
#include <chrono>

#include "einexpr/runtime/error.hpp"
#include "order/network.hpp"
#include "order/order.hpp"
#include "order/searches.hpp"

namespace einexpr::order {

namespace {

using namespace detail;

inline constexpr int kExhaustiveMax = 10;      // subset_dp on the whole network up to here
inline constexpr std::size_t kDpStates = 300'000;  // connected_dp's memory bound

double default_budget(int n) { return std::min(3.0, 0.1 + n * n / 500.0); }

struct Solved {
  std::optional<Tree> tree;
  bool exact = false;
  std::string method;
};

std::vector<std::pair<int, int>> left_to_right(int n) {
  std::vector<std::pair<int, int>> steps;
  for (int i = 1; i < n; ++i) steps.emplace_back(i == 1 ? 0 : n + i - 2, i);
  return steps;
}

/// The heuristic's work: `full` as it runs alone, else the quick bound for the exact search.
HeuristicWork work_for(const Network& net, const Options& o, bool full) {
  HeuristicWork work;
  work.seed = o.seed;
  work.restarts = full ? 16 + net.n / 2 : 16;
  work.polished = full ? 4 : 2;
  work.leaves = full ? 8 : 6;
  work.final_leaves = full ? 10 : 0;
  return work;
}

/// The best tree under w by the exact searches where they apply, else the heuristic.
Solved solve(const Network& net, const Weights& w, const Options& o, const Deadline& deadline) {
  const char* const heuristic_name = "random greedy + reconfiguration";
  const bool plain = w.objective == Objective::flops && !w.limit;
  if (plain && net.bond_regime)  // polynomial: at any length
    if (const auto order = chain_order(net)) return {chain_dp(net, *order).tree, true, "matrix chain"};
  if (net.n > o.exact_limit) {
    if (!o.given.empty()) {  // the given tree or greedy's, whichever scores better
      Tree given{o.given};
      const std::optional<SatCount> value = score(net, given, w);
      Found g = greedy(net, w);
      if (g.tree && (!value || g.value < *value)) return {std::move(g.tree), false, "greedy"};
      return {std::move(given), false, o.given_method};
    }
    return {heuristic(net, w, work_for(net, o, true), deadline).tree, false, heuristic_name};
  }
  if (net.n <= kExhaustiveMax) return {subset_dp(net, all_leaves(net), w).tree, true, "exhaustive"};
  // An upper bound first, then the exact program with it as the cap. Past 20 operands the
  // program's time grows fast with the cap: the full heuristic's bound pays for itself.
  const bool full = net.n > 20;
  Found bound = heuristic(net, w, work_for(net, o, full), deadline);
  const Deadline dp_deadline = deadline.part(0.8);  // the rest for the heuristic, if need be
  DpResult dp = connected_dp(net, w, {bound.tree ? bound.value : SatCount::max(), o.exact_work, kDpStates, &dp_deadline});
  if (dp.found.tree && (!bound.tree || !(bound.value < dp.found.value)))
    return {std::move(dp.found.tree), plain && net.bond_regime, "dynamic programming"};
  if (!dp.gave_up) return {std::move(bound.tree), false, heuristic_name};
  if (!full) {
    Found more = heuristic(net, w, work_for(net, o, true), deadline);
    if (more.tree && (!bound.tree || more.value < bound.value)) bound = std::move(more);
  }
  return {std::move(bound.tree), false, "random greedy + reconfiguration (the exact search gave up)"};
}

[[noreturn]] void refuse(const Network& net, const Options& o, const Deadline& deadline) {
  Options peak = o;
  peak.objective = Objective::largest_intermediate;
  peak.memory_limit.reset();
  const Weights w = weights_for(peak, net);
  const Solved s = solve(net, w, peak, deadline);
  EINEXPR_ASSERT(s.tree.has_value(), "order: no tree without a memory limit");
  const SatCount least = *score(net, *s.tree, w) * net.factor;
  throw ShapeError("no contraction order keeps every intermediate within " + o.memory_limit->str() +
                   " elements: the smallest largest intermediate " + (s.exact ? "is " : "the search found is ") +
                   least.str() + " elements");
}

Solved run(const Network& net, const Options& o, const Deadline& deadline) {
  Weights w = weights_for(o, net);
  if (o.method == ContractionOrder::greedy) return {greedy(net, w).tree, false, "greedy"};
  if (w.objective != Objective::largest_intermediate) return solve(net, w, o, deadline);
  // The smallest peak first, then the fewest FLOPs within it.
  const Solved peak = solve(net, w, o, deadline);
  if (!peak.tree) return peak;
  Weights flops = w;
  flops.objective = Objective::flops;
  flops.limit = *score(net, *peak.tree, w);
  Solved s = solve(net, flops, o, deadline);
  s.exact = s.exact && peak.exact;
  return s;
}

}  // namespace

Path find_path(const Problem& problem, const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  const Network net = build_network(problem);
  const Deadline deadline(o.time_budget_s < 0 ? default_budget(net.n) : o.time_budget_s);
  Solved s;
  if (net.n <= 2) {
    s = {Tree{net.n == 2 ? std::vector<std::pair<int, int>>{{0, 1}} : std::vector<std::pair<int, int>>{}}, true,
         net.n == 2 ? "one pair" : "one operand"};
  } else if (o.method == ContractionOrder::naive) {
    s = {Tree{left_to_right(net.n)}, false, "left to right"};
  } else if (net.factor == SatCount(0)) {
    s = {Tree{left_to_right(net.n)}, true, "any order (an axis of length 0 is in every step)"};
  } else {
    s = run(net, o, deadline);
    if (!s.tree) refuse(net, o, deadline);
  }
  Path path = evaluate(problem, s.tree->steps);
  if (o.memory_limit && *o.memory_limit < path.largest_intermediate) {
    if (o.method != ContractionOrder::naive) EINEXPR_ASSERT(false, "order: a search broke the memory limit");
    throw ShapeError("left to right needs an intermediate of " + path.largest_intermediate.str() +
                     " elements, over the memory limit of " + o.memory_limit->str());
  }
  path.method = std::move(s.method);
  path.exact = s.exact;
  path.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return path;
}

}  // namespace einexpr::order
