#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>

#include "einexpr/parser/parse.hpp"
#include "../support/unary_reference.hpp"  // by path: fuzz/ compiles this file too

using namespace einexpr;

namespace reference {

namespace {

// One dim of a side: the atoms it composes (empty: a dim of length 1).
using Dim = std::vector<std::string>;
using Side = std::vector<Dim>;

/// The operand's terms as dims of atom names, '...' expanded to `ellipsis` dims "…0".. (the
/// last `ellipsis` of `total` broadcast dims), anonymous axes as unique names "#N.k".
Side side_of(const ast::Operand& op, int ellipsis, int total, std::map<std::string, std::int64_t>& lens, int& anon) {
  Side side;
  auto atom = [&](const ast::Atom& a, Dim& dim) {
    if (const auto* n = std::get_if<ast::Named>(&a)) {
      dim.push_back(n->name);
    } else if (const auto* k = std::get_if<ast::Anonymous>(&a)) {
      const std::string name = "#" + std::to_string(k->length) + "." + std::to_string(anon++);
      lens[name] = k->length;
      dim.push_back(name);
    } else {
      for (int j = 0; j < ellipsis; ++j) dim.push_back("…" + std::to_string(total - ellipsis + j));
    }
  };
  for (const ast::Term& t : op.terms) {
    if (std::holds_alternative<ast::Ellipsis>(t)) {
      for (int j = 0; j < ellipsis; ++j) side.push_back({"…" + std::to_string(total - ellipsis + j)});
    } else if (const auto* g = std::get_if<ast::Group>(&t)) {
      Dim dim;
      for (const ast::Atom& a : g->atoms) atom(a, dim);
      side.push_back(dim);
    } else if (std::holds_alternative<ast::Unit>(t)) {
      side.push_back({});
    } else {
      Dim dim;
      if (const auto* n = std::get_if<ast::Named>(&t)) atom(ast::Atom{*n}, dim);
      else atom(ast::Atom{std::get<ast::Anonymous>(t)}, dim);
      side.push_back(dim);
    }
  }
  return side;
}

int ellipsis_of(const ast::Operand& op, int rank) {
  int fixed = 0;
  for (const ast::Term& t : op.terms)
    if (!std::holds_alternative<ast::Ellipsis>(t)) ++fixed;
  return rank - fixed;
}

/// Fills lengths from the tensor's shape: single-atom dims directly; a group's one unknown
/// atom by division once its other atoms are known (callers repeat until nothing changes).
void learn(const Side& side, const Shape& shape, std::map<std::string, std::int64_t>& lens) {
  for (std::size_t d = 0; d < side.size(); ++d)
    if (side[d].size() == 1 && side[d][0][0] != '#') {
      auto it = lens.find(side[d][0]);
      if (it == lens.end() || it->second == 1) lens[side[d][0]] = shape[d];  // ellipsis dims broadcast
    }
  for (std::size_t d = 0; d < side.size(); ++d) {
    std::int64_t known = 1;
    std::vector<std::string> unknown;
    for (const std::string& a : side[d]) {
      auto it = lens.find(a);
      if (it == lens.end()) unknown.push_back(a);
      else known *= it->second;
    }
    if (unknown.size() == 1) lens[unknown[0]] = known == 0 ? 0 : shape[d] / known;
  }
}

std::int64_t dim_index(const Dim& dim, const std::map<std::string, std::int64_t>& idx,
                       const std::map<std::string, std::int64_t>& lens, std::int64_t dim_len) {
  std::int64_t i = 0;
  for (const std::string& a : dim) i = i * lens.at(a) + idx.at(a);
  return dim_len == 1 ? 0 : i;  // a broadcast dim of length 1 is always index 0
}

std::int64_t flat_index(const Side& side, const Shape& shape, const std::map<std::string, std::int64_t>& idx,
                        const std::map<std::string, std::int64_t>& lens) {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < side.size(); ++d) flat = flat * shape[d] + dim_index(side[d], idx, lens, shape[d]);
  return flat;
}

/// Calls f(index) for every assignment of values to `atoms`.
void for_all(const std::vector<std::string>& atoms, const std::map<std::string, std::int64_t>& lens,
             const std::function<void(const std::map<std::string, std::int64_t>&)>& f) {
  std::map<std::string, std::int64_t> idx;
  for (const std::string& a : atoms) {
    if (lens.at(a) == 0) return;
    idx[a] = 0;
  }
  while (true) {
    f(idx);
    std::size_t k = atoms.size();
    while (k > 0) {
      --k;
      if (++idx[atoms[k]] < lens.at(atoms[k])) break;
      idx[atoms[k]] = 0;
      if (k == 0) return;
    }
    if (atoms.empty()) return;
  }
}

/// flat_index(side, shape, ·, lens) as a linear function of the atoms' indices, one coefficient
/// per atom of `atoms`: a dim's index is a mixed-radix sum of its atoms' (0 for a broadcast dim
/// of length 1) and the flat index a sum of those times the dims' row-major strides, so atom
/// k's coefficient is flat_index where k's index is 1 and every other 0. The map lookups then
/// run once per atom instead of once per element and operand (the einsum table's runs under
/// ASan spent ~80% of their time in them). An atom of length 1 only ever has index 0.
std::vector<std::int64_t> linear_index(const Side& side, const Shape& shape, const std::vector<std::string>& atoms,
                                       const std::map<std::string, std::int64_t>& lens) {
  std::map<std::string, std::int64_t> idx;
  for (const std::string& a : atoms) idx[a] = 0;
  std::vector<std::int64_t> coef(atoms.size(), 0);
  for (std::size_t k = 0; k < atoms.size(); ++k) {
    idx[atoms[k]] = 1;
    coef[k] = flat_index(side, shape, idx, lens);
    idx[atoms[k]] = 0;
  }
  return coef;
}

std::int64_t at_position(const std::vector<std::int64_t>& coef, const std::vector<std::int64_t>& position) {
  std::int64_t flat = 0;
  for (std::size_t k = 0; k < coef.size(); ++k) flat += coef[k] * position[k];
  return flat;
}

/// Calls f(position) for every assignment of values to `atoms` (position[k] is atoms[k]'s), in
/// for_all's order.
void for_all_positions(const std::vector<std::string>& atoms, const std::map<std::string, std::int64_t>& lens,
                       const std::function<void(const std::vector<std::int64_t>&)>& f) {
  std::vector<std::int64_t> len(atoms.size()), position(atoms.size(), 0);
  for (std::size_t k = 0; k < atoms.size(); ++k) {
    len[k] = lens.at(atoms[k]);
    if (len[k] == 0) return;
  }
  while (true) {
    f(position);
    std::size_t k = atoms.size();
    while (k > 0) {
      --k;
      if (++position[k] < len[k]) break;
      position[k] = 0;
      if (k == 0) return;
    }
    if (atoms.empty()) return;
  }
}

std::vector<std::string> atoms_of(const std::vector<const Side*>& sides) {
  std::vector<std::string> out;
  for (const Side* s : sides)
    for (const Dim& d : *s)
      for (const std::string& a : d)
        if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  return out;
}

Shape shape_of(const Side& side, const std::map<std::string, std::int64_t>& lens) {
  Shape s;
  for (const Dim& d : side) {
    std::int64_t l = 1;
    for (const std::string& a : d) l *= lens.at(a);
    s.push_back(l);
  }
  return s;
}

std::vector<double> values_of(const Tensor& t) { return t.to_vector<double>(); }

struct Single {
  Side left, right;
  std::map<std::string, std::int64_t> lens;
};

Single resolve_single(const Tensor& x, const std::string& pattern, const AxisLengths& lengths) {
  const ast::Pattern p = parse(pattern);
  Single s;
  for (const auto& [n, l] : lengths) s.lens[n] = l;
  const int e = ellipsis_of(p.operands.at(0), x.dim());
  int anon = 0;
  s.left = side_of(p.operands[0], e, e, s.lens, anon);
  if (x.dim() == 0) s.left.clear();  // "()" names a 0-d input too
  s.right = side_of(p.output, e, e, s.lens, anon);
  learn(s.left, x.shape(), s.lens);
  return s;
}

/// f(o, i) for every element i of a reduction's input and the output element o it goes to
/// ("b h -> b 1 h": the output's anonymous 1s are at index 0).
template <class F>
void for_each_reduced(const Single& s, const Shape& in_shape, const Shape& out_shape, F f) {
  const std::vector<std::string> right_atoms = atoms_of({&s.right});
  for_all(atoms_of({&s.left}), s.lens, [&](const auto& idx) {
    auto full = idx;
    for (const std::string& a : right_atoms)
      if (!full.count(a)) full[a] = 0;
    f(static_cast<std::size_t>(flat_index(s.right, out_shape, full, s.lens)),
      static_cast<std::size_t>(flat_index(s.left, in_shape, idx, s.lens)));
  });
}

}  // namespace

