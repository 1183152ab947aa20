// TCCG's 48 contractions (HPAC/tccg's benchmark, bench/suite_cases.py, at their benchmark
// sizes, f32, contiguous operands): the plan each takes, with the notes that say which path
// (a GEMM on the operands in place, a copy first and why, a strided view of the result), as
// committed in tccg_plans.inc by tests/codegen/support/make_tccg_plans.py from `einexpr
// explain`. A change of path is a diff to review; then the script is run again.
#include <catch2/catch.hpp>

#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/parse.hpp"
#include "search_time.hpp"

using namespace einexpr;

namespace {

struct TccgPlan {
  const char* suite;    // "intensli0"
  const char* name;     // TCCG's own: "abc-bda-dc"
  const char* pattern;  // row-major einsum
  const char* lengths;  // "c=24 a=384 ..."
  const char* plan;     // explain's plan text
};

const TccgPlan tccg[] = {
#include "tccg_plans.inc"
};

/// The shapes of the operands of "a d b, c d -> c b a" at `lengths`.
std::vector<Shape> operand_shapes(const std::string& pattern, const std::map<std::string, std::int64_t>& lengths) {
  std::vector<Shape> out;
  std::istringstream sides(pattern.substr(0, pattern.find("->")));
  for (std::string side; std::getline(sides, side, ',');) {
    std::istringstream names(side);
    Shape shape;
    for (std::string n; names >> n;) shape.push_back(lengths.at(n));
    out.push_back(shape);
  }
  return out;
}

}  // namespace

TEST_CASE("TCCG's 48 contractions: the plan each takes, and why, as committed", "[planner][golden][tccg]") {
  REQUIRE(std::size(tccg) == 48);
  int in_place = 0;
  for (const TccgPlan& c : tccg) {
    CAPTURE(c.suite, c.name, c.pattern, c.lengths);
    std::map<std::string, std::int64_t> lengths;
    std::istringstream in(c.lengths);
    for (std::string kv; in >> kv;) lengths[kv.substr(0, kv.find('='))] = std::stoll(kv.substr(kv.find('=') + 1));
    std::vector<Layout> layouts;
    for (const Shape& s : operand_shapes(c.pattern, lengths)) layouts.push_back(Layout::contiguous(s));
    const Plan plan = plan_einsum(parse(c.pattern), layouts, DType::f32);
    CHECK(testing_support::without_search_time(plan.str()) == c.plan);
    // every one is a single GEMM (batched or not): two operands, one contraction
    int contractions = 0, copies = 0;
    for (const Step& s : plan.steps) {
      contractions += std::holds_alternative<ContractStep>(s);
      copies += std::holds_alternative<CopyStep>(s);
    }
    CHECK(contractions == 1);
    in_place += copies == 0;
  }
  // how many read both operands in place today (the rest copy one first): a change shows here
  // too. 5 before the batched GEMMs over loop atoms (contract.cpp), 12 with them.
  CHECK(in_place == 12);
}
