// program run / train on a device mesh (mesh_run.hpp), called on every rank of
// `mpirun -np N einexpr program run|train FILE ... --mesh DIMS --shard RULES`: every rank reads
// the whole .npy files and takes its part; rank 0 writes the outputs (or the trained params),
// whole, all or nothing, and prints the report.
//
// Failures: one found before the ranks compute (a mesh of another size than mpirun's, a layout
// the cost refuses, a file one rank cannot read) is every rank's MeshError; rank 0 prints it
// and every rank exits 1. One after that (none is expected: the ranks run the same plan) is
// printed by the rank it happened on, which then aborts every rank (MPI_Abort): every rank
// exits non-zero and nothing is written.
#include <mpi.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "einexpr/mesh_run.hpp"
#include "output.hpp"
#include "program_io.hpp"

namespace einexpr::cli {

namespace {

namespace fs = std::filesystem;

// MPI for this command: initialized here unless the caller did, finalized on leaving.
struct MpiSession {
  bool owner = false;
  MpiSession() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init(nullptr, nullptr);
      owner = true;
    }
  }
  ~MpiSession() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owner && !finalized) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

template <class F>
int on_every_rank(F&& body) {
  MpiSession mpi;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    return body(rank);
  } catch (const MeshError&) {
    if (rank == 0) throw;  // main prints it once
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "einexpr: rank " << rank << ": " << e.what() << "\n";
    std::cerr.flush();
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 1;
}

void collectives_json(JsonWriter& j, const std::string& key, const std::vector<Collective>& predicted,
                      const std::vector<MeasuredCollective>& measured, const std::vector<std::string>& phases) {
  j.key(key).begin_object();
  j.key("predicted").begin_array();
  for (const Collective& c : predicted) {
    if (std::find(phases.begin(), phases.end(), c.phase) == phases.end()) continue;
    j.begin_object().field("tensor", c.tensor).field("phase", c.phase).field("kind", name(c.kind));
    j.field("mesh_dim", c.mesh_dim).field("ranks", c.ranks).field("elements", c.elements).field("bytes", c.bytes);
    j.field("bus_bytes", c.bus_bytes).end_object();
  }
  j.end_array();
  j.key("measured").begin_array();
  std::int64_t bus = 0;
  for (const MeasuredCollective& c : measured) {
    j.begin_object().field("tensor", c.tensor).field("phase", c.phase).field("kind", name(c.kind));
    j.field("mesh_dim", c.mesh_dim).field("ranks", c.ranks).field("elements", c.elements).field("bytes", c.bytes);
    j.field("bus_bytes", c.bus_bytes).end_object();
    bus += c.bus_bytes;
  }
  j.end_array();
  const std::string diff = compare_collectives(predicted, measured, phases);
  j.field("bus_bytes_measured", bus).field("measured_equals_predicted", diff.empty());
  if (!diff.empty()) j.field("differences", diff);
  j.end_object();
}

std::int64_t bus_total(const std::vector<MeasuredCollective>& m) {
  std::int64_t b = 0;
  for (const MeasuredCollective& c : m) b += c.bus_bytes;
  return b;
}

// Every rank's comparison: "" where all agree with the cost, else rank 0's differences (or a
// line naming a rank whose differ).
std::string checked_everywhere(const std::string& mine) {
  int ok = mine.empty() ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all) return "";
  return mine.empty() ? std::string("another rank's collectives differ from the cost's\n") : mine;
}

}  // namespace

int program_run_on_mesh(const ProgramRunArgs& args, const ast::Program& program, const Mesh& mesh) {
  apply_threads(args.run);
  return on_every_rank([&](int rank) {
    RunInputs in;
    agree(MPI_COMM_WORLD, [&] { in = read_inputs(program, args.args, Device::cpu(), false); });
    ProgramOptions options;
    options.axes = in.lengths;
    options.given = in.given;
    const MeshRun r = run_on_mesh(MPI_COMM_WORLD, program, mesh, options, in.tensors);
    const std::string diff = checked_everywhere(compare_collectives(r.predicted.collectives, r.measured, {"forward"}));
    if (rank != 0) return 0;
    if (!diff.empty()) std::cerr << "einexpr: warning: the collectives issued differ from the cost's:\n" << diff;
    std::vector<Written> written;
    for (const auto& [name, tensor] : r.outputs)
      written.push_back({name, (fs::path(args.output_dir) / (name + ".npy")).string(), tensor});
    write_output_dir(args.output_dir, written);
    if (args.json) {
      JsonWriter j(std::cout);
      j.begin_object().field("device", "cpu").field("ranks", mesh.devices()).field("mesh", mesh.str());
      outputs_json(j, written);
      collectives_json(j, "collectives", r.predicted.collectives, r.measured, {"forward"});
      j.end_object();
      std::cout << "\n";
    }
    return 0;
  });
}