Result rearrange(const Tensor& x, const std::string& pattern, const AxisLengths& lengths) {
  return repeat(x, pattern, lengths);  // a rearrange is a repeat with no new axes
}

Result repeat(const Tensor& x, const std::string& pattern, const AxisLengths& lengths) {
  Single s = resolve_single(x, pattern, lengths);
  // Anonymous atoms of the right side are new; the left's are not on the right.
  Result r{shape_of(s.right, s.lens), {}};
  const std::vector<double> in = values_of(x);
  r.values.resize(static_cast<std::size_t>(checked_numel(r.shape)));
  for_all(atoms_of({&s.right}), s.lens, [&](const auto& idx) {
    auto full = idx;
    for (const std::string& a : atoms_of({&s.left}))
      if (!full.count(a)) full[a] = 0;  // unit / anonymous-1 atoms of the left
    r.values[static_cast<std::size_t>(flat_index(s.right, r.shape, idx, s.lens))] =
        in[static_cast<std::size_t>(flat_index(s.left, x.shape(), full, s.lens))];
  });
  return r;
}

namespace {

/// var / std (two passes over the values) and logsumexp (max-subtracted), in double.
double statistic(Reduction reduction, const std::vector<double>& v, std::int64_t correction) {
  if (reduction == Reduction::logsumexp) {
    double m = -std::numeric_limits<double>::infinity();
    for (double x : v) m = std::isnan(x) || std::isnan(m) ? std::numeric_limits<double>::quiet_NaN() : std::max(m, x);
    if (!std::isfinite(m)) return m;
    double sum = 0;
    for (double x : v) sum += std::exp(x - m);
    return m + std::log(sum);
  }
  double mean = 0, m2 = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) m2 += (x - mean) * (x - mean);
  const double var = m2 / static_cast<double>(std::max<std::int64_t>(0, static_cast<std::int64_t>(v.size()) - correction));
  return reduction == Reduction::std ? std::sqrt(var) : var;
}

}  // namespace

