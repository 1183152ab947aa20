#pragma once
// Private to lib: the path every op takes, parse (cached) -> check -> plan() -> lower
// (cached by everything the program depends on) -> run, and the counters behind
// engine_stats(). The program-cache key is one flat string of the OpSpec (op, reduction or
// function, copy policy, order, lengths), the pattern, dtype, device, and each input's
// shape and strides.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
  const OpSpec& spec;
  std::string_view pattern;   // empty only for a map of one argument without a pattern
  TensorRefs inputs;
};

/// The parsed and checked pattern for (op, text), from the pattern cache.
std::shared_ptr<const ast::Pattern> pattern(Op op, std::string_view text);

/// The cached entry for `request`: planned with plan() and lowered on a miss.
std::shared_ptr<const Entry> entry(const Request& request);

/// The outputs of a split or an unpack of x: entries[j] is output j's (planned for x). Where
/// each of them copies rows of x (views of x, then one copy into a new tensor) and they have
/// the same many rows, at least 64, their copies run in one pass over x
/// (copy_rows_together); otherwise each program runs in turn.
std::vector<Tensor> run_outputs(std::span<const std::shared_ptr<const Entry>> entries, const Tensor& x);
/// Plans and lowers `request` with an already parsed pattern (no caching; counts both).
Entry make_entry(const OpSpec& spec, const ast::Pattern* pattern, TensorRefs inputs);

/// Writes the program-cache key of a request into `key` (also used by Compiled's own small
/// cache, without the spec and pattern parts when `with_spec` is false).
void key_of(const Request& request, bool with_spec, std::string& key);
/// A per-thread string to build keys in: reused, it keeps its capacity.
std::string& scratch_key();

/// "rearrange", "reduce", "map.gelu": the op as messages name it.
std::string op_name(const OpSpec& spec);

/// Checks that the inputs are defined, share one dtype (but operand `index_operand`, which
/// holds i64 or i32 indices) and one device; returns them.
std::pair<DType, Device> common_dtype_device(std::string_view op, TensorRefs inputs, int index_operand = -1);

/// " in rearrange('b h -> h b') on input of shape [2, 3] with h=2": the context ops add
/// (and, on a line of its own, numpy_pattern_hint() where the pattern looks like numpy's).
std::string context(std::string_view op_name, std::string_view pattern, TensorRefs inputs,
                    const AxisLengths* lengths);

/// Counters.
void count_parse();

}  // namespace einexpr::engine
