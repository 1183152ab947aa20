#pragma once
// What a training step keeps for its backward, and what it makes again (recomputation):
// one choice that program cost counts and program train runs.
//
//   none         every forward buffer the backward reads is kept until that gradient
//   checkpoints  the named statement results are kept (the model file's `checkpoint` lines,
//                or names given), every other one the backward reads is made again from them
//                just before the first gradient that needs it (training_plan.hpp)
//   auto         the kept set is chosen: the step's peak (its timeline's, plus `fixed_bytes`:
//                params, optimizer state, inputs) at most memory_limit, with the fewest
//                forward FLOPs made again
//
// auto is a search over which statement results to keep (the candidates: every buffer of a
// statement result but the outputs'). Exact selection is NP-hard in general (Checkmate, Jain
// et al. 2020, solves it as an ILP over a schedule); here:
//   greedy      from "keep everything", drop one candidate at a time, the one with the fewest
//               FLOPs made again per byte of peak saved (when no single drop lowers the peak:
//               per byte·event of live memory saved), until the step fits; then add back,
//               most FLOPs saved first, every candidate whose return still fits
//   branch and bound  from the greedy choice, depth first over keep / drop per candidate:
//               FLOPs made again never grow when more is kept, so a state that keeps every
//               undecided candidate bounds its subtree (pruned when no better than the best
//               choice so far, the subtree's optimum when it fits); finished within
//               search_budget timelines it proves the choice optimal in this search space
//   exhaustive  every subset of the candidates (2^n timelines), for programs with at most
//               max_exhaustive candidates: the optimum by enumeration, which the tests
//               compare the other two against
// Each timeline tried is plan_training's own (no model of it), so the peak a choice is
// given is the one program cost prints and program train's arena holds.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "einexpr/codegen/count.hpp"
#include "einexpr/codegen/program_plan.hpp"
#include "einexpr/codegen/training_plan.hpp"

namespace einexpr {

enum class RecomputeMode : unsigned char { none, checkpoints, automatic };
/// "none", "checkpoints", "auto".
const char* name(RecomputeMode mode) noexcept;
/// The names above; Error listing them otherwise.
RecomputeMode parse_recompute(std::string_view text);

struct RecomputeOptions {
  RecomputeMode mode = RecomputeMode::none;
  /// checkpoints: the statement results kept (the outputs always are; none: everything the
  /// backward reads is made again from the inputs and params).
  std::vector<std::string> checkpoints = {};
  /// auto: the most bytes the step may hold at once, fixed_bytes included (> 0).
  std::int64_t memory_limit = 0;
  /// auto: search every subset when there are at most this many candidates; else greedy,
  /// then branch and bound from its choice planning at most search_budget more timelines.
  int max_exhaustive = 12;
  int search_budget = 20000;
};

/// The program's own choice: checkpoints when its file has `checkpoint` lines (their names),
/// none otherwise.
RecomputeOptions default_recompute(const ProgramPlan& plan);

struct RecomputeChoice {
  RecomputeMode mode = RecomputeMode::none;
  TrainingOptions training;        // for plan_training: recompute and the names kept
  std::int64_t peak_bytes = 0;     // the chosen timeline's peak (TrainingPlan::peak_bytes)
  Count recompute_flops;           // the forward FLOPs a step makes again (cost() of each)
  // auto only:
  std::int64_t memory_limit = 0;
  std::int64_t fixed_bytes = 0;
  std::int64_t no_recompute_peak_bytes = 0;  // the timeline's peak keeping everything
  std::int64_t smallest_peak_bytes = 0;      // the smallest timeline peak of any choice tried
  int candidates = 0;              // statement results the search could drop
  int tried = 0;                   // timelines planned
  bool exhaustive = false;         // every subset was tried
  bool optimal = false;            // the optimum of the search space: every subset, or the branch
                                   // and bound finished within its budget
};

/// The timeline FLOPs made again: cost() of every recomputed statement, as often as it runs.
Count recompute_flops(const ProgramPlan& plan, const TrainingPlan& training);

/// Resolves `options` for `plan`. auto: Error when even the smallest peak any choice reaches
/// exceeds the limit, naming that peak (with fixed_bytes) and the limit; a limit the step fits
/// without recomputing gives mode none's choice (nothing made again).
RecomputeChoice choose_recompute(const ProgramPlan& plan, const RecomputeOptions& options, std::int64_t fixed_bytes);

/// The bytes `--memory-limit` reads: a count with an optional unit, "1500000", "512KiB",
/// "1.5GB", "24 MiB" (SI powers of 1000, IEC of 1024); Error naming the text otherwise.
std::int64_t parse_bytes(std::string_view text);

}  // namespace einexpr
