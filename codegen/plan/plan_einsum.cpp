// einsum: diagonals and compositions as views (resolve.cpp), axes in one operand only summed
// first, then pairwise contractions in the cheapest order (../order), each a
// ContractStep on operands viewed as [batch.., m, k] x [batch.., k, n]. An operand is copied
// only when its m/k (or k/n) axes cannot merge into one stride each or the matrix has no
// unit stride; the last contraction writes straight into the output's layout where it can.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "plan/builder.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "order/order.hpp"
#include "plan/resolve.hpp"

namespace einexpr {

using detail::AtomDim;
using detail::AtomView;
using detail::PlanBuilder;
using Names = std::vector<std::string>;

namespace {

struct Merged {
  std::int64_t length = 1;
  std::int64_t stride = 1;
};

/// The atoms of `group` (in this order) as one dim of v, when their strides allow.
std::optional<Merged> merged(const AtomView& v, const Names& group) {
  Merged m;
  std::optional<AtomDim> prev;
  for (const std::string& n : group) {
    const AtomDim& a = v.dims[static_cast<std::size_t>(v.index_of(n))];
    if (a.length == 0) return Merged{0, 1};
    m.length *= a.length;
    if (a.length == 1) continue;
    if (prev && prev->stride != a.stride * a.length) return std::nullopt;
    prev = a;
  }
  if (prev) m.stride = prev->stride;
  return m;
}

/// `group` sorted by v's strides, largest first (the order that can merge).
Names by_stride(const AtomView& v, Names group) {
  std::stable_sort(group.begin(), group.end(), [&](const std::string& a, const std::string& b) {
    return v.dims[static_cast<std::size_t>(v.index_of(a))].stride > v.dims[static_cast<std::size_t>(v.index_of(b))].stride;
  });
  return group;
}

/// `group` in the order of `order` (atoms of group not in order keep theirs, at the end).
Names by_order(Names group, const Names& order) {
  auto pos = [&](const std::string& n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
  std::stable_sort(group.begin(), group.end(), [&](const std::string& a, const std::string& b) { return pos(a) < pos(b); });
  return group;
}

Names concat(std::initializer_list<const Names*> parts) {
  Names out;
  for (const Names* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

AxisName display(const Names& group) {
  AxisName a;
  for (const std::string& n : group) a.push_back(detail::display_name(n));
  return a;
}

/// A GEMM reads a [rows x cols] matrix in place when one stride is 1 and the other spans it.
bool blas_ok(Merged rows, Merged cols) {
  if (rows.length <= 1 || cols.length <= 1) return true;
  return (cols.stride == 1 && rows.stride >= cols.length) || (rows.stride == 1 && cols.stride >= rows.length);
}

/// Sums `axes` out of v (ReduceStep), the result laid out contiguously in `order`'s order.
AtomView sum_out(PlanBuilder& b, const AtomView& v, const Names& axes, const Names& order) {
  const AtomView src = b.emit(v);
  std::vector<int> idx;
  std::vector<AtomDim> rest;
  for (std::size_t i = 0; i < v.dims.size(); ++i) {
    if (std::find(axes.begin(), axes.end(), v.dims[i].name) != axes.end()) idx.push_back(static_cast<int>(i));
    else rest.push_back(v.dims[i]);
  }
  Names rest_order;
  for (const std::string& n : order)
    if (std::any_of(rest.begin(), rest.end(), [&](const AtomDim& a) { return a.name == n; })) rest_order.push_back(n);
  for (const AtomDim& a : rest)
    if (std::find(rest_order.begin(), rest_order.end(), a.name) == rest_order.end()) rest_order.push_back(a.name);
  const Strides strides = detail::strides_for_order(rest, rest_order);
  AtomView out{-1, -1, 0, rest};
  for (std::size_t i = 0; i < rest.size(); ++i) out.dims[i].stride = strides[i];
  out.value = b.new_temp_value(out.shape(), strides, out.axes());
  out.buffer = b.value(out.value).buffer;
  b.add_step(ReduceStep{src.value, out.value, Reduction::sum, idx});
  return out;
}

struct Groups {
  Names batch, m, n, k;
};

/// Emits the [batch.., rows, cols] view of v for a contraction.
int matrix_view(PlanBuilder& b, const AtomView& v, const Names& batch, const Names& rows, const Names& cols) {
  const Merged r = *merged(v, rows), c = *merged(v, cols);
  Layout l;
  std::vector<AxisName> axes;
  for (const std::string& n : batch) {
    const AtomDim& a = v.dims[static_cast<std::size_t>(v.index_of(n))];
    l.shape.push_back(a.length);
    l.strides.push_back(a.stride);
    axes.push_back({detail::display_name(n)});
  }
  l.shape.insert(l.shape.end(), {r.length, c.length});
  l.strides.insert(l.strides.end(), {r.stride, c.stride});
  l.offset = v.offset;
  axes.push_back(display(rows));
  axes.push_back(display(cols));
  return b.view(b.emit(v).value, std::move(l), std::move(axes));
}

/// Splits a merged dim's stride back over its atoms.
void split_into(std::vector<AtomDim>& dims, const AtomView& from, const Names& group, std::int64_t stride) {
  std::vector<AtomDim> part;
  for (const std::string& n : group) part.push_back(from.dims[static_cast<std::size_t>(from.index_of(n))]);
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
Groups classify(const AtomView& x, const AtomView& y, const Names& needed, const Names& out_order) {
  auto is_needed = [&](const std::string& n) { return std::find(needed.begin(), needed.end(), n) != needed.end(); };
  Groups g;
  for (const AtomDim& a : x.dims) (y.has(a.name) ? (is_needed(a.name) ? g.batch : g.k) : g.m).push_back(a.name);
  for (const AtomDim& a : y.dims)
    if (!x.has(a.name)) g.n.push_back(a.name);
  // m and n: the output's order when it merges (the result can then be written in place).
  auto pick = [&](const AtomView& v, const Names& group) {
    if (!out_order.empty()) {
      Names o = by_order(group, out_order);
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
    const Names ky = by_stride(y, g.k);
    if (merged(x, ky) && merged(y, ky)) g.k = ky;
  }
  return g;
}

std::int64_t length_of(const AtomView& v, const Names& group) {
  std::int64_t l = 1;
  for (const std::string& n : group) l *= v.dims[static_cast<std::size_t>(v.index_of(n))].length;
  return l;
}

/// The result's atoms [batch.., m.., n..] with their strides: the output's layout when the
/// last contraction can write it directly (m and n merge there, and a GEMM can write it),
/// else contiguous in [batch, m, n] order.
AtomView result_atoms(const AtomView& x, const AtomView& y, const Groups& g, const Names& out_order, bool gemm) {
  AtomView z{-1, -1, 0, {}};
  for (const std::string& n : g.batch) z.dims.push_back(x.dims[static_cast<std::size_t>(x.index_of(n))]);
  split_into(z.dims, x, g.m, 1);
  split_into(z.dims, y, g.n, 1);
  auto laid_out = [&](const Names& order) {
    AtomView v = z;
    const Strides s = detail::strides_for_order(v.dims, order);
    for (std::size_t i = 0; i < v.dims.size(); ++i) v.dims[i].stride = s[i];
    return v;
  };
  if (!out_order.empty()) {
    const AtomView direct = laid_out(out_order);
    const auto mm = merged(direct, g.m), nn = merged(direct, g.n);
    if (mm && nn && (!gemm || blas_ok(*mm, *nn))) return direct;
  }
  return laid_out(concat({&g.batch, &g.m, &g.n}));
}

/// Contracts x and y, keeping the atoms in `needed`; `out_order` (the output's atoms) is
/// given for the last contraction so its result can be written in the output's layout.
AtomView contract_pair(PlanBuilder& b, AtomView x, AtomView y, const Names& needed, const Names& out_order) {
  // 1. Atoms one operand holds and nothing later needs are summed first.
  auto unneeded = [&](const AtomView& v, const AtomView& other) {
    Names out;
    for (const AtomDim& a : v.dims)
      if (!other.has(a.name) && std::find(needed.begin(), needed.end(), a.name) == needed.end())
        out.push_back(a.name);
    return out;
  };
  if (const Names u = unneeded(x, y); !u.empty()) x = sum_out(b, x, u, detail::names_of(x.dims));
  if (const Names u = unneeded(y, x); !u.empty()) y = sum_out(b, y, u, detail::names_of(y.dims));
  // 2. Groups and the kind of product.
  const Groups g = classify(x, y, needed, out_order);
  const ContractStep::Kind kind = kind_of(length_of(x, g.m), length_of(y, g.n), length_of(x, g.k), !g.batch.empty());
  const bool gemm = kind != ContractStep::Kind::generic;
  // 3. An operand is copied only when its groups cannot merge, or a GEMM cannot read it.
  if (!merged(x, g.m) || !merged(x, g.k) || (gemm && !blas_ok(*merged(x, g.m), *merged(x, g.k))))
    x = b.materialize(x, concat({&g.batch, &g.m, &g.k}));
  if (!merged(y, g.k) || !merged(y, g.n) || (gemm && !blas_ok(*merged(y, g.k), *merged(y, g.n))))
    y = b.materialize(y, concat({&g.batch, &g.k, &g.n}));
  // 4. The result's layout, then the step on [batch.., m, k] x [batch.., k, n].
  AtomView z = result_atoms(x, y, g, out_order, gemm);
  const Merged zm = *merged(z, g.m), zn = *merged(z, g.n);
  Layout dst;
  std::vector<AxisName> axes;
  for (const std::string& n : g.batch) {
    const AtomDim& a = z.dims[static_cast<std::size_t>(z.index_of(n))];
    dst.shape.push_back(a.length);
    dst.strides.push_back(a.stride);
    axes.push_back({detail::display_name(n)});
  }
  dst.shape.insert(dst.shape.end(), {zm.length, zn.length});
  dst.strides.insert(dst.strides.end(), {zm.stride, zn.stride});
  axes.push_back(display(g.m));
  axes.push_back(display(g.n));
  const int a = matrix_view(b, x, g.batch, g.m, g.k);
  const int bb = matrix_view(b, y, g.batch, g.k, g.n);
  const int out = b.new_temp_value(dst.shape, dst.strides, axes);
  b.add_step(ContractStep{a, bb, out, static_cast<int>(g.batch.size()), kind});
  z.buffer = b.value(out).buffer;
  return z;
}

/// The operands as the order search sees them: atom names become axis ids here (until the
/// planner itself works on ids).
order::Problem order_problem(const std::vector<AtomView>& nodes, const Names& out_atoms,
                             const std::map<std::string, std::int64_t, std::less<>>& lengths) {
  order::Problem problem;
  std::map<std::string, int, std::less<>> ids;
  auto id_of = [&](const std::string& n) {
    const auto [it, fresh] = ids.try_emplace(n, static_cast<int>(ids.size()));
    if (fresh) problem.lengths.push_back(lengths.at(n));
    return it->second;
  };
  for (const AtomView& v : nodes) {
    problem.operands.emplace_back();
    for (const AtomDim& a : v.dims) problem.operands.back().push_back(id_of(a.name));
  }
  for (const std::string& n : out_atoms)
    if (ids.count(n)) problem.output.push_back(ids.at(n));
  return problem;
}

/// "contraction order (1 (2 3)): 4096 FLOPs (optimal: exhaustive); left to right ((1 2) 3):
/// 65536", with the search's time where it took a millisecond or more.
std::string order_note(const order::Problem& problem, const order::Path& path) {
  order::Options naive;
  naive.method = ContractionOrder::naive;
  const order::Path ltr = order::find_path(problem, naive);
  std::string how = (path.exact ? "optimal: " : "") + path.method;
  if (path.seconds >= 1e-3) {
    char ms[32];
    std::snprintf(ms, sizeof ms, ", %.3g ms", path.seconds * 1e3);
    how += ms;
  }
  return "contraction order " + path.text + ": " + path.flops.str() + " FLOPs (" + how + "); left to right " +
         ltr.text + ": " + ltr.flops.str();
}

}  // namespace

Plan plan_einsum(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype, const AxisLengths& lengths,
                 ContractionOrder order) {
  if (dtype == DType::boolean)
    throw DTypeError("einsum on bool tensors is not supported; convert with .to(DType::i64) first");
  const auto r = detail::resolve_multi(pattern, inputs, lengths);
  PlanBuilder b("einsum", pattern.text, dtype);
  for (std::size_t i = 0; i < inputs.size(); ++i) b.add_input(inputs[i], r.input_axes[i]);
  const Names out_atoms = detail::flatten(r.output);
  auto in_output = [&](const std::string& n) { return std::find(out_atoms.begin(), out_atoms.end(), n) != out_atoms.end(); };
  std::vector<AtomView> nodes = r.inputs;

  // Atoms in one operand only and not in the output are summed before any contraction.
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    Names only;
    for (const AtomDim& a : nodes[i].dims) {
      bool elsewhere = in_output(a.name);
      for (std::size_t j = 0; j < nodes.size() && !elsewhere; ++j) elsewhere = j != i && nodes[j].has(a.name);
      if (!elsewhere) only.push_back(a.name);
    }
    if (!only.empty()) nodes[i] = sum_out(b, nodes[i], only, nodes.size() == 1 ? out_atoms : detail::names_of(nodes[i].dims));
  }
  if (nodes.size() > 1) {
    std::vector<std::pair<int, int>> steps{{0, 1}};  // two operands: one order, no search
    std::string note;
    if (nodes.size() > 2) {
      const order::Problem problem = order_problem(nodes, out_atoms, r.lengths);
      order::Options options;
      options.method = order;
      const order::Path path = order::find_path(problem, options);
      steps = path.steps;
      note = order_note(problem, path);
    }
    std::vector<bool> alive(nodes.size(), true);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const auto [x, y] = steps[s];
      alive[static_cast<std::size_t>(x)] = alive[static_cast<std::size_t>(y)] = false;
      Names needed = out_atoms;
      for (std::size_t j = 0; j < nodes.size(); ++j)
        if (alive[j])
          for (const AtomDim& a : nodes[j].dims) needed.push_back(a.name);
      const bool last = s + 1 == steps.size();
      nodes.push_back(contract_pair(b, nodes[static_cast<std::size_t>(x)], nodes[static_cast<std::size_t>(y)],
                                            needed, last ? out_atoms : Names{}));
      alive.push_back(true);
    }
    if (!note.empty()) b.note(note);
  }
  const int out = b.merge(nodes.back().permuted(out_atoms), r.output);
  return std::move(b).finish(out);
}

}  // namespace einexpr
