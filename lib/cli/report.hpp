#pragma once
// What `cost --json`, `program cost --json` and `explain` print, written to any stream: the
// tool prints it and the Python module returns it (einexpr.cost() and Program.cost() parse
// the very same JSON).
#include "einexpr/codegen/compare.hpp"
#include "einexpr/codegen/mesh.hpp"
#include <optional>
#include <ostream>
#include <string>

#include "args.hpp"

namespace einexpr::cli {

/// Everything `cost` prints, computed before anything is printed.
struct CostReport {
  ExprSpec expr;
  Cost cost;
  std::optional<BackwardCost> backward;  // none when a gradient is not defined...
  std::string backward_error;            // ...and why
  std::optional<Roofline> roofline;      // none when the device lists no peak for the dtype...
  std::string roofline_error;            // ...and why
};
CostReport make_report(const ExprSpec& expr, DType dtype, const DeviceSpec& device);

/// The one JSON object of `cost --json` (with_gradients: `--backward`'s "backward" list).
void write_cost_json(std::ostream& os, const CostReport& r, bool with_gradients);

/// The one JSON object of `program cost --json`: `file` and `dtype` as given (the path, or
/// "<program>"; the dtype of tensors declared without one), the plan's axes and the cost.
/// `compare`: --compare's formulas too ("compare"), where given.
void write_program_cost_json(std::ostream& os, const ProgramPlan& plan, const ProgramCost& c, const std::string& file,
                             const std::string& dtype, const Comparisons* compare = nullptr,
                             const MeshCost* mesh = nullptr);

/// `explain`: the plan, then each step's FLOPs and bytes.
void write_explain(std::ostream& os, ExprSpec e, DType dtype);

}  // namespace einexpr::cli
