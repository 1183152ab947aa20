// run_on_mesh / MeshTrainer (mesh_run.hpp): each rank's part of the program, planned at the
// parts' sizes and run by the single-device engine, with the collectives of the whole
// program's shard() issued through StepHooks where the cost puts them.
#include "einexpr/mesh_run.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <variant>

#include "einexpr/codegen/program_cost.hpp"
#include "einexpr/runtime/strided.hpp"
#include "einexpr/step_hooks.hpp"
#include "narrow_float.hpp"
#include "program_bind.hpp"

namespace einexpr {

void agree(MPI_Comm comm, const std::function<void()>& f) {
  std::string message;
  bool failed = false;
  try {
    f();
  } catch (const std::exception& e) {
    message = e.what();
    failed = true;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = failed ? rank : INT_MAX;
  int first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return;
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, first, comm);
  throw MeshError(size > 1 ? "rank " + std::to_string(first) + " of " + std::to_string(size) + ": " + message : message,
                  first);
}

namespace {

MPI_Datatype mpi_type(DType d) {
  if (d == DType::f32) return MPI_FLOAT;
  if (d == DType::f64) return MPI_DOUBLE;
  if (d == DType::bf16 || d == DType::f16) return MPI_UINT16_T;  // reduced by op_for's ops
  throw DTypeError(std::string("a collective on ") + std::string(name(d)) + " is not run on MPI yet (f64, f32, bf16 and f16 are)");
}

using program_detail::f32_to_narrow;
using program_detail::narrow;
using program_detail::narrow_to_f32;

// MPI has no 16-bit float: bf16 and f16 travel as 16-bit words, and their sum (max, min) is
// each pair of elements in f32, rounded back, as one device adds two bf16 tensors.
template <DType D, int Kind>  // Kind 0 sum, 1 max, 2 min
void narrow_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float x = narrow_to_f32(a[i], D), y = narrow_to_f32(b[i], D);
    b[i] = f32_to_narrow(Kind == 0 ? x + y : Kind == 1 ? std::max(x, y) : std::min(x, y), D);
  }
}

/// The op that reduces `dtype` as `op` (MPI_SUM, MPI_MAX, MPI_MIN) does f32 and f64.
MPI_Op op_for(MPI_Op op, DType dtype) {
  if (!narrow(dtype)) return op;
  static MPI_Op ops[2][3] = {};  // [bf16, f16][sum, max, min], made on first use (after MPI_Init)
  static bool made = false;
  if (!made) {
    MPI_User_function* fns[2][3] = {
        {narrow_reduce<DType::bf16, 0>, narrow_reduce<DType::bf16, 1>, narrow_reduce<DType::bf16, 2>},
        {narrow_reduce<DType::f16, 0>, narrow_reduce<DType::f16, 1>, narrow_reduce<DType::f16, 2>}};
    for (int t = 0; t < 2; ++t)
      for (int k = 0; k < 3; ++k) MPI_Op_create(fns[t][k], 1, &ops[t][k]);
    made = true;
  }
  return ops[dtype == DType::bf16 ? 0 : 1][op == MPI_MAX ? 1 : op == MPI_MIN ? 2 : 0];
}

// An MPI count (an int): Error for more, naming what (before any rank issues it).
int mpi_count(std::int64_t n, const std::string& what) {
  if (n > INT_MAX)
    throw Error(what + " is " + std::to_string(n) + " elements, more than one MPI call takes (" + std::to_string(INT_MAX) + ")");
  return static_cast<int>(n);
}

std::int64_t bus_bytes(CollectiveKind kind, std::int64_t bytes, std::int64_t n) {
  return kind == CollectiveKind::all_reduce ? bytes * 2 * (n - 1) / n : bytes * (n - 1) / n;
}

std::string first_atom(const std::string& dim) {
  if (dim.empty() || dim.front() != '(') return dim;
  const std::size_t end = dim.find_first_of(" )", 1);
  return dim.substr(1, end - 1);
}

// The communicators of a mesh over `world`: one per mesh dimension, the ranks that differ in
// that coordinate alone.
struct MeshComms {
  Mesh mesh;
  MPI_Comm world = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::vector<std::int64_t> coord;            // per mesh dimension
  std::vector<MPI_Comm> comms;                // per mesh dimension
  std::map<std::string, int> split;           // axis -> the mesh dimension it is split over

  MeshComms(MPI_Comm w, const Mesh& m) : mesh(m), world(w) {
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    if (mesh.devices() != size)
      throw Error("the mesh " + mesh.str() + " has " + std::to_string(mesh.devices()) + " devices but MPI runs " +
                  std::to_string(size) + (size == 1 ? " rank" : " ranks") + ": launch it with mpirun -np " +
                  std::to_string(mesh.devices()));
    std::int64_t rest = rank;
    coord.assign(mesh.dims.size(), 0);
    for (std::size_t d = mesh.dims.size(); d-- > 0;) {  // row-major: the last dimension fastest
      coord[d] = rest % mesh.dims[d].size;
      rest /= mesh.dims[d].size;
    }
    for (std::size_t d = 0; d < mesh.dims.size(); ++d) {
      int color = 0;  // the other coordinates, row-major
      for (std::size_t e = 0; e < mesh.dims.size(); ++e)
        if (e != d) color = color * static_cast<int>(mesh.dims[e].size) + static_cast<int>(coord[e]);
      MPI_Comm c = MPI_COMM_NULL;
      MPI_Comm_split(world, color, static_cast<int>(coord[d]), &c);
      comms.push_back(c);
    }
    for (const auto& [axis, dim] : mesh.shard)
      for (std::size_t d = 0; d < mesh.dims.size(); ++d)
        if (mesh.dims[d].name == dim) split[axis] = static_cast<int>(d);
  }
  ~MeshComms() {
    for (MPI_Comm& c : comms) MPI_Comm_free(&c);
  }
  MeshComms(const MeshComms&) = delete;
  MeshComms& operator=(const MeshComms&) = delete;

