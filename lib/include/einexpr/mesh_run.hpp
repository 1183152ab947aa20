#pragma once
// A model program on a device mesh, run on MPI (built with EINEXPR_MPI; links einexpr::mpi).
//
// Each rank is one device of the mesh, in row-major order over its dimensions ("dp=2 tp=2":
// ranks 0 and 1 share dp's coordinate 0, tp varies fastest), and holds its part of every
// tensor: an axis split over a mesh dimension is cut into equal contiguous blocks, one per
// coordinate along it (the outermost axis of a composition, so "(H K)" with H split is a block
// of whole heads); every other axis is whole on every rank. Each rank runs the program on its
// parts as one device does (the program planned at the parts' sizes), and issues the
// collectives that shard() (codegen/mesh.hpp) derives, each on the communicator of its mesh
// dimension: MPI_Allreduce where a statement or a gradient sums over a split axis (the sum, the
// max or the min of the parts; a mean's sum scaled by the devices), and under ZeRO
// MPI_Reduce_scatter_block of each gradient and MPI_Allgather of each param.
//
//   MPI_Init(&argc, &argv);
//   const Mesh mesh = parse_mesh("dp=2 tp=2", "B:dp E:tp");
//   MeshRun r = run_on_mesh(MPI_COMM_WORLD, program, mesh, {}, inputs);   // on every rank
//   // rank 0: r.outputs whole, as one process computes them; r.measured what each rank
//   // handed to MPI, r.predicted the cost's collectives
//
//   MeshTrainer t(MPI_COMM_WORLD, program, mesh, {}, {.kind = Optimizer::adam}, params);
//   for (...) t.step(inputs);                 // the loss, the same on every rank
//   TensorMap trained = t.parameters();       // whole on rank 0 (a collective: every rank calls it)
//
// Every rank passes the same program, mesh, options and whole tensors (each takes its part).
// A run issues the collectives the cost lists; what it counts is what it hands to MPI (the
// elements of each buffer, their bytes, and nccl-tests' bus bytes of those), so `measured`
// equal to `predicted` says the cost's byte counts are the run's; that the results equal one
// process's says the collectives are the right ones.
//
// Errors found before any rank computes — a mesh whose size is not the communicator's, a layout
// shard() refuses, a tensor of the wrong shape on any rank, what this first cut does not run —
// are thrown on every rank as MeshError, with the first failing rank's message. Vocabulary
// parallelism (get_at, add_at and cross_entropy along a split axis) runs on each rank's rows
// of it (ProgramOptions::parts; the cross_entropy kernel's row all-reduces through
// StepHooks' KernelCollectives). Not run yet: a forward reduce-scatter (a sum over an axis split over the dimension the result is split
// over), a split layer axis (pipelines), micro-batches with a dropout whose first dim is not
// the batch axis, dropout on a tensor split along another dim than its first, dtypes other
// than f64, f32, bf16 and f16 in a collective. bf16 and f16 (mixed precision: their params,
// activations and gradients) travel as 16-bit words, reduced by MPI ops of einexpr's that add
// (max, min) each pair of elements in f32 and round back. Micro-batches (OptimizerOptions::micro_batches K) cut each rank's
// part of the batch into K: the forward's and the activations' collectives run each
// micro-batch, a param's gradient's once a step on the micro-batches' sum (ZeRO 0-1) or each
// micro-batch's reduce-scattered before it is added to this rank's part of the sum (ZeRO-2/3,
// ZeRO-3's param gathers each micro-batch too), as once_a_step (codegen/mesh.hpp) counts them; MeshTrainer::predicted() is then one
// micro-batch's cost with the step's collectives (step_of_micro_batches).
// Recomputation runs: a statement made again for the backward issues its forward's
// collectives again, as the cost counts them (--recompute auto's limit is each device's, and
// the cost counts what the trainer chose). ZeRO-2's gradients and ZeRO-3's params
// move ZeRO's bytes, but each rank still allocates them whole (ZeRO-1's optimizer state is
// partitioned in memory as well).
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/mesh.hpp"
#include "einexpr/program.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/train.hpp"

namespace einexpr {

/// Thrown on every rank with the message of the first rank that failed.
class MeshError : public Error {
 public:
  MeshError(const std::string& message, int rank) : Error(message), rank_(rank) {}
  /// The rank whose message it is.
  int rank() const noexcept { return rank_; }