int program_train_on_mesh(const ProgramTrainArgs& args, const ast::Program& program, const Mesh& mesh) {
  if (args.run.device != "cpu") throw Error("program train runs on the CPU only for now, not " + args.run.device);
  apply_threads(args.run);
  return on_every_rank([&](int rank) {
    RunInputs in;
    OptimizerOptions opt;
    TensorMap params, inputs;
    Checkpoint from;
    agree(MPI_COMM_WORLD, [&] {
      opt = optimizer_options(args, program);
      in = read_inputs(program, resume_arguments(args, program), Device::cpu(), true);  // --resume: the params from there
      if (!args.resume.empty()) from = read_checkpoint(args.resume);
      for (const auto& [name, files] : in.folders)
        if (files.size() < static_cast<std::size_t>(args.steps))
          throw Error("the folder given for '" + name + "' holds " + std::to_string(files.size()) +
                      " .npy files, fewer than the " + std::to_string(args.steps) + " steps (one per step)");
      for (auto& [name, t] : in.tensors) {
        const ast::Item* item = ast::find_tensor(program, name);
        const auto* decl = item ? std::get_if<ast::TensorDecl>(item) : nullptr;
        const bool is_param = decl && decl->kind == ast::TensorKind::param;
        if (is_param && in.folders.count(name))
          throw Error("'" + name + "' is a param: give its initial value as one .npy file, not a folder");
        (is_param ? params : inputs)[name] = t;
      }
    });
    ProgramOptions options;
    options.axes = in.lengths;
    options.given = in.given;
    options.dtype = parse_dtype(args.dtype);
    MeshTrainer trainer(MPI_COMM_WORLD, program, mesh, options, opt, params);
    if (!args.resume.empty()) trainer.restore(params, from.state, from.steps);  // each rank its part
    std::vector<std::pair<double, double>> steps;  // loss, seconds
    std::string diff;
    const auto start = std::chrono::steady_clock::now();
    auto last_progress = start;
    for (int s = 0; s < args.steps; ++s) {
      if (s > 0)
        agree(MPI_COMM_WORLD, [&] {
          for (const auto& [name, files] : in.folders) inputs[name] = read_npy(files[static_cast<std::size_t>(s)]);
        });
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = std::chrono::steady_clock::now();
      const double loss = trainer.step(inputs);
      steps.emplace_back(loss, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (diff.empty())
        diff = compare_collectives(trainer.predicted().collectives, trainer.measured(), {"forward", "backward", "optimizer"});
      const auto now = std::chrono::steady_clock::now();
      if (rank == 0 && now - last_progress >= std::chrono::duration<double>(args.progress_s)) {
        std::cerr << "step " << s + 1 << "/" << args.steps << "  loss " << loss << "  " << steps.back().second * 1e3 << " ms\n";
        last_progress = now;
      }
    }
    diff = checked_everywhere(diff);
    const TensorMap trained = trainer.parameters();  // whole on rank 0
    const TensorMap state = trainer.optimizer_state();
    if (rank != 0) return 0;
    if (!diff.empty()) std::cerr << "einexpr: warning: the collectives issued differ from the cost's:\n" << diff;
    std::vector<Written> written;
    for (const auto& [name, t] : trained) written.push_back({name, (fs::path(args.output_dir) / (name + ".npy")).string(), t});
    // with the optimizer's state and the step count, whole, as one process writes them: --resume
    // continues from them on a mesh or on one process
    std::vector<Written> all = written;
    for (Written& w : checkpoint_files(args.output_dir, state, trainer.steps())) all.push_back(std::move(w));
    write_output_dir(args.output_dir, all);
    if (args.json) {
      JsonWriter j(std::cout);
      j.begin_object().field("device", "cpu").field("ranks", mesh.devices()).field("mesh", mesh.str());
      j.field("optimizer", name(opt.kind));
      j.key("steps").begin_array();
      for (const auto& [loss, time] : steps) j.begin_object().field("loss", loss).field("time_s", time).end_object();
      j.end_array();
      const MeshCost& c = trainer.predicted();
      j.field("forward_flops", c.forward_flops).field("backward_flops", c.backward_flops);
      j.field("params_bytes", c.params_bytes).field("optimizer_bytes", c.optimizer_bytes);
      collectives_json(j, "collectives_per_step", c.collectives, trainer.measured(), {"forward", "backward", "optimizer"});
      j.key("params").begin_array();
      for (const Written& w : written) j.begin_object().field("name", w.name).field("path", w.path).end_object();
      j.end_array().end_object();
      std::cout << "\n";
    } else {
      std::cout << "trained " << args.file << " for " << steps.size() << " steps on " << mesh.devices() << " ranks ("
                << mesh.str() << ", " << name(opt.kind) << ", lr " << opt.lr << "): loss " << steps.front().first << " -> "
                << steps.back().first << "\n";
      std::cout << "each step: " << trainer.measured().size() << " collectives, " << bus_total(trainer.measured())
                << " bytes sent by each rank (nccl-tests' bus bytes), "
                << (diff.empty() ? "as program cost --mesh predicts" : "NOT as program cost --mesh predicts") << "\n";
      std::cout << "params written to " << args.output_dir << "\n";
    }
    return 0;
  });
}

}  // namespace einexpr::cli
