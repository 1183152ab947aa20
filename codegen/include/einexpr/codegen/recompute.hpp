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
//               most FLOPs saved first, every candidate whose return still fits. Also from
//               "keep nothing" (which need not fit: a recomputation holds its inputs): add
//               back the return that lowers the peak most until the step fits, then as above,
//               by FLOPs saved and, a third start, by FLOPs saved per byte of peak added; the
//               best of the three that fits. (The other ends found choices that make 4-9×
//               fewer FLOPs again on four stacked GPT-2 blocks at 0.5-0.7 of the peak, where the
//               first stopped in a local optimum: bench/RESULTS.md, "How close --recompute
//               auto comes to the optimum".)
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

/// A lower bound of auto's search space that an integer program can solve (`program cost
/// --recompute-bound FILE` writes it; bench/recompute_ilp.py solves it with HiGHS). With
/// keep_c in {0, 1} per candidate (1: kept) and made_s in {0, 1} per statement (1: made again):
///   FLOPs made again   Σ statement_flops[s]·made_s at the least made_s with
///                      made_s >= 1 - keep_c      for each (s, c) in `needed`: a gradient reads c
///                      made_m >= made_s - keep_c for each chain (s, c, m): s reads c, m makes it
///                      -- exactly the timeline's (bound_flops);
///   bytes alive        at each point (an event of the timeline that keeps everything: each
///                      forward statement, each gradient, the optimizer), at least
///                      base + Σ_kept bytes·keep_c. A candidate made again is alive in the
///                      forward until its last reader there, and in the backward from the
///                      first gradient that reads it to the last (its copy is made once, before
///                      the first, and lives to the last): that much is in base, kept or not;
///                      kept, it is alive from its statement to its last reader (the `kept`
///                      terms add the events between). A kept candidate that a statement made
///                      again reads lives until that recomputation (`read_again`: bytes when
///                      keep_c, made_s and not made_by(s, point)); a candidate made again
///                      before its first reader, its statement made for another, lives from
///                      then (`early`: bytes when not keep_c and made_by(its statement,
///                      point)). made_by(s, p) (made again by the gradient at point p) is the
///                      least fixpoint of: a dropped candidate of s that a gradient up to p
///                      reads, or a statement made by p that reads a dropped candidate of s.
///                      Everything else is alive as when all is kept; what a recomputation
///                      holds at its own event is left out, so at no choice is the bound's
///                      peak above the timeline's (bound_peak).
/// The least FLOPs with every point's bytes + fixed_bytes <= memory_limit is therefore at
/// most auto's optimum; a choice that makes that many again and fits is the optimum.
struct RecomputeBound {
  struct Term {
    int candidate = 0;
    std::int64_t bytes = 0;
  };
  struct ReadAgain {
    int candidate = 0, statement = 0;
    std::int64_t bytes = 0;
  };
  struct Point {
    std::string at;             // "forward h1", "backward einsum(dh1, x, ...)", "optimizer"
    std::int64_t base = 0;
    std::vector<Term> kept;     // bytes alive here only when the candidate is kept
    std::vector<ReadAgain> read_again;  // ... when it is kept, and the statement made again
                                        // but not yet (made_by: false here)
    std::vector<Term> early;    // ... when it is dropped and its statement already made again
  };
  struct Chain {
    int statement = 0, candidate = 0, maker = 0;
  };
  std::vector<std::string> candidates;     // as auto's choice names them (a tensor held)
  std::vector<int> candidate_statement;    // the statement that makes each
  std::vector<std::string> statements;     // per statement: its tensor's name
  std::vector<Count> statement_flops;      // per statement: cost().flops
  std::vector<std::pair<int, int>> needed; // (statement, candidate): a gradient reads the candidate
  std::vector<int> first_reader;           // per candidate: the first and last point (gradient)
  std::vector<int> last_reader;            // reading it, -1 for none
  std::vector<Chain> chains;
  std::vector<Point> points;
  std::int64_t fixed_bytes = 0;
  std::int64_t memory_limit = 0;
};

RecomputeBound recompute_bound(const ProgramPlan& plan, std::int64_t memory_limit, std::int64_t fixed_bytes);
/// The bound's FLOPs made again at a choice (keep per candidate): the timeline's exactly.
Count bound_flops(const RecomputeBound& bound, const std::vector<bool>& keep);
/// The bound's most bytes alive at a choice (fixed_bytes not included): at most the timeline's peak.
std::int64_t bound_peak(const RecomputeBound& bound, const std::vector<bool>& keep);

/// The bytes `--memory-limit` reads: a count with an optional unit, "1500000", "512KiB",
/// "1.5GB", "24 MiB" (SI powers of 1000, IEC of 1024); Error naming the text otherwise.
std::int64_t parse_bytes(std::string_view text);

}  // namespace einexpr
