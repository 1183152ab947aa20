#pragma once
// Private to lib: the path every op takes, parse (cached) -> check -> plan -> lower
// (cached by everything the program depends on) -> run, and the counters behind
// engine_stats(). The program-cache key is one flat string of op, pattern, dtype, device,
// extras (reduction, copy policy, function, correction), lengths, and each input's shape and strides.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "einexpr/codegen/lower.hpp"
#include "einexpr/codegen/plan.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/ops.hpp"
#include "einexpr/parser/ast.hpp"

namespace einexpr::engine {

/// A plan and the program lowered from it, immutable once made.
struct Entry {
  Plan plan;
  Program program;
};

/// What an op asks of the engine.
struct Request {
  Op op = Op::rearrange;
  std::string_view op_name;   // "rearrange", "reduce", "einsum", "map.relu", ...
  std::string_view pattern;   // empty for unary maps
  std::span<const Tensor> inputs;
  const AxisLengths* lengths = nullptr;
  std::uint32_t extra = 0;    // reduction / copy policy / function, folded into the key
  std::int64_t param = 1;     // reduce var / std's correction, folded into the key
};

/// The parsed and checked pattern for (op, text), from the pattern cache.
std::shared_ptr<const ast::Pattern> pattern(Op op, std::string_view text);

/// Builds the plan for a request (no caching; counts a plan).
using Planner = std::function<Plan(const ast::Pattern*, std::span<const Layout>, DType)>;

/// The cached entry for `request`, planning with `planner` and lowering on a miss.
std::shared_ptr<const Entry> entry(const Request& request, const Planner& planner);

/// The program-cache key of a request (also used by Compiled's own small cache, without
/// the pattern and op parts when `with_pattern` is false).
std::string key_of(const Request& request, bool with_pattern);

/// Checks that the inputs are defined, share one dtype and one device; returns them.
std::pair<DType, Device> common_dtype_device(std::string_view op, std::span<const Tensor> inputs);

/// " in rearrange('b h -> h b') on input of shape [2, 3] with h=2": the context ops add.
std::string context(std::string_view op_name, std::string_view pattern, std::span<const Tensor> inputs,
                    const AxisLengths* lengths);

/// Counters.
void count_parse();
void count_plan();
void count_lowering();

}  // namespace einexpr::engine