Result reduce(const Tensor& x, const std::string& pattern, Reduction reduction, const AxisLengths& lengths,
              std::int64_t correction) {
  Single s = resolve_single(x, pattern, lengths);
  Result r{shape_of(s.right, s.lens), {}};
  const std::vector<double> in = values_of(x);
  const auto n = static_cast<std::size_t>(checked_numel(r.shape));
  double init = 0;
  if (reduction == Reduction::prod || reduction == Reduction::all) init = 1;
  if (reduction == Reduction::max) init = -std::numeric_limits<double>::infinity();
  if (reduction == Reduction::min) init = std::numeric_limits<double>::infinity();
  r.values.assign(n, init);
  std::vector<std::int64_t> count(n, 0);
  std::vector<std::vector<double>> members(n);  // var, std, logsumexp: every value of each output
  // Integers sum and multiply in int64 and wrap on overflow, as numpy does.
  const bool integer = is_integer(x.dtype());
  std::vector<std::uint64_t> iacc(n, reduction == Reduction::prod ? 1 : 0);
  for_each_reduced(s, x.shape(), r.shape, [&](std::size_t o, std::size_t i) {
    const double v = in[i];
    const auto iv = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    if (reduction == Reduction::sum) iacc[o] += iv;
    if (reduction == Reduction::prod) iacc[o] *= iv;
    double& acc = r.values[o];
    switch (reduction) {
      case Reduction::sum: case Reduction::mean: acc += v; break;
      case Reduction::prod: acc *= v; break;
      case Reduction::max: acc = std::max(acc, v); break;
      case Reduction::min: acc = std::min(acc, v); break;
      case Reduction::any: acc = (acc != 0 || v != 0) ? 1 : 0; break;
      case Reduction::all: acc = (acc != 0 && v != 0) ? 1 : 0; break;
      case Reduction::var: case Reduction::std: case Reduction::logsumexp: members[o].push_back(v); break;
    }
    ++count[o];
  });
  if (reduction == Reduction::var || reduction == Reduction::std || reduction == Reduction::logsumexp)
    for (std::size_t i = 0; i < n; ++i) r.values[i] = statistic(reduction, members[i], correction);
  if (reduction == Reduction::mean)
    for (std::size_t i = 0; i < n; ++i) r.values[i] /= static_cast<double>(count[i]);
  if (integer && (reduction == Reduction::sum || reduction == Reduction::prod))
    for (std::size_t i = 0; i < n; ++i) r.values[i] = static_cast<double>(static_cast<std::int64_t>(iacc[i]));
  return r;
}