  int dim_index(const std::string& name) const {
    for (std::size_t d = 0; d < mesh.dims.size(); ++d)
      if (mesh.dims[d].name == name) return static_cast<int>(d);
    throw Error("the mesh has no dimension '" + name + "'");
  }
  /// The mesh dimension splitting dim `k` of a tensor with these dims, or -1.
  int splitting(const std::vector<std::string>& dims, std::size_t k) const {
    const auto it = split.find(first_atom(dims[k]));
    return it == split.end() ? -1 : it->second;
  }
  /// This rank's part of a whole tensor laid out as `t` (the whole program's), contiguous.
  Tensor part_of(const Tensor& whole, const ProgramTensor& t) const {
    Tensor p = whole;
    for (std::size_t k = 0; k < t.dims.size(); ++k)
      if (const int d = splitting(t.dims, k); d >= 0) {
        const std::int64_t len = whole.shape()[k] / mesh.dims[static_cast<std::size_t>(d)].size;
        p = p.slice(static_cast<int>(k), coord[static_cast<std::size_t>(d)] * len, (coord[static_cast<std::size_t>(d)] + 1) * len);
      }
    return p.contiguous().clone();
  }
  /// The whole tensor from every rank's part (`t` the whole program's, `shape` its shape), on
  /// rank 0; recorded in `log` as one gather.
  Tensor whole_of(const Tensor& part, const ProgramTensor& t, const Shape& shape, std::vector<MeasuredCollective>& log) const {
    const Tensor mine = part.contiguous();
    const std::int64_t bytes = static_cast<std::int64_t>(mine.nbytes());
    std::vector<std::byte> all(rank == 0 ? static_cast<std::size_t>(bytes) * static_cast<std::size_t>(size) : 0);
    const int count = mpi_count(bytes, "'" + t.name + "' on a rank, in bytes,");
    MPI_Gather(mine.data_ptr(), count, MPI_BYTE, all.data(), count, MPI_BYTE, 0, world);
    log.push_back({t.name, "output", CollectiveKind::all_gather, "all", size, mine.numel() * size, bytes * size,
                   bus_bytes(CollectiveKind::all_gather, bytes * size, size)});
    if (rank != 0) return {};
    Tensor whole = Tensor::empty(shape, part.dtype());
    for (int q = 0; q < size; ++q) {
      std::int64_t rest = q;
      std::vector<std::int64_t> c(mesh.dims.size(), 0);
      for (std::size_t d = mesh.dims.size(); d-- > 0;) {
        c[d] = rest % mesh.dims[d].size;
        rest /= mesh.dims[d].size;
      }
      Layout into = whole.layout();
      for (std::size_t k = 0; k < t.dims.size(); ++k)
        if (const int d = splitting(t.dims, k); d >= 0) {
          into.shape[k] = shape[k] / mesh.dims[static_cast<std::size_t>(d)].size;
          into.offset += c[static_cast<std::size_t>(d)] * into.shape[k] * into.strides[k];
        }
      copy_strided(static_cast<std::byte*>(whole.data_ptr()), into, all.data() + bytes * q, Layout::contiguous(into.shape),
                   element_size(part.dtype()));
    }
    return whole;
  }
};

// The plans: the whole program's (its cost and shard()) and this rank's part's options.
struct Parts {
  ProgramPlan whole;
  MeshCost predicted;
  ProgramOptions local;  // the axes split at their parts' lengths, the given tensors' parts
};

Parts plan_parts(const MeshComms& mc, const ast::Program& program, ProgramOptions options, const TensorMap& given,
                 const ProgramCostOptions& cost_options) {
  for (const auto& entry : given) {  // not a structured binding: clang 14 cannot capture one (P1091)
    const std::string& name = entry.first;
    const Tensor& t = entry.second;
    const bool listed = std::any_of(options.given.begin(), options.given.end(), [&](const GivenTensor& g) { return g.name == name; });
    if (t.defined() && !listed) options.given.push_back({name, t.shape(), t.dtype(), "the tensor given for '" + name + "'"});
  }
  if (!mc.mesh.at.empty())
    throw Error("shard: statement-level layouts (" + mc.mesh.at.front().axis + ":" + mc.mesh.at.front().dim +
                "@..., sequence parallelism) are costed by program cost --mesh, not run on MPI yet");
  Parts p;
  p.whole = plan_program(program, options);
  p.predicted = shard(p.whole, cost(p.whole, cost_options), mc.mesh);
  for (const ProgramBlock& b : p.whole.blocks)
    if (mc.split.count(b.axis))
      throw Error("shard: " + b.axis + " is the layer axis of block '" + b.block + "': its layers split over " +
                  mc.mesh.dims[static_cast<std::size_t>(mc.split.at(b.axis))].name +
                  " would be a pipeline, which is not run on MPI yet");
  for (const Collective& c : p.predicted.collectives) {
    if (c.kind == CollectiveKind::reduce_scatter && c.phase == "forward")
      throw Error("shard: '" + c.tensor + "' " + c.why + " and is split over " + c.mesh_dim +
                  " itself: a reduce-scatter in the forward, not run on MPI yet");
    if (c.kind == CollectiveKind::all_gather && c.why.rfind("ZeRO-", 0) != 0)
      throw Error("shard: " + c.tensor + " is all-gathered (" + c.why +
                  "): a layout that gathers is costed by program cost --mesh, not run on MPI yet");
    if (c.kind == CollectiveKind::reduce_scatter && c.phase == "backward" && mc.mesh.zero == 0)
      throw Error("shard: the gradient " + c.tensor + " " + c.why + " and is split over " + c.mesh_dim +
                  " itself: a reduce-scatter, not run on MPI yet");
    const int of = c.statement >= 0 ? p.whole.statements.at(static_cast<std::size_t>(c.statement)).output : c.of;
    (void)mpi_type(p.whole.tensor(of).dtype);
    (void)mpi_count(static_cast<std::int64_t>(c.elements.u64()), "the " + std::string(name(c.kind)) + " of " + c.tensor);
  }
  p.local = options;
  for (const auto& laid : mc.split) {
    const std::string& axis = laid.first;  // named, not bound: captured below (clang 14)
    const int d = laid.second;
    const auto it = std::find_if(p.whole.axes.begin(), p.whole.axes.end(), [&](const auto& a) { return a.first == axis; });
    const std::int64_t part = it->second / mc.mesh.dims[static_cast<std::size_t>(d)].size;  // shard() checked it divides
    bool set = false;
    for (auto& [name, length] : p.local.axes)
      if (name == axis) length = part, set = true;
    if (!set) p.local.axes.emplace_back(axis, part);
    // this device's rows of it, for a lookup or a cross_entropy along it (vocabulary parallelism)
    p.local.parts.emplace_back(axis, AxisPart{mc.coord[static_cast<std::size_t>(d)] * part, it->second, -1});
  }
  for (GivenTensor& g : p.local.given) {
    const int id = p.whole.tensor(g.name);
    if (id < 0) continue;  // plan_program said why
    const ProgramTensor& t = p.whole.tensor(id);
    for (std::size_t k = 0; k < t.dims.size() && k < g.shape.size(); ++k)
      if (const int d = mc.splitting(t.dims, k); d >= 0) g.shape[k] /= mc.mesh.dims[static_cast<std::size_t>(d)].size;
  }
  return p;
}

