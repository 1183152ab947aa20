// The pipeline (pipeline.hpp): the stages in order, and the passes' list.
#include "einexpr/codegen/pipeline.hpp"

#include <cstdlib>
#include <iostream>
#include <string_view>

#include "einexpr/parser/ops.hpp"
#include "plan/builder.hpp"

namespace einexpr {

namespace {

constexpr PlanPass passes[] = {
    {"fuse_view_chains", &detail::fuse_view_chains},
    {"drop_identity_views", &detail::drop_identity_views},
    {"remove_unused", &detail::remove_unused},
};

/// What EINEXPR_DEBUG asks for: "passes" every pass, "plan" the first and the last.
enum class Debug { none, plan, passes };
Debug debug() {
  const char* e = std::getenv("EINEXPR_DEBUG");
  if (e == nullptr) return Debug::none;
  const std::string_view v(e);
  if (v.find("passes") != std::string_view::npos) return Debug::passes;
  return v.find("plan") != std::string_view::npos ? Debug::plan : Debug::none;
}

}  // namespace

std::span<const PlanPass> plan_passes() noexcept { return passes; }

Plan run_passes(Plan built) {
  const Debug d = debug();
  if (d != Debug::none) std::cerr << "[einexpr] plan as built:\n" << to_string(built);
  for (const PlanPass& p : passes) {
    built = p.run(std::move(built));
    if (d == Debug::passes) std::cerr << "[einexpr] after " << p.name << ":\n" << to_string(built);
  }
  if (d == Debug::plan) std::cerr << "[einexpr] after the passes:\n" << to_string(built);
  return built;
}

Plan compile_plan(const OpSpec& spec, const ast::Pattern* pattern, std::span<const Layout> inputs,
                  std::span<const DType> dtypes) {
  Plan p = plan(spec, pattern, inputs, dtypes);  // stages 2 and 3 (the planners end in run_passes)
  validate(p);                                   // stage 4, once
  return p;
}

Compilation compile(const OpSpec& spec, std::string_view text, std::span<const Layout> inputs,
                    std::span<const DType> dtypes, Device device) {
  Compilation c;
  const bool patternless = text.empty() && spec.op() == Op::map;
  if (!patternless) c.pattern = parse_pattern(spec.op(), text);                   // stage 1
  c.plan = compile_plan(spec, patternless ? nullptr : &c.pattern, inputs, dtypes);  // stages 2-4
  c.program = lower_validated(c.plan, device);                                     // stage 5
  return c;
}

}  // namespace einexpr
