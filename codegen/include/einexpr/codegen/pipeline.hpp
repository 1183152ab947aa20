#pragma once
// The pipeline, in one place (as Halide's lower_impl lists its passes): every expression an
// op, Compiled, the cost API, the CLI or a model program runs goes through these stages, in
// this order, each named where it is done:
//
//   1. parse + check   parse_pattern(op, text)          the registry row's grammar, then
//                                                        check() (parser/ops.hpp)
//   2. resolve + plan  the op's planner                  OpOptions' visit in plan()
//                                                        (plan_entry.cpp): axes resolved,
//                                                        the raw plan built (plan/builder.hpp)
//   3. passes          plan_passes(), in order           fuse_view_chains, drop_identity_views,
//                                                        remove_unused (plan/simplify.cpp)
//   4. validate        validate(plan), once              the plan's invariants (validate.cpp)
//   5. lower           lower_validated(plan, device)     CPU or CUDA kernels (lower.hpp)
//
// EINEXPR_DEBUG=passes prints the plan as built and after each pass (=plan prints the
// first and the last). compile() runs stages 1-5; compile_plan() 2-4, for a pattern parsed
// already (the engine's cache keeps them).
#include <span>
#include <string_view>

#include "einexpr/codegen/lower.hpp"
#include "einexpr/codegen/plan.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/ast.hpp"
#include "einexpr/runtime/device.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/program.hpp"

namespace einexpr {

/// A plan-to-plan pass that changes no result (stage 3).
struct PlanPass {
  const char* name;
  Plan (*run)(Plan);
};
/// The passes, in the order the pipeline runs them.
std::span<const PlanPass> plan_passes() noexcept;
/// Runs every pass on a plan as built (printing it after each under EINEXPR_DEBUG=passes).
Plan run_passes(Plan built);

/// Stages 2-4: the plan of a parsed and checked pattern (null only for a map of one argument
/// without one) on inputs of these layouts and dtypes, validated.
Plan compile_plan(const OpSpec& spec, const ast::Pattern* pattern, std::span<const Layout> inputs,
                  std::span<const DType> dtypes);

/// Stages 1-5, and what each made.
struct Compilation {
  ast::Pattern pattern;
  Plan plan;
  Program program;
};
Compilation compile(const OpSpec& spec, std::string_view text, std::span<const Layout> inputs,
                    std::span<const DType> dtypes, Device device);

}  // namespace einexpr