// The collectives of the mesh's cost, issued where the engine reports the tensors.
class Collectives final : public StepHooks {
 public:
  Collectives(const MeshComms& mc, const MeshCost& predicted, const ProgramPlan& local)
      : mc_(mc), local_(local) {
    route(predicted);
  }

  /// Where each collective of `predicted` is issued (it must outlive these hooks).
  void route(const MeshCost& predicted) {
    forward_.clear();
    recomputed_.clear();
    backward_.clear();
    gathers_.clear();
    zero3_forward_.clear();
    zero3_backward_.clear();
    means_.clear();
    kernel_dims_.clear();
    for (const Collective& c : predicted.collectives) {
      if (c.step == "cross_entropy") {  // issued by the statement's kernel (all_reduce below)
        kernel_dims_[c.statement] = mc_.dim_index(c.mesh_dim);
        continue;
      }
      if (c.phase == "forward" && c.statement >= 0) forward_[c.statement].push_back(&c);
      else if (c.phase == "backward" && c.statement >= 0) recomputed_[c.statement].push_back(&c);  // made again
      else if (c.phase == "forward") zero3_forward_.push_back(&c);  // ZeRO-3's gathers
      else if (c.phase == "backward" && c.kind == CollectiveKind::all_gather) zero3_backward_.push_back(&c);
      else if (c.phase == "backward") backward_[c.of].push_back(&c);
      else gathers_[param_of(c.of)].push_back(&c);  // optimizer: ZeRO-1/2's gathers
    }
    for (const auto& [s, devices] : predicted.means) means_[s] = devices;
  }

  std::vector<MeasuredCollective> log;
  std::map<int, std::byte*> params;  // a param's data (the trainer's), for ZeRO's gathers
  bool synchronize = false;          // a barrier before each collective's clock (benchmarks)

  void statement_done(int s, std::byte* data, const Layout& layout, DType dtype) override {
    complete(forward_, "forward", s, data, layout, dtype);
  }

  void statement_recomputed(int s, std::byte* data, const Layout& layout, DType dtype) override {
    complete(recomputed_, "backward", s, data, layout, dtype);
  }

  void output_gradient(int s, std::byte* grad, const Layout& layout, DType dtype) override {
    // a mean over split axes: each part's mean, its gradient 1/n_part; the whole's is 1/n
    if (const auto m = means_.find(s); m != means_.end()) scale(grad, layout, dtype, 1.0 / static_cast<double>(m->second));
  }

  void gradient_done(int tensor, std::byte* grad, const Layout& layout, DType dtype) override {
    const auto it = backward_.find(tensor);
    if (it == backward_.end()) return;
    const std::string label = "d" + local_.tensor(tensor).name;
    for (const Collective* c : it->second) {
      if (c->kind == CollectiveKind::all_reduce) {
        all_reduce(*c, label, "backward", grad, layout, dtype, MPI_SUM);
        continue;
      }
      // ZeRO: this rank's part of the summed gradient, written back at its place
      EINEXPR_ASSERT(layout.is_contiguous(), "mesh run: the gradient " + label + " is not contiguous");
      const int d = mc_.dim_index(c->mesh_dim);
      const double t0 = start(d);
      const std::int64_t n = layout.numel(), ranks = mc_.mesh.dims[static_cast<std::size_t>(d)].size, part = n / ranks;
      const std::size_t es = element_size(dtype);
      std::vector<std::byte>& mine = scratch_;  // this rank's part, then in its place
      if (mine.size() < static_cast<std::size_t>(part) * es) mine.resize(static_cast<std::size_t>(part) * es);
      const double m0 = MPI_Wtime();
      MPI_Reduce_scatter_block(grad, mine.data(), static_cast<int>(part), mpi_type(dtype), op_for(MPI_SUM, dtype),
                               mc_.comms[static_cast<std::size_t>(d)]);
      const double in_mpi = MPI_Wtime() - m0;
      std::memcpy(grad + static_cast<std::size_t>(mc_.coord[static_cast<std::size_t>(d)] * part) * es, mine.data(),
                  static_cast<std::size_t>(part) * es);
      record(label, "backward", CollectiveKind::reduce_scatter, d, n, dtype, t0, in_mpi);
    }
  }

  // as the cost counts them (once_a_step): a param's gradient collective once a step (ZeRO 0-1,
  // on the sum) or each micro-batch (ZeRO-2/3's reduce-scatters)
  bool params_once_a_step() const override {
    for (const auto& [of, list] : backward_)
      for (const Collective* c : list)
        if (local_.tensor(param_of(of)).role == TensorRole::param) return once_a_step(local_, *c, mc_.mesh.zero);
    return true;  // no param's gradient moves
  }

