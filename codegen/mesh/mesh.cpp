// shard(): a program on a device mesh, per device (mesh.hpp): the layout checked tensor by
// tensor, each statement's and gradient's FLOPs divided by the mesh dimensions its axes are
// split over, the sums over split axes turned into collectives.
#include "einexpr/codegen/mesh.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <sstream>
#include <variant>

#include "einexpr/runtime/error.hpp"
#include "mesh/sharder.hpp"
#include "program/backward_plan.hpp"

namespace einexpr {

std::int64_t Mesh::devices() const noexcept {
  std::int64_t n = 1;
  for (const MeshDim& d : dims) n *= d.size;
  return n;
}

std::string Mesh::str() const {
  std::string s;
  for (const MeshDim& d : dims) s += (s.empty() ? "" : " ") + d.name + "=" + std::to_string(d.size) + (d.link.empty() ? "" : "@" + d.link);
  s += ";";
  for (const auto& [axis, dim] : shard) s += " " + axis + ":" + dim;
  for (const ShardOverride& o : at) {
    s += " " + o.axis + ":" + o.dim + "@";
    for (std::size_t i = 0; i < o.statements.size(); ++i) s += (i ? "+" : "") + o.statements[i];
  }
  if (zero > 0) s += "; ZeRO-" + std::to_string(zero);
  return s;
}

const std::vector<Link>& links() {
  static const std::vector<Link> table = {
      {"nvlink", 450e9, 3.4e-6,
       "NVIDIA H100 Tensor Core GPU datasheet, SXM: NVLink 900 GB/s per GPU, both directions (450 GB/s each); "
       "α: NCCL src/graph/tuning.cc (commit 01afd20), hwLat NVLink, ring, Simple protocol, 3.4 µs"},
      {"ib", 50e9, 9.6e-6,
       "NVIDIA DGX H100: one ConnectX-7 NDR InfiniBand port of 400 Gb/s per GPU (50 GB/s each direction); "
       "α: NCCL src/graph/tuning.cc (commit 01afd20), hwLat network, ring, Simple protocol, 9.6 µs"},
      {"pcie", 64e9, 5.7e-6,
       "PCI Express 5.0 x16: 32 GT/s per lane, 16 lanes, about 64 GB/s each direction; α: NCCL "
       "src/graph/tuning.cc (commit 01afd20), hwLat PCI, ring, Simple protocol, 5.7 µs"},
  };
  return table;
}

const Link& find_link(std::string_view name) {
  std::string known;
  for (const Link& l : links()) {
    if (l.name == name) return l;
    known += (known.empty() ? "" : ", ") + l.name;
  }
  throw Error("no link kind '" + std::string(name) + "' (known: " + known + ")");
}

const char* name(CollectiveKind kind) noexcept {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all-reduce";
    case CollectiveKind::reduce_scatter: return "reduce-scatter";
    case CollectiveKind::all_gather: return "all-gather";
  }
  return "?";
}

