// The einsum core (contract.hpp): private axes summed first, then pairwise contractions in
// the cheapest order, each a ContractStep on operands viewed as [batch.., m, k] x
// [batch.., k, n]. An operand is copied only when its m/k (or k/n) atoms cannot merge into
// one stride each or no GEMM can read the matrix in place (matrix_map.hpp), and looping over
// its outermost m (n) atoms as batch dims would not help; the last contraction writes
// straight into the output's layout where it can.
#include "plan/contract.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/layout.hpp"
#include "order/order.hpp"
#include "plan/matrix_map.hpp"

namespace einexpr::detail {

namespace {

struct Merged {
  std::int64_t length = 1;
  std::int64_t stride = 1;
};

bool contains(const Axes& set, AxisId id) { return std::find(set.begin(), set.end(), id) != set.end(); }

/// The atoms of `group` (in this order) as one dim of v, when their strides allow.
std::optional<Merged> merged(const AtomView& v, const Axes& group) {
  Merged m;
  std::optional<AtomDim> prev;
  for (AxisId id : group) {
    const AtomDim& a = v.at(id);
    if (a.length == 0) return Merged{0, 1};
    m.length *= a.length;
    if (a.length == 1) continue;
    if (prev && prev->stride != a.stride * a.length) return std::nullopt;
    prev = a;
  }
  if (prev) m.stride = prev->stride;
  return m;
}

/// Whether a GEMM reads the [rows x cols] matrix of v in place.
bool gemm_reads(const AtomView& v, const Axes& rows, const Axes& cols) {
  const auto r = merged(v, rows), c = merged(v, cols);
  return r && c && fit_matrix(r->length, c->length, r->stride, c->stride).has_value();
}

/// `group` sorted by v's strides, largest first (the order that can merge).
Axes by_stride(const AtomView& v, Axes group) {
  std::stable_sort(group.begin(), group.end(), [&](AxisId a, AxisId b) { return v.at(a).stride > v.at(b).stride; });
  return group;
}

/// `group` in the order of `order` (atoms of group not in order keep theirs, at the end).
Axes by_order(Axes group, const Axes& order) {
  auto pos = [&](AxisId n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
  std::stable_sort(group.begin(), group.end(), [&](AxisId a, AxisId b) { return pos(a) < pos(b); });
  return group;
}

Axes concat(std::initializer_list<const Axes*> parts) {
  Axes out;
  for (const Axes* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

/// Sums `axes` out of v (ReduceStep), the result laid out contiguously in `order`'s order.
AtomView sum_out(PlanBuilder& b, const AtomView& v, const Axes& axes, const Axes& order) {
  const AtomView src = b.emit(v);
  std::vector<int> idx;
  std::vector<AtomDim> rest;
  for (std::size_t i = 0; i < v.dims.size(); ++i) {
    if (contains(axes, v.dims[i].id)) idx.push_back(static_cast<int>(i));
    else rest.push_back(v.dims[i]);
  }
  Axes rest_order;
  for (AxisId n : order)
    if (std::any_of(rest.begin(), rest.end(), [&](const AtomDim& a) { return a.id == n; })) rest_order.push_back(n);
  for (const AtomDim& a : rest)
    if (!contains(rest_order, a.id)) rest_order.push_back(a.id);
  const Strides strides = strides_for_order(rest, rest_order);
  AtomView out{-1, -1, 0, rest};
  for (std::size_t i = 0; i < rest.size(); ++i) out.dims[i].stride = strides[i];
  out.value = b.new_temp_value(out.shape(), strides, out.dims_axes());
  out.buffer = b.value(out.value).buffer;
  b.add_step(ReduceStep{src.value, out.value, Reduction::sum, idx});
  return out;
}

struct Groups {
  Axes batch, m, n, k;
};

/// Emits the [batch.., rows, cols] view of v for a contraction; a batch atom v lacks (a loop
/// atom of the other operand) is read at stride 0, its length `other`'s.
int matrix_view(PlanBuilder& b, const AtomView& v, const AtomView& other, const Axes& batch, const Axes& rows,
                const Axes& cols) {
  const Merged r = *merged(v, rows), c = *merged(v, cols);
  Layout l;
  std::vector<DimAxes> dims;
  for (AxisId n : batch) {
    const bool own = v.has(n);
    l.shape.push_back(own ? v.at(n).length : other.at(n).length);
    l.strides.push_back(own ? v.at(n).stride : 0);
    dims.push_back({n});
  }
  l.shape.insert(l.shape.end(), {r.length, c.length});
  l.strides.insert(l.strides.end(), {r.stride, c.stride});
  l.offset = v.offset;
  dims.push_back(rows);
  dims.push_back(cols);
  return b.view(b.emit(v).value, std::move(l), std::move(dims));
}

/// Splits a merged dim's stride back over its atoms.
void split_into(std::vector<AtomDim>& dims, const AtomView& from, const Axes& group, std::int64_t stride) {
  std::vector<AtomDim> part;
  for (AxisId n : group) part.push_back(from.at(n));
  for (std::size_t i = part.size(); i-- > 0;) {
    part[i].stride = stride;
    stride *= std::max<std::int64_t>(part[i].length, 1);
  }
  dims.insert(dims.end(), part.begin(), part.end());
}

ContractStep::Kind kind_of(std::int64_t m, std::int64_t n, std::int64_t k, bool batched) {
  if ((m == 1 && n == 1) || (k == 1 && (m == 1 || n == 1))) return ContractStep::Kind::generic;
  return batched ? ContractStep::Kind::batched_gemm : ContractStep::Kind::gemm;
}

/// Sorts the atoms of a pair into batch (in both, kept), k (in both, summed), m (x only)
/// and n (y only), each in the order that lets it merge into one stride.
Groups classify(const AtomView& x, const AtomView& y, const Axes& needed, const Axes& out_order) {
  Groups g;
  for (const AtomDim& a : x.dims) (y.has(a.id) ? (contains(needed, a.id) ? g.batch : g.k) : g.m).push_back(a.id);
  for (const AtomDim& a : y.dims)
    if (!x.has(a.id)) g.n.push_back(a.id);
  // m and n: the output's order when it merges (the result can then be written in place).
  auto pick = [&](const AtomView& v, const Axes& group) {
    if (!out_order.empty()) {
      Axes o = by_order(group, out_order);
      if (merged(v, o)) return o;
    }
    return by_stride(v, group);
  };
  if (!out_order.empty()) g.batch = by_order(g.batch, out_order);
  g.m = pick(x, g.m);
  g.n = pick(y, g.n);
  // k: one order for both operands; x's unless only y's merges in both.
  g.k = by_stride(x, g.k);
  if (!merged(x, g.k) || !merged(y, g.k)) {
    const Axes ky = by_stride(y, g.k);
    if (merged(x, ky) && merged(y, ky)) g.k = ky;
  }
  return g;
}

/// The product of a group's lengths. Every operand's atoms were counted where '...' was
/// broadcast (resolve_multi), so a group of them fits; counted with numpy's rule all the same
/// (ShapeError, as PlanBuilder::view refuses a view), since before that check an operand
/// broadcast over '...' (2^61 against 1, beside a dim of 2^63 - 1) overflowed here (fuzz_plan,
/// 2026-11-29: a signed overflow).
std::int64_t length_of(const AtomView& v, const Axes& group) {
  std::vector<std::int64_t> lengths;
  lengths.reserve(group.size());
  for (AxisId n : group) lengths.push_back(v.at(n).length);
  return checked_numel(lengths);
}

/// The result's atoms [batch.., m.., n..] with their strides: the output's layout when the
/// last contraction can write it directly (m and n merge there, and a GEMM can write it),
/// else contiguous in `fallback`'s order.
AtomView result_atoms(const AtomView& x, const AtomView& y, const Groups& g, const Axes& out_order, bool gemm,
                      const Axes& fallback) {
  AtomView z{-1, -1, 0, {}};
  for (AxisId n : g.batch) z.dims.push_back(x.has(n) ? x.at(n) : y.at(n));
  split_into(z.dims, x, g.m, 1);
  split_into(z.dims, y, g.n, 1);
  auto laid_out = [&](const Axes& order) {
    AtomView v = z;
    const Strides s = strides_for_order(v.dims, order);
    for (std::size_t i = 0; i < v.dims.size(); ++i) v.dims[i].stride = s[i];
    return v;
  };
  if (!out_order.empty()) {
    const AtomView direct = laid_out(out_order);
    if (merged(direct, g.m) && merged(direct, g.n) && (!gemm || gemm_reads(direct, g.m, g.n))) return direct;
  }
  return laid_out(fallback);
}

/// A batched GEMM per loop atom costs a library call per matrix: each must keep at least this
/// many multiply-adds (about 3 µs of one core), or the operand is copied instead.
constexpr std::int64_t loop_gemm_work = std::int64_t{1} << 18;
/// ...and the other side's free length (n for the left operand, m for the right) must be at
/// most this: the GEMM does 2·n FLOPs per element of the operand, so with n short the copy (two
/// passes over the operand, then the GEMM's read) costs as much as the GEMM, while with n in
/// the thousands the GEMM is bound by its arithmetic, the copy is noise, and thinner GEMMs lose.
/// TCCG on Zen 5 (bench/RESULTS.md): n = 24-384 gained 9-45% from the loop, n = 7056 lost 12%,
/// n = 8000-9600 (k = 24, a 0.9 MB copy against a 368 MB output) lost 28-49% on six of 18.
constexpr std::int64_t loop_other_side = 1024;
/// ...and the matrix each GEMM reads in place (rest x k, at the operand's strides) at most this
/// many bytes: intensli6's 62208x48 f32 matrices (12 MB, columns 243 KB apart) lost 8% to the
/// copy, matrices of 0.6-3 MB (columns 1.5-32 KB apart) gained.
constexpr std::int64_t loop_matrix_bytes = std::int64_t{8} << 20;

/// The outermost atoms of `free` (in its order) that v's other free atoms cannot merge with:
/// looped over as batch dims, the rest then read in place by a GEMM, as v's [rest x k] (left,
/// `rows`) or [k x rest] (right). Empty where the atoms merge already, where no prefix makes
/// the rest readable, or where the rest is a single element.
Axes loop_atoms(const AtomView& v, const Axes& free, const Axes& k, bool rows) {
  if (merged(v, free)) return {};
  Axes loop, rest = free;
  while (rest.size() > 1) {
    loop.push_back(rest.front());
    rest.erase(rest.begin());
    if (merged(v, rest)) break;
  }
  if (!merged(v, rest) || !merged(v, k) || length_of(v, rest) <= 1) return {};
  if (!(rows ? gemm_reads(v, rest, k) : gemm_reads(v, k, rest))) return {};
  return loop;
}

Axes without(const Axes& group, const Axes& drop) {
  Axes out;
  for (AxisId id : group)
    if (!contains(drop, id)) out.push_back(id);
  return out;
}

std::string names(const PlanBuilder& b, const Axes& ids) {
  std::string s;
  for (AxisId id : ids) s += (s.empty() ? "" : " ") + b.axes().name(id);
  return s;
}

/// Why a GEMM cannot read v's [rows x cols] in place.
std::string unread_reason(const PlanBuilder& b, const AtomView& v, const Axes& rows, const Axes& cols,
                          const char* rows_name, const char* cols_name) {
  if (!merged(v, rows)) return std::string("its ") + rows_name + " atoms [" + names(b, rows) + "] do not merge into one stride";
  if (!merged(v, cols)) return std::string("its ") + cols_name + " atoms [" + names(b, cols) + "] do not merge into one stride";
  return std::string("neither its ") + rows_name + " [" + names(b, rows) + "] nor its " + cols_name + " [" +
         names(b, cols) + "] has unit stride";
}

/// Contracts x and y, keeping the atoms in `needed`; `out_order` (the output's atoms) is
/// given for the last contraction so its result can be written in the output's layout.
/// Notes, for `explain`, each operand copied into a GEMM's layout first (transpose, then
/// GEMM) and why, and a last result that is not the output's own layout.
AtomView contract_pair(PlanBuilder& b, AtomView x, AtomView y, const Axes& needed, const Axes& out_order,
                       std::vector<std::string>& notes) {
  // 1. Atoms one operand holds and nothing later needs are summed first.
  auto unneeded = [&](const AtomView& v, const AtomView& other) {
    Axes out;
    for (const AtomDim& a : v.dims)
      if (!other.has(a.id) && !contains(needed, a.id)) out.push_back(a.id);
    return out;
  };
  if (const Axes u = unneeded(x, y); !u.empty()) x = sum_out(b, x, u, x.ids());
  if (const Axes u = unneeded(y, x); !u.empty()) y = sum_out(b, y, u, y.ids());
  // 2. Groups and the kind of product.
  const Groups g = classify(x, y, needed, out_order);
  const ContractStep::Kind kind = kind_of(length_of(x, g.m), length_of(y, g.n), length_of(x, g.k), !g.batch.empty());
  const bool gemm = kind != ContractStep::Kind::generic;
  // 3. An operand is copied only when its groups cannot merge, or a GEMM cannot read it.
  const std::int64_t lm = length_of(x, g.m), ln = length_of(y, g.n), lk = length_of(x, g.k);
  const std::string what = std::string(gemm ? "gemm " : "contraction ") + std::to_string(lm) + "x" +
                           std::to_string(ln) + "x" + std::to_string(lk) + " over [" + names(b, g.k) + "]";
  auto copied = [&](const char* side, const AtomView& v, const Axes& order, const std::string& why) {
    notes.push_back(what + ": " + side + " [" + names(b, v.ids()) + "] copied to [" + names(b, order) + "] first (" +
                    why + "; the copy is a transpose at memory speed)");
  };
  // 3a. m (n) atoms that do not merge into one stride, where only the outermost keep the others
  // from merging: those become batch dims of a batched GEMM that reads the operand in place
  // (the other operand at stride 0 along them), instead of a copy first (TCCG's intensli0,
  // `a d b, c d -> c b a`: 384 GEMMs of 384x24x384 reading x where it lies, 19 ms against
  // 29 ms with the copy and 23 ms for one GEMM of the flattened m on laid-out operands, Zen 5,
  // bench/RESULTS.md), when each GEMM keeps loop_gemm_work multiply-adds, the other side is
  // short (loop_other_side) and each matrix read in place is small (loop_matrix_bytes).
  Groups run = g;  // the groups the GEMM runs: the loop atoms moved to its batch
  if (gemm) {
    const auto e = static_cast<std::int64_t>(element_size(b.dtype()));
    auto fits = [&](const AtomView& v, const Axes& loop, const Axes& free) {
      return !loop.empty() && saturating_mul(saturating_mul(length_of(v, without(free, loop)), lk), e) <= loop_matrix_bytes;
    };
    Axes loop_m = ln <= loop_other_side ? loop_atoms(x, g.m, g.k, true) : Axes{};
    Axes loop_n = lm <= loop_other_side ? loop_atoms(y, g.n, g.k, false) : Axes{};
    if (!fits(x, loop_m, g.m)) loop_m.clear();
    if (!fits(y, loop_n, g.n)) loop_n.clear();
    const Axes rest_m = without(g.m, loop_m), rest_n = without(g.n, loop_n);
    const std::int64_t work = saturating_mul(saturating_mul(length_of(x, rest_m), length_of(y, rest_n)), lk);
    if ((!loop_m.empty() || !loop_n.empty()) && work >= loop_gemm_work) {
      run.batch = concat({&g.batch, &loop_m, &loop_n});
      run.m = rest_m;
      run.n = rest_n;
      auto looped = [&](const char* side, const AtomView& v, const Axes& group, const Axes& loop, const char* atoms) {
        const std::int64_t count = length_of(v, loop);
        notes.push_back(what + ": " + side + " [" + names(b, v.ids()) + "] read in place by " + std::to_string(count) +
                        " GEMMs of " + std::to_string(length_of(x, run.m)) + "x" + std::to_string(length_of(y, run.n)) +
                        "x" + std::to_string(lk) + ", batched over [" + names(b, loop) + "] (its " + atoms + " atoms [" +
                        names(b, group) + "] do not merge into one stride; no copy)");
      };
      if (!loop_m.empty()) looped("left", x, g.m, loop_m, "m");
      if (!loop_n.empty()) looped("right", y, g.n, loop_n, "n");
    }
  }
  if (!merged(x, run.m) || !merged(x, run.k) || (gemm && !gemm_reads(x, run.m, run.k))) {
    const Axes order = concat({&g.batch, &g.m, &g.k});
    copied("left", x, order, unread_reason(b, x, g.m, g.k, "m", "k"));
    x = b.materialize(x, order);
  }
  if (!merged(y, run.k) || !merged(y, run.n) || (gemm && !gemm_reads(y, run.k, run.n))) {
    const Axes order = concat({&g.batch, &g.k, &g.n});
    copied("right", y, order, unread_reason(b, y, g.k, g.n, "k", "n"));
    y = b.materialize(y, order);
  }
  // 4. The result's layout, then the step on [batch.., m, k] x [batch.., k, n].
  AtomView z = result_atoms(x, y, run, out_order, gemm, concat({&g.batch, &g.m, &g.n}));
  if (!out_order.empty() && z.strides() != strides_for_order(z.dims, out_order))
    notes.push_back(what + ": result written as [" + names(b, concat({&g.batch, &g.m, &g.n})) +
           "], the output [" + names(b, out_order) + "] a strided view of it (m and n atoms interleave there, or " +
           "no GEMM writes it); einsum_into copies it");
  const Merged zm = *merged(z, run.m), zn = *merged(z, run.n);
  Layout dst;
  std::vector<DimAxes> dims;
  for (AxisId n : run.batch) {
    const AtomDim& a = z.at(n);
    dst.shape.push_back(a.length);
    dst.strides.push_back(a.stride);
    dims.push_back({n});
  }
  dst.shape.insert(dst.shape.end(), {zm.length, zn.length});
  dst.strides.insert(dst.strides.end(), {zm.stride, zn.stride});
  dims.push_back(run.m);
  dims.push_back(run.n);
  const int a = matrix_view(b, x, y, run.batch, run.m, run.k);
  const int bb = matrix_view(b, y, x, run.batch, run.k, run.n);
  const int out = b.new_temp_value(dst.shape, dst.strides, dims);
  const ContractStep::Kind run_kind = run.batch.empty() ? kind : kind_of(length_of(x, run.m), length_of(y, run.n), lk, true);
  b.add_step(ContractStep{a, bb, out, static_cast<int>(run.batch.size()), run_kind, run.k});
  z.buffer = b.value(out).buffer;
  return z;
}

/// The atoms as the order search sees them: each node's ids, the output's, and the lengths
/// from the table, the ids renumbered densely (0, 1, ... in order of first use).
order::Problem order_problem(const std::vector<AtomView>& nodes, const Axes& output, const AxisTable& axes) {
  order::Problem problem;
  std::vector<AxisId> dense(axes.size(), -1);
  auto id_of = [&](AxisId id) {
    AxisId& d = dense[static_cast<std::size_t>(id)];
    if (d < 0) {
      d = static_cast<AxisId>(problem.lengths.size());
      problem.lengths.push_back(axes.length(id));
    }
    return d;
  };
  for (const AtomView& v : nodes) {
    problem.operands.emplace_back();
    for (const AtomDim& a : v.dims) problem.operands.back().push_back(id_of(a.id));
  }
  for (AxisId id : output)
    if (dense[static_cast<std::size_t>(id)] >= 0) problem.output.push_back(dense[static_cast<std::size_t>(id)]);
  return problem;
}

/// The search's options for `goal`; an alpha or memory limit no search can take is the
/// caller's error.
order::Options order_options(ContractionOrder order, const OrderGoal& goal, DType dtype) {
  if (!std::isfinite(goal.alpha) || goal.alpha < 0)
    throw Error("einsum: the contraction order's alpha (FLOPs per byte written) must be finite and >= 0, not " +
                std::to_string(goal.alpha));
  if (goal.memory_limit && *goal.memory_limit < 0)
    throw Error("einsum: the memory limit on intermediates must be >= 0 elements, not " +
                std::to_string(*goal.memory_limit));
  order::Options o;
  o.method = order;
  o.objective = goal.objective;
  o.alpha = goal.alpha;
  o.element_bytes = static_cast<int>(element_size(dtype));
  if (goal.memory_limit) o.memory_limit = order::SatCount(static_cast<std::uint64_t>(*goal.memory_limit));
  return o;
}

/// "contraction order (1 (2 3)): 4096 FLOPs (optimal: matrix chain, 0.0123 ms); left to
/// right ((1 2) 3): 65536": the order, its FLOPs, the search that found it (with
/// "optimal: " when the answer is proven), how long the search took, and left to right.
std::string order_note(const order::Problem& problem, const order::Path& path) {
  order::Options left_to_right;
  left_to_right.method = ContractionOrder::naive;
  const order::Path naive = order::find_path(problem, left_to_right);
  char ms[32];
  std::snprintf(ms, sizeof ms, ", %.3g ms", path.seconds * 1e3);
  return "contraction order " + path.text + ": " + path.flops.str() + " FLOPs (" + (path.exact ? "optimal: " : "") +
         path.method + ms + "); left to right " + naive.text + ": " + naive.flops.str();
}

}  // namespace

AtomView contract_all(PlanBuilder& b, std::vector<AtomView> nodes, const Axes& output, ContractionOrder order,
                      const OrderGoal& goal, const SearchOverride* search) {
  EINEXPR_ASSERT(!nodes.empty(), "contract_all: no operands");
  order::Options options = order_options(order, goal, b.dtype());  // checked for any count
  if (search) {
    EINEXPR_ASSERT(search->tree.empty() || search->tree.size() + 1 == nodes.size(),
                   "contract_all: a given tree of n operands has n - 1 steps");
    options.exact_limit = search->exact_limit;
    options.given = search->tree;
    options.given_method = search->method;
  }
  ContractionInfo info;
  info.output = output;
  for (const AtomView& v : nodes) info.operands.push_back(v.ids());
  // Atoms in one operand only and not in the output are summed before any contraction.
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    Axes only;
    for (const AtomDim& a : nodes[i].dims) {
      bool elsewhere = contains(output, a.id);
      for (std::size_t j = 0; j < nodes.size() && !elsewhere; ++j) elsewhere = j != i && nodes[j].has(a.id);
      if (!elsewhere) only.push_back(a.id);
    }
    if (!only.empty()) nodes[i] = sum_out(b, nodes[i], only, nodes.size() == 1 ? output : nodes[i].ids());
  }
  if (nodes.size() == 1) {
    b.set_contraction(std::move(info));
    return nodes[0];
  }
  std::vector<std::pair<int, int>> steps{{0, 1}};  // two operands: one order, no search
  std::string note;
  if (nodes.size() > 2) {
    const order::Problem problem = order_problem(nodes, output, b.axes());
    order::Path path = order::find_path(problem, options);
    note = order_note(problem, path);
    steps = std::move(path.steps);
  }
  std::vector<bool> alive(nodes.size(), true);
  std::vector<std::string> pair_notes;  // after the order's note
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const auto [x, y] = steps[s];
    alive[static_cast<std::size_t>(x)] = alive[static_cast<std::size_t>(y)] = false;
    Axes needed = output;
    for (std::size_t j = 0; j < nodes.size(); ++j)
      if (alive[j])
        for (const AtomDim& a : nodes[j].dims) needed.push_back(a.id);
    const bool last = s + 1 == steps.size();
    nodes.push_back(contract_pair(b, nodes[static_cast<std::size_t>(x)], nodes[static_cast<std::size_t>(y)], needed,
                                  last ? output : Axes{}, pair_notes));
    alive.push_back(true);
  }
  info.path = std::move(steps);
  b.set_contraction(std::move(info));
  if (!note.empty()) b.note(note);
  for (std::string& n : pair_notes) b.note(std::move(n));
  return nodes.back();
}

}  // namespace einexpr::detail