Result normalize(const Tensor& x, const std::string& dims, const std::string& kept, Normalization kind, double eps,
                 const AxisLengths& lengths) {
  Single s = resolve_single(x, dims + " -> " + kept, lengths);
  const Shape rows_shape = shape_of(s.right, s.lens);
  std::vector<std::vector<std::size_t>> rows(static_cast<std::size_t>(checked_numel(rows_shape)));
  for_each_reduced(s, x.shape(), rows_shape, [&](std::size_t o, std::size_t i) { rows[o].push_back(i); });
  const std::vector<double> in = values_of(x);
  Result r{x.shape(), std::vector<double>(in.size())};
  for (const std::vector<std::size_t>& row : rows) {
    const auto n = static_cast<double>(row.size());
    double m = -std::numeric_limits<double>::infinity(), sum = 0, mean = 0, m2 = 0;
    for (std::size_t i : row) m = std::max(m, in[i]);
    for (std::size_t i : row) sum += std::exp(in[i] - m);
    for (std::size_t i : row) mean += in[i] / n;
    for (std::size_t i : row)
      m2 += kind == Normalization::rms_norm ? in[i] * in[i] / n : (in[i] - mean) * (in[i] - mean) / n;
    for (std::size_t i : row) {
      const double v = in[i];
      switch (kind) {
        case Normalization::softmax: r.values[i] = std::exp(v - m) / sum; break;
        case Normalization::log_softmax: r.values[i] = v - m - std::log(sum); break;
        case Normalization::layer_norm: r.values[i] = (v - mean) / std::sqrt(m2 + eps); break;
        case Normalization::rms_norm: r.values[i] = v / std::sqrt(m2 + eps); break;
      }
    }
  }
  return r;
}

namespace {

/// An einsum's operands and output resolved to atoms with every length known.
struct EinsumSides {
  std::map<std::string, std::int64_t> lens;
  std::vector<Side> operands;
  Side out;
  std::vector<std::string> atoms;  // every atom of the operands and the output
};

EinsumSides resolve_einsum(const std::vector<Tensor>& xs, const std::string& pattern, const AxisLengths& lengths) {
  const ast::Pattern p = parse(pattern);
  EinsumSides e;
  for (const auto& [n, l] : lengths) e.lens[n] = l;
  int total = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) total = std::max(total, ellipsis_of(p.operands[i], xs[i].dim()));
  int anon = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    e.operands.push_back(side_of(p.operands[i], ellipsis_of(p.operands[i], xs[i].dim()), total, e.lens, anon));
    if (xs[i].dim() == 0) e.operands.back().clear();  // "()" names a 0-d operand too
  }
  for (int pass = 0; pass < 3; ++pass)  // single dims first, then groups by division
    for (std::size_t i = 0; i < xs.size(); ++i) learn(e.operands[i], xs[i].shape(), e.lens);
  e.out = side_of(p.output, total, total, e.lens, anon);
  std::vector<const Side*> all;
  for (const Side& side : e.operands) all.push_back(&side);
  all.push_back(&e.out);
  e.atoms = atoms_of(all);
  return e;
}

}  // namespace

