// codegen/order inside the planner: the FLOPs the search reports are what cost() charges the
// plan it leads to (one convention), the note says which search ran, and the orders can be
// asked for. Problems become einsum patterns with axes named a0, a1, ...
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <string>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/parse.hpp"
#include "order/order.hpp"
#include "order_problems.hpp"
#include "search_time.hpp"

using namespace einexpr;
using order::Problem;

namespace {

std::string pattern_of(const Problem& p) {
  auto side = [](const std::vector<int>& axes) {
    std::string s;
    for (int a : axes) s += (s.empty() ? "a" : " a") + std::to_string(a);
    return s;
  };
  std::string text;
  for (const auto& o : p.operands) text += (text.empty() ? "" : ", ") + side(o);
  return text + " -> " + side(p.output);
}

Plan plan_of(const Problem& p, ContractionOrder order = ContractionOrder::optimal, const OrderGoal& goal = {}) {
  const ast::Pattern pattern = parse(pattern_of(p));
  check(pattern, Op::einsum);
  std::vector<Layout> in;
  for (const auto& o : p.operands) {
    Shape s;
    for (int a : o) s.push_back(p.lengths[static_cast<std::size_t>(a)]);
    in.push_back(Layout::contiguous(s));
  }
  OpSpec spec = OpSpec::einsum({}, goal, order);
  return plan(spec, &pattern, in, DType::f32);
}

/// The elements of each contraction's result, in step order (the last is the einsum's).
std::vector<std::int64_t> contraction_results(const Plan& plan) {
  std::vector<std::int64_t> sizes;
  for (const Step& s : plan.steps)
    if (const auto* c = std::get_if<ContractStep>(&s)) sizes.push_back(plan.value(c->dst).layout.numel());
  return sizes;
}

std::int64_t largest_intermediate(const Plan& plan) {
  std::vector<std::int64_t> sizes = contraction_results(plan);
  sizes.pop_back();  // the result itself is exempt
  return sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
}

}  // namespace

TEST_CASE("the search's FLOPs are what cost() charges the plan", "[order][planner]") {
  // Private axes are summed by the planner before the search and by the convention inside
  // an operand's first step: the same count either way.
  int checked = 0;
  for (int n = 3; n <= 12; ++n)
    for (std::uint64_t seed = 1; seed <= 4; ++seed)
      for (const Problem& p : {order_testing::rand_equation(n, 3, 2, seed), order_testing::general_problem(n, seed)}) {
        CAPTURE(pattern_of(p));
        const Plan planned = plan_of(p);
        REQUIRE(planned.contraction);
        CHECK(order::evaluate(p, planned.contraction->path).flops.count() == cost(planned).flops);
        ++checked;
      }
  CHECK(checked == 80);
}

TEST_CASE("64 operands: the search's count is exact and small, and cost() charges the same", "[order][planner]") {
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    CAPTURE(seed);
    // Index sizes 2-6 (where the old greedy built a 1e38-element intermediate): the plan is
    // built; cost() itself cannot be asked here, its numpy-naive count (the product of all
    // 98 lengths, times 64) passes 2^128.
    const Problem p = order_testing::rand_equation(64, 3, 2, seed);
    const order::Path path = order::find_path(p, order_testing::unhurried());
    CHECK(path.flops < order::SatCount(1'000'000'000'000ull));
    CHECK_NOTHROW(plan_of(p));
    // Index size 2: every count fits, and cost() agrees with the search's count of the
    // order the plan took.
    const Problem q = order_testing::rand_equation(64, 3, 2, seed, 2, 2);
    const Plan planned = plan_of(q);
    REQUIRE(planned.contraction);
    CHECK(order::evaluate(q, planned.contraction->path).flops.count() == cost(planned).flops);
  }
}

TEST_CASE("the plan's note names the search, its time and what left to right costs", "[order][planner]") {
  using testing_support::without_search_time;
  const Problem chain = order_testing::matrix_chain({64, 4, 64, 4});
  const std::string note = plan_of(chain).notes.at(0);
  CHECK(without_search_time(note) ==
        "contraction order (1 (2 3)): 4096 FLOPs (optimal: matrix chain, T ms); left to right ((1 2) 3): 65536");
  CHECK(std::regex_search(note, std::regex(R"(chain, [0-9.]+(e-[0-9]+)? ms\))")));  // a time, not a placeholder
  CHECK(without_search_time(plan_of(chain, ContractionOrder::naive).notes.at(0)) ==
        "contraction order ((1 2) 3): 65536 FLOPs (left to right, T ms); left to right ((1 2) 3): 65536");
  CHECK(without_search_time(plan_of(chain, ContractionOrder::greedy).notes.at(0)) ==
        "contraction order (1 (2 3)): 4096 FLOPs (greedy, T ms); left to right ((1 2) 3): 65536");
  const Problem p = order_testing::rand_equation(8, 3, 2, 5);
  CHECK_THAT(without_search_time(plan_of(p).notes.at(0)), Catch::Contains("FLOPs (optimal: exhaustive, T ms)"));
  const Problem q = order_testing::rand_equation(12, 3, 2, 5);  // small: the planner's budget never binds
  CHECK_THAT(plan_of(q).notes.at(0), Catch::Contains("FLOPs (optimal: dynamic programming, "));
}

