// choose_recompute(): what a training step keeps for its backward. The checkpoint lines as
// the program's own choice, auto's search against every subset (the optimum by
// enumeration), its refusals, program cost under each mode, and parse_bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "einexpr/codegen/program_cost.hpp"
#include "einexpr/codegen/recompute.hpp"
#include "einexpr/codegen/training_plan.hpp"
#include "einexpr/parser/program.hpp"
#include "model_files.hpp"

using namespace einexpr;

namespace {

// Four layers, eight statement results the backward could keep or make again (2^8 choices).
const char* const chain = R"(axes B=16 D=32 F=64
input x: B D
param w1: D F
param w2: F D
param w3: D F
param w4: F D
h1 = einsum(x, w1, "B D, D F -> B F")
g1 = map(h1, "B F -> B F", "gelu")
h2 = einsum(g1, w2, "B F, F D -> B D")
t2 = map(h2, "B D -> B D", "tanh")
h3 = einsum(t2, w3, "B D, D F -> B F")
g3 = map(h3, "B F -> B F", "gelu")
h4 = einsum(g3, w4, "B F, F D -> B D")
sq = map(h4, "B D -> B D", "square")
loss = reduce(sq, "B D ->", "mean")
)";

ProgramPlan plan_text(const std::string& text, const AxisLengths& axes = {}) {
  ProgramOptions o;
  o.axes = axes;
  return plan_program(parse_program(text, "m.ein"), o);
}

RecomputeOptions automatic(std::int64_t limit, int max_exhaustive, int budget) {
  return {.mode = RecomputeMode::automatic, .memory_limit = limit, .max_exhaustive = max_exhaustive, .search_budget = budget};
}

}  // namespace

TEST_CASE("recompute: checkpoint lines are the program's own choice", "[program][recompute]") {
  const ProgramPlan plain = plan_text(chain);
  CHECK(default_recompute(plain).mode == RecomputeMode::none);
  const ProgramPlan marked = plan_text(std::string(chain) + "checkpoint h2, g3\n");
  const RecomputeOptions o = default_recompute(marked);
  CHECK(o.mode == RecomputeMode::checkpoints);
  CHECK(o.checkpoints == std::vector<std::string>{"h2", "g3"});
  const RecomputeChoice c = choose_recompute(marked, o, 0);
  CHECK(c.training.recompute);
  const TrainingPlan t = plan_training(marked, c.training);
  CHECK(c.peak_bytes == t.peak_bytes());
  // the kept ones are never made again; g1 (read by dw2) is
  std::vector<std::string> again;
  for (int s : t.recomputed_statements()) again.push_back(marked.statements[static_cast<std::size_t>(s)].name);
  CHECK(std::find(again.begin(), again.end(), "h2") == again.end());
  CHECK(std::find(again.begin(), again.end(), "g3") == again.end());
  CHECK(std::find(again.begin(), again.end(), "g1") != again.end());
  Count want;
  for (int s : t.recomputed_statements()) want += cost(marked.statements[static_cast<std::size_t>(s)].plan).flops;
  CHECK(c.recompute_flops == want);
  CHECK(c.recompute_flops > Count(0));
}