namespace {

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::string w;
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == ',') {
      if (!w.empty()) out.push_back(std::move(w));
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

bool is_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

Mesh parse_mesh(std::string_view dims, std::string_view shard, int zero) {
  Mesh m;
  if (zero < 0 || zero > 3) throw Error("ZeRO's stage is 0, 1, 2 or 3, not " + std::to_string(zero));
  m.zero = zero;
  for (const std::string& w : words(dims)) {
    const std::size_t eq = w.find('=');
    const std::size_t at = w.find('@');
    const std::string dim = w.substr(0, eq);
    const std::string size = eq == std::string::npos ? "" : w.substr(eq + 1, at == std::string::npos ? std::string::npos : at - eq - 1);
    if (eq == std::string::npos || !is_name(dim) || size.empty() ||
        !std::all_of(size.begin(), size.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
        size.size() > 9)
      throw Error("mesh: '" + w + "' is not NAME=SIZE[@LINK] (e.g. 'dp=64@ib tp=8@nvlink')");
    MeshDim d{dim, std::stoll(size), at == std::string::npos ? "" : w.substr(at + 1)};
    if (d.size < 1) throw Error("mesh: dimension '" + dim + "' has size " + size + ": at least 1");
    if (at != std::string::npos && !is_name(d.link)) throw Error("mesh: '" + w + "': the link after '@' is a name (nvlink, ib, ...)");
    for (const MeshDim& e : m.dims)
      if (e.name == dim) throw Error("mesh: dimension '" + dim + "' is given twice");
    m.dims.push_back(std::move(d));
  }
  if (m.dims.empty()) throw Error("mesh: no dimension given (e.g. 'dp=64@ib tp=8@nvlink')");
  for (const std::string& w : words(shard)) {
    const std::size_t colon = w.find(':'), at = w.find('@');
    const std::string axis = w.substr(0, colon);
    const std::string dim = colon == std::string::npos ? "" : w.substr(colon + 1, at == std::string::npos ? std::string::npos : at - colon - 1);
    if (colon == std::string::npos || !is_name(axis) || !is_name(dim))
      throw Error("shard: '" + w + "' is not AXIS:MESHDIM (e.g. 'B:dp H:tp F:tp') or AXIS:MESHDIM@STATEMENT+... "
                  "(e.g. 'S:tp@ln1+h')");
    if (std::none_of(m.dims.begin(), m.dims.end(), [&](const MeshDim& d) { return d.name == dim; })) {
      std::string known;
      for (const MeshDim& d : m.dims) known += (known.empty() ? "" : ", ") + d.name;
      throw Error("shard: '" + w + "' lays axis " + axis + " over '" + dim + "', which the mesh has not (its dimensions: " +
                  known + ")");
    }
    if (at != std::string::npos) {  // a layout of some statements' results
      ShardOverride o{axis, dim, {}};
      std::string name;
      for (const char c : w.substr(at + 1) + "+") {
        if (c != '+') {
          name += c;
          continue;
        }
        if (name.empty() || !std::all_of(name.begin(), name.end(), [](char x) {
              return std::isalnum(static_cast<unsigned char>(x)) || x == '_' || x == '.';
            }))
          throw Error("shard: '" + w + "' names its statements as NAME+NAME+... (e.g. 'S:tp@ln1+h')");
        o.statements.push_back(name);
        name.clear();
      }
      m.at.push_back(std::move(o));
      continue;
    }
    for (const auto& [a, d] : m.shard)
      if (a == axis) throw Error("shard: axis " + axis + " is laid out twice (over " + d + " and " + dim + ")");
    m.shard.emplace_back(axis, dim);
  }
  for (const ShardOverride& o : m.at)
    for (const auto& [a, d] : m.shard)
      if (a == o.axis)
        throw Error("shard: axis " + a + " is laid out over " + d + " everywhere and over " + o.dim +
                    " in some statements: a statement's layout adds an axis the others keep whole");
  return m;
}

std::optional<Mesh> program_mesh(const ast::Program& program, std::string_view dims, std::string_view shard, int zero) {
  std::string file_dims, file_shard;
  bool has_mesh = false;
  for (const ast::Item& item : program.items) {
    if (const auto* m = std::get_if<ast::MeshDecl>(&item)) {
      has_mesh = true;
      for (const ast::MeshDimDef& d : m->dims)
        file_dims += " " + d.name.name + "=" + std::to_string(d.size) + (d.link.name.empty() ? "" : "@" + d.link.name);
    }
    if (const auto* s = std::get_if<ast::ShardDecl>(&item))
      for (const ast::ShardRule& r : s->rules) {
        file_shard += " " + r.axis.name + ":" + r.dim.name;
        for (std::size_t i = 0; i < r.at.size(); ++i) file_shard += (i ? "+" : "@") + r.at[i].name;
      }
  }
  if (!has_mesh && dims.empty()) {
    if (!shard.empty() || zero != 0)
      throw Error("a shard layout or ZeRO needs a mesh: give one with --mesh ('dp=8 tp=8') or a 'mesh' line");
    return std::nullopt;
  }
  return parse_mesh(dims.empty() ? std::string_view(file_dims) : dims, shard.empty() ? std::string_view(file_shard) : shard,
                    zero);
}

namespace {

using program_detail::BackwardPlan;

/// a / d (d > 0), rounded down: a count on one device of d (exact where d divides it)
Count per(const Count& a, std::int64_t d) { return Count::from_u128(a.raw() / static_cast<Count::u128>(d)); }

class Sharder {
 public:
  Sharder(const ProgramPlan& plan, const ProgramCost& cost, const Mesh& mesh, const BackwardPlan& bwd)
      : plan_(plan), cost_(cost), mesh_(mesh), bwd_(bwd) {
    for (const auto& [axis, dim] : mesh.shard)
      for (const MeshDim& d : mesh.dims)
        if (d.name == dim) split_[axis] = &d;
    for (const ShardOverride& o : mesh.at)
      for (const std::string& st : o.statements) at_[st].push_back(&o);
  }
  MeshCost run();

 private:
  /// A statement's name within its block's layer ("ln1" for "hL[3].ln1").
  std::string body_name(const PlannedStatement& st) const {
    if (st.call < 0) return st.name;
    const std::string prefix = plan_.blocks.at(static_cast<std::size_t>(st.call)).name + "[" + std::to_string(st.layer) + "].";
    return st.name.rfind(prefix, 0) == 0 ? st.name.substr(prefix.size()) : st.name;
  }
  /// The statement-level layouts of a statement's result (its dropout mask's: the dropout's).
  std::vector<const ShardOverride*> overrides_of(const PlannedStatement& st) const {
    std::string name = body_name(st);
    if (auto it = at_.find(name); it != at_.end()) return it->second;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".mask") == 0)
      if (auto it = at_.find(name.substr(0, name.size() - 5)); it != at_.end()) return it->second;
    return {};
  }
  /// Tensor `id`'s layout: each axis split in it (the outermost of its dim) and over what.
  const std::map<std::string, const MeshDim*>& layout(int id) const {
    if (layouts_.empty()) {  // every tensor's, once
      layouts_.reserve(plan_.tensors.size());
      for (std::size_t t = 0; t < plan_.tensors.size(); ++t) layouts_.push_back(layout_of(static_cast<int>(t)));
    }
    return layouts_.at(static_cast<std::size_t>(id));
  }
  std::map<std::string, const MeshDim*> layout_of(int id) const {
    const ProgramTensor& t = plan_.tensor(id);
    std::map<std::string, const MeshDim*> out;
    std::set<std::string> outer;
    for (const std::string& dim : t.dims) {
      const std::string a = atoms(dim).front();
      outer.insert(a);
      if (const MeshDim* d = over(a)) out[a] = d;
    }
    if (t.role == TensorRole::statement)
      for (const ShardOverride* o : overrides_of(plan_.statements.at(static_cast<std::size_t>(t.statement))))
        if (outer.count(o->axis)) out[o->axis] = split_dim(o->dim);
    return out;
  }
  /// An all-gather of tensor `id` (or its gradient) whole along `d`, once per key.
  void gather(int id, const MeshDim& d, const std::string& phase, const std::string& label, const std::string& why,
              const PlannedStatement& st, int statement);
  const MeshDim* split_dim(const std::string& name) const {
    for (const MeshDim& d : mesh_.dims)
      if (d.name == name) return &d;
    return nullptr;
  }
  /// The mesh dimension `axis` is split over, or null.
  const MeshDim* over(const std::string& axis) const {
    const auto it = split_.find(axis);
    return it == split_.end() ? nullptr : it->second;
  }
  static std::vector<std::string> atoms(const std::string& dim) {
    if (dim.empty() || dim.front() != '(') return {dim};
    return words(dim.substr(1, dim.size() - 2));
  }
  void check_layout() const;
  /// Each collective's α-β time from its mesh dimension's link, the step's totals.
  void time_collectives();
  /// The product of the sizes of the mesh dimensions that split tensor `id`.
  std::int64_t divisor(const ProgramTensor& t) const;
  /// The mesh dimensions any of `axes` is split over.
  std::set<const MeshDim*> dims_of(const std::set<std::string>& axes) const;
  static std::int64_t product(const std::set<const MeshDim*>& dims) {
    std::int64_t n = 1;
    for (const MeshDim* d : dims) n *= d->size;
    return n;
  }
  /// A plan's named axes, with the dims of the tensor it makes (a plan of '...' axes names none).
  std::set<std::string> axes_of(const Plan& p, const ProgramTensor& made) const;
  /// Steps along split axes whose parts are not a sum's alone (vocabulary parallelism).
  struct Along {
    std::set<std::string> looked_up;  // get_at along them: partial (each device's rows), in the sums
    std::set<std::string> classes;    // a cross_entropy's classes: its row all-reduces
    DType classes_dtype = DType::f32; // its logits'
  };
  /// The row all-reduces of a cross_entropy along classes split over `a` (its statement `i`,
  /// its result or its gradient's rows `rows`), as the CPU kernel issues them (index_cpu.cpp's
  /// part_cross_entropy): forward the parts' largest log-sum-exp (a max), each row's target
  /// logit and sum of exps (sums); backward the target logit again where the loss holds each
  /// row's log-sum-exp (f32, f64 logits), else the max and the sum again. f64 statistics for
  /// f64 logits, else f32.
  void add_cross_entropy(const std::string& a, DType logits, bool backward, const Count& rows, const PlannedStatement& st,
                         int i);
  /// The axes a plan sums over (contractions, reductions, scatter-adds, lookups along a split
  /// axis), into `means` those it averages over, into `along` what vocabulary parallelism adds;
  /// Error for a step along a split axis this cut has no collective for.
  std::set<std::string> summed(const Plan& p, const std::string& what, std::set<std::string>* means = nullptr,
                               Along* along = nullptr) const;
  /// Dims of `split` that only split the axes a lookup reads along (`looked_up`): the work is not
  /// divided along them (each device writes the whole result, zeros where it holds no rows).
  std::set<const MeshDim*> runs_on(const std::map<std::string, const MeshDim*>& split,
                                   const std::set<std::string>& looked_up) const {
    std::set<const MeshDim*> runs;
    for (const auto& [a, d] : split)
      if (!looked_up.count(a)) runs.insert(d);
    return runs;
  }
  /// The collectives completing tensor `t` (statement `statement`'s result, forward; else the
  /// gradient of tensor `of`), partial over `partial`.
  void add(const ProgramTensor& t, const std::set<const MeshDim*>& partial, const std::string& phase,
           const std::string& why, const std::string& label, const PlannedStatement& st, int statement, int of);
  /// Adds `c` (its kind, ranks and elements set): its bytes, nccl-tests' bus bytes, its layer.
  void push(Collective c, DType dtype, const PlannedStatement& st);
  /// A collective of a param's (or its gradient's) whole shard over mesh dimension `d`: ZeRO's.
  void add_param(CollectiveKind kind, const ProgramTensor& t, const MeshDim& d, const std::string& phase,
                 const std::string& label, const std::string& why, const PlannedStatement& st);
  /// The param a tensor is (itself, or the stack a layer slice is of), or -1.
  int param_of(int id) const {
    const ProgramTensor& t = plan_.tensor(id);
    if (t.role == TensorRole::param) return id;
    if (t.role == TensorRole::layer && plan_.tensor(t.stacked).role == TensorRole::param) return t.stacked;
    return -1;
  }

  const ProgramPlan& plan_;
  const ProgramCost& cost_;
  const Mesh& mesh_;
  const BackwardPlan& bwd_;
  std::map<std::string, const MeshDim*> split_;
  std::map<std::string, std::vector<const ShardOverride*>> at_;  // statement (body) name -> its layouts
  std::vector<std::map<std::string, const MeshDim*>> runs_split_;  // per statement: the axes it runs split
  std::vector<std::set<std::string>> looked_up_;  // per statement: split axes it looks up along (get_at)
  std::set<std::tuple<std::string, int, const MeshDim*>> gathered_;  // (phase + label kind, tensor, dim) done
  mutable std::vector<std::map<std::string, const MeshDim*>> layouts_;  // per tensor, made on first use
  MeshCost out_;
};

void Sharder::gather(int id, const MeshDim& d, const std::string& phase, const std::string& label, const std::string& why,
                     const PlannedStatement& st, int statement) {
  if (!gathered_.emplace(phase + " " + label, id, &d).second) return;
  const ProgramTensor& t = plan_.tensor(id);
  Collective c;
  c.tensor = label;
  c.phase = phase;
  c.kind = CollectiveKind::all_gather;
  c.mesh_dim = d.name;
  c.ranks = d.size;
  c.elements = per(Count::from_int64(checked_numel(t.shape)), divisor(t)) * Count::from_int64(d.size);  // gathered
  c.why = why;
  c.statement = statement;
  c.of = id;
  push(std::move(c), t.dtype, st);
}

void Sharder::check_layout() const {
  for (const auto& entry : mesh_.shard) {
    // a named reference, not the structured binding: clang 14 cannot capture a binding in a
    // lambda (P1091, clang 16)
    const std::string& axis = entry.first;
    const auto it = std::find_if(plan_.axes.begin(), plan_.axes.end(), [&](const auto& a) { return a.first == axis; });
    if (it == plan_.axes.end()) throw Error("shard: the program has no axis " + axis + " (its axes: " + plan_.axes_text() + ")");
    const MeshDim* d = over(axis);
    if (it->second % d->size != 0)
      throw Error("shard: axis " + axis + " is " + std::to_string(it->second) + ", which does not split over " + d->name +
                  "=" + std::to_string(d->size) + " (" + std::to_string(it->second) + " % " + std::to_string(d->size) +
                  " = " + std::to_string(it->second % d->size) + ")");
  }
  for (const auto& [name_binding, list] : at_) {
    const std::string& name = name_binding;  // captured below (see above)
    const bool known = std::any_of(plan_.statements.begin(), plan_.statements.end(), [&](const PlannedStatement& st) {
      const std::string b = body_name(st);
      return b == name || b == name + ".mask";
    });
    if (!known) throw Error("shard: " + list.front()->axis + ":" + list.front()->dim + "@" + name + " names no statement of the program");
  }
  for (const ShardOverride& o : mesh_.at) {
    const auto it = std::find_if(plan_.axes.begin(), plan_.axes.end(), [&](const auto& a) { return a.first == o.axis; });
    if (it == plan_.axes.end()) throw Error("shard: the program has no axis " + o.axis + " (its axes: " + plan_.axes_text() + ")");
    const MeshDim* d = split_dim(o.dim);
    if (it->second % d->size != 0)
      throw Error("shard: axis " + o.axis + " is " + std::to_string(it->second) + ", which does not split over " + d->name +
                  "=" + std::to_string(d->size));
  }
  for (std::size_t id = 0; id < plan_.tensors.size(); ++id) {
    std::map<const MeshDim*, std::string> twice;
    for (const auto& [axis, d] : layout(static_cast<int>(id)))
      if (const auto [it, fresh] = twice.emplace(d, axis); !fresh)
        throw Error("shard: '" + plan_.tensors[id].name + "' splits both " + it->second + " and " + axis + " over " + d->name +
                    ": a tensor splits at most one of its axes over a mesh dimension");
  }
  for (const ProgramTensor& t : plan_.tensors) {
    std::map<const MeshDim*, std::string> by;
    for (const std::string& dim : t.dims) {
      const std::vector<std::string> a = atoms(dim);
      for (std::size_t k = 0; k < a.size(); ++k) {
        const MeshDim* d = over(a[k]);
        if (d == nullptr) continue;
        if (k > 0)
          throw Error("shard: '" + t.name + "' has " + a[k] + " inside " + dim + " after " + a[0] + ": an axis split over " +
                      d->name + " is the outermost of its composition (a contiguous block on each device)");
        if (const auto [it, fresh] = by.emplace(d, a[k]); !fresh)
          throw Error("shard: '" + t.name + "' splits both " + it->second + " and " + a[k] + " over " + d->name +
                      ": a tensor splits at most one of its axes over a mesh dimension");
      }
    }
  }
}

void Sharder::time_collectives() {
  MeshTiming& t = out_.timing;
  t.device = cost_.timing.device;
  if (t.error.empty() && !cost_.timing.error.empty()) t.error = cost_.timing.error;
  for (const MeshDim& d : mesh_.dims)
    if (d.link.empty() && d.size > 1 && t.error.empty())
      t.error = "mesh dimension '" + d.name + "' has no link: give one as " + d.name + "=" + std::to_string(d.size) +
                "@nvlink (links: nvlink, ib, pcie)";
    else if (!d.link.empty() && t.error.empty())
      try {
        (void)find_link(d.link);
      } catch (const Error& e) {
        t.error = std::string("mesh dimension '") + d.name + "': " + e.what();
      }
  if (!t.error.empty()) {
    t.compute_s = t.optimizer_compute_s = 0;
    return;
  }
  for (Collective& c : out_.collectives) {
    if (c.ranks <= 1) continue;
    const MeshDim& d = *split_dim(c.mesh_dim);
    const Link& l = find_link(d.link);
    const double steps = static_cast<double>(c.kind == CollectiveKind::all_reduce ? 2 * (c.ranks - 1) : c.ranks - 1);
    c.time_s = collective_base_latency_s + steps * l.latency_s + c.bus_bytes.to_double() / l.bandwidth;
    (c.phase == "forward" ? t.forward_comm_s : c.phase == "backward" ? t.backward_comm_s : t.optimizer_comm_s) += c.time_s;
  }
  const double comm = t.forward_comm_s + t.backward_comm_s + t.optimizer_comm_s;
  t.step_s = t.compute_s + comm;
  t.overlapped_s = std::max(t.compute_s, comm);
}

std::int64_t Sharder::divisor(const ProgramTensor& t) const {
  std::set<const MeshDim*> dims;
  for (const auto& [axis, d] : layout(static_cast<int>(&t - plan_.tensors.data()))) dims.insert(d);
  return product(dims);
}

std::set<const MeshDim*> Sharder::dims_of(const std::set<std::string>& axes) const {
  std::set<const MeshDim*> out;
  for (const std::string& a : axes)
    if (const MeshDim* d = over(a)) out.insert(d);
  return out;
}

std::set<std::string> Sharder::axes_of(const Plan& p, const ProgramTensor& made) const {
  std::set<std::string> out;
  for (std::size_t i = 0; i < p.axes.size(); ++i)
    if (p.axes[static_cast<AxisId>(i)].kind == AxisKind::named) out.insert(p.axes[static_cast<AxisId>(i)].name);
  for (const std::string& dim : made.dims)
    for (const std::string& a : atoms(dim)) out.insert(a);
  return out;
}

std::set<std::string> Sharder::summed(const Plan& p, const std::string& what, std::set<std::string>* means,
                                      Along* along) const {
  std::set<std::string> out;
  auto names = [&](const DimAxes& dim, std::set<std::string>& into) {
    for (AxisId id : dim)
      if (p.axes[id].kind == AxisKind::named) into.insert(p.axes[id].name);
  };
  auto value_axes = [&](int v) {
    std::set<std::string> s;
    for (const DimAxes& d : p.value(v).dims) names(d, s);
    return s;
  };
  auto unsupported = [&](const std::string& axis, const std::string& step) {
    if (const MeshDim* d = over(axis))
      throw Error("shard: " + what + " runs " + step + " along " + axis + ", which is split over " + d->name +
                  ": not costed on a mesh yet (lay " + axis + " out replicated)");
  };
  for (const Step& step : p.steps) {
    if (const auto* c = std::get_if<ContractStep>(&step)) {
      for (AxisId id : c->summed)
        if (p.axes[id].kind == AxisKind::named) out.insert(p.axes[id].name);
    } else if (const auto* r = std::get_if<ReduceStep>(&step)) {
      const Value& src = p.value(r->src);
      std::set<std::string> along;
      for (int a : r->axes) names(src.dims.at(static_cast<std::size_t>(a)), along);
      // a sum, a mean, a max or a min of the parts is one of their all-reduces; the others
      // (a product, var, std, logsumexp, any, all) would need their own
      const bool parts = r->op == Reduction::sum || r->op == Reduction::mean || r->op == Reduction::max ||
                         r->op == Reduction::min;
      for (const std::string& a : along) {
        if (!parts) unsupported(a, "a " + std::string(name(r->op)) + " reduction");
        if (r->op == Reduction::mean && means != nullptr && over(a) != nullptr) means->insert(a);
      }
      out.insert(along.begin(), along.end());
    } else if (const auto* s = std::get_if<ScatterAddStep>(&step)) {
      const std::set<std::string> table = value_axes(s->dst);
      for (const std::string& a : value_axes(s->updates))
        if (!table.count(a)) out.insert(a);
    } else if (const auto* n = std::get_if<NormStep>(&step)) {
      std::set<std::string> along;
      for (int a : n->axes) names(p.value(n->dst).dims.at(static_cast<std::size_t>(a)), along);
      for (const std::string& a : along) unsupported(a, std::string(name(n->kind)));
    } else if (const auto* x = std::get_if<CrossEntropyStep>(&step)) {
      // vocabulary parallelism: each row's statistics all-reduced by the kernel itself
      // (add_cross_entropy lists them, forward and backward)
      std::set<std::string> classes;
      names(p.value(x->srcs[x->backward ? 1 : 0]).dims.at(static_cast<std::size_t>(x->axis)), classes);
      for (const std::string& a : classes)
        if (over(a) != nullptr) {
          if (along == nullptr) unsupported(a, "cross_entropy");
          along->classes.insert(a);
          along->classes_dtype = p.dtype_of(x->srcs[x->backward ? 1 : 0]);
        }
    } else if (const auto* g = std::get_if<GatherStep>(&step)) {
      // a lookup along a split axis: each device's rows, zeros for the others' — partial sums.
      // The table's axes: those of the values on the buffer src views (src itself is laid
      // over the result's axes, the looked-up one read through the step's stride)
      std::set<std::string> table;
      for (std::size_t v = 0; v < p.values.size(); ++v)
        if (p.values[v].buffer == p.value(g->src).buffer)
          for (const std::string& a : value_axes(static_cast<int>(v))) table.insert(a);
      const std::set<std::string> got = value_axes(g->dst);
      for (const std::string& a : table)
        if (!got.count(a) && over(a) != nullptr) {
          out.insert(a);
          if (along != nullptr) along->looked_up.insert(a);
        }
    }
  }
  return out;
}

void Sharder::add(const ProgramTensor& t, const std::set<const MeshDim*>& partial, const std::string& phase,
                  const std::string& why, const std::string& label, const PlannedStatement& st, int statement, int of) {
  const std::int64_t div = divisor(t);
  const Count elements = per(Count::from_int64(checked_numel(t.shape)), div);
  std::set<const MeshDim*> mine;
  for (const auto& [axis, d] : layout(static_cast<int>(&t - plan_.tensors.data()))) mine.insert(d);
  for (const MeshDim* d : partial) {
    Collective c;
    c.tensor = label;
    c.phase = phase;
    c.mesh_dim = d->name;
    c.ranks = d->size;
    c.kind = mine.count(d) ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
    // a reduce-scatter's tensor is the result's shard gathered back whole along the dimension
    c.elements = c.kind == CollectiveKind::reduce_scatter ? elements * Count::from_int64(d->size) : elements;
    c.why = why;
    c.statement = statement;
    c.of = of;
    push(std::move(c), t.dtype, st);
  }
}

void Sharder::add_cross_entropy(const std::string& a, DType logits, bool backward, const Count& rows,
                                const PlannedStatement& st, int i) {
  const MeshDim& d = *over(a);
  const std::string head = "cross_entropy along " + a + " (split over " + d.name + "): each row's ";
  std::vector<std::pair<const char*, const char*>> rounds;
  const bool loss_holds_lse = element_size(logits) >= 4;
  if (!backward) rounds = {{"max", "largest log-sum-exp of a part"}, {"sum", "target logit (from the device holding it)"},
                           {"sum", "sum of exps"}};
  else if (loss_holds_lse) rounds = {{"sum", "target logit again (the loss plus it is the row's log-sum-exp)"}};
  else rounds = {{"max", "largest log-sum-exp of a part again"}, {"sum", "sum of exps again"}};
  for (const auto& [reduce, what] : rounds) {
    Collective c;
    c.tensor = st.name;
    c.phase = backward ? "backward" : "forward";
    c.kind = CollectiveKind::all_reduce;
    c.mesh_dim = d.name;
    c.ranks = d.size;
    c.elements = rows;
    c.why = head + what;
    c.statement = i;
    c.of = st.output;
    c.reduce = reduce;
    c.step = "cross_entropy";
    push(std::move(c), logits == DType::f64 ? DType::f64 : DType::f32, st);
  }
}

void Sharder::add_param(CollectiveKind kind, const ProgramTensor& t, const MeshDim& d, const std::string& phase,
                        const std::string& label, const std::string& why, const PlannedStatement& st) {
  Collective c;
  c.tensor = label;
  c.phase = phase;
  c.kind = kind;
  c.mesh_dim = d.name;
  c.ranks = d.size;
  c.elements = per(Count::from_int64(checked_numel(t.shape)), divisor(t));  // the whole shard: gathered, or scattered
  c.why = why;
  c.of = static_cast<int>(&t - plan_.tensors.data());
  push(std::move(c), t.dtype, st);
}

void Sharder::push(Collective c, DType dtype, const PlannedStatement& st) {
  c.bytes = c.elements * Count(static_cast<std::uint64_t>(element_size(dtype)));
  const Count others = Count::from_int64(c.ranks - 1);
  c.bus_bytes = per(c.kind == CollectiveKind::all_reduce ? c.bytes * Count(2) * others : c.bytes * others, c.ranks);
  if (st.call >= 0) {
    c.call = plan_.blocks.at(static_cast<std::size_t>(st.call)).name;
    c.layer = st.layer;
  }
  (c.phase == "forward" ? out_.forward_bus_bytes : c.phase == "backward" ? out_.backward_bus_bytes : out_.optimizer_bus_bytes) +=
      c.bus_bytes;
  out_.collectives.push_back(std::move(c));
}

MeshCost Sharder::run() {
  out_.mesh = mesh_;
  check_layout();
  const BackwardPlan& bwd = bwd_;
  runs_split_.assign(plan_.statements.size(), {});
  looked_up_.assign(plan_.statements.size(), {});
  double forward_s = 0;  // per device
  const DeviceSpec* device = nullptr;  // the roofline's, for each gradient's bound
  if (cost_.timing.error.empty() && !cost_.timing.device.empty()) device = &find_device(cost_.timing.device);
  // forward: each statement's FLOPs over the dimensions its axes are split over; a sum over a
  // split axis completed at once
  for (std::size_t i = 0; i < plan_.statements.size(); ++i) {
    const PlannedStatement& st = plan_.statements[i];
    const ProgramTensor& y = plan_.tensor(st.output);
    std::set<std::string> means;
    Along along;
    const std::set<std::string> sums = summed(st.plan, "'" + st.name + "'", &means, &along);
    looked_up_[i] = along.looked_up;
    const std::set<const MeshDim*> partial = dims_of(sums);
    // the axes the statement runs split: the layout's, and its result's own layout where that
    // is not a dimension its sums are partial over (those are reduce-scattered into it)
    std::map<std::string, const MeshDim*>& split = runs_split_[i];
    for (const std::string& a : axes_of(st.plan, y))
      if (const MeshDim* d = over(a)) split[a] = d;
    for (const auto& [a, d] : layout(st.output))
      if (!split.count(a) && !partial.count(d)) {
        for (const auto& [b, e] : split)
          if (e == d)
            throw Error("shard: '" + st.name + "' would run split along both " + b + " and " + a + " over " + d->name +
                        " (its result's layout): lay one of them out whole");
        split[a] = d;
      }
    const std::int64_t div = product(runs_on(split, along.looked_up));
    // an input laid out split where the statement reads it whole: gathered first (once)
    for (int in : st.inputs)
      for (const auto& [a, d] : layout(in))
        if (const auto it = split.find(a); it == split.end() || it->second != d)
          gather(in, *d, "forward", plan_.tensor(in).name,
                 a + " split over " + d->name + ", read whole by '" + body_name(st) + "'", st, static_cast<int>(i));
    const StatementCost& fc = cost_.statements.at(i);
    out_.forward_flops += per(fc.forward.flops, div);
    if (fc.roofline) forward_s += fc.roofline->time_s / static_cast<double>(div);
    else if (!fc.is_view && out_.timing.error.empty()) out_.timing.error = fc.roofline_error;
    std::string why;
    for (const std::string& a : sums)
      if (const MeshDim* d = over(a); d != nullptr && !along.looked_up.count(a))
        why += (why.empty() ? "sums over " : ", ") + a + " (split over " + d->name + ")";
    for (const std::string& a : along.looked_up)
      why += (why.empty() ? "" : "; ") + std::string("looks up along ") + a + " (split over " + over(a)->name +
             ": the rows of other devices read as zeros)";
    const std::size_t before = out_.collectives.size();
    add(y, partial, "forward", why, st.name, st, static_cast<int>(i), st.output);
    if (!along.looked_up.empty()) {  // a lookup's all-reduce (where no sum shares its dimension)
      std::set<std::string> sums_only;
      for (const std::string& a : sums)
        if (!along.looked_up.count(a)) sums_only.insert(a);
      const std::set<const MeshDim*> summed_dims = dims_of(sums_only);
      for (std::size_t k = before; k < out_.collectives.size(); ++k)
        if (!summed_dims.count(split_dim(out_.collectives[k].mesh_dim))) out_.collectives[k].step = "get_at";
    }
    // the vocabulary-parallel loss: its rows' statistics, all-reduced over the classes' dimension
    for (const std::string& a : along.classes)
      add_cross_entropy(a, along.classes_dtype, false, per(Count::from_int64(checked_numel(y.shape)), divisor(y)), st,
                        static_cast<int>(i));
    if (!means.empty()) out_.means.emplace_back(static_cast<int>(i), product(dims_of(means)));
  }
  out_.timing.compute_s += forward_s;
  // each statement's own forward collectives, for its recomputations
  std::map<int, std::vector<std::size_t>> made_by;
  for (std::size_t k = 0; k < out_.collectives.size(); ++k)
    if (out_.collectives[k].phase == "forward" && out_.collectives[k].statement >= 0)
      made_by[out_.collectives[k].statement].push_back(k);
  // backward: each gradient's FLOPs likewise; a gradient whose contributions are partial is
  // all-reduced once, after they are added
  std::map<int, std::pair<std::set<const MeshDim*>, std::string>> partial_grads;  // tensor -> dims, why
  std::map<int, const PlannedStatement*> first_reader;  // the first statement whose backward reads it
  std::map<int, std::pair<std::set<const MeshDim*>, std::string>> contribution_dims;  // tensor -> its first
                                                                                      // contribution's
  for (std::size_t i = 0; i < plan_.statements.size(); ++i) {
    const PlannedStatement& st = plan_.statements[i];
    if (!bwd.runs[i]) continue;
    const std::map<std::string, const MeshDim*>& split = runs_split_[i];
    for (const program_detail::NeededGradient& g : bwd.gradients[i]) {
      const ProgramTensor& x = plan_.tensor(g.tensor);
      // as the forward statement runs: split where it ran split (a lookup's work not divided
      // along the axis it looks up along: each device reads all of dY)
      const std::int64_t div = product(runs_on(split, looked_up_[i]));
      // what the gradient reads laid out split where the statement runs whole: dY gathered (a
      // reduce-scatter's gradient), a kept forward tensor gathered again (Megatron's re-gather)
      for (const GradientSource& src : g.gradient.sources) {
        const int id = src.kind == GradientSource::Kind::input ? st.inputs.at(static_cast<std::size_t>(src.input)) : st.output;
        const bool dy = src.kind == GradientSource::Kind::output_gradient;
        for (const auto& [a, d] : layout(id))
          if (const auto it = split.find(a); it == split.end() || it->second != d)
            gather(id, *d, "backward", (dy ? "d" : "") + plan_.tensor(id).name,
                   a + " split over " + d->name + ", read whole by the gradient through '" + body_name(st) + "'", st, -1);
      }
      // a contribution made on part of an axis the gradient's tensor holds whole: gathered
      {
        const std::map<std::string, const MeshDim*>& mine = layout(g.tensor);
        for (const auto& [a, d] : split) {
          bool has = false;
          for (const std::string& dim : x.dims) has = has || atoms(dim).front() == a;
          if (has && (!mine.count(a) || mine.at(a) != d))
            gather(g.tensor, *d, "backward", "d" + x.name,
                   "its contribution through '" + body_name(st) + "' covers part of " + a + " (split over " + d->name + ")", st,
                   -1);
        }
      }
      const std::size_t j = static_cast<std::size_t>(&g - bwd.gradients[i].data());
      const StatementCost& sc = cost_.statements.at(i);
      const Count whole = j < sc.gradients.size() ? sc.gradients[j].cost.flops : cost(g.gradient.plan).flops;
      out_.backward_flops += per(whole, div);
      // this gradient's own bound (as the cost's: a view moves nothing), on one device of `div`
      if (j < sc.gradients.size() && device != nullptr) {
        Cost gc = sc.gradients[j].cost;
        if (gc.flops == Count{} && gc.bytes_planned == Count{}) gc.bytes_read = gc.bytes_written = Count{};
        try {
          out_.timing.compute_s += roofline(gc, *device).time_s / static_cast<double>(div);
        } catch (const Error& e) {
          if (out_.timing.error.empty()) out_.timing.error = e.what();
        }
      }
      Along g_along;
      const std::set<std::string> sums = summed(g.gradient.plan, "the gradient " + g.expression, nullptr, &g_along);
      for (const std::string& a : g_along.classes)  // its rows: the forward's result's, on this device
        add_cross_entropy(a, g_along.classes_dtype, true,
                          per(Count::from_int64(checked_numel(plan_.tensor(st.output).shape)), divisor(plan_.tensor(st.output))), st,
                          static_cast<int>(i));
      // every contribution partial over the same dimensions: an all-reduce of their sum then
      // completes each (one complete and one partial would add the complete one n times)
      std::set<const MeshDim*> these;  // the dimensions its sums run split over
      for (const std::string& a : sums)
        if (const auto it = split.find(a); it != split.end()) these.insert(it->second);
      if (const auto [seen, fresh] = contribution_dims.emplace(g.tensor, std::make_pair(these, g.expression));
          !fresh && seen->second.first != these) {
        auto list = [](const std::set<const MeshDim*>& ds) {
          std::string s;
          for (const MeshDim* d : ds) s += (s.empty() ? "" : ", ") + d->name;
          return s.empty() ? std::string("none") : s;
        };
        throw Error("shard: the gradient of '" + plan_.tensor(g.tensor).name + "' adds " + seen->second.second +
                    " (partial over " + list(seen->second.first) + ") and " + g.expression + " (partial over " +
                    list(these) + "): contributions partial over different mesh dimensions are not costed on a mesh yet");
      }
      auto& [dims, why] = partial_grads[g.tensor];
      for (const std::string& a : sums)
        if (const auto it = split.find(a); it != split.end() && dims.insert(it->second).second)
          why += (why.empty() ? "sums over " : ", ") + a + " (split over " + it->second->name + ")";
      if (!first_reader.count(g.tensor)) first_reader[g.tensor] = &st;
    }
  }
  // the gradients added together: (k - 1)·numel of a tensor read k times, on its shard; their
  // time the single device's accumulation time in proportion
  Count added;
  for (std::size_t id = 0; id < plan_.tensors.size(); ++id)
    if (bwd.contributions[id] > 1) {
      const ProgramTensor& t = plan_.tensors[id];
      added += per(Count::from_int64(checked_numel(t.shape)) * Count::from_int64(bwd.contributions[id] - 1), divisor(t));
    }
  out_.backward_flops += added;
  if (cost_.accumulate_flops.raw() > 0) {
    double gradients_s = 0;
    for (const StatementCost& sc : cost_.statements) gradients_s += sc.backward_time_s;
    out_.timing.compute_s +=
        (cost_.timing.backward_s - gradients_s) * (added.to_double() / cost_.accumulate_flops.to_double());
  }
  // recomputed statements: the single device's time in the forward's proportion
  if (cost_.timing.forward_s > 0) out_.timing.compute_s += cost_.timing.recompute_s * (forward_s / cost_.timing.forward_s);
  // a statement made again for the backward (recomputation) makes its collectives again:
  // Megatron's full recomputation repeats the forward's all-reduces (and sequence
  // parallelism's gathers the statement made) before the gradients that read it
  for (const int s : cost_.recomputed)
    if (const auto it = made_by.find(s); it != made_by.end())
      for (const std::size_t k : it->second) {
        Collective c = out_.collectives[k];
        c.phase = "backward";
        c.why = "recomputed for the backward: " + c.why;
        out_.backward_bus_bytes += c.bus_bytes;
        out_.collectives.push_back(std::move(c));
      }
  std::map<int, std::set<const MeshDim*>> data_parallel;  // a param -> the dimensions its gradient is summed over
  std::vector<std::pair<int, const PlannedStatement*>> zero_params;  // (tensor, where), for ZeRO's gathers
  for (auto it = partial_grads.rbegin(); it != partial_grads.rend(); ++it) {  // backward order
    const ProgramTensor& x = plan_.tensor(it->first);
    // placed at the statement that makes it, or (a param, a layer's slice) the first that reads it
    const PlannedStatement& where = x.role == TensorRole::statement
                                        ? plan_.statements.at(static_cast<std::size_t>(x.statement))
                                        : *first_reader.at(it->first);
    const int param = param_of(it->first);
    if (param >= 0) data_parallel[param].insert(it->second.first.begin(), it->second.first.end());
    if (param < 0 || mesh_.zero == 0) {
      add(x, it->second.first, "backward", it->second.second, "d" + x.name, where, -1, it->first);
      continue;
    }
    // ZeRO: each rank keeps its part of the gradient (a reduce-scatter), updates its part of the
    // param, and the params are gathered back whole (stages 1, 2) or where they are read (3)
    if (mesh_.zero == 3) zero_params.emplace_back(it->first, first_reader.at(it->first));
    for (const MeshDim* d : it->second.first) {
      add_param(CollectiveKind::reduce_scatter, x, *d, "backward", "d" + x.name, it->second.second, where);
      if (mesh_.zero < 3)
        add_param(CollectiveKind::all_gather, x, *d, "optimizer", x.name,
                  "ZeRO-" + std::to_string(mesh_.zero) + ": the updated parts gathered", where);
      else
        add_param(CollectiveKind::all_gather, x, *d, "backward", x.name, "ZeRO-3: gathered for the backward", where);
    }
  }
  for (auto it = zero_params.rbegin(); it != zero_params.rend(); ++it) {  // forward order
    const ProgramTensor& x = plan_.tensor(it->first);
    for (const MeshDim* d : data_parallel[param_of(it->first)])
      add_param(CollectiveKind::all_gather, x, *d, "forward", x.name, "ZeRO-3: gathered for the forward", *it->second);
  }
  // params, their gradients and optimizer state, and the kept activations, per device
  for (std::size_t id = 0; id < plan_.tensors.size(); ++id) {
    const ProgramTensor& t = plan_.tensors[id];
    if (t.role != TensorRole::param) continue;
    const std::int64_t div = divisor(t);
    std::int64_t n_dp = 1;  // ZeRO partitions over the data-parallel dimensions
    if (const auto it = data_parallel.find(static_cast<int>(id)); it != data_parallel.end()) n_dp = product(it->second);
    auto part = [&](int stage) { return mesh_.zero >= stage ? div * n_dp : div; };
    const Count n = Count::from_int64(checked_numel(t.shape)), es = element_size(t.dtype);
    out_.params_bytes += per(n * es, part(3));
    out_.grads_bytes += per(n * es, part(2));
    const int states = optimizer_states(cost_.optimizer) + (cost_.mixed_precision && element_size(t.dtype) < 4 ? 1 : 0);
    out_.optimizer_bytes += per(n * Count(4u * static_cast<unsigned>(states)), part(1));
    out_.optimizer_flops += per(n * optimizer_flops_per_element(cost_.optimizer), part(1));
  }
  if (cost_.optimizer_flops.raw() > 0)
    out_.timing.optimizer_compute_s =
        cost_.timing.optimizer_s * (out_.optimizer_flops.to_double() / cost_.optimizer_flops.to_double());
  out_.timing.compute_s += out_.timing.optimizer_compute_s;
  time_collectives();
  for (const KeptActivation& k : cost_.memory.kept) {
    const int id = plan_.tensor(k.tensor);
    const Count b = id < 0 ? k.bytes : per(k.bytes, divisor(plan_.tensor(id)));
    out_.activations_bytes += b;
    out_.kept.emplace_back(k.tensor, b);
  }
  return out_;
}

std::string per_layer_name(const Collective& c) {
  if (c.layer < 0) return c.tensor;
  const std::string at = c.call + "[" + std::to_string(c.layer) + "]";
  std::string s = c.tensor;
  for (std::size_t p = s.find(at); p != std::string::npos; p = s.find(at, p + 1)) s.replace(p, at.size(), c.call + "[l]");
  const std::string slice = "[" + std::to_string(c.layer) + "]";  // a stacked param's slice, "dw_q[3]"
  if (s.size() > slice.size() && s.compare(s.size() - slice.size(), slice.size(), slice) == 0)
    s.replace(s.size() - slice.size(), slice.size(), "[l]");
  return s;
}

}  // namespace

