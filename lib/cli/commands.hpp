#pragma once
// One function per command of the `einexpr` tool, each taking the options CLI11 filled
// and returning the exit status. They throw UsageError (exit 2) for malformed arguments
// and einexpr::Error (exit 1) for everything the library rejects; main() maps both.
//
//   commands_run.cpp    rearrange, reduce, repeat, einsum, map: .npy in, .npy out
//   commands_cost.cpp   cost, explain, check: from the pattern and sizes alone
//   commands_bench.cpp  bench, roofline, devices: timings and the device table
//   commands_program.cpp, commands_program_run.cpp, commands_program_train.cpp
//                       program check, cost, run, train: model files
//   commands_mesh.cpp   program run, train on a device mesh over MPI (commands_mesh_none.cpp
//                       in a build without MPI)
#include <cstdint>
#include <string>
#include <vector>

#include "args.hpp"
#include "einexpr/codegen/mesh.hpp"
#include "einexpr/train.hpp"
#include "program_io.hpp"

namespace einexpr::cli {

/// What the commands that run an expression share.
struct RunOptions {
  std::string device = "cpu";  // where it runs: cpu, cuda, cuda:N
  int threads = 0;             // 0: OpenMP's default (OMP_NUM_THREADS)
};
/// set_num_threads(threads) when threads > 0.
void apply_threads(const RunOptions& run);

/// A device mesh on the command line, replacing the model file's mesh and shard lines.
struct MeshArgs {
  std::string dims;   // --mesh "dp=2@ib tp=4@nvlink"
  std::string shard;  // --shard "B:dp H:tp F:tp": the axes split over it
  int zero = 0;       // --zero: ZeRO's stage over the data-parallel dimensions (cost, train)
};

/// rearrange / reduce / repeat / einsum / map on .npy files.
struct OpArgs {
  std::string op;
  std::string pattern;
  std::string reduction;             // reduce only
  std::int64_t correction = -1;      // reduce var / std: --correction (-1: not given, 1)
  std::string function;              // map only
  double eps = -1;                   // layer_norm / rms_norm: --eps (-1: not given, the default)
  std::string input;                 // reduce / repeat / normalizations: the input .npy path
  std::vector<std::string> inputs;   // einsum: one .npy path per operand; map, rearrange and the
                                     // indexed ops: IN.npy [IN2.npy...] [NAME=LEN...]
  std::vector<std::string> lengths;  // NAME=LEN
  std::vector<std::string> outputs;  // .npy paths (several: a split), written only when everything succeeded
  std::int64_t ignore_index = -100;  // cross_entropy: --ignore-index
  double p = 0.5;                    // dropout: --p (torch's default)
  bool bf16_u2 = false;              // read and write bf16 as '<u2'
  RunOptions run;
};
int run_op(const OpArgs& args);

/// An expression given by sizes: OP PATTERN [REDUCTION | FUNCTION] NAME=LEN...
struct ExprArgs {
  std::string op;
  std::string pattern;
  std::vector<std::string> rest;  // [REDUCTION | FUNCTION] NAME=LEN... or IN.npy...
  std::string dtype;              // empty: the .npy files' dtype, else f32
  std::int64_t correction = -1;   // reduce var / std: --correction (-1: not given, 1)
  double eps = -1;                // layer_norm / rms_norm: --eps (-1: not given, the default)
  std::int64_t ignore_index = -100;  // cross_entropy: --ignore-index
  double p = -1;                  // dropout: --p (-1: not given, 0.5)
};

struct CostArgs {
  ExprArgs expr;
  std::string device = "h100";  // the device-table entry of the roofline
  bool json = false;
  bool backward = false;
};
int cost_command(const CostArgs& args);
int explain_command(const ExprArgs& args);

struct CheckArgs {
  std::string pattern;
  std::string op;  // empty: rearrange for one operand, else einsum
};
int check_command(const CheckArgs& args);

struct BenchArgs {
  ExprArgs expr;
  RunOptions run;
  std::string spec;  // device-table entry; empty: "cpu" or "h100"
  bool json = false;
  int warmup = 2;
  int repeats = 5;         // at least this many timed runs
  double min_time = 0.25;  // ...and at least this many seconds
  double max_time = 10.0;  // ...but stop after this many
  std::uint64_t seed = 0;
  std::string copy = "if_needed";  // rearrange / repeat: if_needed, never or always
};
int bench_command(const BenchArgs& args);

struct RooflineArgs {
  std::string svg;
  std::string device = "h100";
  std::string dtype = "f32";
  std::vector<std::string> exprs;  // "OP|PATTERN|NAME=LEN,..."
};
int roofline_command(const RooflineArgs& args);

struct DevicesArgs {
  bool json = false;
  bool calibrate = false;  // measure the 'cpu' device again (and cache it)
  RunOptions run;          // --threads: the 'cpu' entry is measured and cached per thread count
};
int devices_command(const DevicesArgs& args);

/// program check FILE [NAME=LEN ...]
struct ProgramCheckArgs {
  std::string file;
  std::vector<std::string> lengths;  // NAME=LEN: overrides of the program's axes
};
int program_check_command(const ProgramCheckArgs& args);

/// program cost FILE [NAME=LEN ...] [--dtype DT] [--device DEV] [--optimizer O] [--mixed-precision]
///   [--recompute none|checkpoints|auto] [--checkpoint NAME,...] [--memory-limit BYTES] [--json]
struct ProgramCostArgs {
  std::string file;
  std::vector<std::string> lengths;  // NAME=LEN: overrides of the program's axes
  std::string dtype = "f32";         // of tensors declared without one
  std::string device = "h100";       // the device-table entry of the roofline
  std::string optimizer = "sgd";
  bool mixed_precision = false;
  RecomputeArgs recompute;
  bool compare = false;                   // the published formulas beside the exact counts
  std::vector<std::string> compare_axes;  // VAR=AXIS[*AXIS...]: the formulas' variables
  MeshArgs mesh;                          // per device on this mesh
  bool search = false;                    // the fastest layouts of the mesh's template on `devices`
  std::int64_t devices = 0;
  std::int64_t node = 8;                  // devices the nvlink dimensions may span together
  std::string batch_axis = "B";           // what micro-batches cut
  std::string recompute_bound;            // --recompute auto: the file its search's bound is written to
  bool json = false;
};
int program_cost_command(const ProgramCostArgs& args);

/// program run FILE [NAME=LEN ...] NAME=IN.npy ... -o OUTDIR [--device DEV] [--mesh DIMS --shard RULES] [--json]
struct ProgramRunArgs {
  std::string file;
  std::vector<std::string> args;  // NAME=LEN (an axis) and NAME=IN.npy (an input or param)
  std::string output_dir;
  RunOptions run;
  MeshArgs mesh;                  // a mesh (or the file's): every rank of mpirun runs its part
  bool json = false;
};
int program_run_command(const ProgramRunArgs& args);

/// program train FILE [NAME=LEN ...] NAME=IN.npy ... --steps N [--optimizer O] [--lr LR] [--momentum M]
///   [--betas B1,B2] [--eps E] [--weight-decay WD] [--micro-batches K] [--mixed-precision]
///   [--recompute none|checkpoints|auto] [--memory-limit BYTES] [--dtype DT] [--device cpu] -o OUTDIR [--json]
struct ProgramTrainArgs {
  std::string file;
  std::vector<std::string> args;  // NAME=LEN, NAME=IN.npy, NAME=DIR (an input: one file per step)
  std::string output_dir;
  int steps = 0;
  std::string optimizer = "sgd";
  double lr = 1e-3;
  double momentum = 0.9;
  bool momentum_given = false;
  std::string betas;              // "B1,B2"; empty: 0.9,0.999
  double eps = 1e-8;
  double weight_decay = 0;
  std::string dtype = "f32";      // of tensors declared without one
  std::string resume;             // a checkpoint folder (a previous -o OUTDIR): params, state, steps
  bool mixed_precision = false;   // bf16 / f16 params through f32 master weights
  int micro_batches = 1;          // gradient accumulation over this many cuts of each step's inputs
  std::uint64_t seed = 0;         // dropout's random stream (OptimizerOptions::seed)
  std::string batch_axis = "B";   // the axis they are cut along
  RecomputeArgs recompute;
  double progress_s = 2;          // a progress line on stderr at most this often (0: every step)
  RunOptions run;
  MeshArgs mesh;                  // a mesh (or the file's): every rank of mpirun trains its part
  bool json = false;
};
int program_train_command(const ProgramTrainArgs& args);
/// The optimizer, micro-batches, seed and recomputation program train's options ask for.
OptimizerOptions optimizer_options(const ProgramTrainArgs& args, const ast::Program& program);

/// --resume DIR: `args` with NAME=DIR/NAME.npy for each param of the program (UsageError for a
/// param given as well).
std::vector<std::string> resume_arguments(const ProgramTrainArgs& args, const ast::Program& program);
/// --resume DIR's optimizer state (DIR/NAME.KIND.npy) and step count.
struct Checkpoint {
  TensorMap state;
  std::int64_t steps = 0;
};
Checkpoint read_checkpoint(const std::string& dir);
/// The files of a checkpoint beside the params in `dir`: the state and the step count.
std::vector<Written> checkpoint_files(const std::string& dir, const TensorMap& state, std::int64_t steps);

/// program run / train on a mesh (the command line's or the model file's), called on every
/// rank of `mpirun -np N` (commands_mesh.cpp; without MPI, an Error saying how to get it).
int program_run_on_mesh(const ProgramRunArgs& args, const ast::Program& program, const Mesh& mesh);
int program_train_on_mesh(const ProgramTrainArgs& args, const ast::Program& program, const Mesh& mesh);

}  // namespace einexpr::cli
