// einexpr_bench_mesh: programs on a device mesh over MPI (lib/mpi), beside MPI's own calls in
// the same run. `mpirun -np 2 build-rel/bench/einexpr_bench_mesh [--steps N]` (bench/README.md).
//
// 1. Each collective a training step issues (MeshTrainer, timed with a barrier on its
//    communicator before its clock, MeasuredCollective::seconds) against the same MPI call on
//    the same number of bytes, on a communicator of the same ranks, timed the same way, in
//    the same process: bandwidth ratio = MPI's time / einexpr's (1.0: einexpr adds nothing).
// 2. A 1-rank mesh against the plain run: the same program's training step by Trainer and by
//    MeshTrainer on "dp=1" (every collective a no-op on one rank), in turn, on rank 0.
// Medians over the steps; each configuration's table on rank 0.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "einexpr/mesh_run.hpp"
#include "einexpr/parser/program.hpp"

using namespace einexpr;

namespace {

int rank = 0, world = 1;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The communicator of mesh dimension `dim` as mesh_run.hpp builds it: the ranks that differ in
// that coordinate alone (row-major, the last dimension fastest).
MPI_Comm dimension_comm(const Mesh& mesh, const std::string& dim) {
  std::vector<std::int64_t> coord(mesh.dims.size());
  std::int64_t rest = rank;
  for (std::size_t d = mesh.dims.size(); d-- > 0;) coord[d] = rest % mesh.dims[d].size, rest /= mesh.dims[d].size;
  int color = 0, key = 0;
  for (std::size_t e = 0; e < mesh.dims.size(); ++e)
    if (mesh.dims[e].name != dim) color = color * static_cast<int>(mesh.dims[e].size) + static_cast<int>(coord[e]);
    else key = static_cast<int>(coord[e]);
  MPI_Comm c;
  MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
  return c;
}

// MPI's own call on `elements` f32, timed as the mesh run times its collectives: a barrier, then
// the call, the buffer written just before (in this core's cache, as a step's tensor is).
double raw_seconds(CollectiveKind kind, std::int64_t elements, MPI_Comm comm, int reps, bool cold) {
  static std::vector<float> evict(std::size_t{16} << 20);  // 64 MiB, beyond this machine's caches
  int n = 1;
  MPI_Comm_size(comm, &n);
  std::vector<float> a(static_cast<std::size_t>(elements), 1.0f), b(static_cast<std::size_t>(elements / n + 1));
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    // written just before, as a step's collective finds its tensor (made by the kernel before it)
    std::fill(a.begin(), a.end(), static_cast<float>(r + 1));
    if (cold) std::fill(evict.begin(), evict.end(), static_cast<float>(r));  // ... or since pushed out of the caches
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    switch (kind) {
      case CollectiveKind::all_reduce:
        MPI_Allreduce(MPI_IN_PLACE, a.data(), static_cast<int>(elements), MPI_FLOAT, MPI_SUM, comm);
        break;
      case CollectiveKind::reduce_scatter:
        MPI_Reduce_scatter_block(a.data(), b.data(), static_cast<int>(elements / n), MPI_FLOAT, MPI_SUM, comm);
        break;
      case CollectiveKind::all_gather:
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a.data(), static_cast<int>(elements / n), MPI_FLOAT, comm);
        break;
    }
    t.push_back(MPI_Wtime() - t0);
  }
  return median(t);
}

struct Config {
  std::string label, dims, shard;
  int zero = 0;
};

const char* lecture = R"(axes B=512 D=1024 E=2048 K=1024
input x: B D
param w1: D E
param w2: E K
h1 = einsum(x, w1, "B D, D E -> B E")
h2 = einsum(h1, w2, "B E, E K -> B K")
sq = map(h2, "B K -> B K", "square")
loss = reduce(sq, "B K ->", "mean")
)";

// The program, its random params and input, and Adam keeping everything (no recomputation).
struct Workload {
  ast::Program program = parse_program(lecture, "lecture2_big.ein");
  TensorMap params, inputs{{"x", Tensor::randn({512, 1024}, DType::f32, 99)}};
  OptimizerOptions opt;
  Workload() {
    std::uint64_t seed = 1;
    for (const ProgramTensor& t : plan_program(program).tensors)
      if (t.role == TensorRole::param) params[t.name] = Tensor::randn(t.shape, DType::f32, seed++);
    opt.kind = Optimizer::adam;
    opt.recompute = RecomputeOptions{};
  }
};