MeshCost mesh_detail::shard(const ProgramPlan& plan, const ProgramCost& cost, const Mesh& mesh, const BackwardPlan& bwd) {
  return Sharder(plan, cost, mesh, bwd).run();
}

MeshCost shard(const ProgramPlan& plan, const ProgramCost& cost, const Mesh& mesh) {
  const BackwardPlan bwd = program_detail::plan_backward(plan);
  return Sharder(plan, cost, mesh, bwd).run();
}

std::string to_string(const MeshCost& m) {
  std::ostringstream os;
  os << "mesh " << m.mesh.str() << "  (" << m.mesh.devices() << " devices; per device)\n";
  os << "  forward     " << m.forward_flops.str() << " FLOP\n";
  os << "  backward    " << m.backward_flops.str() << " FLOP\n";
  os << "  optimizer   " << m.optimizer_flops.str() << " FLOP\n";
  os << "  params      " << m.params_bytes.str() << " B\n";
  os << "  gradients   " << m.grads_bytes.str() << " B\n";
  os << "  optimizer   " << m.optimizer_bytes.str() << " B\n";
  os << "  activations " << m.activations_bytes.str() << " B  kept for the backward\n";
  const MeshTiming& t = m.timing;
  if (t.error.empty()) {
    const double comm = t.forward_comm_s + t.backward_comm_s + t.optimizer_comm_s;
    os << "  time        " << t.compute_s << " s compute (" << t.device << " roofline) + " << comm
       << " s communication (forward " << t.forward_comm_s << ", backward " << t.backward_comm_s << ", optimizer "
       << t.optimizer_comm_s << "; α-β, links: einexpr devices) = " << t.step_s << " s a step; " << t.overlapped_s
       << " s if communication hides behind compute\n";
  } else {
    os << "  time        not known: " << t.error << "\n";
  }
  os << "  collectives " << m.collectives.size() << ": forward " << m.forward_bus_bytes.str() << " B, backward "
     << m.backward_bus_bytes.str() << " B, optimizer " << m.optimizer_bus_bytes.str()
     << " B sent per device (nccl-tests' bus bytes)\n";
  // one row per collective of a layer's statement, with the layers it stands for
  std::vector<std::pair<std::string, int>> rows;
  std::map<std::string, std::size_t> at;
  for (const Collective& c : m.collectives) {
    std::ostringstream r;
    r << "    " << c.phase << "  " << name(c.kind) << " over " << c.mesh_dim << " (" << c.ranks << ")  "
      << per_layer_name(c) << "  " << c.elements.str() << (c.elements == Count(1) ? " element, " : " elements, ")
      << c.bus_bytes.str() << " B sent  " << c.why;
    const auto [it, fresh] = at.emplace(r.str(), rows.size());
    if (fresh) rows.emplace_back(r.str(), 1);
    else ++rows[it->second].second;
  }
  for (const auto& [row, count] : rows) os << row << (count > 1 ? "  ×" + std::to_string(count) : "") << "\n";
  return os.str();
}

}  // namespace einexpr