  std::vector<std::pair<std::int64_t, std::int64_t>> update_ranges(int tensor, std::int64_t numel) override {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (const auto& [of, where] : zero_parts(tensor)) out.push_back(where);
    if (out.empty()) return {{0, numel}};  // not partitioned: updated whole, as on one device
    std::sort(out.begin(), out.end());
    return out;
  }

  void param_updated(int tensor, std::byte* data, DType dtype) override {
    const auto it = gathers_.find(tensor);
    if (it == gathers_.end()) return;
    for (const Collective* c : it->second) gather(*c, "optimizer", data, dtype);
  }

  /// A kernel's own collective (a cross_entropy on this device's part of the classes: its
  /// rows' statistics), on the communicator of the dimension the classes are split over.
  void all_reduce(int tag, void* data, std::int64_t n, DType dtype, bool max) override {
    const auto it = kernel_dims_.find(tag);
    EINEXPR_ASSERT(it != kernel_dims_.end(), "mesh run: a kernel's collective the cost does not list");
    const int d = it->second;
    const double t0 = start(d);
    const double m0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(n, "a cross_entropy's rows"), mpi_type(dtype), max ? MPI_MAX : MPI_SUM,
                  mc_.comms[static_cast<std::size_t>(d)]);
    const double in_mpi = MPI_Wtime() - m0;
    record(local_.statements.at(static_cast<std::size_t>(tag)).name, phase_, CollectiveKind::all_reduce, d, n, dtype, t0, in_mpi);
  }

  void begin_forward() override {
    phase_ = "forward";
    for (const Collective* c : zero3_forward_) gather(*c, "forward", params.at(param_of(c->of)), local_.tensor(c->of).dtype);
  }
  void begin_backward() override {
    phase_ = "backward";
    for (const Collective* c : zero3_backward_) gather(*c, "backward", params.at(param_of(c->of)), local_.tensor(c->of).dtype);
  }

  std::map<int, std::uint64_t> dropout_offsets;
  std::uint64_t dropout_offset(int k) override {
    const auto it = dropout_offsets.find(k);
    return it == dropout_offsets.end() ? 0 : it->second;
  }
  // With micro-batches, per dropout: its mask's first dim (the batch axis) split into `parts`
  // with this device's the `part`-th, `elements` in this device's part (all micro-batches').
  struct DropoutSplit {
    std::int64_t part = 0, parts = 1, elements = 0;
  };
  std::map<int, DropoutSplit> dropout_splits;
  std::pair<int, std::uint64_t> dropout_draws(int k, int micro, int micro_batches) override {
    const auto it = dropout_splits.find(k);
    if (micro_batches == 1 || it == dropout_splits.end()) return {micro, dropout_offset(k)};
    // this device's micro-batch is the g-th run of rows of B / (parts · K) in the batch: inside
    // one process's micro-batch g / parts (each B / K rows), (g % parts) runs in
    const DropoutSplit& d = it->second;
    const std::int64_t g = d.part * micro_batches + micro;
    return {static_cast<int>(g / d.parts), static_cast<std::uint64_t>((g % d.parts) * (d.elements / micro_batches))};
  }

  /// The param a tensor is (itself, or the stack a layer's slice is of).
  int param_of(int id) const {
    const ProgramTensor& t = local_.tensor(id);
    return t.role == TensorRole::layer ? t.stacked : id;
  }
  /// ZeRO: the mesh dimension param `tensor`'s gradients are scattered over, else -1.
  int zero_dim(int tensor) const {
    for (const auto& [of, list] : backward_)
      for (const Collective* c : list)
        if (c->kind == CollectiveKind::reduce_scatter && param_of(of) == tensor) return mc_.dim_index(c->mesh_dim);
    return -1;
  }
  /// ZeRO: each of param `tensor`'s gradients scattered (the param, or each layer's slice) ->
  /// the elements of the param this rank keeps of it.
  std::vector<std::pair<int, std::pair<std::int64_t, std::int64_t>>> zero_parts(int tensor) const {
    std::vector<std::pair<int, std::pair<std::int64_t, std::int64_t>>> out;
    for (const auto& [of, list] : backward_)
      for (const Collective* c : list) {
        if (c->kind != CollectiveKind::reduce_scatter || param_of(of) != tensor) continue;
        const ProgramTensor& t = local_.tensor(of);
        const std::int64_t base = t.role == TensorRole::layer ? t.layout.offset - local_.tensor(tensor).layout.offset : 0;
        const int d = mc_.dim_index(c->mesh_dim);
        const std::int64_t part = checked_numel(t.shape) / mc_.mesh.dims[static_cast<std::size_t>(d)].size;
        const std::int64_t at = base + mc_.coord[static_cast<std::size_t>(d)] * part;
        out.push_back({of, {at, at + part}});
      }
    return out;
  }

 private:
  /// The clock's start for a collective on mesh dimension d (after a barrier when synchronizing).
  double start(int d) const {
    if (synchronize) MPI_Barrier(mc_.comms[static_cast<std::size_t>(d)]);
    return MPI_Wtime();
  }
  void record(const std::string& label, const std::string& phase, CollectiveKind kind, int d, std::int64_t elements, DType dtype,
              double started, double in_mpi) {
    const double seconds = MPI_Wtime() - started;
    int ranks = 1;
    MPI_Comm_size(mc_.comms[static_cast<std::size_t>(d)], &ranks);
    const std::int64_t bytes = elements * static_cast<std::int64_t>(element_size(dtype));
    log.push_back({label, phase, kind, mc_.mesh.dims[static_cast<std::size_t>(d)].name, ranks, elements, bytes,
                   bus_bytes(kind, bytes, ranks), seconds, in_mpi});
  }

  void all_reduce(const Collective& c, const std::string& label, const std::string& phase, std::byte* data,
                  const Layout& layout, DType dtype, MPI_Op op) {
    const int d = mc_.dim_index(c.mesh_dim);
    const std::int64_t n = layout.numel();
    MPI_Comm comm = mc_.comms[static_cast<std::size_t>(d)];
    const double t0 = start(d);
    double in_mpi = 0;
    if (layout.is_contiguous()) {
      const double m0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), mpi_type(dtype), op_for(op, dtype), comm);
      in_mpi = MPI_Wtime() - m0;
    } else {  // a strided view: packed, reduced, written back
      const Layout packed = Layout::contiguous(layout.shape);
      std::vector<std::byte> tmp(static_cast<std::size_t>(n) * element_size(dtype));
      copy_strided(tmp.data(), packed, data, layout, element_size(dtype));
      const double m0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, tmp.data(), static_cast<int>(n), mpi_type(dtype), op_for(op, dtype), comm);
      in_mpi = MPI_Wtime() - m0;
      copy_strided(data, layout, tmp.data(), packed, element_size(dtype));
    }
    record(label, phase, CollectiveKind::all_reduce, d, n, dtype, t0, in_mpi);
  }

  // ZeRO's gather of the param (or layer slice) c.of: each rank's part into every rank's copy.
  void gather(const Collective& c, const std::string& phase, std::byte* param, DType dtype) {
    const ProgramTensor& t = local_.tensor(c.of);
    const std::int64_t base = t.role == TensorRole::layer ? t.layout.offset - local_.tensor(t.stacked).layout.offset : 0;
    const int d = mc_.dim_index(c.mesh_dim);
    const std::int64_t n = checked_numel(t.shape), part = n / mc_.mesh.dims[static_cast<std::size_t>(d)].size;
    const double t0 = start(d);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, param + static_cast<std::size_t>(base) * element_size(dtype),
                  static_cast<int>(part), mpi_type(dtype), mc_.comms[static_cast<std::size_t>(d)]);
    const double in_mpi = MPI_Wtime() - t0;
    record(t.name, phase, CollectiveKind::all_gather, d, n, dtype, t0, in_mpi);
  }

  static void scale(std::byte* data, const Layout& layout, DType dtype, double by) {
    const std::int64_t n = layout.numel();
    std::vector<std::int64_t> index(layout.shape.size(), 0);
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t o = 0;
      for (std::size_t k = 0; k < index.size(); ++k) o += index[k] * layout.strides[k];
      if (dtype == DType::f32) reinterpret_cast<float*>(data)[o] = static_cast<float>(reinterpret_cast<float*>(data)[o] * by);
      else if (dtype == DType::f64) reinterpret_cast<double*>(data)[o] *= by;
      else if (narrow(dtype)) {
        auto* v = reinterpret_cast<std::uint16_t*>(data) + o;
        *v = f32_to_narrow(static_cast<float>(narrow_to_f32(*v, dtype) * by), dtype);
      }
      else throw DTypeError(std::string("a mean over a split axis in ") + std::string(name(dtype)) + " is not run on MPI yet");
      for (std::size_t k = index.size(); k-- > 0;) {
        if (++index[k] < layout.shape[k]) break;
        index[k] = 0;
      }
    }
  }

  /// Statement s's result made (forward or again): its partial sums all-reduced, a mean's 1/n.
  void complete(const std::map<int, std::vector<const Collective*>>& by_statement, const std::string& phase, int s,
                std::byte* data, const Layout& layout, DType dtype) {
    const auto it = by_statement.find(s);
    if (it == by_statement.end()) return;
    const PlannedStatement& st = local_.statements.at(static_cast<std::size_t>(s));
    MPI_Op op = MPI_SUM;
    for (const Step& step : st.plan.steps)
      if (const auto* r = std::get_if<ReduceStep>(&step))
        op = r->op == Reduction::max ? MPI_MAX : r->op == Reduction::min ? MPI_MIN : op;
    for (const Collective* c : it->second) all_reduce(*c, st.name, phase, data, layout, dtype, op);
    if (const auto m = means_.find(s); m != means_.end()) scale(data, layout, dtype, 1.0 / static_cast<double>(m->second));
  }

  const MeshComms& mc_;
  const ProgramPlan& local_;
  std::map<int, std::vector<const Collective*>> forward_, recomputed_, backward_, gathers_;
  std::vector<const Collective*> zero3_forward_, zero3_backward_;
  std::vector<std::byte> scratch_;  // a reduce-scatter's part (grown once, kept)
  std::map<int, int> kernel_dims_;   // statement -> the mesh dimension its kernel's collectives run on
  std::string phase_ = "forward";    // the phase a kernel's collectives are in
  std::map<int, std::int64_t> means_;
};

