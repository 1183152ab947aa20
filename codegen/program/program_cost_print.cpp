// ProgramCost::str(): the statements with their gradients, the totals, memory and the
// 6·N·P comparison, as aligned tables with units (and the exact integers beside them).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "cost/units.hpp"
#include "einexpr/codegen/program_cost.hpp"

namespace einexpr {

namespace {

using detail::iec;
using detail::num;
using detail::si;

/// Displayed characters of UTF-8 text (code points).
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

/// Rows of cells, aligned per column ('l' or 'r' in `align`), two spaces apart.
std::string table(const std::vector<std::vector<std::string>>& rows, const std::string& align, int indent) {
  std::vector<std::size_t> w(align.size(), 0);
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], width(r[c]));
  std::string out;
  for (const auto& r : rows) {
    std::string line(static_cast<std::size_t>(indent), ' ');
    for (std::size_t c = 0; c < r.size() && c < w.size(); ++c) {
      const std::string pad(w[c] - width(r[c]), ' ');
      line += (c ? "  " : "") + (align[c] == 'r' ? pad + r[c] : r[c] + pad);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + '\n';
  }
  return out;
}

std::string flops(Count c) { return si(c.to_double(), "FLOP"); }
std::string bytes(Count c) { return iec(c.to_double()); }

std::string seconds(double s) {
  static const char* const units[] = {"s", "ms", "µs", "ns"};
  int u = 0;
  while (s != 0 && s < 1 && u < 3) s *= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g %s", s, units[u]);
  return buf;
}

/// A run of statements shown as one row: `count` layers of one block statement from
/// statements[first] on, one per layer (count 1 outside blocks).
struct Run {
  std::size_t first = 0;
  std::int64_t count = 1;
  std::vector<std::size_t> members;
};

bool same_costs(const StatementCost& a, const StatementCost& b) {
  auto time = [](const StatementCost& s) { return s.roofline ? s.roofline->time_s : -1.0; };
  return a.forward.flops == b.forward.flops && a.forward.bytes_read == b.forward.bytes_read &&
         a.forward.bytes_written == b.forward.bytes_written && a.backward_flops == b.backward_flops &&
         a.is_view == b.is_view && a.gradients.size() == b.gradients.size() && time(a) == time(b) &&
         a.backward_time_s == b.backward_time_s;
}

/// The statements in print order: a block call's as its body, each body statement once per run
/// of consecutive layers with equal costs (layer 0 often differs: its carry needs no gradient).
std::vector<Run> runs(const ProgramCost& c) {
  std::vector<Run> out;
  const std::size_t n = c.statements.size();
  for (std::size_t i = 0; i < n;) {
    const StatementCost& s = c.statements[i];
    if (s.layer < 0) {
      out.push_back({i, 1, {i}});
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < n && c.statements[end].layer >= 0 && c.statements[end].call == s.call) ++end;
    int bodies = 0;
    for (std::size_t j = i; j < end; ++j) bodies = std::max(bodies, c.statements[j].body + 1);
    for (int b = 0; b < bodies; ++b) {
      Run run;
      for (std::size_t j = i; j < end; ++j) {
        if (c.statements[j].body != b) continue;
        if (!run.members.empty() && same_costs(c.statements[run.first], c.statements[j])) {
          ++run.count;
          run.members.push_back(j);
          continue;
        }
        if (!run.members.empty()) out.push_back(run);
        run = {j, 1, {j}};
      }
      if (!run.members.empty()) out.push_back(run);
    }
    i = end;
  }
  return out;
}

/// A name or expression of layer r shown for layers r.. of a run: "[r]" -> "[l]", "[r-1]" ->
/// "[l-1]", "[r+1]" -> "[l+1]".
std::string per_layer(std::string text, int r, std::int64_t count) {
  if (count == 1) return text;
  const std::string from = "[" + std::to_string(r) + "]", before = "[" + std::to_string(r - 1) + "]",
                    after = "[" + std::to_string(r + 1) + "]";
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, from.size(), from) == 0) {
      out += "[l]";
      i += from.size();
    } else if (r > 0 && text.compare(i, before.size(), before) == 0) {
      out += "[l-1]";
      i += before.size();
    } else if (text.compare(i, after.size(), after) == 0) {
      out += "[l+1]";
      i += after.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string layers_of(const StatementCost& s, std::int64_t count) {
  if (s.layer < 0) return "";
  return count == 1 ? std::to_string(s.layer) : std::to_string(s.layer) + ".." + std::to_string(s.layer + count - 1);
}

void print_statements(std::ostringstream& os, const ProgramCost& c) {
  const bool timed = c.timing.error.empty() && !c.timing.device.empty();
  const bool blocks = std::any_of(c.statements.begin(), c.statements.end(), [](const StatementCost& s) { return s.layer >= 0; });
  const std::vector<Run> rs = runs(c);
  std::vector<std::vector<std::string>> rows = {{"statement", blocks ? "layers" : "", "op", "pattern", "forward", "backward",
                                                 "read", "written", timed ? "time (" + c.timing.device + ")" : "",
                                                 timed ? "bound" : ""}};
  for (const Run& r : rs) {
    const StatementCost& s = c.statements[r.first];
    const StatementCost& last = c.statements[r.members.back()];  // names as a later layer reads them
    const bool has = timed && s.roofline.has_value();
    rows.push_back({per_layer(last.name, last.layer, r.count), layers_of(s, r.count), s.op, s.pattern, flops(s.forward.flops),
                    s.gradients.empty() ? "-" : flops(s.backward_flops),
                    s.is_view ? "-" : bytes(s.forward.bytes_read), s.is_view ? "-" : bytes(s.forward.bytes_written),
                    has ? seconds(s.roofline->time_s) : "",
                    !has ? "" : s.is_view ? "view" : s.roofline->bound()});
  }
  os << table(rows, "llllrrrrrl", 2);
  if (blocks)
    os << "  (a block's statement is one row per run of layers with equal costs, its figures per layer; "
          "[l] is the row's layer)\n";
  std::vector<std::vector<std::string>> grads;
  for (const Run& r : rs) {
    const StatementCost& s = c.statements[r.members.back()];
    for (const StatementGradient& g : s.gradients)
      grads.push_back({per_layer("d" + g.tensor + " = " + g.expression, s.layer, r.count), flops(g.cost.flops),
                       g.cost.flops.str(), r.count == 1 ? "" : "×" + std::to_string(r.count)});
  }
  if (grads.empty()) {
    os << "backward: no output depends on a param\n";
    return;
  }
  os << "backward (gradients toward the params only)\n" << table(grads, "lrrl", 2);
}

void print_totals(std::ostringstream& os, const ProgramCost& c) {
  const std::string opt = name(c.optimizer);
  std::vector<std::vector<std::string>> rows = {
      {"forward", flops(c.forward_flops), c.forward_flops.str(), ""},
      {"backward", flops(c.backward_flops), c.backward_flops.str(),
       c.accumulate_flops == Count{} ? "" : "of which " + c.accumulate_flops.str() + " add gradients together"},
      {"optimizer", flops(c.optimizer_flops), c.optimizer_flops.str(),
       opt + ": " + optimizer_flops_per_element(c.optimizer).str() + " per param"},
      {"training step", flops(c.step_flops), c.step_flops.str(), "forward + backward + optimizer"},
      {"params", si(c.params.to_double(), ""), c.params.str(), "elements"}};
  const RecomputeChoice& r = c.recompute;
  if (r.training.recompute) {
    std::string kept;
    for (const std::string& k : r.training.keep) kept += (kept.empty() ? "" : ", ") + k;
    std::string why = std::string(name(r.mode)) + ": forward statements made again in the backward, keeping " +
                      (kept.empty() ? "the outputs only" : kept);
    if (r.mode == RecomputeMode::automatic)
      why += " (chosen for the limit " + bytes(Count::from_int64(r.memory_limit)) + ", " + std::to_string(r.tried) +
             " choices tried: " + (r.exhaustive ? "every one" : r.optimal ? "the fewest FLOPs possible" :
                                   "greedy, then branch and bound, unfinished") + ")";
    rows.insert(rows.begin() + 4, {"recompute", flops(r.recompute_flops), r.recompute_flops.str(), why});
  } else if (r.mode == RecomputeMode::automatic) {
    rows.insert(rows.begin() + 4, {"recompute", flops(Count{}), "0", "auto: the step fits " +
                                   bytes(Count::from_int64(r.memory_limit)) + " keeping everything"});
  }
  if (c.timing.error.empty() && !c.timing.device.empty())
    rows.push_back({"time bound", seconds(c.timing.step_s), "",
                    "on " + c.timing.device + ": forward " + seconds(c.timing.forward_s) + ", backward " +
                        seconds(c.timing.backward_s) +
                        (c.recompute.training.recompute ? ", recompute " + seconds(c.timing.recompute_s) : std::string()) +
                        ", optimizer " + seconds(c.timing.optimizer_s)});
  os << "totals\n" << table(rows, "lrrl", 2);
  if (!c.timing.error.empty()) os << "  no time bound on " << c.timing.device << ": " << c.timing.error << '\n';
}

void print_memory(std::ostringstream& os, const ProgramCost& c) {
  const ProgramMemory& m = c.memory;
  const int states = optimizer_states(c.optimizer);
  std::string opt = std::string(name(c.optimizer)) + ": " +
                    (states == 0 ? std::string("no state") : std::to_string(states) + " f32 state" + (states > 1 ? "s" : ""));
  if (c.mixed_precision) opt += ", f32 master weights for params narrower than f32";
  const std::vector<std::vector<std::string>> rows = {
      {"params", bytes(m.params_bytes), m.params_bytes.str(), ""},
      {"gradients", bytes(m.grads_bytes), m.grads_bytes.str(), "one per param, at its dtype"},
      {"optimizer", bytes(m.optimizer_bytes), m.optimizer_bytes.str(), opt},
      {"inputs", bytes(m.inputs_bytes), m.inputs_bytes.str(), ""},
      {"activations", bytes(m.activations_bytes), m.activations_bytes.str(),
       c.recompute.training.recompute ? "kept for the backward (the rest made again)" : "kept for the backward"},
      {"peak", bytes(m.peak_bytes), m.peak_bytes.str(), "forward + backward, each buffer freed after its last use"},
      {"forward peak", bytes(m.forward_peak_bytes), m.forward_peak_bytes.str(), "the forward alone, statement buffers"}};
  os << "memory\n" << table(rows, "lrrl", 2);
  if (m.kept.empty()) return;
  // a block's layers keep the same tensors: one row per tensor of the layer, with its count
  auto text = [](const KeptActivation& k, const std::string& t) { return k.layer < 0 ? t : per_layer(t, k.layer, 2); };
  auto key = [&](const KeptActivation& k) {
    std::string s = k.call + "|" + text(k, k.tensor) + "|" + text(k, k.read_as) + "|" + k.shape + "|" + k.bytes.str();
    for (const std::string& n : k.needed_by) s += "|" + text(k, n);
    return s;
  };
  std::vector<std::pair<std::size_t, std::int64_t>> folded;  // first entry, count
  std::map<std::string, std::size_t> row_of;
  std::map<std::string, std::pair<Count, std::set<int>>> per_block;  // a call's kept bytes, its layers
  for (std::size_t i = 0; i < m.kept.size(); ++i) {
    const KeptActivation& k = m.kept[i];
    if (k.layer >= 0) {
      per_block[k.call].first += k.bytes;
      per_block[k.call].second.insert(k.layer);
    }
    const auto [it, fresh] = row_of.emplace(k.layer < 0 ? std::to_string(i) : key(k), folded.size());
    if (fresh) folded.emplace_back(i, 1);
    else ++folded[it->second].second;
  }
  const bool blocks = !per_block.empty();
  std::vector<std::vector<std::string>> kept = {{"kept for the backward", "shape", "bytes", blocks ? "layers" : "", "read by"}};
  for (const auto& row : folded) {
    const KeptActivation& k = m.kept[row.first];
    const auto count = row.second;  // not a structured binding: the lambda below captures it (clang 14)
    auto shown = [&](const std::string& t) { return count == 1 ? t : text(k, t); };
    const std::string what = k.read_as.empty() || k.read_as == k.tensor ? shown(k.tensor)
                                                                        : shown(k.tensor) + " (as " + shown(k.read_as) + ")";
    for (std::size_t i = 0; i < std::max<std::size_t>(k.needed_by.size(), 1); ++i)
      kept.push_back({i == 0 ? what : "", i == 0 ? k.shape : "", i == 0 ? k.bytes.str() : "",
                      i == 0 && count > 1 ? "×" + std::to_string(count) : "",
                      i < k.needed_by.size() ? shown(k.needed_by[i]) : ""});
  }
  os << table(kept, "llrll", 2);
  for (const auto& [call, b] : per_block) {
    const auto layers = static_cast<unsigned>(b.second.size());
    os << "  kept per layer of " << call << ": " << bytes(Count::from_u128(b.first.raw() / layers)) << " ("
       << Count::from_u128(b.first.raw() / layers).str() << " bytes on average, " << b.first.str() << " over its "
       << layers << " layers)\n";
  }
}

/// exact - rule, signed: "-133955583".
std::string difference(Count exact, Count rule) {
  return exact >= rule ? "+" + (exact - rule).str() : "-" + (rule - exact).str();
}

void print_estimate(std::ostringstream& os, const ProgramCost& c) {
  const SixNP& e = c.estimate;
  os << "6·N·P estimate (N = " << (e.n_exact ? num(e.n, 15) : "about " + num(e.n)) << " data points, P = " << e.p.str()
     << " params)\n";
  std::vector<std::vector<std::string>> rows = {{"6·N·P", flops(e.rule), e.rule.str(), ""},
                                                {"exact", flops(e.exact), e.exact.str(), "forward + backward"},
                                                {"difference", "", difference(e.exact, e.rule), "exact - 6·N·P, by part:"}};
  os << table(rows, "lrrl", 2);
  rows = {{"part", "exact", "6·N·P share", "difference"}};
  for (const SixNP::Part& p : e.parts) rows.push_back({p.what, p.exact.str(), p.rule.str(), difference(p.exact, p.rule)});
  os << table(rows, "lrrr", 4);
  for (const SixNP::Part& p : e.parts) os << "    " << p.what << ": " << p.note << '\n';
}

}  // namespace

std::string ProgramCost::str() const {
  std::ostringstream os;
  os << "program " << (file.empty() ? "<program>" : file) << "  " << axes << '\n';
  print_statements(os, *this);
  print_totals(os, *this);
  print_memory(os, *this);
  print_estimate(os, *this);
  return os.str();
}

}  // namespace einexpr