 private:
  int rank_;
};

/// Runs f on every rank of `comm` (a collective: every rank calls it); if it throws on any,
/// it throws MeshError on every rank, with the first failing rank's message ("rank 1 of 4: ...").
void agree(MPI_Comm comm, const std::function<void()>& f);

/// One collective as a rank issued it.
struct MeasuredCollective {
  std::string tensor;        // as Collective::tensor: the statement, "dNAME" for a gradient, the param
  std::string phase;         // "forward", "backward", "optimizer"
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::string mesh_dim;
  std::int64_t ranks = 1;    // of its communicator
  std::int64_t elements = 0; // handed to MPI (a reduce-scatter's and an all-gather's whole buffer)
  std::int64_t bytes = 0;
  std::int64_t bus_bytes = 0;  // 2(n−1)/n·bytes (all-reduce), (n−1)/n·bytes
  double seconds = 0;        // from before its first copy to after its last: the MPI call and
                             // what einexpr does around it (packing a strided tensor, placing a
                             // reduce-scatter's part)
  double mpi_seconds = 0;    // the MPI call's part of it
};

/// Each of `predicted` of the given phases matched by one of `measured` (phase, kind, mesh
/// dimension, tensor, elements, bytes and bus bytes), and none of `measured` left over: "" if
/// so, else a line for each difference.
std::string compare_collectives(const std::vector<Collective>& predicted, const std::vector<MeasuredCollective>& measured,
                                const std::vector<std::string>& phases);

struct MeshRun {
  std::vector<std::pair<std::string, Tensor>> outputs;  // whole on rank 0 (empty elsewhere)
  std::vector<MeasuredCollective> measured;             // this rank's, in the order issued
  std::vector<MeasuredCollective> gathered;             // the outputs brought to rank 0 (not the program's)
  MeshCost predicted;                                   // shard() of the whole program
};

/// The program's forward (a run: inference, dropout the identity) on the mesh. `inputs`: every
/// input and param, whole.
MeshRun run_on_mesh(MPI_Comm comm, const ast::Program& program, const Mesh& mesh, const ProgramOptions& options,
                    const TensorMap& inputs);

class MeshTrainer {
 public:
  /// Plans the whole program (the mesh's cost) and this rank's part, and compiles the part's
  /// training (compile_training with the collectives as hooks). `params`: whole.
  MeshTrainer(MPI_Comm comm, const ast::Program& program, const Mesh& mesh, const ProgramOptions& options,
              const OptimizerOptions& optimizer, const TensorMap& params);
  ~MeshTrainer();
  MeshTrainer(MeshTrainer&&) noexcept;
  MeshTrainer& operator=(MeshTrainer&&) noexcept;

  /// One step on the whole inputs; the loss, on every rank.
  double step(const TensorMap& inputs);
  /// The params, whole on rank 0 (empty elsewhere): a collective, every rank calls it.
  TensorMap parameters() const;
  /// The optimizer's state by Trainer::optimizer_state()'s names, whole on rank 0 (empty
  /// elsewhere): each state shaped as its param, as one process keeps it (under ZeRO each
  /// device's part put back together). A collective: every rank calls it.
  TensorMap optimizer_state() const;
  /// Continues from a checkpoint, as Trainer::restore: the params and state whole (what
  /// parameters() and optimizer_state() give, or one process's), the steps taken. Every rank
  /// calls it with the same tensors; an error on any rank is every rank's, nothing changed.
  void restore(const TensorMap& params, const TensorMap& state, std::int64_t steps);
  /// Steps taken.
  std::int64_t steps() const noexcept;
  /// The collectives of the last step, as issued, and the cost's.
  const std::vector<MeasuredCollective>& measured() const noexcept;
  const MeshCost& predicted() const noexcept;
  /// Benchmarks (bench/bench_mesh.cpp): a barrier on each collective's communicator before its
  /// clock starts, so that `seconds` is the collective's, not the ranks' skew from the compute
  /// before it. Not counted among the collectives (it moves no bytes).
  void synchronize_collectives(bool on) noexcept;
  /// This rank's trainer (its params and optimizer state are its parts).
  const Trainer& local() const noexcept;
  int rank() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace einexpr
