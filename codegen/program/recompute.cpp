// choose_recompute(): what a training step keeps for its backward (recompute.hpp), each
// choice tried on plan_training's own timeline.
#include "einexpr/codegen/recompute.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include "cost/units.hpp"
#include "einexpr/codegen/cost.hpp"
#include "program/backward_plan.hpp"
#include "program/training_memory.hpp"

namespace einexpr {

const char* name(RecomputeMode mode) noexcept {
  switch (mode) {
    case RecomputeMode::none: return "none";
    case RecomputeMode::checkpoints: return "checkpoints";
    case RecomputeMode::automatic: return "auto";
  }
  return "?";
}

RecomputeMode parse_recompute(std::string_view text) {
  for (RecomputeMode m : {RecomputeMode::none, RecomputeMode::checkpoints, RecomputeMode::automatic})
    if (text == name(m)) return m;
  throw Error("recompute is none, checkpoints or auto, not '" + std::string(text) + "'");
}

RecomputeOptions default_recompute(const ProgramPlan& plan) {
  RecomputeOptions o;
  if (plan.checkpoints.empty()) return o;
  o.mode = RecomputeMode::checkpoints;
  o.checkpoints = plan.checkpoints;
  return o;
}

Count recompute_flops(const ProgramPlan& plan, const TrainingPlan& training) {
  Count flops;
  for (int s : training.recomputed_statements()) flops += cost(plan.statements.at(static_cast<std::size_t>(s)).plan).flops;
  return flops;
}

namespace {

/// "23068672 bytes (22.00 MiB)"; below 1 KiB, "1000 bytes".
std::string show_bytes(std::int64_t b) {
  return std::to_string(b) + (b == 1 ? " byte" : " bytes") + (b >= 1024 ? " (" + detail::iec(static_cast<double>(b)) + ")" : "");
}

// One choice of what to keep, tried.
struct Tried {
  std::vector<bool> keep;   // per candidate
  std::int64_t peak = 0;    // the timeline's
  double area = 0;          // Σ bytes · events alive: the tie-breaker when no drop lowers the peak
  Count flops;              // made again
};

class Search {
 public:
  Search(const ProgramPlan& plan, std::int64_t limit, std::int64_t fixed)
      : plan_(plan), bwd_(program_detail::plan_backward(plan)), limit_(limit), fixed_(fixed) {
    std::vector<bool> output(plan.buffers.size(), false);
    for (int o : plan.outputs) output[static_cast<std::size_t>(plan.tensor(o).buffer)] = true;
    for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
      const ProgramBuffer& pb = plan.buffers[b];
      if (pb.external || output[b]) continue;
      int holder = pb.tensor;  // a tensor whose memory it is, to name it by
      for (std::size_t t = 0; holder < 0 && t < plan.tensors.size(); ++t)
        if (plan.tensors[t].buffer == static_cast<int>(b) && plan.tensors[t].role == TensorRole::statement)
          holder = static_cast<int>(t);
      if (holder >= 0) names_.push_back(plan.tensor(holder).name);
    }
    flops_.reserve(plan.statements.size());
    for (const PlannedStatement& st : plan.statements) flops_.push_back(cost(st.plan).flops);
  }

  std::size_t candidates() const noexcept { return names_.size(); }
  int tried() const noexcept { return tried_; }
  std::int64_t smallest_peak() const noexcept { return smallest_; }
  bool fits(const Tried& t) const noexcept { return t.peak <= limit_ - fixed_; }

  TrainingOptions options(const std::vector<bool>& keep) const {
    TrainingOptions o{.recompute = true};
    for (std::size_t c = 0; c < keep.size(); ++c)
      if (keep[c]) o.keep.push_back(names_[c]);
    return o;
  }

  Tried run(std::vector<bool> keep) {
    const TrainingPlan t = program_detail::plan_training(plan_, bwd_, options(keep), /*lean=*/true);
    ++tried_;
    Tried r{std::move(keep), t.peak_bytes(), 0, {}};
    for (const TrainingBuffer& b : t.buffers) r.area += static_cast<double>(b.bytes) * (b.last - b.first + 1);
    for (int s : t.recomputed_statements()) r.flops += flops_[static_cast<std::size_t>(s)];
    smallest_ = std::min(smallest_, r.peak);
    return r;
  }

  Tried greedy();
  Tried exhaustive();
  /// The optimum of the search space from `incumbent` (a choice that fits), unless more than
  /// `budget` timelines would be needed: then the best found, and complete is false.
  Tried branch_and_bound(Tried incumbent, int budget, bool& complete);