std::string describe(const std::string& phase, CollectiveKind kind, const std::string& dim, const std::string& tensor,
                     std::int64_t elements, std::int64_t bus) {
  return phase + " " + name(kind) + " over " + dim + " of " + tensor + ": " + std::to_string(elements) + " elements, " +
         std::to_string(bus) + " bus bytes";
}

}  // namespace

std::string compare_collectives(const std::vector<Collective>& predicted, const std::vector<MeasuredCollective>& measured,
                                const std::vector<std::string>& phases) {
  using Key = std::tuple<std::string, int, std::string, std::string, std::uint64_t, std::uint64_t, std::uint64_t>;
  std::map<Key, int> left;
  for (const Collective& c : predicted)
    if (std::find(phases.begin(), phases.end(), c.phase) != phases.end())
      ++left[{c.phase, static_cast<int>(c.kind), c.mesh_dim, c.tensor, c.elements.u64(), c.bytes.u64(),
              c.bus_bytes.u64()}];
  std::string out;
  for (const MeasuredCollective& m : measured) {
    const Key k{m.phase, static_cast<int>(m.kind), m.mesh_dim, m.tensor, static_cast<std::uint64_t>(m.elements),
                static_cast<std::uint64_t>(m.bytes), static_cast<std::uint64_t>(m.bus_bytes)};
    if (const auto it = left.find(k); it != left.end() && it->second > 0) --it->second;
    else out += "issued, not predicted: " + describe(m.phase, m.kind, m.mesh_dim, m.tensor, m.elements, m.bus_bytes) + "\n";
  }
  for (const auto& [k, n] : left)
    for (int i = 0; i < n; ++i)
      out += "predicted, not issued: " +
             describe(std::get<0>(k), static_cast<CollectiveKind>(std::get<1>(k)), std::get<2>(k), std::get<3>(k),
                      static_cast<std::int64_t>(std::get<4>(k)), static_cast<std::int64_t>(std::get<6>(k))) +
             "\n";
  return out;
}