TEST_CASE("recompute: auto's search against every subset, limit by limit", "[program][recompute]") {
  const ProgramPlan plan = plan_text(chain);
  const std::int64_t fixed = 1000;  // params and state, as a caller adds them
  const RecomputeChoice all = choose_recompute(plan, {}, fixed);
  const std::int64_t full = all.peak_bytes + fixed;
  // the smallest peak of any choice: every subset tried, none fits a limit of 1 byte
  std::int64_t floor = 0;
  try {
    choose_recompute(plan, automatic(1, 20, 0), fixed);
    FAIL("a 1-byte limit fitted");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("no choice of what to keep for the backward fits"));
    CHECK_THAT(e.what(), Catch::Contains("257 choices tried, which covers them all"));  // and keeping everything
  }
  {
    std::int64_t lo = 1, hi = full;  // the floor by bisection on what the enumeration accepts
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      try {
        choose_recompute(plan, automatic(mid, 20, 0), fixed);
        hi = mid;
      } catch (const Error&) {
        lo = mid + 1;
      }
    }
    floor = lo;
  }
  REQUIRE(floor < full);  // recomputation saves memory on this chain
  int greedy_worse = 0;
  for (int k = 0; k <= 16; ++k) {
    const std::int64_t limit = floor + (full - floor) * k / 16;
    CAPTURE(limit, floor, full);
    const RecomputeChoice exact = choose_recompute(plan, automatic(limit, 20, 0), fixed);
    CHECK(exact.exhaustive == (limit < full));  // a step that fits whole needs no search
    if (limit < full) CHECK(exact.tried == 257);  // keeping everything, then every subset
    CHECK(exact.peak_bytes + fixed <= limit);
    const RecomputeChoice searched = choose_recompute(plan, automatic(limit, 0, 100000), fixed);
    CHECK(searched.peak_bytes + fixed <= limit);
    CHECK(searched.optimal == (limit < full));
    CHECK(searched.recompute_flops == exact.recompute_flops);  // branch and bound finds the optimum
    const RecomputeChoice greedy = choose_recompute(plan, automatic(limit, 0, 0), fixed);
    CHECK(greedy.peak_bytes + fixed <= limit);
    CHECK(greedy.recompute_flops >= exact.recompute_flops);
    if (greedy.recompute_flops > exact.recompute_flops) ++greedy_worse;
    // the choice is what plan_training makes of it
    const TrainingPlan t = plan_training(plan, searched.training);
    CHECK(t.peak_bytes() == searched.peak_bytes);
    CHECK(recompute_flops(plan, t) == searched.recompute_flops);
    if (k == 16) {
      CHECK(exact.recompute_flops == Count(0));  // the whole step fits: nothing made again
      CHECK_FALSE(exact.training.recompute);
    }
  }
  CAPTURE(greedy_worse);  // how often greedy alone makes more again than the optimum
}

TEST_CASE("recompute: auto on the GPT-2 training file fits, and refuses what nothing fits", "[program][recompute]") {
  const ProgramPlan plan = plan_program(parse_program(test::read_model("gpt2_train.ein"), "gpt2_train.ein"), {});
  const std::int64_t fixed = step_fixed_bytes(plan, Optimizer::adam, false);
  const RecomputeChoice all = choose_recompute(plan, {}, fixed);
  const std::int64_t full = all.peak_bytes + fixed;
  for (const double f : {0.97, 0.93, 0.9}) {
    const auto limit = static_cast<std::int64_t>(static_cast<double>(full) * f);
    CAPTURE(f, limit, full);
    RecomputeChoice c;
    try {
      c = choose_recompute(plan, automatic(limit, 12, 1000), fixed);
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Catch::Contains("the smallest peak found is"));
      continue;
    }
    CHECK(c.candidates > 12);
    CHECK(c.peak_bytes + fixed <= limit);
    CHECK(c.recompute_flops > Count(0));
    CHECK(c.no_recompute_peak_bytes == all.peak_bytes);
    CHECK(c.smallest_peak_bytes <= c.peak_bytes);
    const ProgramCost pc = cost(plan, {.device = "h100", .optimizer = Optimizer::adam, .recompute = automatic(limit, 12, 1000)});
    CHECK(pc.memory.peak_bytes == Count::from_int64(c.peak_bytes + fixed));  // cost honours the same choice
    CHECK(pc.recompute.recompute_flops == c.recompute_flops);
    CHECK(pc.timing.recompute_s > 0);
    CHECK(pc.timing.step_s > pc.timing.forward_s + pc.timing.backward_s + pc.timing.optimizer_s);
  }
  CHECK_THROWS_WITH(choose_recompute(plan, automatic(fixed, 12, 200), fixed),
                    Catch::Contains("no choice of what to keep for the backward fits; the smallest peak found is"));
  CHECK_THROWS_WITH(choose_recompute(plan, {.mode = RecomputeMode::automatic}, fixed),
                    Catch::Contains("needs --memory-limit"));
}

