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
  const detail::DpResult r = detail::connected_dp(net, w, {SatCount::max(), SIZE_MAX, SIZE_MAX, &forever});
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
      const Path exact = find_path(p, order_testing::unhurried());
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

TEST_CASE("independent groups contract separately and meet last, at the optimum", "[order]") {
  // Groups whose results are not scalars: each group's steps first, then k - 1 meetings. The
  // optimum: every tree up to 10 operands (exhaustive), subset_dp on the whole network beyond.
  const std::vector<std::vector<int>> sizes = {{3, 4}, {5, 5}, {3, 3, 4}, {6, 7}, {4, 4, 5}, {2, 5, 6}};
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    std::vector<Problem> parts;
    for (std::size_t g = 0; g < sizes[c].size(); ++g)
      parts.push_back(rand_equation(sizes[c][g], 3, 1 + static_cast<int>(g % 2), c * 10 + g + 1));
    const order_testing::Union u = order_testing::disjoint_union(parts, c + 5);
    const Problem& p = u.problem;
    CAPTURE(c, show(p));
    const Path path = find_path(p, order_testing::unhurried());
    CHECK(path.exact);
    CHECK(path.method == (p.operands.size() <= 10 ? "exhaustive" : "dynamic programming"));  // groups apart: connected_dp_top
    if (p.operands.size() <= 10) {
      CHECK(path.flops == *exhaustive(p));
    } else {
      const detail::Network net = detail::build_network(p);
      const detail::Found all = detail::subset_dp(net, detail::all_leaves(net), detail::weights_for(Options{}, net));
      REQUIRE(all.tree);
      CHECK(path.flops == evaluate(p, all.tree->steps).flops);
    }
    // Each node's group, -1 for a node of two or more groups: k groups meeting only after
    // each is contracted to one node take exactly k - 1 steps with a -1 or mixed input.
    std::vector<int> group = u.group;
    for (const auto& [x, y] : path.steps) {
      const int gx = group[static_cast<std::size_t>(x)], gy = group[static_cast<std::size_t>(y)];
      group.push_back(gx == gy ? gx : -1);
    }
    CHECK(std::count(group.begin(), group.end(), -1) == static_cast<long>(sizes[c].size()) - 1);
  }
}