MeshRun run_on_mesh(MPI_Comm comm, const ast::Program& program, const Mesh& mesh, const ProgramOptions& options,
                    const TensorMap& inputs) {
  std::unique_ptr<MeshComms> mc;
  Parts parts;
  std::unique_ptr<CompiledProgram> compiled;
  TensorMap mine;
  agree(comm, [&] {
    mc = std::make_unique<MeshComms>(comm, mesh);
    ProgramOptions o = options;
    o.training = false;  // a run: dropout is the identity
    parts = plan_parts(*mc, program, o, inputs, {});
    (void)program_detail::bind_tensors(parts.whole, inputs, Device::cpu(), {TensorRole::input, TensorRole::param});
    for (const auto& [name, t] : inputs) mine[name] = mc->part_of(t, parts.whole.tensor(parts.whole.tensor(name)));
    compiled = std::make_unique<CompiledProgram>(program, parts.local);
  });
  Collectives hooks(*mc, parts.predicted, compiled->plan());
  const ProgramRun run = compiled->run(mine, &hooks);
  MeshRun out;
  out.measured = std::move(hooks.log);
  for (std::size_t i = 0; i < run.outputs.size(); ++i) {
    const int id = parts.whole.outputs.at(i);
    Tensor whole = mc->whole_of(run.outputs[i].second, parts.whole.tensor(id), parts.whole.tensor(id).shape, out.gathered);
    if (mc->rank == 0) out.outputs.emplace_back(run.outputs[i].first, std::move(whole));
  }
  out.predicted = std::move(parts.predicted);
  return out;
}

struct MeshTrainer::Impl {
  std::unique_ptr<MeshComms> mc;
  Parts parts;        // parts.predicted: the step's (with micro-batches, each micro-batch's collectives K times)
  ProgramPlan micro_plan;  // micro-batches: the whole program at a micro-batch's size,
  MeshCost micro;          // its cost on the mesh (what the hooks issue, by statement and tensor)
  ProgramPlan local;  // this rank's part, as the trainer plans it
  std::shared_ptr<Collectives> hooks;
  std::unique_ptr<Trainer> trainer;
  std::vector<MeasuredCollective> measured;
};

