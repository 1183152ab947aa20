#pragma once
// Model programs from C++: a layer or a model as named statements (the language is in
// parser/include/einexpr/parser/program.hpp), parsed from text or built statement by
// statement, costed for a training step, and compiled once to run many times.
//
//   ast::Program p = parse_program(text, "lecture2.ein");          // or ProgramBuilder
//   ProgramCost c = cost(p, {{"B", 64}}, {.optimizer = Optimizer::adam});
//   CompiledProgram m(p, {.axes = {{"B", 64}}});                    // plans and lowers once
//   ProgramRun r = m.run({{"x", x}, {"w1", w1}, {"w2", w2}});       // no planning here
//   Tensor loss = r["loss"];
//
// A compiled program's memory is planned by liveness: every buffer a statement makes lives
// in one arena at an offset that no buffer alive at the same time shares, so memory is
// reused from statement to statement instead of allocated per statement; the outputs get
// their own storage. peak_bytes_predicted() is the arena plus the outputs, and a run
// measures what einexpr's storage held at most (storage_usage): never more.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "einexpr/codegen/program_cost.hpp"
#include "einexpr/codegen/program_plan.hpp"
#include "einexpr/parser/program.hpp"
#include "einexpr/runtime/device.hpp"
#include "einexpr/runtime/tensor.hpp"

namespace einexpr {

class StepHooks;  // step_hooks.hpp

/// Builds a program's text line by line, then parses and checks it: errors point into
/// text(), at the line each call wrote. Names, dims, patterns and functions may not hold a
/// line break (nor a '"', for the strings): Error.
///
///   ProgramBuilder b;
///   b.axes({{"B", 8}, {"D", 4}}).input("x", "B D").param("w", "D").statement("y", "map", {"x", "w"},
///       "B D, D -> B D", "mul");
///   ast::Program p = b.build();
class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string file = "<built>");
  ProgramBuilder& axes(const AxisLengths& lengths);
  /// dims: "B D", "B S (H K)" or "" (a scalar); dtype: "" for the default.
  ProgramBuilder& input(std::string_view name, std::string_view dims, std::string_view dtype = "");
  ProgramBuilder& param(std::string_view name, std::string_view dims, std::string_view dtype = "");
  /// name = op(inputs..., "pattern"[, "function"][, axis=length...])
  ProgramBuilder& statement(std::string_view name, std::string_view op, const std::vector<std::string>& inputs,
                            std::string_view pattern, std::string_view function = "",
                            const AxisLengths& lengths = {});
  ProgramBuilder& output(const std::vector<std::string>& names);
  const std::string& text() const noexcept { return text_; }
  /// parse_program(text(), file): throws ProgramError.
  ast::Program build() const;

 private:
  ProgramBuilder& line(std::string text);
  std::string file_;
  std::string text_;
};

/// Plans `program` with `sizes` overriding its axis lengths (options.dtype for tensors
/// declared without a dtype) and costs it: cost(plan_program(...), options).
ProgramCost cost(const ast::Program& program, const AxisLengths& sizes = {}, const ProgramCostOptions& options = {},
                 DType dtype = DType::f32);

/// What a run returns.
struct ProgramRun {
  std::vector<std::pair<std::string, Tensor>> outputs;  // the program's outputs, in order
  std::int64_t peak_bytes_measured = 0;  // the most bytes einexpr's storage held at once
                                         // during the run, above what it held before (process-
                                         // wide: other threads' allocations count too)
  /// The output called `name`; Error naming the outputs if none is.
  const Tensor& operator[](std::string_view name) const;
};

class CompiledProgram {
 public:
  /// Plans every statement (plan_program) and lowers it for `device`, and plans the memory.
  explicit CompiledProgram(const ast::Program& program, const ProgramOptions& options = {},
                           Device device = Device::cpu());
  ~CompiledProgram();
  CompiledProgram(CompiledProgram&&) noexcept;
  CompiledProgram& operator=(CompiledProgram&&) noexcept;

  /// Runs on every input and param by name, with the shapes and dtypes planned (a
  /// non-contiguous tensor is made contiguous first). Error for a missing or unknown name,
  /// ShapeError / DTypeError / DeviceError for a tensor that does not fit. Const and
  /// re-entrant: each run allocates its own arena.
  /// `hooks` (a run on a device mesh, mesh_run.hpp) is told of each statement's result.
  ProgramRun run(const std::map<std::string, Tensor, std::less<>>& inputs, StepHooks* hooks = nullptr) const;

  const ProgramPlan& plan() const noexcept;
  Device device() const noexcept;
  /// The arena plus the outputs' own storage: what a run allocates.
  std::int64_t peak_bytes_predicted() const noexcept;
  /// The arena alone, and what its buffers would take without reuse (their sum).
  std::int64_t arena_bytes() const noexcept;
  std::int64_t unshared_bytes() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace einexpr