 private:
  const ProgramPlan& plan_;
  program_detail::BackwardPlan bwd_;
  std::int64_t limit_, fixed_;
  std::vector<std::string> names_;   // per candidate: a statement result held in it
  std::vector<Count> flops_;         // per statement: cost().flops
  int tried_ = 0;
  std::int64_t smallest_ = std::numeric_limits<std::int64_t>::max();
};

double as_double(const Count& c) { return c.to_double(); }

Tried Search::greedy() {
  const std::size_t n = candidates();
  Tried now = run(std::vector<bool>(n, true));
  // drop, one at a time, the candidate that costs the fewest FLOPs per byte saved
  while (!fits(now)) {
    int best = -1;
    Tried best_run;
    double best_score = std::numeric_limits<double>::infinity();
    int best_tier = 3;  // 0: lowers the peak, 1: lowers the live area, 2: neither
    for (std::size_t c = 0; c < n; ++c) {
      if (!now.keep[c]) continue;
      std::vector<bool> keep = now.keep;
      keep[c] = false;
      Tried r = run(std::move(keep));
      const double extra = as_double(r.flops) - as_double(now.flops);
      int tier = 2;
      double score = extra;
      if (r.peak < now.peak) {
        tier = 0;
        score = extra / static_cast<double>(now.peak - r.peak);
      } else if (r.area < now.area) {
        tier = 1;
        score = extra / (now.area - r.area);
      }
      if (tier < best_tier || (tier == best_tier && score < best_score)) {
        best_tier = tier;
        best_score = score;
        best = static_cast<int>(c);
        best_run = std::move(r);
      }
    }
    if (best < 0) return now;  // nothing left to drop: does not fit
    now = std::move(best_run);
  }
  // add back what still fits, the most FLOPs saved first
  for (bool changed = true; changed;) {
    changed = false;
    int best = -1;
    Tried best_run;
    for (std::size_t c = 0; c < n; ++c) {
      if (now.keep[c]) continue;
      std::vector<bool> keep = now.keep;
      keep[c] = true;
      Tried r = run(std::move(keep));
      if (!fits(r) || !(r.flops < now.flops)) continue;
      if (best < 0 || r.flops < best_run.flops || (r.flops == best_run.flops && r.peak < best_run.peak)) {
        best = static_cast<int>(c);
        best_run = std::move(r);
      }
    }
    if (best >= 0) {
      now = std::move(best_run);
      changed = true;
    }
  }
  return now;
}

// Every subset: the fewest FLOPs made again among those that fit (then the lowest peak);
// none fits: the lowest peak.
Tried Search::exhaustive() {
  const std::size_t n = candidates();
  Tried best;
  bool have = false, best_fits = false;
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << n); ++mask) {
    std::vector<bool> keep(n);
    for (std::size_t c = 0; c < n; ++c) keep[c] = (mask >> c) & 1u;
    Tried r = run(std::move(keep));
    const bool f = fits(r);
    const bool better = !have || (f && !best_fits) ||
                        (f == best_fits && (f ? (r.flops < best.flops || (r.flops == best.flops && r.peak < best.peak))
                                              : r.peak < best.peak));
    if (better) {
      best = std::move(r);
      best_fits = f;
      have = true;
    }
  }
  return best;
}

// Depth first over the candidates, each dropped or kept. A node's state keeps every
// candidate not yet decided: FLOPs made again never grow when more is kept (a kept buffer is
// never made again, and whatever made it again read nothing that is not made again anyway), so
// that state makes again the fewest FLOPs of its subtree. It is the subtree's optimum when it
// fits; when its FLOPs are no fewer than the incumbent's, nothing below can beat it (pruned).
// Only a drop needs a new timeline: keeping the next candidate is the node's own state.
Tried Search::branch_and_bound(Tried incumbent, int budget, bool& complete) {
  const std::size_t n = candidates();
  Tried best = std::move(incumbent);
  complete = true;
  const int start = tried_;
  struct Node {
    std::size_t next;
    Tried state;
  };
  // the candidates whose drop alone makes again the most FLOPs first: their drop branches
  // are pruned near the root
  std::vector<std::size_t> order(n);
  std::vector<Count> alone(n);
  for (std::size_t c = 0; c < n; ++c) {
    std::vector<bool> keep(n, true);
    keep[c] = false;
    alone[c] = run(std::move(keep)).flops;
    order[c] = c;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return alone[a] < alone[b]; });
  std::vector<Node> stack;
  stack.push_back({0, run(std::vector<bool>(n, true))});
  while (!stack.empty()) {
    Node node = std::move(stack.back());
    stack.pop_back();
    if (node.state.flops >= best.flops) continue;
    if (fits(node.state)) {
      best = std::move(node.state);
      continue;
    }
    if (node.next == n) continue;
    if (tried_ - start >= budget) {
      complete = false;
      break;
    }
    std::vector<bool> drop = node.state.keep;
    drop[order[node.next]] = false;
    Tried dropped = run(std::move(drop));
    stack.push_back({node.next + 1, std::move(node.state)});  // keep it (explored second)
    stack.push_back({node.next + 1, std::move(dropped)});      // drop it (first)
  }
  return best;
}

}  // namespace

