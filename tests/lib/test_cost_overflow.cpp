// Every einsum that runs is costed: opt_einsum's rand_equation(64, 3, n_out=2) einsums
// (sizes 2-6, seeds 1-3; rand_equation_64.inc, made by rand_equation_64.py with numpy's
// generator exactly as opt_einsum's) have a naive count near 2^190 and a plan that costs
// under 2^30 FLOPs: they are costed and planned, the naive count is "2^128 or more", and the
// left-to-right figure in the plan's note is Python's exact count.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "einexpr/einexpr.hpp"
#include "count_printing.hpp"

using namespace einexpr;

namespace {

struct Row {
  const char* pattern;
  const char* lengths;  // "a=3,b=4,..."
  const char* naive;    // numpy's naive count, exact decimal (past 2^128)
  const char* left;     // left to right in einexpr's convention, exact decimal
  int seed;
};

const Row rows[] = {
#include "rand_equation_64.inc"
};

AxisLengths sizes_of(const std::string& text) {
  AxisLengths out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto eq = item.find('=');
    out.emplace_back(item.substr(0, eq), std::stoll(item.substr(eq + 1)));
  }
  return out;
}

/// a >= b for non-negative decimal digit strings without leading zeros.
bool at_least(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() > b.size() : a >= b;
}

const std::string two_to_128 = "340282366920938463463374607431768211456";

}  // namespace

TEST_CASE("opt_einsum's 64-operand random einsums are costed, their naive count 2^128 or more", "[cost][overflow]") {
  REQUIRE(std::size(rows) == 3);
  for (const Row& r : rows) {
    CAPTURE(r.seed);
    const AxisLengths sizes = sizes_of(r.lengths);
    REQUIRE(sizes.size() == 98);  // 64 * 3 / 2 summed axes + 2 output axes
    REQUIRE(at_least(r.naive, two_to_128));  // so the figure cannot be given exactly
    const Cost c = cost_einsum(r.pattern, sizes);
    CHECK_FALSE(c.naive_flops.has_value());
    CHECK(str(c.naive_flops) == "2^128 or more");
    // The plan's own counts: exact, the steps adding up, numpy's model of its path the same
    // (every summed axis is in two operands: nothing is summed early).
    Count steps;
    for (const StepCost& s : c.steps) steps += s.flops;
    CHECK(steps == c.flops);
    CHECK(c.flops > Count(0));
    CHECK(c.flops < Count(1) * Count(1ULL << 32));
    REQUIRE(c.flops_numpy.has_value());
    CHECK(*c.flops_numpy == c.flops);
    CHECK(c.macs > Count(0));
    CHECK(c.flops_exact <= c.flops);
    // explain's plan: its note gives left to right exactly as Python counts it, far above the
    // order chosen.
    const Plan plan = plan_from_sizes("einsum", r.pattern, sizes);
    const std::string text = plan.str();
    const auto note = text.find("; left to right (");
    REQUIRE(note != std::string::npos);
    const auto colon = text.find("): ", note);
    REQUIRE(colon != std::string::npos);
    const std::string left = text.substr(colon + 3, text.find('\n', colon) - colon - 3);
    CHECK(left == r.left);
    CHECK(at_least(left, c.flops.str()));
    CHECK(text.find("): " + c.flops.str() + " FLOPs (random greedy") != std::string::npos);  // the order chosen
    // The backward pass: 64 gradients, each an einsum of the other 63 operands and dY.
    const BackwardCost b = backward_cost(plan);
    CHECK(b.gradients.size() == 64);
    for (const GradientCost& g : b.gradients) CHECK_FALSE(g.cost.naive_flops.has_value());
  }
}

TEST_CASE("a chain whose loop nest passes 2^128: the plan is costed, left to right says 2^128 or more", "[cost][overflow]") {
  // Ten axes of 2^22: one loop nest over all of them is 2^220 · 10 iterations' work, and
  // left to right's second step (an outer product, then a contraction over a b c d e f) is
  // 2 · 2^132; the chain's order costs 2 · 2^66 a step.
  const std::string pattern = "a b, c d, e f, b c, d e, f g, g h, h i, i j -> a j";
  AxisLengths sizes;
  for (const char* axis : {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}) sizes.emplace_back(axis, 1 << 22);
  const Cost c = cost_einsum(pattern, sizes);
  CHECK_FALSE(c.naive_flops.has_value());
  REQUIRE(c.flops_numpy.has_value());
  CHECK(c.flops == Count(8) * Count(2) * Count(1ULL << 44) * Count(1ULL << 22));  // 8 steps of 2·a·x·y
  const std::string text = plan_from_sizes("einsum", pattern, sizes).str();
  CAPTURE(text);
  CHECK(text.find("; left to right ((((((((1 2) 3) 4) 5) 6) 7) 8) 9): 2^128 or more") != std::string::npos);
}
