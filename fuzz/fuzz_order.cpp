// Fuzz target: einsums of 11 to 64 operands, the contraction-order search's domain (exact
// connected-subset programs up to 30 operands, the heuristic beyond; codegen/order). The
// bytes are fuzz_plan's (plan_case.hpp), every case read as an einsum whatever its kind byte;
// einsums of up to 10 operands are fuzz_plan's, and check() refuses more than 64.
// Invariants (a violation aborts):
//   - every check fuzz_plan applies (check_case, plan_check.cpp): plan, validate, output
//     shape, layouts, lowering, cost, the gradients (their own order searches) and the cost
//     API, and small cases run against the naive reference with their gradients;
//   - an order the search proved optimal ("optimal: " in the plan's note, the default
//     objective, FLOPs) costs no more FLOPs than greedy's or left to right's for the same
//     einsum and layouts: cost() charges what the search counts (codegen/order/README.md).
#include <cstdint>
#include <optional>
#include <string>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/ops.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/threads.hpp"
#include "fuzz_support.hpp"
#include "plan_case.hpp"

using namespace einexpr;

namespace {

bool proven_optimal(const Plan& plan) {
  for (const std::string& n : plan.notes)
    if (n.rfind("contraction order ", 0) == 0 && n.find(" FLOPs (optimal: ") != std::string::npos) return true;
  return false;
}

void check_orders(const fuzz::Case& c, const Plan& plan) {
  if (c.order != ContractionOrder::optimal || !proven_optimal(plan)) return;
  Count best;
  try {
    best = einexpr::cost(plan).flops;
  } catch (const ShapeError&) {
    return;  // past 2^128
  }
  for (const ContractionOrder other : {ContractionOrder::greedy, ContractionOrder::naive}) {
    fuzz::Case o = c;
    o.order = other;
    Count flops;
    try {
      flops = einexpr::cost(fuzz::plan_case(o)).flops;
    } catch (const InternalError& e) {
      FUZZ_CHECK(false, std::string(e.what()) + " planning another order of " + fuzz::describe(c));
    } catch (const Error&) {
      continue;  // an intermediate too large to lay out, or a count past 2^128
    }
    FUZZ_CHECK(best <= flops, "the order proven optimal costs " + best.str() + " FLOPs, " +
                                  (other == ContractionOrder::greedy ? "greedy's " : "left to right's ") +
                                  flops.str() + ", for " + fuzz::describe(c) + "\n" + to_string(plan));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  set_num_threads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int init = LLVMFuzzerInitialize(nullptr, nullptr);
  (void)init;
  struct ClearCaches {
    ~ClearCaches() { clear_caches(); }
  } clear_after;  // as fuzz_plan: every input frees what it allocated
  const std::optional<fuzz::Case> c = fuzz::decode(data, size, fuzz::Kind::einsum);
  if (!c) return 0;
  const std::size_t n = c->pattern.operands.size();
  if (n <= fuzz::max_plan_einsum_operands) return 0;
  FUZZ_CHECK(n <= fuzz::max_order_einsum_operands, "check() let an einsum of " + std::to_string(n) + " operands through");
  if (const std::optional<Plan> plan = fuzz::check_case(*c)) check_orders(*c, *plan);
  return 0;
}