Result einsum(const std::vector<Tensor>& xs, const std::string& pattern, const AxisLengths& lengths) {
  const EinsumSides e = resolve_einsum(xs, pattern, lengths);
  const std::map<std::string, std::int64_t>& lens = e.lens;
  const std::vector<Side>& sides = e.operands;
  const Side& out = e.out;
  Result r{shape_of(out, lens), {}};
  r.values.assign(static_cast<std::size_t>(checked_numel(r.shape)), 0.0);
  std::vector<std::vector<double>> in;
  for (const Tensor& t : xs) in.push_back(values_of(t));
  const bool integer = is_integer(xs[0].dtype());
  std::vector<std::uint64_t> iacc(r.values.size(), 0);  // wraps mod 2^64, as the engine does
  std::vector<std::vector<std::int64_t>> coef;
  for (std::size_t i = 0; i < xs.size(); ++i) coef.push_back(linear_index(sides[i], xs[i].shape(), e.atoms, lens));
  const std::vector<std::int64_t> out_coef = linear_index(out, r.shape, e.atoms, lens);
  for_all_positions(e.atoms, lens, [&](const std::vector<std::int64_t>& position) {
    double prod = 1;
    std::uint64_t iprod = 1;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double v = in[i][static_cast<std::size_t>(at_position(coef[i], position))];
      prod *= v;
      iprod *= static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    }
    const auto o = static_cast<std::size_t>(at_position(out_coef, position));
    r.values[o] += prod;
    iacc[o] += iprod;
  });
  if (integer)
    for (std::size_t i = 0; i < iacc.size(); ++i) r.values[i] = static_cast<double>(static_cast<std::int64_t>(iacc[i]));
  return r;
}

std::vector<Result> einsum_gradients(const std::vector<Tensor>& xs, const std::string& pattern,
                                     const std::vector<double>& dy, const AxisLengths& lengths) {
  const EinsumSides e = resolve_einsum(xs, pattern, lengths);
  const std::map<std::string, std::int64_t>& lens = e.lens;
  const std::vector<Side>& sides = e.operands;
  const Side& out = e.out;
  const Shape out_shape = shape_of(out, lens);
  std::vector<std::vector<double>> in;
  std::vector<Result> grads;
  for (const Tensor& t : xs) {
    in.push_back(values_of(t));
    grads.push_back(Result{t.shape(), std::vector<double>(static_cast<std::size_t>(t.numel()), 0.0)});
  }
  const std::size_t n = xs.size();
  std::vector<std::size_t> at(n);
  std::vector<double> prefix(n + 1), suffix(n + 1);
  std::vector<std::vector<std::int64_t>> coef;
  for (std::size_t i = 0; i < n; ++i) coef.push_back(linear_index(sides[i], xs[i].shape(), e.atoms, lens));
  const std::vector<std::int64_t> out_coef = linear_index(out, out_shape, e.atoms, lens);
  for_all_positions(e.atoms, lens, [&](const std::vector<std::int64_t>& position) {
    for (std::size_t i = 0; i < n; ++i) at[i] = static_cast<std::size_t>(at_position(coef[i], position));
    prefix[0] = suffix[n] = 1;
    for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] * in[i][at[i]];
    for (std::size_t i = n; i-- > 0;) suffix[i] = suffix[i + 1] * in[i][at[i]];
    const double g = dy[static_cast<std::size_t>(at_position(out_coef, position))];
    for (std::size_t i = 0; i < n; ++i) grads[i].values[at[i]] += g * prefix[i] * suffix[i + 1];
  });
  return grads;
}

