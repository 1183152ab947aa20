#pragma once
// A program laid out over a device mesh by named axes (Mesh-TensorFlow's rule): the mesh's
// named dimensions ("dp=2 tp=4"), and which axes are split over which of them ("B:dp H:tp
// F:tp"). An axis laid out over a mesh dimension is split across it, in every tensor that has
// it; every other axis is replicated. From that alone, and the plans the program already has:
//
//   per device  FLOPs: each statement's and gradient's FLOPs divided by the sizes of the mesh
//               dimensions its axes are split over; memory: each tensor's bytes divided by
//               the sizes of the mesh dimensions splitting it (params, gradients, optimizer
//               state, the activations the backward keeps)
//   collectives a contraction or a reduction (a sum, a scatter-add) over an axis split over
//               dimension m leaves partial sums on each device of m: forward, the statement's
//               result is all-reduced over m at once (reduce-scattered when the result is
//               split over m itself); backward, a gradient whose contributions are partial
//               over m is all-reduced once after they are added (Megatron's f and g:
//               two all-reduces a layer forward, two backward; data parallelism's gradient
//               all-reduce of every param). Bytes per device are nccl-tests' "bus" bytes:
//               all-reduce 2(n−1)/n·S, reduce-scatter and all-gather (n−1)/n·S, S the
//               tensor's bytes on one device before the collective.
//   recomputed  a statement the backward makes again (ProgramCost::recomputed: --recompute's
//               choice) makes its forward collectives again, in the backward, before the
//               gradients that read it (with each layer made again from its input and H, F
//               split over tp, gpt2.ein's layer all-reduces four times backward, not two;
//               llama2.ein's three: nothing reads its MLP's output again)
//   ZeRO        Mesh::zero = 1, 2 or 3 (Rajbhandari et al. 2020) partitions, over the data-
//               parallel dimensions of each param (those its gradient is all-reduced over), the
//               optimizer state (1), then the gradients (2), then the params (3): per device
//               (2+2+K)Ψ, 4Ψ + KΨ/N, 2Ψ + (2+K)Ψ/N, (2+2+K)Ψ/N with mixed-precision Adam (K = 12).
//               Stages 1 and 2 reduce-scatter each gradient and all-gather the updated params
//               (2Ψ moved, as the all-reduce); stage 3 all-gathers the params forward and again
//               backward and reduce-scatters the gradients (3Ψ).
//
//   layouts     Mesh::at ("S:tp@ln1+a0+h"): an axis split in some statements' results only
//               (sequence parallelism). A statement runs split as the layout and its result's
//               own layout say, except along a dimension its sums are partial over (those it
//               reduce-scatters into its result); an input laid out split where the statement
//               runs whole is all-gathered first (once a tensor and dimension), and backward the
//               gradient's dY and the kept tensors it reads likewise (Megatron re-gathers the
//               norms' outputs for the weights' gradients); a contribution made over part of an
//               axis its tensor holds whole is all-gathered.
//
//   vocabulary  Megatron's vocabulary-parallel embedding and loss ("V:tp"; Shoeybi et al. 2019,
//               Megatron-LM's VocabParallelEmbedding and vocab_parallel_cross_entropy): get_at
//               along a split axis looks up the rows its device holds, zeros for the others',
//               and all-reduces the result (its gradient adds into the device's own rows, no
//               collective); cross_entropy along split classes all-reduces three values a row
//               forward, as Megatron does — the largest of the parts' log-sum-exps (a max; Megatron
//               takes the largest logit), the target's logit and the sum of exps (sums) — and
//               backward, where Megatron keeps its softmax, one more: the target logit again (f32
//               and f64 logits, whose loss then gives the row's log-sum-exp back), or the max and
//               the sum again (16-bit logits); f64 values for f64 logits, else f32. The logits'
//               einsum (its head) needs nothing forward; the gradient of its input sums over the
//               split classes (an all-reduce of b·s·h backward).
//
// What this first cut does not do (a statement that needs it is an Error naming it and the
// axis): a normalization or softmax along a split axis (they need their own statistics'
// collectives), a split axis that is not the outermost of its composition. Running it: lib's
// mesh_run.hpp (MPI; statement-level layouts not yet).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/program_cost.hpp"
#include "einexpr/codegen/program_plan.hpp"
#include "einexpr/parser/program_ast.hpp"