void collectives(const Config& c, int steps) {
  const Workload w;
  const ast::Program& p = w.program;
  const TensorMap& params = w.params;
  const TensorMap& inputs = w.inputs;
  const OptimizerOptions& opt = w.opt;
  const Mesh mesh = parse_mesh(c.dims, c.shard, c.zero);
  MeshTrainer t(MPI_COMM_WORLD, p, mesh, {}, opt, params);
  t.synchronize_collectives(true);
  for (int s = 0; s < 2; ++s) t.step(inputs);  // warm-up
  std::vector<std::vector<double>> seconds, in_mpi;
  std::vector<MeasuredCollective> issued;
  for (int s = 0; s < steps; ++s) {
    t.step(inputs);
    issued = t.measured();
    seconds.resize(issued.size());
    in_mpi.resize(issued.size());
    for (std::size_t i = 0; i < issued.size(); ++i) {
      seconds[i].push_back(issued[i].seconds);
      in_mpi[i].push_back(issued[i].mpi_seconds);
    }
  }
  std::map<std::string, MPI_Comm> comms;
  for (const MeshDim& d : mesh.dims) comms[d.name] = dimension_comm(mesh, d.name);
  if (rank == 0)
    std::cout << "\n" << c.label << "  (" << mesh.str() << ", " << world << " ranks, lecture2 at B=512 D=1024 E=2048 K=1024, f32; "
              << "medians of " << steps << " steps)\n"
              << "| collective | phase | MiB | einexpr ms | of it in the MPI call | MPI alone ms (buffer cached, evicted) | "
                 "einexpr GB/s (bus) | MPI alone GB/s (bus; cached) | ratio (cached, evicted) |\n"
              << "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (std::size_t i = 0; i < issued.size(); ++i) {
    const MeasuredCollective& m = issued[i];
    const double ours = median(seconds[i]);
    const double theirs = raw_seconds(m.kind, m.elements, comms.at(m.mesh_dim), steps, false);
    const double cold = raw_seconds(m.kind, m.elements, comms.at(m.mesh_dim), steps, true);
    if (rank == 0)
      std::cout << "| " << name(m.kind) << " " << m.tensor << " over " << m.mesh_dim << " | " << m.phase << " | " << std::fixed
                << std::setprecision(2) << static_cast<double>(m.bytes) / (1 << 20) << " | " << std::setprecision(3)
                << ours * 1e3 << " | " << std::setprecision(2) << median(in_mpi[i]) / ours << " | " << std::setprecision(3)
                << theirs * 1e3 << ", " << cold * 1e3 << " | " << std::setprecision(2)
                << static_cast<double>(m.bus_bytes) / ours / 1e9 << " | " << static_cast<double>(m.bus_bytes) / theirs / 1e9
                << " | " << theirs / ours << ", " << cold / ours << " |\n";
  }
  for (auto& [name, comm] : comms) MPI_Comm_free(&comm);
}

void one_rank_mesh(int steps) {
  if (world != 1) return;
  const Workload w;
  const ast::Program& p = w.program;
  const TensorMap& params = w.params;
  const TensorMap& inputs = w.inputs;
  const OptimizerOptions& opt = w.opt;
  Trainer plain = compile_training(p, {}, opt, params);
  MeshTrainer meshed(MPI_COMM_WORLD, p, parse_mesh("dp=1", "B:dp"), {}, opt, params);
  std::vector<double> a, b;
  for (int s = 0; s < steps + 2; ++s) {  // in turn, the first two of each skipped
    auto t0 = std::chrono::steady_clock::now();
    plain.step(inputs);
    auto t1 = std::chrono::steady_clock::now();
    meshed.step(inputs);
    auto t2 = std::chrono::steady_clock::now();
    if (s >= 2) {
      a.push_back(std::chrono::duration<double>(t1 - t0).count());
      b.push_back(std::chrono::duration<double>(t2 - t1).count());
    }
  }
  std::cout << "\n1-rank mesh against the plain run (lecture2 at B=512 D=1024 E=2048 K=1024, Adam, medians of " << steps
            << " steps in turn)\n| run | ms a step |\n|---|---:|\n| Trainer | " << std::fixed << std::setprecision(2)
            << median(a) * 1e3 << " |\n| MeshTrainer, dp=1 | " << median(b) * 1e3 << " |\n| ratio (mesh / plain) | "
            << std::setprecision(3) << median(b) / median(a) << " |\n";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int steps = 20;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::max(3, std::atoi(argv[i + 1]));
  try {
    if (world == 1) {
      one_rank_mesh(steps);
    } else {
      const std::string n = std::to_string(world);
      collectives({"data parallelism: the gradients' all-reduces", "dp=" + n, "B:dp", 0}, steps);
      collectives({"tensor parallelism: h2's partial sums (E split)", "tp=" + n, "E:tp", 0}, steps);
      collectives({"ZeRO-1: the gradients' reduce-scatters, the params' gathers", "dp=" + n, "B:dp", 1}, steps);
    }
  } catch (const std::exception& e) {
    std::cerr << "rank " << rank << ": " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