TEST_CASE("the planner honours the order goal: a memory limit, or a refusal naming the least peak", "[order][planner]") {
  using order_testing::exhaustive;
  using order_testing::Goal;
  int checked = 0;
  for (int n = 4; n <= 8; ++n)
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const Problem p = order_testing::rand_equation(n, 3, 2, seed);
      CAPTURE(pattern_of(p));
      const order::SatCount peak = *exhaustive(p, Goal::peak);
      const std::int64_t least = std::stoll(peak.str());
      OrderGoal goal;
      goal.memory_limit = least;
      const Plan within = plan_of(p, ContractionOrder::optimal, goal);
      CHECK(largest_intermediate(within) <= least);
      CHECK(cost(within).flops.str() == exhaustive(p, Goal::flops, peak)->str());  // the fewest FLOPs within it
      goal.memory_limit = least - 1;
      CHECK_THROWS_AS(plan_of(p, ContractionOrder::optimal, goal), ShapeError);
      CHECK_THROWS_WITH(plan_of(p, ContractionOrder::optimal, goal),
                        Catch::Contains("within " + std::to_string(least - 1) + " elements") &&
                            Catch::Contains("the smallest largest intermediate is " + peak.str() + " elements"));
      goal.memory_limit.reset();
      goal.objective = OrderObjective::largest_intermediate;
      CHECK(largest_intermediate(plan_of(p, ContractionOrder::optimal, goal)) == least);
      ++checked;
    }
  CHECK(checked == 15);
}

TEST_CASE("the planner's FLOPs + alpha·bytes order is the exhaustive optimum, bytes by the dtype", "[order][planner]") {
  using order_testing::exhaustive;
  for (int n = 4; n <= 7; ++n)
    for (double alpha : {0.5, 8.0}) {
      const Problem p = order_testing::rand_equation(n, 3, 2, static_cast<std::uint64_t>(n));
      CAPTURE(pattern_of(p), alpha);
      OrderGoal goal;
      goal.objective = OrderObjective::flops_and_bytes;
      goal.alpha = alpha;
      const Plan planned = plan_of(p, ContractionOrder::optimal, goal);
      std::int64_t written = 0;
      for (std::int64_t e : contraction_results(planned)) written += e;
      const auto weight = static_cast<std::uint64_t>(alpha * 4 * 65536);  // f32: 4 bytes an element
      CHECK(cost(planned).flops * Count(65536) + Count(weight) * Count(static_cast<std::uint64_t>(written)) ==
            exhaustive(p, order_testing::Goal::flops_and_bytes, std::nullopt, weight)->count());
    }
}

TEST_CASE("order goals are part of the spec: printed, keyed, checked", "[order][planner]") {
  OpSpec plain = OpSpec::einsum();
  OpSpec limited = OpSpec::einsum({}, OrderGoal{OrderObjective::flops, 0, 4096});
  OpSpec by_bytes = OpSpec::einsum({}, OrderGoal{OrderObjective::flops_and_bytes, 0.5, std::nullopt});
  CHECK(limited.str() == "einsum (intermediates <= 4096 elements)");
  CHECK(by_bytes.str() == "einsum (order by FLOPs + 0.5 per byte)");
  std::string k1, k2, k3;
  plain.append_key(k1);
  limited.append_key(k2);
  by_bytes.append_key(k3);
  CHECK(k1 != k2);
  CHECK(k1 != k3);
  CHECK(k2 != k3);
  const Problem p = order_testing::rand_equation(3, 3, 2, 1);
  for (const OrderGoal& bad : {OrderGoal{OrderObjective::flops_and_bytes, -1, std::nullopt},
                               OrderGoal{OrderObjective::flops, 0, -5}}) {
    CHECK_THROWS_AS(plan_of(p, ContractionOrder::optimal, bad), Error);
    CHECK_THROWS_WITH(plan_of(p, ContractionOrder::optimal, bad), Catch::Contains(bad.alpha < 0 ? "alpha" : "memory limit"));
  }
}