namespace einexpr {

struct MeshDim {
  std::string name;        // "dp"
  std::int64_t size = 1;   // devices along it
  std::string link;        // "nvlink", "ib", ... ("" if not given)
};

/// A layout for some statements' results only ("S:tp@ln1+a0+h": sequence parallelism lays S
/// over tp between the tensor-parallel regions): the axis is split over the dimension in those
/// results (a block's body statement: in every layer's; "h" names its dropout mask "h.mask" too).
struct ShardOverride {
  std::string axis, dim;
  std::vector<std::string> statements;
};

struct Mesh {
  std::vector<MeshDim> dims;
  std::vector<std::pair<std::string, std::string>> shard;  // axis -> the mesh dimension it is split over
  std::vector<ShardOverride> at;  // statement-level layouts
  int zero = 0;            // ZeRO's stage, 0..3
  std::int64_t devices() const noexcept;
  /// "dp=2@ib tp=4@nvlink; B:dp H:tp F:tp"
  std::string str() const;
};

/// "dp=2@ib tp=4@nvlink" and "B:dp H:tp F:tp" (and ZeRO's stage); a rule "S:tp@ln1+h" is a
/// ShardOverride. Error naming the part that is malformed, a mesh dimension given twice or of
/// size < 1, an axis split twice or over an unknown dimension, a stage outside 0..3.
Mesh parse_mesh(std::string_view dims, std::string_view shard, int zero = 0);
/// The program's own mesh and shard lines ("mesh dp=8@ib tp=8@nvlink", "shard B:dp H:tp"), if
/// it has a mesh line; `dims` and `shard` (the command line's), where not empty, replace them.
/// Nothing given and no mesh line: nullopt.
std::optional<Mesh> program_mesh(const ast::Program& program, std::string_view dims = {}, std::string_view shard = {},
                                 int zero = 0);

/// A link kind between devices, for the α-β time of a collective on a mesh dimension laid over
/// it ("dp=64@ib"): a ring over n devices takes, as NCCL's own tuning model has it (its ring
/// algorithm, Simple protocol),
///   t = α0 + steps·α + bus_bytes / β      steps: 2(n−1) all-reduce, n−1 reduce-scatter, all-gather
/// α0 NCCL's base latency, α the link's latency per step, β its bandwidth per device and
/// direction (the bus bandwidth nccl-tests reports approaches it). links() lists the kinds.
struct Link {
  std::string name;        // "nvlink", "ib", "pcie"
  double bandwidth = 0;    // β, bytes/s per device, one direction
  double latency_s = 0;    // α per ring step
  std::string source;
};
const std::vector<Link>& links();
/// Error listing the kinds for a name that is none of them.
const Link& find_link(std::string_view name);
inline constexpr double collective_base_latency_s = 8.4e-6;  // α0: NCCL tuning.cc, baseLat ring/Simple

/// A step per device in time: compute under the roofline, each collective under the α-β
/// model, added (nothing overlapped) and as if communication hid entirely behind compute.
struct MeshTiming {
  std::string device;       // the roofline's (ProgramCost::timing.device)
  double compute_s = 0;     // forward, backward and optimizer: each statement's and gradient's
                            // roofline bound over the devices its axes are split across
  double optimizer_compute_s = 0;  // of which the update's
  double forward_comm_s = 0, backward_comm_s = 0, optimizer_comm_s = 0;
  double step_s = 0;        // compute + communication
  double overlapped_s = 0;  // max(compute, communication)
  std::string error;        // non-empty: no time (a mesh dimension without a link, no roofline)
};

enum class CollectiveKind : unsigned char { all_reduce, reduce_scatter, all_gather };
const char* name(CollectiveKind kind) noexcept;

struct Collective {
  std::string tensor;      // the tensor (forward) or the gradient (backward) it completes
  std::string phase;       // "forward", "backward" or "optimizer"
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::string mesh_dim;
  std::int64_t ranks = 1;  // the mesh dimension's size
  Count elements;          // of the tensor on one device, before the collective
  Count bytes;             // those elements' bytes
  Count bus_bytes;         // what each device sends: 2(n−1)/n·bytes (all-reduce), (n−1)/n·bytes
  std::string why;         // "sums over H (split over tp)"
  std::string call;        // in a block's layer: the call and the layer
  int layer = -1;
  double time_s = 0;       // under the α-β model (0 when MeshCost::timing has an error)
  int statement = -1;      // forward: the statement whose result it completes (backward: the
                           // statement made again, its why "recomputed for the backward: ...";
                           // step "cross_entropy": the statement whose kernel issues it)
  int of = -1;             // backward and optimizer: the tensor whose gradient (or, ZeRO's
                           // gathers, which param) it completes
  std::string reduce = "sum";  // the all-reduce's operation on the parts: "sum", or "max"
                               // (cross_entropy's row maxima)
  std::string step;        // what left the parts: "" a sum (contraction, reduction,
                           // scatter-add); "get_at" a lookup along a split axis (each device's
                           // rows, zeros for the others'); "cross_entropy" a loss along split
                           // classes (Megatron's row maxima, target logits, sums of exps)
};

struct MeshCost {
  Mesh mesh;
  Count forward_flops, backward_flops, optimizer_flops;  // per device
  Count params_bytes, grads_bytes, optimizer_bytes, activations_bytes;  // per device
  std::vector<Collective> collectives;                  // in program order, forward then backward
  Count forward_bus_bytes, backward_bus_bytes, optimizer_bus_bytes;  // summed over `collectives`
  std::vector<std::pair<std::string, Count>> kept;      // each kept activation's bytes per device
  /// Statements that average over split axes (a mean): on each device the mean of its part,
  /// so the sum the all-reduce makes is this many times the mean (statement, devices).
  std::vector<std::pair<int, std::int64_t>> means;
  MeshTiming timing;
};

/// The program on the mesh: checks the layout (every split axis is an axis of the program,
/// its length divisible by its mesh dimension's size; no tensor splits two of its axes over
/// one dimension; a split axis inside a composition is its outermost), then costs it per
/// device from `plan` and `cost` (the single-device cost of the same plan). Error naming the
/// tensor, the axis and the sizes.
MeshCost shard(const ProgramPlan& plan, const ProgramCost& cost, const Mesh& mesh);

/// The per-device tables: FLOPs, memory and the collectives (a block's layers folded).
std::string to_string(const MeshCost& m);

/// With micro-batches: whether collective `x` of one micro-batch's cost (of `plan`, at the
/// micro-batch's size) runs once a step — the update's, and under ZeRO 0-1 a param's gradient's
/// (the micro-batches' gradients added on each device first) — rather than once a micro-batch.
bool once_a_step(const ProgramPlan& plan, const Collective& x, int zero);
/// A step of `micro_batches` micro-batches from one micro-batch's cost: each collective as often
/// as it runs (once_a_step), the bus bytes and FLOPs of them all; memory and time as `micro`'s.
MeshCost step_of_micro_batches(const ProgramPlan& plan, const MeshCost& micro, int micro_batches);

/// program cost --search: the layouts of a program on `devices` devices. The mesh's dimensions
/// (names, links) and the axes split over them come from a template mesh (the file's mesh and
/// shard lines, or the command line's; its sizes are ignored); the search tries every size of
/// each dimension whose product is `devices` (the nvlink dimensions together within one
/// node), every ZeRO stage, the batch cut into 1, 2, 4, ... micro-batches, and the backward
/// keeping everything or recomputing each layer from its input ("layers": each block layer's
/// last statement kept). Each is costed exactly (plan, cost, shard at the micro-batch's size),
/// then a step per device is
///   compute   m · (a micro-batch's forward and backward) + the update
///   comm      m · (its forward and backward collectives, ZeRO-3's gathers, and from ZeRO-2 on
///             the gradients' reduce-scatters) + the update's collectives and (ZeRO 0-1: whole
///             gradients on each device, the micro-batches' added first) the gradients', once
///   memory    params + gradients + optimizer state + one micro-batch's kept activations
/// and the layouts whose memory fits the device's (the device table's `memory`) are ranked by
/// step time (compute + comm; `overlapped` is max of the two). The plans (one per micro-batch
/// count) and then the layouts are costed on einexpr's threads (parallel.hpp); the ranking is
/// the same on any number of them.
struct SearchOptions {
  std::int64_t devices = 0;
  std::int64_t node = 8;            // devices the nvlink dimensions may span together
  std::string batch_axis = "B";     // what micro-batches cut
  std::size_t top = 5;
};

struct LayoutChoice {
  Mesh mesh;                        // sizes, shard, ZeRO stage
  int micro_batches = 1;
  std::string recompute;            // "none" or "layers"
  MeshCost micro;                   // one micro-batch on the mesh (with the step's update)
  std::vector<bool> once;           // per collective of `micro`: once a step (the update's; the
                                    // params' gradients under ZeRO 0-1), else each micro-batch's
  double compute_s = 0, micro_comm_s = 0, step_comm_s = 0;  // step_comm_s: the once-a-step part
  double step_s = 0, overlapped_s = 0;
  Count memory_bytes;
};

struct LayoutSearch {
  std::string device;
  double device_memory = 0;         // bytes
  std::int64_t devices = 0;
  std::vector<LayoutChoice> fastest;  // those that fit, fastest first (at most top)
  std::size_t tried = 0, fit = 0;
  std::vector<std::string> refused;   // a layout shard() refuses, one line per reason, with a count
  double seconds = 0;                 // the search's own time
};

/// Error: no device memory in the table, a template without dimensions, no batch axis.
LayoutSearch search_layouts(const ast::Program& program, const ProgramOptions& options,
                            const ProgramCostOptions& cost_options, const Mesh& shape, const SearchOptions& search);
/// The ranking, and the first choice term by term.
std::string to_string(const LayoutSearch& s);

}  // namespace einexpr