MeshTrainer::MeshTrainer(MPI_Comm comm, const ast::Program& program, const Mesh& mesh, const ProgramOptions& options,
                         const OptimizerOptions& optimizer, const TensorMap& params)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  agree(comm, [&] {
    m.mc = std::make_unique<MeshComms>(comm, mesh);
    const int batches = optimizer.micro_batches;
    // the cost recomputes what the trainer does: none or the checkpoints as asked; auto's
    // choice (under a limit per device) is the trainer's, known once it is built (below)
    ProgramCostOptions co;
    co.optimizer = optimizer.kind;
    const bool chosen_later = optimizer.recompute && optimizer.recompute->mode == RecomputeMode::automatic;
    if (optimizer.recompute && !chosen_later) co.recompute = optimizer.recompute;
    m.parts = plan_parts(*m.mc, program, options, params, co);
    // micro-batches: the whole program at a micro-batch's size (B / K; each device's part of it
    // B / (K · dp)) is what the hooks issue collectives by, K times a step but the once-a-step ones
    ProgramOptions at_micro = options;
    if (batches > 1) {
      const auto whole = std::find_if(m.parts.whole.axes.begin(), m.parts.whole.axes.end(),
                                      [&](const auto& a) { return a.first == optimizer.batch_axis; });
      if (whole == m.parts.whole.axes.end())
        throw Error("the program has no axis '" + optimizer.batch_axis + "' to split into micro-batches");
      if (whole->second % batches != 0)
        throw ShapeError("axis '" + optimizer.batch_axis + "' is " + std::to_string(whole->second) +
                         ": it does not split into " + std::to_string(batches) + " equal micro-batches");
      bool set = false;
      for (auto& [name, length] : at_micro.axes)
        if (name == optimizer.batch_axis) length = whole->second / batches, set = true;
      if (!set) at_micro.axes.emplace_back(optimizer.batch_axis, whole->second / batches);
      for (GivenTensor& g : at_micro.given)  // a given input's rows along the batch axis: a micro-batch's
        if (const int id = m.parts.whole.tensor(g.name); id >= 0) {
          const std::vector<std::string>& dims = m.parts.whole.tensor(id).dims;
          for (std::size_t d = 0; d < dims.size() && d < g.shape.size(); ++d)
            if (dims[d] == optimizer.batch_axis) g.shape[d] /= batches;
        }
    }
    const auto predict = [&] {  // the mesh's cost under `co`, of a step and (micro-batches) of one micro-batch
      if (batches == 1) {
        m.parts.predicted = shard(m.parts.whole, cost(m.parts.whole, co), m.mc->mesh);
        return;
      }
      m.micro = shard(m.micro_plan, cost(m.micro_plan, co), m.mc->mesh);
      m.parts.predicted = step_of_micro_batches(m.micro_plan, m.micro, batches);
    };
    if (batches > 1) {
      m.micro_plan = plan_parts(*m.mc, program, at_micro, params, co).whole;
      predict();
    }
    const MeshCost& routed = batches > 1 ? m.micro : m.parts.predicted;
    (void)program_detail::bind_tensors(m.parts.whole, params, Device::cpu(), {TensorRole::param});
    TensorMap mine;
    for (const auto& [name, t] : params) mine[name] = m.mc->part_of(t, m.parts.whole.tensor(m.parts.whole.tensor(name)));
    // the local plan first (to know its tensors), then the trainer on it with the hooks
    m.local = plan_program(program, [&] {
      ProgramOptions o = m.parts.local;
      for (const auto& entry : mine) {  // named, not bound: captured below (clang 14)
        const std::string& name = entry.first;
        const Tensor& t = entry.second;
        if (std::none_of(o.given.begin(), o.given.end(), [&](const GivenTensor& g) { return g.name == name; }))
          o.given.push_back({name, t.shape(), t.dtype(), "the tensor given for '" + name + "'"});
      }
      return o;
    }());
    const ProgramPlan& local = m.local;
    // ZeRO's parts: each gradient scattered must divide evenly
    for (const Collective& c : m.parts.predicted.collectives)
      if (c.kind != CollectiveKind::all_reduce && c.of >= 0) {
        const std::int64_t n = checked_numel(local.tensor(c.of).shape), d = c.ranks;
        if (n % d != 0)
          throw Error("ZeRO over " + c.mesh_dim + "=" + std::to_string(d) + ": '" + local.tensor(c.of).name + "' has " +
                      std::to_string(n) + " elements on each device, which do not split into " + std::to_string(d) +
                      " equal parts (" + std::to_string(n) + " % " + std::to_string(d) + " = " + std::to_string(n % d) + ")");
      }
    // the collectives read this plan: the trainer's is the same (the same program, sizes and options)
    m.hooks = std::make_shared<Collectives>(*m.mc, routed, local);
    // a param partitioned over two mesh dimensions: one part per rank of their product, not run
    for (std::size_t id = 0; id < local.tensors.size(); ++id) {
      std::set<std::string> dims;
      for (const auto& [of, where] : m.hooks->zero_parts(static_cast<int>(id))) {
        for (const Collective& c : m.parts.predicted.collectives)
          if (c.of == of && c.kind == CollectiveKind::reduce_scatter) dims.insert(c.mesh_dim);
      }
      if (dims.size() > 1)
        throw Error("ZeRO: '" + local.tensor(static_cast<int>(id)).name +
                    "' is summed over more than one mesh dimension: its partition is not run on MPI yet");
    }
    // dropout: each rank's mask the whole mask's elements from its part's first on, which is
    // one run of indices only when the part is cut along the mask's first dim alone
    for (const PlannedStatement& st : local.statements)
      for (int in : st.inputs)
        if (const int k = local.tensor(in).dropout; k >= 0) {
          const ProgramTensor& y = local.tensor(st.output);
          std::uint64_t offset = 0;
          Collectives::DropoutSplit split{0, 1, checked_numel(y.shape)};
          for (std::size_t d = 0; d < y.dims.size(); ++d)
            if (const int md = m.mc->splitting(y.dims, d); md >= 0) {
              if (d > 0)
                throw Error("dropout '" + st.name + "' on a mesh: its mask is drawn by element index, and its dim " +
                            y.dims[d] + " is split over " + m.mc->mesh.dims[static_cast<std::size_t>(md)].name +
                            ": only a split first dim keeps a device's part one run of indices (not run on MPI yet)");
              offset = static_cast<std::uint64_t>(m.mc->coord[static_cast<std::size_t>(md)] * checked_numel(y.shape));
              split.part = m.mc->coord[static_cast<std::size_t>(md)];
              split.parts = m.mc->mesh.dims[static_cast<std::size_t>(md)].size;
            }
          // micro-batches cut the first dim, which must then be the batch axis: a device's
          // micro-batch is then a run of rows of one process's
          if (batches > 1 && (y.dims.empty() || first_atom(y.dims[0]) != optimizer.batch_axis))
            throw Error("dropout '" + st.name + "' with micro-batches on a mesh: its mask's first dim is " +
                        (y.dims.empty() ? std::string("none") : y.dims[0]) + ", not the batch axis " + optimizer.batch_axis +
                        ": a device's micro-batch would not be a run of one process's draws (not run on MPI yet)");
          m.hooks->dropout_offsets[k] = offset;
          m.hooks->dropout_splits[k] = split;
        }
    m.trainer = std::make_unique<Trainer>(compile_training(program, m.parts.local, optimizer, mine, m.hooks));
    if (chosen_later) {  // the statements auto keeps on each device, costed as checkpoints
      const TrainingOptions& kept = m.trainer->recompute().training;
      co.recompute = RecomputeOptions{.mode = kept.recompute ? RecomputeMode::checkpoints : RecomputeMode::none,
                                      .checkpoints = kept.keep};
      predict();
      m.hooks->route(batches > 1 ? m.micro : m.parts.predicted);
    }
    for (const auto& [name, t] : m.trainer->parameters())
      m.hooks->params[m.trainer->plan().tensor(name)] = static_cast<std::byte*>(t.data_ptr());
  });
}

MeshTrainer::~MeshTrainer() = default;
MeshTrainer::MeshTrainer(MeshTrainer&&) noexcept = default;
MeshTrainer& MeshTrainer::operator=(MeshTrainer&&) noexcept = default;

double MeshTrainer::step(const TensorMap& inputs) {
  Impl& m = *impl_;
  TensorMap mine;
  agree(m.mc->world, [&] {
    (void)program_detail::bind_tensors(m.parts.whole, inputs, Device::cpu(), {TensorRole::input});
    for (const auto& [name, t] : inputs) mine[name] = m.mc->part_of(t, m.parts.whole.tensor(m.parts.whole.tensor(name)));
  });
  m.hooks->log.clear();
  const double loss = m.trainer->step(mine);
  m.measured = m.hooks->log;
  return loss;
}