RecomputeChoice choose_recompute(const ProgramPlan& plan, const RecomputeOptions& options, std::int64_t fixed_bytes) {
  RecomputeChoice c;
  c.mode = options.mode;
  if (options.mode == RecomputeMode::none || options.mode == RecomputeMode::checkpoints) {
    if (options.mode == RecomputeMode::checkpoints) c.training = {.recompute = true, .keep = options.checkpoints};
    const TrainingPlan t = plan_training(plan, c.training);
    c.peak_bytes = t.peak_bytes();
    c.recompute_flops = recompute_flops(plan, t);
    return c;
  }
  if (options.memory_limit <= 0)
    throw Error("--recompute auto needs --memory-limit BYTES: the most the step may hold at once");
  c.memory_limit = options.memory_limit;
  c.fixed_bytes = fixed_bytes;
  Search search(plan, options.memory_limit, fixed_bytes);
  c.candidates = static_cast<int>(search.candidates());
  const Tried all = search.run(std::vector<bool>(search.candidates(), true));
  c.no_recompute_peak_bytes = all.peak;
  Tried chosen;
  if (search.fits(all)) {
    chosen = all;  // nothing to make again
  } else if (c.candidates <= options.max_exhaustive) {
    chosen = search.exhaustive();
    c.exhaustive = c.optimal = true;
  } else {
    chosen = search.greedy();
    if (options.search_budget > 0) {  // then the proof, or a better choice (or one that fits)
      if (!search.fits(chosen)) chosen.flops = Count::from_u128(~Count::u128{0});  // beaten by any that fits
      bool complete = false;
      chosen = search.branch_and_bound(std::move(chosen), options.search_budget, complete);
      c.optimal = complete;
    }
  }
  c.tried = search.tried();
  c.smallest_peak_bytes = search.smallest_peak();
  if (!search.fits(chosen))
    throw Error("memory limit " + show_bytes(options.memory_limit) + ": no choice of what to keep for the backward fits; " +
                "the smallest peak found is " + show_bytes(checked_add(c.smallest_peak_bytes, fixed_bytes)) + " (" +
                show_bytes(fixed_bytes) + " of params, optimizer state and inputs, " + show_bytes(c.smallest_peak_bytes) +
                " of activations, gradients and temporaries; " + std::to_string(c.tried) + " choices tried" +
                (c.optimal ? ", which covers them all" : "") + ")");
  if (chosen.flops == Count() && chosen.peak == all.peak) {
    c.training = {};  // everything kept: mode none's timeline
  } else {
    c.training = search.options(chosen.keep);
  }
  c.peak_bytes = chosen.peak;
  c.recompute_flops = chosen.flops;
  return c;
}

std::int64_t parse_bytes(std::string_view text) {
  const std::string s(text);
  std::size_t used = 0;
  double v = 0;
  const auto bad = [&] {
    return Error("memory size '" + s + "' is not a byte count: give a number with an optional unit, as 1500000, "
                 "512KiB, 24MiB or 1.5GB");
  };
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front()))) throw bad();
  std::string unit = s.substr(used);
  unit.erase(0, unit.find_first_not_of(' '));
  double scale = 1;
  const std::pair<const char*, double> units[] = {{"", 1},          {"B", 1},           {"KB", 1e3},        {"MB", 1e6},
                                                  {"GB", 1e9},      {"TB", 1e12},       {"KiB", 1024.0},    {"MiB", 1048576.0},
                                                  {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  bool known = false;
  for (const auto& [u, f] : units)
    if (unit == u) {
      scale = f;
      known = true;
    }
  if (!known) throw bad();
  const double bytes = std::floor(v * scale);
  if (!(bytes >= 1) || bytes >= 9.2e18) throw bad();
  return static_cast<std::int64_t>(bytes);
}

}  // namespace einexpr
