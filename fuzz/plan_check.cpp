// The checks fuzz_plan and fuzz_order apply to a decoded case (plan_case.hpp). Invariants (a
// violation aborts):
//   - the planners throw nothing but einexpr::Error, never InternalError; a consistent case
//     (shapes that follow the sizes, every length given, sizes small) plans, unless a dtype
//     cannot do the op or a max/min has no elements to reduce;
//   - validate(plan) holds; the output shape is the one the pattern implies; every value's
//     layout stays inside its buffer (an input's view inside the input's extent);
//   - cost() throws nothing but ShapeError (for counts beyond 2^128); every plan but bool's
//     has gradients that validate and cost (backward.hpp), or a ShapeError past 2^128
//     (derived once: backward_cost and run_case take them);
//     lower_cpu's temp_bytes are exactly elements x element size (no wrap-around);
//   - plans of small cases run: see run_case (plan_run.cpp).
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/cost.hpp"
#include "einexpr/ops.hpp"
#include "einexpr/runtime/error.hpp"
#include "fuzz_support.hpp"
#include "plan_case.hpp"

using namespace einexpr;

namespace fuzz {

std::string describe(const Case& c) {
  std::string s = std::string(name(c.kind)) + " '" + escaped(c.text) + "' " +
                  std::string(einexpr::name(c.dtype)) + " inputs";
  for (const Layout& l : c.inputs) s += " " + shape_str(l.shape) + "/" + shape_str(l.strides);
  s += " lengths";
  for (const auto& [n, len] : c.lengths) s += " " + n + "=" + std::to_string(len);
  return s;
}

namespace {

/// Errors a consistent, small case may still raise.
bool allowed_in_consistent_case(const Error& e, const Case& c) {
  if (dynamic_cast<const DTypeError*>(&e) != nullptr) return true;
  if (indexed(c.kind) && c.text.find("...") != std::string::npos) return true;  // "..." beside [v] may not broadcast
  if (c.kind == Kind::binary && c.pattern.operands.size() != 2) return true;  // check(map) allows 1
  const std::string what = e.what();
  if (what.find("of no elements") != std::string::npos) return true;  // max/min over length 0
  if (dynamic_cast<const ShapeError*>(&e) != nullptr && what.find("overflow") != std::string::npos)
    return true;  // the pattern's own numbers may be enormous
  if (c.copy == Copy::never && what.find("view") != std::string::npos) return true;
  if (c.kind == Kind::unpack && what.find("cannot infer the -1") != std::string::npos) return true;  // a -1 beside a 0
  if (dynamic_cast<const IndexError*>(&e) != nullptr && what.find("has length 0, so no index") != std::string::npos)
    return true;  // get_at / add_at with indices into an empty table
  return false;
}

/// Whether the case can only plan with lengths given: a composition in an input (its atoms
/// are not all known), or a repeat's new axis.
bool needs_lengths(const Case& c) {
  std::set<std::string> inputs;
  for (const ast::Operand& o : c.pattern.operands)
    for (const ast::Term& t : o.terms) {
      if (std::holds_alternative<ast::Group>(t)) return true;
      if (const auto* n = std::get_if<ast::Named>(&t)) inputs.insert(n->name);
    }
  if (c.kind != Kind::repeat) return false;
  for (const ast::Term& t : c.pattern.output.terms) {
    if (const auto* n = std::get_if<ast::Named>(&t); n != nullptr && inputs.count(n->name) == 0) return true;
    if (std::holds_alternative<ast::Group>(t)) return true;
  }
  return false;
}

void check_layouts(const Plan& plan, const Case& c) {
  for (const Value& v : plan.values) {
    for (std::int64_t s : v.layout.strides) FUZZ_CHECK(s >= 0, "a negative stride in " + describe(c));
    FUZZ_CHECK(v.layout.offset >= 0, "a negative offset in " + describe(c));
    const PlanBuffer& b = plan.buffers.at(static_cast<std::size_t>(v.buffer));
    if (b.input < 0) continue;  // validate() checks temporaries
    const std::int64_t input_extent = plan.values.at(static_cast<std::size_t>(b.input)).layout.extent();
    FUZZ_CHECK(v.layout.extent() <= input_extent, "a view reaches past input " + std::to_string(b.input) +
                                                      " in " + describe(c) + "\n" + to_string(plan));
  }
}

void check_lowering(const Plan& plan, const Case& c) {
  Program p;
  try {
    p = lower_cpu(plan);
  } catch (const InternalError& e) {
    FUZZ_CHECK(false, std::string(e.what()) + " in " + describe(c));
  } catch (const Error&) {
    return;  // a size the lowering refuses
  }
  std::size_t t = 0;
  for (std::size_t i = static_cast<std::size_t>(plan.num_inputs); i < plan.buffers.size(); ++i, ++t) {
    const auto want = static_cast<Count::u128>(plan.buffers[i].elements) * element_size(plan.buffers[i].dtype);
    FUZZ_CHECK(t < p.temp_bytes.size() && want == p.temp_bytes[t],
               "temp_bytes wrapped for buffer " + std::to_string(i) + " in " + describe(c));
  }
}

/// Returns the plan's gradients when they derive and cost (run_case runs them), else none.
std::optional<std::vector<Gradient>> check_cost(const Plan& plan, const Case& c) {
  try {
    const Cost cost = einexpr::cost(plan);
    (void)cost.str();
    if (c.kind == Kind::rearrange || c.kind == Kind::repeat)
      FUZZ_CHECK(cost.flops == Count(0), "a rearrange or repeat with FLOPs: " + describe(c));
  } catch (const ShapeError&) {
  }
  // Every plan has its gradients (derived from the plan itself), which validate and cost;
  // only bool has none (reduce any / all among it). Counts past 2^128 are ShapeErrors.
  try {
    std::vector<Gradient> grads = gradients(plan);
    for (const Gradient& g : grads) validate(g.plan);
    const BackwardCost back = backward_cost(grads);
    FUZZ_CHECK(back.gradients.size() == grads.size(), "one gradient cost per gradient for " + describe(c));
    return grads;
  } catch (const InternalError& e) {
    FUZZ_CHECK(false, std::string(e.what()) + " in the gradients of " + describe(c));
  } catch (const ShapeError&) {
  } catch (const Error& e) {
    FUZZ_CHECK(plan.dtype == DType::boolean, "no gradient (" + std::string(e.what()) + ") for " + describe(c));
  }
  return std::nullopt;
}

/// The cost API from the sizes alone (contiguous inputs, every axis named): the same op
/// plans, validates and costs, or refuses with a non-internal error; for a consistent case
/// without "..." its output shape is the pattern's.
void check_cost_api(const Case& c) {
  if (c.kind == Kind::binary || c.kind == Kind::unary || c.kind == Kind::pack || c.kind == Kind::unpack) return;
  AxisLengths sizes;
  for (const std::string& n : c.names) sizes.emplace_back(n, c.sizes.at(n));
  Plan p;
  try {
    p = plan_from_sizes(name(op_of(c.kind)), c.text, sizes, c.dtype, c.reduction);
    validate(p);
    (void)einexpr::cost(p);
  } catch (const InternalError& e) {
    FUZZ_CHECK(false, std::string(e.what()) + " in the cost API for " + describe(c));
  } catch (const Error&) {
    return;
  }
  if (c.consistent && c.text.find("...") == std::string::npos)
    FUZZ_CHECK(p.output_value().layout.shape == expected_output_shape(c),
               "the cost API plans another output shape for " + describe(c));
}

}  // namespace

std::optional<Plan> check_case(const Case& c) {
  Plan plan;
  try {
    plan = plan_case(c);
  } catch (const InternalError& e) {
    FUZZ_CHECK(false, std::string(e.what()) + " planning " + describe(c));
  } catch (const Error& e) {
    const bool must_plan = c.consistent && !c.huge && (c.all_lengths || !needs_lengths(c));
    FUZZ_CHECK(!must_plan || allowed_in_consistent_case(e, c), "a consistent case did not plan: " + describe(c) +
                                                                   "\n" + e.what());
    return std::nullopt;
  }
  try {
    validate(plan);
    (void)to_string(plan);
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string(e.what()) + " in the plan of " + describe(c));
  }
  if (c.consistent) {
    const Shape want = expected_output_shape(c);
    FUZZ_CHECK(plan.output_value().layout.shape == want, "output shape " + shape_str(plan.output_value().layout.shape) +
                                                             " but the pattern implies " + shape_str(want) + " for " +
                                                             describe(c));
  }
  check_layouts(plan, c);
  check_lowering(plan, c);
  const std::optional<std::vector<Gradient>> grads = check_cost(plan, c);
  check_cost_api(c);
  // Runs: not the indexed kinds and concatenations (tests/lib/test_indexed.cpp checks those
  // against torch); against the naive reference where it can (not pack and unpack, which run
  // against each other, nor splits, whose outputs run against split's: run_case).
  const bool joins = c.pattern.operands.size() > 1;
  if (c.run && !c.huge && !indexed(c.kind) && !(c.kind == Kind::rearrange && joins))
    run_case(c, plan, grads ? &*grads : nullptr);
  return plan;
}

}  // namespace fuzz