TensorMap MeshTrainer::parameters() const {
  const Impl& m = *impl_;
  TensorMap out;
  std::vector<MeasuredCollective> ignored;
  if (m.parts.predicted.mesh.zero == 3) {  // each rank's updated part, gathered as the next forward would
    const std::size_t logged = m.hooks->log.size();
    m.hooks->begin_forward();
    m.hooks->log.resize(logged);
  }
  for (const auto& [name, t] : m.trainer->parameters()) {
    const int id = m.parts.whole.tensor(name);
    Tensor whole = m.mc->whole_of(t, m.parts.whole.tensor(id), m.parts.whole.tensor(id).shape, ignored);
    if (m.mc->rank == 0) out[name] = std::move(whole);
  }
  return out;
}

namespace {

/// Under ZeRO, the elements of `full` (shaped as the param) in `ranges`, in turn: 1-d.
Tensor ranges_of(const Tensor& full, const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) {
  std::int64_t held = 0;
  for (const auto& [b, e] : ranges) held += e - b;
  Tensor out = Tensor::empty({held}, full.dtype());
  const Tensor src = full.contiguous();
  const std::size_t es = element_size(full.dtype());
  std::int64_t at = 0;
  for (const auto& [b, e] : ranges) {
    std::memcpy(static_cast<std::byte*>(out.data_ptr()) + static_cast<std::size_t>(at) * es,
                static_cast<const std::byte*>(src.data_ptr()) + static_cast<std::size_t>(b) * es, static_cast<std::size_t>(e - b) * es);
    at += e - b;
  }
  return out;
}

}  // namespace

TensorMap MeshTrainer::optimizer_state() const {
  const Impl& m = *impl_;
  TensorMap out;
  std::vector<MeasuredCollective> ignored;
  const ProgramPlan& local = m.trainer->plan();
  for (const auto& [key, t] : m.trainer->optimizer_state()) {  // the same keys, in the same order, on every rank
    const std::string param = key.substr(0, key.rfind('.'));  // before the state's kind (exp_avg, master, ...)
    const int id = local.tensor(param);
    const ProgramTensor& lt = local.tensor(id);
    const std::int64_t numel = checked_numel(lt.shape);
    Tensor full = t;
    if (const int d = m.hooks->zero_dim(id); d >= 0) {
      // ZeRO: this device's ranges (its 1-d state, or the master's elements there) in a zero
      // tensor shaped as the param, summed over the ZeRO dimension: every device's part in place
      full = Tensor::zeros(lt.shape, t.dtype());
      const std::size_t es = element_size(t.dtype());
      const Tensor src = t.contiguous();
      std::int64_t at = 0;
      for (const auto& [b, e] : m.hooks->update_ranges(id, numel)) {
        const std::int64_t from = t.numel() == numel ? b : at;
        std::memcpy(static_cast<std::byte*>(full.data_ptr()) + static_cast<std::size_t>(b) * es,
                    static_cast<const std::byte*>(src.data_ptr()) + static_cast<std::size_t>(from) * es,
                    static_cast<std::size_t>(e - b) * es);
        at += e - b;
      }
      MPI_Allreduce(MPI_IN_PLACE, full.data_ptr(), mpi_count(numel, "'" + key + "' in elements,"), mpi_type(t.dtype()),
                    MPI_SUM, m.mc->comms[static_cast<std::size_t>(d)]);
    }
    const int whole_id = m.parts.whole.tensor(param);
    Tensor whole = m.mc->whole_of(full, m.parts.whole.tensor(whole_id), m.parts.whole.tensor(whole_id).shape, ignored);
    if (m.mc->rank == 0) out[key] = std::move(whole);
  }
  return out;
}

void MeshTrainer::restore(const TensorMap& params, const TensorMap& state, std::int64_t steps) {
  Impl& m = *impl_;
  agree(m.mc->world, [&] {
    (void)program_detail::bind_tensors(m.parts.whole, params, Device::cpu(), {TensorRole::param});
    const ProgramPlan& local = m.trainer->plan();
    TensorMap mine, mine_state;
    for (const auto& [name, t] : params) mine[name] = m.mc->part_of(t, m.parts.whole.tensor(m.parts.whole.tensor(name)));
    for (const auto& [key, t] : state) {
      const std::string param = key.substr(0, key.rfind('.'));  // before the state's kind (exp_avg, master, ...)
      const int whole_id = m.parts.whole.tensor(param);
      if (whole_id < 0 || !t.defined()) {
        mine_state[key] = t;  // the trainer names what is wrong with it
        continue;
      }
      const Shape& whole = m.parts.whole.tensor(whole_id).shape;
      if (t.shape() != whole)  // named whole, not as this rank's part the trainer would see
        throw ShapeError("the checkpoint's '" + key + "' is " + shape_str(t.shape()) + ": a state of param '" + param +
                         "' is shaped as the param, " + shape_str(whole));
      Tensor part = m.mc->part_of(t, m.parts.whole.tensor(whole_id));
      const int id = local.tensor(param);
      const bool master = key.size() > 7 && key.compare(key.size() - 7, 7, ".master") == 0;
      if (m.hooks->zero_dim(id) >= 0 && !master) part = ranges_of(part, m.hooks->update_ranges(id, part.numel()));
      mine_state[key] = std::move(part);
    }
    m.trainer->restore(mine, mine_state, steps);
  });
}

std::int64_t MeshTrainer::steps() const noexcept { return impl_->trainer->steps(); }

const std::vector<MeasuredCollective>& MeshTrainer::measured() const noexcept { return impl_->measured; }
const MeshCost& MeshTrainer::predicted() const noexcept { return impl_->parts.predicted; }
void MeshTrainer::synchronize_collectives(bool on) noexcept { impl_->hooks->synchronize = on; }
const Trainer& MeshTrainer::local() const noexcept { return *impl_->trainer; }
int MeshTrainer::rank() const noexcept { return impl_->mc->rank; }

}  // namespace einexpr
