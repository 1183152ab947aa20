// codegen/order: every search against the exhaustive reference (support/order_problems.hpp)
// on random problems, and against each other where the reference is too slow.
#include <catch2/catch.hpp>

#include "einexpr/runtime/error.hpp"
#include "order/network.hpp"
#include "order/order.hpp"
#include "order/searches.hpp"
#include "order_problems.hpp"

using namespace einexpr::order;
using order_testing::exhaustive;
using order_testing::general_problem;
using order_testing::Goal;
using order_testing::rand_equation;

namespace {

/// connected_dp alone, with no cap (the whole family), as find_path runs it.
std::optional<SatCount> dp_flops(const Problem& p) {
  const detail::Network net = detail::build_network(p);
  const detail::Deadline forever(1e9);
  const detail::Weights w = detail::weights_for(Options{}, net);
  const detail::DpResult r = detail::connected_dp(net, w, {SatCount::max(), SIZE_MAX, &forever});
  if (!r.found.tree) return std::nullopt;
  return evaluate(p, r.found.tree->steps).flops;
}

std::string show(const Problem& p) {
  std::string s;
  for (const auto& o : p.operands) {
    s += s.empty() ? "" : ", ";
    for (int a : o) s += std::to_string(a) + ":" + std::to_string(p.lengths[static_cast<std::size_t>(a)]) + " ";
  }
  s += "->";
  for (int a : p.output) s += " " + std::to_string(a);
  return s;
}

}  // namespace

TEST_CASE("find_path: the optimum of every tree, up to 9 operands", "[order]") {
  int checked = 0;
  for (int n = 3; n <= 9; ++n)
    for (std::uint64_t seed = 1; seed <= 12; ++seed)
      for (const Problem& p : {rand_equation(n, 3, 2, seed), general_problem(n, seed, seed % 4 == 0)}) {
        CAPTURE(n, seed, show(p));
        const Path path = find_path(p);
        CHECK(path.exact);
        CHECK(path.flops == *exhaustive(p));
        CHECK(path.flops == evaluate(p, path.steps).flops);
        ++checked;
      }
  CHECK(checked == 168);
}

TEST_CASE("connected_dp: the optimum in the bond regime, a valid tree outside it", "[order]") {
  // In the bond regime (every summed axis in two operands, output axes in one, lengths >= 2)
  // the family connected_dp searches holds an optimal tree (README); outside it, it may not.
  int regime = 0, outside = 0;
  for (int n = 3; n <= 9; ++n)
    for (std::uint64_t seed = 1; seed <= 15; ++seed) {
      for (const auto& [reg, n_out] : {std::pair{3, 2}, std::pair{4, 3}, std::pair{2, 0}}) {
        const Problem p = rand_equation(n, reg, n_out, seed * 7 + static_cast<std::uint64_t>(reg));
        CAPTURE(n, seed, reg, show(p));
        REQUIRE(detail::build_network(p).bond_regime);
        CHECK(dp_flops(p) == exhaustive(p));
        ++regime;
      }
      const Problem g = general_problem(n, seed + 1000);
      CAPTURE(n, seed, show(g));
      const auto dp = dp_flops(g);
      if (dp) CHECK(*exhaustive(g) <= *dp);
      outside += dp.has_value();
    }
  CHECK(regime == 315);
  CHECK(outside > 60);
}

TEST_CASE("connected_dp agrees with the exhaustive search on 10 to 13 operands", "[order]") {
  for (int n = 10; n <= 13; ++n)
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const Problem p = rand_equation(n, 3, 2, seed + 77);
      CAPTURE(n, seed, show(p));
      const detail::Network net = detail::build_network(p);
      const detail::Weights w = detail::weights_for(Options{}, net);
      const detail::Found all = detail::subset_dp(net, detail::all_leaves(net), w);
      REQUIRE(all.tree);
      CHECK(dp_flops(p) == evaluate(p, all.tree->steps).flops);
    }
}

TEST_CASE("the heuristic never beats the exact search (14 to 24 operands)", "[order]") {
  for (int n : {14, 18, 24})
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      const Problem p = rand_equation(n, 3, 2, seed);
      CAPTURE(n, seed, show(p));
      const Path exact = find_path(p);
      REQUIRE(exact.exact);
      Options h;
      h.exact_limit = 0;  // the heuristic alone
      const Path heur = find_path(p, h);
      CHECK_FALSE(heur.exact);
      CHECK(exact.flops <= heur.flops);
      Options g;
      g.method = einexpr::ContractionOrder::greedy;
      CHECK(heur.flops <= find_path(p, g).flops);
    }
}

TEST_CASE("the largest intermediate, and FLOPs under a memory limit, match the exhaustive search", "[order]") {
  for (int n = 3; n <= 8; ++n)
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      const Problem p = seed % 2 ? rand_equation(n, 3, 2, seed) : general_problem(n, seed);
      CAPTURE(n, seed, show(p));
      const SatCount peak = *exhaustive(p, Goal::peak);
      Options o;
      o.objective = Objective::largest_intermediate;
      const Path small = find_path(p, o);
      CHECK(small.largest_intermediate == peak);
      CHECK(small.flops == *exhaustive(p, Goal::flops, peak));  // then the fewest FLOPs
      Options lim;
      lim.memory_limit = peak;
      CHECK(find_path(p, lim).flops == *exhaustive(p, Goal::flops, peak));
      if (peak > SatCount(0)) {
        lim.memory_limit = peak - SatCount(1);
        CHECK_THROWS_WITH(find_path(p, lim), Catch::Contains("the smallest largest intermediate is " + peak.str()));
      }
    }
}