TEST_CASE("a group with a scalar result: still the optimum", "[order]") {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const order_testing::Union u =
        order_testing::disjoint_union({rand_equation(4, 3, 0, seed), rand_equation(5, 3, 2, seed + 10)}, seed);
    CAPTURE(seed, show(u.problem));
    const Path path = find_path(u.problem);
    CHECK(path.flops == *exhaustive(u.problem));
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

TEST_CASE("FLOPs + alpha·bytes matches the exhaustive search", "[order]") {
  for (int n = 3; n <= 8; ++n)
    for (std::uint64_t seed = 1; seed <= 6; ++seed)
      for (double alpha : {0.25, 1.0, 100.0}) {
        const Problem p = seed % 2 ? rand_equation(n, 3, 2, seed) : general_problem(n, seed);
        CAPTURE(n, seed, alpha, show(p));
        Options o;
        o.objective = Objective::flops_and_bytes;
        o.alpha = alpha;
        o.element_bytes = 2;
        const Path path = find_path(p, o);
        const auto weight = static_cast<std::uint64_t>(alpha * 2 * 65536);
        CHECK(path.flops * SatCount(65536) + SatCount(weight) * path.elements_written ==
              *exhaustive(p, Goal::flops_and_bytes, std::nullopt, weight));
      }
}

TEST_CASE("more than 64 axis classes: multiword bitsets in every search", "[order]") {
  // Axes held by triples of operands: each triple a class of its own.
  for (const auto& [n, triples] : {std::pair{9, 80}, std::pair{12, 150}}) {
    const Problem p = order_testing::many_classes(n, triples, 3);
    CAPTURE(n, triples);
    REQUIRE(detail::build_network(p).words >= 2);
    const detail::Network net = detail::build_network(p);
    const detail::Weights w = detail::weights_for(Options{}, net);
    const detail::Found all = detail::subset_dp(net, detail::all_leaves(net), w);
    REQUIRE(all.tree);
    const SatCount best = evaluate(p, all.tree->steps).flops;
    if (n <= 9) CHECK(best == *exhaustive(p));
    CHECK(find_path(p, order_testing::unhurried()).flops == best);  // a connected network: the dynamic program, exact here
    Options h;
    h.exact_limit = 0;
    CHECK(best <= find_path(p, h).flops);
  }
}

TEST_CASE("orders are deterministic, and Path's counts are evaluate()'s", "[order]") {
  for (int n : {12, 40}) {
    const Problem p = rand_equation(n, 3, 2, 9);
    const Options o = order_testing::unhurried();
    const Path a = find_path(p, o), b = find_path(p, o);
    CHECK(a.steps == b.steps);
    const Path e = evaluate(p, a.steps);
    CHECK(a.flops == e.flops);
    CHECK(a.largest_intermediate == e.largest_intermediate);
    CHECK(a.elements_written == e.elements_written);
    CHECK(a.text == e.text);
  }
}

TEST_CASE("one and two operands need no search", "[order]") {
  Problem one{{{0, 1}}, {1}, {3, 4}};  // axis 0 is summed inside the operand: no step
  const Path p1 = find_path(one);
  CHECK(p1.steps.empty());
  CHECK(p1.text == "1");
  CHECK(p1.flops == SatCount(0));
  Problem two{{{0, 1}, {1, 2}}, {0, 2}, {3, 4, 5}};
  const Path p2 = find_path(two);
  CHECK(p2.steps == std::vector<std::pair<int, int>>{{0, 1}});
  CHECK(p2.flops == SatCount(2 * 3 * 4 * 5));
  CHECK(p2.exact);
}

TEST_CASE("counts saturate at 2^128 instead of wrapping", "[order]") {
  const SatCount big = SatCount(1ull << 63) * SatCount(1ull << 63);  // 2^126
  CHECK_FALSE(big.saturated());
  CHECK((big * SatCount(4)).saturated());
  CHECK((big + big + big + big).saturated());
  CHECK((big * SatCount(4)).str() == "2^128 or more");
  CHECK_THROWS_WITH((big * SatCount(4)).count(), Catch::Contains("2^128"));
  CHECK(big.count().str() == "85070591730234615865843651857942052864");
  // 40 operands with every length 2^40: the search compares saturated costs, and says so.
  Problem p = rand_equation(40, 3, 2, 1);
  for (auto& l : p.lengths) l = std::int64_t(1) << 40;
  const Path path = find_path(p);
  CHECK(path.flops.saturated());
  CHECK(path.steps.size() == 39);
}

TEST_CASE("malformed problems and options are InternalErrors, an unmet limit a ShapeError", "[order]") {
  struct Bad {
    Problem p;
    const char* message;
  };
  const Bad bad[] = {
      {{{}, {}, {}}, "1 to 64 operands"},
      {{{{0, 5}}, {}, {2}}, "axis id out of range"},
      {{{{0, 0}}, {}, {2}}, "an axis twice in one operand"},
      {{{{0}}, {1}, {2, 3}}, "an output axis no operand holds"},
      {{{{0}}, {0, 0}, {2}}, "an axis twice in the output"},
      {{{{0}}, {}, {-1}}, "negative axis length"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.message);
    CHECK_THROWS_AS(find_path(b.p), einexpr::InternalError);
    CHECK_THROWS_WITH(find_path(b.p), Catch::Contains(b.message));
  }
  const Problem p = rand_equation(5, 3, 2, 1);
  Options o;
  o.alpha = -1;
  CHECK_THROWS_WITH(find_path(p, o), Catch::Contains("alpha"));
  CHECK_THROWS_WITH(evaluate(p, {{0, 1}}), Catch::Contains("n - 1 steps"));
  CHECK_THROWS_WITH(evaluate(p, {{0, 1}, {0, 2}, {5, 3}, {6, 4}}), Catch::Contains("not there"));
  // A memory limit no order meets: the smallest peak, found by each method.
  const SatCount peak = *exhaustive(p, Goal::peak);
  for (auto method : {einexpr::ContractionOrder::optimal, einexpr::ContractionOrder::greedy}) {
    Options lim;
    lim.method = method;
    lim.memory_limit = peak - SatCount(1);
    CHECK_THROWS_AS(find_path(p, lim), einexpr::ShapeError);
    CHECK_THROWS_WITH(find_path(p, lim), Catch::Contains("within " + (peak - SatCount(1)).str() + " elements") &&
                                             Catch::Contains("is " + peak.str() + " elements"));
  }
  Options naive;
  naive.method = einexpr::ContractionOrder::naive;
  naive.memory_limit = SatCount(1);
  CHECK_THROWS_WITH(find_path(p, naive), Catch::Contains("left to right needs an intermediate of"));
}