TEST_CASE("recompute: the bound's FLOPs are the timeline's, its peak never above it", "[program][recompute]") {
  // Random choices on the chain, the GPT-2 training file and the lecture model: the bound
  // (what bench/recompute_ilp.py solves) must count exactly the FLOPs plan_training makes
  // again and at most its peak, and keeping everything its peak exactly (nothing to leave out).
  struct Case {
    std::string name;
    ProgramPlan plan;
  };
  std::vector<Case> cases;
  cases.push_back({"chain", plan_text(chain)});
  cases.push_back({"gpt2_train", plan_program(parse_program(test::read_model("gpt2_train.ein"), "gpt2_train.ein"), {})});
  cases.push_back({"lecture2", plan_program(parse_program(test::read_model("lecture2.ein"), "lecture2.ein"), {})});
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {  // SplitMix64
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (const Case& k : cases) {
    CAPTURE(k.name);
    const RecomputeBound b = recompute_bound(k.plan, 1 << 30, 123);
    CHECK(b.fixed_bytes == 123);
    const std::size_t n = b.candidates.size();
    REQUIRE(n > 0);
    REQUIRE(b.candidate_statement.size() == n);
    CHECK(b.statement_flops.size() == k.plan.statements.size());
    CHECK_FALSE(b.needed.empty());
    const TrainingPlan all = plan_training(k.plan, {});
    CHECK(b.points.size() == static_cast<std::size_t>(all.events));
    CHECK(bound_peak(b, std::vector<bool>(n, true)) == all.peak_bytes());
    CHECK(bound_flops(b, std::vector<bool>(n, true)) == Count(0));
    for (int trial = 0; trial < 60; ++trial) {
      std::vector<bool> keep(n);
      const std::uint64_t density = next() % 5;  // from keeping nearly nothing to nearly all
      TrainingOptions o{.recompute = true};
      for (std::size_t c = 0; c < n; ++c) {
        keep[c] = next() % 4 < density;
        if (keep[c]) o.keep.push_back(b.candidates[c]);
      }
      const TrainingPlan t = plan_training(k.plan, o);
      CAPTURE(trial, o.keep);
      CHECK(bound_flops(b, keep) == recompute_flops(k.plan, t));
      CHECK(bound_peak(b, keep) <= t.peak_bytes());
    }
  }
}

TEST_CASE("recompute: program cost under none, checkpoints and the file's lines", "[program][recompute]") {
  const ProgramCost none = cost(plan_text(chain));
  CHECK(none.recompute.recompute_flops == Count(0));
  CHECK_FALSE(none.recompute.training.recompute);
  const ProgramCost lines = cost(plan_text(std::string(chain) + "checkpoint h2, g3\n"));
  CHECK(lines.recompute.mode == RecomputeMode::checkpoints);
  CHECK(lines.recompute.recompute_flops > Count(0));
  CHECK(lines.memory.activations_bytes < none.memory.activations_bytes);
  CHECK(lines.step_flops == none.step_flops);  // the model's FLOPs: recomputation apart
  CHECK(lines.str().find("recompute") != std::string::npos);
  // --recompute none overrides the file's lines
  const ProgramCost overridden = cost(plan_text(std::string(chain) + "checkpoint h2, g3\n"), {.recompute = RecomputeOptions{}});
  CHECK(overridden.memory.peak_bytes == none.memory.peak_bytes);
  CHECK(overridden.recompute.recompute_flops == Count(0));
  // a checkpoint that only a statement made again reads says so
  bool listed = false;
  for (const KeptActivation& k : lines.memory.kept)
    for (const std::string& n : k.needed_by) listed = listed || n.rfind("recompute ", 0) == 0;
  CHECK(listed);
}

TEST_CASE("recompute: parse_bytes and parse_recompute", "[program][recompute]") {
  CHECK(parse_bytes("1500000") == 1500000);
  CHECK(parse_bytes("512KiB") == 512 * 1024);
  CHECK(parse_bytes("24 MiB") == 24 * 1048576);
  CHECK(parse_bytes("1.5GB") == 1500000000);
  CHECK(parse_bytes("2TiB") == 2 * 1099511627776);
  for (const char* bad : {"", "MiB", "-5", "12 parsecs", "0", "0.1", "1e30", "nan", "inf"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(parse_bytes(bad), Catch::Contains("is not a byte count"));
  }
  CHECK(parse_recompute("auto") == RecomputeMode::automatic);
  CHECK_THROWS_WITH(parse_recompute("some"), "recompute is none, checkpoints or auto, not 'some'");
}
