// choose_recompute(): what a training step keeps for its backward (recompute.hpp), each
// choice tried on plan_training's own timeline.
#include "einexpr/codegen/recompute.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
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

/// The search's candidates: every buffer of a statement result but the outputs', as (program
/// buffer, the name of a tensor it holds).
std::vector<std::pair<int, std::string>> candidate_buffers(const ProgramPlan& plan) {
  std::vector<std::pair<int, std::string>> out;
  std::vector<bool> output(plan.buffers.size(), false);
  for (int o : plan.outputs) output[static_cast<std::size_t>(plan.tensor(o).buffer)] = true;
  for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
    const ProgramBuffer& pb = plan.buffers[b];
    if (pb.external || output[b]) continue;
    int holder = pb.tensor;  // a tensor whose memory it is, to name it by
    for (std::size_t t = 0; holder < 0 && t < plan.tensors.size(); ++t)
      if (plan.tensors[t].buffer == static_cast<int>(b) && plan.tensors[t].role == TensorRole::statement)
        holder = static_cast<int>(t);
    if (holder >= 0) out.emplace_back(static_cast<int>(b), plan.tensor(holder).name);
  }
  return out;
}

std::vector<Count> statement_flops(const ProgramPlan& plan) {
  std::vector<Count> out;
  out.reserve(plan.statements.size());
  for (const PlannedStatement& st : plan.statements) out.push_back(cost(st.plan).flops);
  return out;
}