double unary(UnaryOp op, double v) { return testing_support::unary_reference(op, v); }

Result binary(const Tensor& x, const Tensor& y, const std::string& pattern, BinaryOp op, const AxisLengths& lengths) {
  Result a = einsum({x, Tensor::ones(y.shape(), x.dtype())}, pattern, lengths);  // x broadcast to the output
  Result b = einsum({Tensor::ones(x.shape(), x.dtype()), y}, pattern, lengths);  // y broadcast to the output
  // (einsum with ones sums duplicates only for axes absent from the output; maps have none)
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const double u = a.values[i], v = b.values[i];
    switch (op) {
      case BinaryOp::add: a.values[i] = u + v; break;
      case BinaryOp::sub: a.values[i] = u - v; break;
      case BinaryOp::mul: a.values[i] = u * v; break;
      case BinaryOp::div:
        a.values[i] = is_integer(x.dtype()) ? (v == 0 ? 0 : std::trunc(u / v)) : u / v;
        break;
      case BinaryOp::maximum: a.values[i] = std::max(u, v); break;
      case BinaryOp::minimum: a.values[i] = std::min(u, v); break;
    }
  }
  return a;
}

double max_rel_error(const Tensor& got, const Result& want) {
  if (got.shape() != want.shape)
    throw std::runtime_error("shape " + shape_str(got.shape()) + " != expected " + shape_str(want.shape));
  const std::vector<double> g = got.to_vector<double>();
  double worst = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double w = want.values[i];
    if (std::isnan(g[i]) != std::isnan(w)) return std::numeric_limits<double>::infinity();
    if (std::isnan(w) || (std::isinf(w) && g[i] == w)) continue;
    worst = std::max(worst, std::fabs(g[i] - w) / std::max(1.0, std::fabs(w)));
  }
  return worst;
}

const char* name(Layout layout) {
  switch (layout) {
    case Layout::contiguous: return "contiguous";
    case Layout::transposed: return "transposed";
    case Layout::sliced: return "sliced";
    case Layout::broadcast: return "broadcast";
  }
  return "?";
}

Tensor make_input(const Shape& shape, DType dtype, Layout layout, std::uint64_t seed) {
  switch (layout) {
    case Layout::contiguous: return Tensor::randn(shape, dtype, seed);
    case Layout::transposed: {  // the same logical shape, stored with its dims reversed
      Shape rev(shape.rbegin(), shape.rend());
      std::vector<int> perm;
      for (int d = static_cast<int>(shape.size()); d-- > 0;) perm.push_back(d);
      return Tensor::randn(rev, dtype, seed).permute(perm);
    }
    case Layout::sliced: {  // every other element of a tensor twice as long in each dim
      Shape big = shape;
      for (auto& l : big) l = 2 * l + 1;
      Tensor t = Tensor::randn(big, dtype, seed);
      for (int d = 0; d < static_cast<int>(shape.size()); ++d) t = t.slice(d, 1, 1 + 2 * shape[static_cast<std::size_t>(d)], 2);
      return t;
    }
    case Layout::broadcast: {  // the first dim of length > 1 repeats one slice (stride 0)
      Tensor t = Tensor::randn(shape, dtype, seed);
      Strides st = t.strides();
      for (std::size_t d = 0; d < shape.size(); ++d)
        if (shape[d] > 1) {
          st[d] = 0;
          break;
        }
      return t.as_strided(shape, st, 0);
    }
  }
  return {};
}

double tolerance(DType dtype, std::int64_t terms) {
  const double k = std::sqrt(static_cast<double>(std::max<std::int64_t>(terms, 1)));
  switch (dtype) {
    case DType::f64: return 1e-12 * k;
    case DType::f32: return 2e-6 * k;
    case DType::bf16: return 2e-2 * k;
    case DType::f16: return 2e-3 * k;
    default: return 0;  // integers and bool: exact
  }
}

}  // namespace reference