class Search {
 public:
  Search(const ProgramPlan& plan, std::int64_t limit, std::int64_t fixed)
      : plan_(plan), bwd_(program_detail::plan_backward(plan)), limit_(limit), fixed_(fixed) {
    for (auto& [buffer, name] : candidate_buffers(plan)) names_.push_back(std::move(name));
    flops_ = statement_flops(plan);
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
  Tried add_back(Tried now, bool by_ratio = false);
  /// Of `now` with one more candidate kept, each in turn: the first that `better` prefers to
  /// every other `admit` accepts; none accepted: nullopt.
  template <class Admit, class Better>
  std::optional<Tried> best_return(const Tried& now, Admit admit, Better better) {
    std::optional<Tried> best;
    for (std::size_t c = 0; c < candidates(); ++c) {
      if (now.keep[c]) continue;
      std::vector<bool> keep = now.keep;
      keep[c] = true;
      Tried r = run(std::move(keep));
      if (admit(r) && (!best || better(r, *best))) best = std::move(r);
    }
    return best;
  }
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
  return add_back(std::move(now));
}

// Adds back, one at a time, the candidate whose return lowers the peak most until the step fits
// (from "keep nothing", which need not fit: a recomputation holds its own inputs), then the one
// that saves the most FLOPs (by_ratio: per byte of peak it adds) while the step still fits.
Tried Search::add_back(Tried now, bool by_ratio) {
  // first until the step fits: the return that lowers the peak most (then the fewest FLOPs)
  while (!fits(now)) {
    std::optional<Tried> r = best_return(
        now, [&](const Tried& t) { return t.peak < now.peak; },
        [](const Tried& a, const Tried& b) { return a.peak < b.peak || (a.peak == b.peak && a.flops < b.flops); });
    if (!r) break;
    now = std::move(*r);
  }
  // FLOPs saved per byte the peak grows (a return that does not grow it: per byte, 1)
  auto per_byte = [&](const Tried& t) {
    return (as_double(now.flops) - as_double(t.flops)) / static_cast<double>(std::max<std::int64_t>(1, t.peak - now.peak));
  };
  while (std::optional<Tried> r = best_return(
             now, [&](const Tried& t) { return fits(t) && t.flops < now.flops; },
             [&](const Tried& a, const Tried& b) {
               return by_ratio ? per_byte(a) > per_byte(b) : a.flops < b.flops || (a.flops == b.flops && a.peak < b.peak);
             }))
    now = std::move(*r);
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
    for (const bool by_ratio : {false, true}) {  // and from the other end: keep nothing, add back
      Tried reverse = search.add_back(search.run(std::vector<bool>(search.candidates(), false)), by_ratio);
      if (search.fits(reverse) && (!search.fits(chosen) || reverse.flops < chosen.flops)) chosen = std::move(reverse);
    }
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

RecomputeBound recompute_bound(const ProgramPlan& plan, std::int64_t memory_limit, std::int64_t fixed_bytes) {
  RecomputeBound r;
  r.memory_limit = memory_limit;
  r.fixed_bytes = fixed_bytes;
  const auto candidates = candidate_buffers(plan);
  std::vector<int> candidate_of(plan.buffers.size(), -1);  // per program buffer
  for (const auto& [buffer, name] : candidates) {
    candidate_of[static_cast<std::size_t>(buffer)] = static_cast<int>(r.candidates.size());
    r.candidates.push_back(name);
    r.candidate_statement.push_back(plan.buffers[static_cast<std::size_t>(buffer)].statement);
  }
  for (const PlannedStatement& st : plan.statements) r.statements.push_back(st.name);
  r.statement_flops = statement_flops(plan);
  for (std::size_t s = 0; s < plan.statements.size(); ++s)
    for (int in : plan.statements[s].inputs) {
      const int c = candidate_of[static_cast<std::size_t>(plan.tensor(in).buffer)];
      if (c >= 0) r.chains.push_back({static_cast<int>(s), c, r.candidate_statement[static_cast<std::size_t>(c)]});
    }

  // The timeline that keeps everything: its events are the points, its lifetimes the kept ones.
  const program_detail::BackwardPlan bwd = program_detail::plan_backward(plan);
  const TrainingPlan all = program_detail::plan_training(plan, bwd, {}, /*lean=*/false);
  const int n = static_cast<int>(plan.statements.size());
  const auto nc = r.candidates.size();
  std::vector<int> first_reader(nc, -1), last_reader(nc, -1);  // gradient events reading each
  for (const TrainingGradient& g : all.backward)
    for (int b : g.source_buffers) {
      if (b < 0) continue;
      const int pb = all.buffers[static_cast<std::size_t>(b)].program_buffer;
      const int c = pb < 0 ? -1 : candidate_of[static_cast<std::size_t>(pb)];
      if (c < 0) continue;
      const auto cu = static_cast<std::size_t>(c);
      if (first_reader[cu] < 0) {
        first_reader[cu] = g.event;
        r.needed.emplace_back(r.candidate_statement[cu], c);
      }
      last_reader[cu] = std::max(last_reader[cu], g.event);
    }
  r.points.resize(static_cast<std::size_t>(all.events));
  for (int e = 0; e < all.events; ++e) r.points[static_cast<std::size_t>(e)].at = e < n ? "forward " + plan.statements[static_cast<std::size_t>(e)].name : "optimizer";
  for (const TrainingGradient& g : all.backward)
    r.points[static_cast<std::size_t>(g.event)].at = "backward " + g.expression;
  for (const TrainingBuffer& b : all.buffers) {
    const int pb = b.program_buffer;
    const int c = pb < 0 ? -1 : candidate_of[static_cast<std::size_t>(pb)];
    const int fwd_last = pb < 0 ? -1 : plan.buffers[static_cast<std::size_t>(pb)].last_use;
    for (int e = b.first; e <= b.last; ++e) {
      RecomputeBound::Point& p = r.points[static_cast<std::size_t>(e)];
      if (c < 0 || fwd_last >= n) {  // the same whatever is kept
        p.base = checked_add(p.base, b.bytes);
        continue;
      }
      const auto cu = static_cast<std::size_t>(c);
      const bool alive_either_way =
          e <= fwd_last || (first_reader[cu] >= 0 && e >= first_reader[cu] && e <= last_reader[cu]);
      if (alive_either_way) {
        p.base = checked_add(p.base, b.bytes);
      } else {
        p.kept.push_back({c, b.bytes});
      }
    }
  }
  r.first_reader = first_reader;
  r.last_reader = last_reader;
  // A kept candidate a statement made again reads lives until that recomputation: at every
  // event after its own last reader, as long as the statement is not yet made again.
  for (const RecomputeBound::Chain& ch : r.chains) {
    if (ch.maker == ch.statement) continue;
    const TrainingBuffer& b = all.buffers[static_cast<std::size_t>(
        all.forward_buffer[static_cast<std::size_t>(candidates[static_cast<std::size_t>(ch.candidate)].first)])];
    for (int e = b.last + 1; e < all.events; ++e)
      r.points[static_cast<std::size_t>(e)].read_again.push_back({ch.candidate, ch.statement, b.bytes});
  }
  // A candidate made again before its first reader (with its statement, for another) lives
  // from then on.
  for (std::size_t c = 0; c < nc; ++c) {
    if (first_reader[c] < 0) continue;
    const std::int64_t bytes = plan.buffers[static_cast<std::size_t>(candidates[c].first)].bytes;
    for (int e = n; e < first_reader[c]; ++e)
      r.points[static_cast<std::size_t>(e)].early.push_back({static_cast<int>(c), bytes});
  }
  return r;
}

namespace {

/// Per statement: whether the choice has made it again by the gradient at `point` (each
/// dropped candidate a gradient up to there reads, and what their recomputations read; at
/// the last point, every statement it makes again: the least fixpoint of the bound's rows).
std::vector<bool> made_by(const RecomputeBound& bound, const std::vector<bool>& keep, int point) {
  std::vector<bool> made(bound.statements.size(), false);
  for (std::size_t c = 0; c < bound.candidates.size(); ++c)
    if (!keep.at(c) && bound.first_reader[c] >= 0 && bound.first_reader[c] <= point)
      made[static_cast<std::size_t>(bound.candidate_statement[c])] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (const RecomputeBound::Chain& ch : bound.chains)
      if (made[static_cast<std::size_t>(ch.statement)] && !keep.at(static_cast<std::size_t>(ch.candidate)) &&
          !made[static_cast<std::size_t>(ch.maker)]) {
        made[static_cast<std::size_t>(ch.maker)] = changed = true;
      }
  }
  return made;
}

std::vector<bool> made_again(const RecomputeBound& bound, const std::vector<bool>& keep) {
  return made_by(bound, keep, std::numeric_limits<int>::max());
}

}  // namespace

Count bound_flops(const RecomputeBound& bound, const std::vector<bool>& keep) {
  const std::vector<bool> made = made_again(bound, keep);
  Count flops;
  for (std::size_t s = 0; s < made.size(); ++s)
    if (made[s]) flops += bound.statement_flops[s];
  return flops;
}

std::int64_t bound_peak(const RecomputeBound& bound, const std::vector<bool>& keep) {
  const std::vector<bool> made = made_again(bound, keep);
  std::int64_t peak = 0;
  for (std::size_t e = 0; e < bound.points.size(); ++e) {
    const RecomputeBound::Point& p = bound.points[e];
    const std::vector<bool> by = made_by(bound, keep, static_cast<int>(e));
    std::int64_t bytes = p.base;
    for (const RecomputeBound::Term& t : p.kept)
      if (keep.at(static_cast<std::size_t>(t.candidate))) bytes = checked_add(bytes, t.bytes);
    for (const RecomputeBound::ReadAgain& t : p.read_again)
      if (keep.at(static_cast<std::size_t>(t.candidate)) && made[static_cast<std::size_t>(t.statement)] &&
          !by[static_cast<std::size_t>(t.statement)])
        bytes = checked_add(bytes, t.bytes);
    for (const RecomputeBound::Term& t : p.early)
      if (!keep.at(static_cast<std::size_t>(t.candidate)) &&
          by[static_cast<std::size_t>(bound.candidate_statement[static_cast<std::size_t>(t.candidate)])])
        bytes = checked_add(bytes, t.bytes);
    peak = std::max(peak, bytes);
  }
  return peak;
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
