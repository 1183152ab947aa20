// program train: a model file whose output is the loss, trained for --steps steps on .npy
// inputs and initial params (train.hpp's Trainer); the trained params written to
// OUTDIR/NAME.npy, all or nothing, with the optimizer's state (OUTDIR/NAME.exp_avg.npy, ...,
// torch's names) and the step count (OUTDIR/trainer.steps.npy): --resume OUTDIR continues
// from there as an uninterrupted run would. A loss that turns NaN or infinite stops the run: the
// params of the last good step are written, and the error names the step.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "einexpr/train.hpp"
#include "output.hpp"
#include "program_io.hpp"

namespace einexpr::cli {

namespace fs = std::filesystem;

OptimizerOptions optimizer_options(const ProgramTrainArgs& a, const ast::Program& program) {
  OptimizerOptions o;
  o.kind = parse_optimizer(a.optimizer);
  o.lr = a.lr;
  o.momentum = a.momentum;
  o.weight_decay = a.weight_decay;
  o.eps = a.eps;
  o.mixed_precision = a.mixed_precision;
  o.micro_batches = a.micro_batches;
  o.batch_axis = a.batch_axis;
  o.seed = a.seed;
  o.recompute = recompute_options(a.recompute, program);
  if (!a.betas.empty()) {
    const std::size_t comma = a.betas.find(',');
    if (comma == std::string::npos) throw UsageError("--betas expects B1,B2, got '" + a.betas + "'");
    try {
      std::size_t used1 = 0, used2 = 0;
      o.beta1 = std::stod(a.betas.substr(0, comma), &used1);
      o.beta2 = std::stod(a.betas.substr(comma + 1), &used2);
      if (used1 != comma || used2 != a.betas.size() - comma - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw UsageError("--betas expects two numbers B1,B2, got '" + a.betas + "'");
    }
  }
  if (o.kind == Optimizer::sgd && a.momentum_given)
    throw UsageError("--momentum is for --optimizer momentum (sgd has none)");
  return o;
}

namespace {

// The step count beside the params and state (a '.' in it: no param is called that).
constexpr const char* steps_file = "trainer.steps.npy";

}  // namespace

std::vector<std::string> resume_arguments(const ProgramTrainArgs& args, const ast::Program& program) {
  std::vector<std::string> out = args.args;
  if (args.resume.empty()) return out;
  std::error_code ec;
  if (!fs::is_directory(args.resume, ec)) throw Error("--resume " + args.resume + ": not a directory");
  for (const ast::Item& item : program.items) {
    const auto* d = std::get_if<ast::TensorDecl>(&item);
    if (!d || d->kind != ast::TensorKind::param) continue;
    for (const std::string& a : args.args)
      if (a.rfind(d->name.name + "=", 0) == 0)
        throw UsageError("'" + a + "' gives a param, but --resume reads the params from " + args.resume);
    out.push_back(d->name.name + "=" + (fs::path(args.resume) / (d->name.name + ".npy")).string());
  }
  return out;
}

Checkpoint read_checkpoint(const std::string& dir) {
  Checkpoint c;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string file = e.path().filename().string();
    if (e.path().extension() != ".npy" || file == steps_file) continue;
    const std::string stem = e.path().stem().string();
    if (stem.find('.') != std::string::npos) c.state[stem] = read_npy(e.path().string());
  }
  const fs::path steps_path = fs::path(dir) / steps_file;
  const Tensor steps = read_npy(steps_path.string());
  if (steps.dim() != 0 || steps.dtype() != DType::i64)
    throw Error(steps_path.string() + ": expected the step count, a 0-d i64 array");
  c.steps = steps.data<std::int64_t>()[0];
  return c;
}

std::vector<Written> checkpoint_files(const std::string& dir, const TensorMap& state, std::int64_t steps) {
  std::vector<Written> out;
  for (const auto& [name, t] : state) out.push_back({name, (fs::path(dir) / (name + ".npy")).string(), t});
  out.push_back({"steps", (fs::path(dir) / steps_file).string(), Tensor::from_vector(std::vector<std::int64_t>{steps}, {})});
  return out;
}

namespace {

struct StepRecord {
  double loss = 0, time_s = 0;
};

void print_json(const Trainer& t, const ProgramCost& c, const std::vector<StepRecord>& steps, double peak_flops,
                std::int64_t measured, const std::vector<Written>& written) {
  JsonWriter j(std::cout);
  j.begin_object().field("device", "cpu").field("optimizer", name(t.optimizer().kind));
  j.key("steps").begin_array();
  for (const StepRecord& s : steps) j.begin_object().field("loss", s.loss).field("time_s", s.time_s).end_object();
  j.end_array();
  double total = 0;
  for (const StepRecord& s : steps) total += s.time_s;
  const double mean = steps.empty() ? 0 : total / static_cast<double>(steps.size());
  j.field("flops_per_step", c.step_flops);
  if (c.timing.error.empty()) j.field("roofline_time_s", c.timing.step_s);
  else j.key("roofline_time_s").null();
  j.field("mfu", mean > 0 && peak_flops > 0 ? c.step_flops.to_double() / mean / peak_flops : 0.0);
  j.field("peak_bytes_predicted", t.peak_bytes_predicted()).field("peak_bytes_measured", measured);
  j.field("arena_bytes", t.arena_bytes());
  j.field("activations_bytes", t.training().activations_bytes());
  j.field("recompute_flops", t.recompute_flops());
  const RecomputeChoice& r = t.recompute();
  j.field("recompute", name(r.mode));
  if (r.training.recompute) {
    j.key("checkpoints").begin_array();
    for (const std::string& k : r.training.keep) j.value(k);
    j.end_array();
  }
  if (r.mode == RecomputeMode::automatic) j.field("memory_limit", r.memory_limit);
  j.key("params").begin_array();
  for (const Written& w : written) j.begin_object().field("name", w.name).field("path", w.path).end_object();
  j.end_array().end_object();
  std::cout << "\n";
}

}  // namespace

int program_train_command(const ProgramTrainArgs& args) {
  if (args.run.device != "cpu") throw Error("program train runs on the CPU only for now, not " + args.run.device);
  const Device device = Device::cpu();
  apply_threads(args.run);
  if (args.steps < 1) throw UsageError("--steps must be at least 1, got " + std::to_string(args.steps));
  const ast::Program program = read_program_file(args.file);
  std::error_code ec;
  if (fs::exists(args.output_dir, ec) && !fs::is_directory(args.output_dir, ec))
    throw Error("cannot write to " + args.output_dir + ": it is not a directory");
  if (!(args.progress_s >= 0)) throw UsageError("--progress must be >= 0 seconds");
  if (const std::optional<Mesh> mesh = program_mesh(program, args.mesh.dims, args.mesh.shard, args.mesh.zero))
    return program_train_on_mesh(args, program, *mesh);
  const OptimizerOptions opt = optimizer_options(args, program);
  RunInputs in = read_inputs(program, resume_arguments(args, program), device, true);  // --resume: the params from there
  for (const auto& [name, files] : in.folders)
    if (files.size() < static_cast<std::size_t>(args.steps))
      throw Error("the folder given for '" + name + "' holds " + std::to_string(files.size()) +
                  " .npy files, fewer than the " + std::to_string(args.steps) + " steps (one per step)");
  ProgramOptions options;
  options.axes = in.lengths;
  options.given = in.given;
  options.dtype = parse_dtype(args.dtype);

  reset_storage_peak(Device::cpu());
  const std::size_t before = storage_usage(Device::cpu()).bytes_in_use;
  TensorMap params, inputs;
  for (auto& [name, t] : in.tensors) {
    const ast::Item* item = ast::find_tensor(program, name);
    const auto* decl = item ? std::get_if<ast::TensorDecl>(item) : nullptr;
    const bool is_param = decl && decl->kind == ast::TensorKind::param;
    (is_param ? params : inputs)[name] = t;
  }
  for (const auto& [name, files] : in.folders)
    if (params.count(name)) throw Error("'" + name + "' is a param: give its initial value as one .npy file, not a folder");
  Trainer trainer = compile_training(program, options, opt, params);
  if (!args.resume.empty()) {
    const Checkpoint from = read_checkpoint(args.resume);
    trainer.restore(params, from.state, from.steps);
  }
  ProgramCostOptions cost_options;
  cost_options.device = "cpu";
  cost_options.optimizer = opt.kind;
  cost_options.mixed_precision = opt.mixed_precision;
  const TrainingOptions& kept = trainer.recompute().training;
  cost_options.recompute = RecomputeOptions{.mode = kept.recompute ? RecomputeMode::checkpoints : RecomputeMode::none,
                                            .checkpoints = kept.keep};
  const ProgramCost c = cost(trainer.plan(), cost_options);  // with the trainer's choice, as it runs

  std::vector<StepRecord> records;
  std::string stopped;
  const auto start = std::chrono::steady_clock::now();
  auto last_progress = start;
  for (int s = 0; s < args.steps; ++s) {
    for (const auto& [name, files] : in.folders)
      if (s > 0) inputs[name] = read_npy(files[static_cast<std::size_t>(s)]);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const double loss = trainer.step(inputs);
      records.push_back({loss, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
    } catch (const Error& e) {
      if (std::string(e.what()).rfind("the loss is ", 0) != 0) throw;
      stopped = e.what();
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    const std::chrono::duration<double> every(args.progress_s);
    if (now - last_progress >= every || (s + 1 == args.steps && now - start >= every)) {
      std::cerr << "step " << s + 1 << "/" << args.steps << "  loss " << records.back().loss << "  "
                << records.back().time_s * 1e3 << " ms\n";
      last_progress = now;
    }
  }
  const std::int64_t measured = static_cast<std::int64_t>(storage_usage(Device::cpu()).peak_bytes_in_use - before);

  // the params, the optimizer's state and the step count: what --resume continues from
  std::vector<Written> written;
  for (const auto& [name, t] : trainer.parameters())
    written.push_back({name, (fs::path(args.output_dir) / (name + ".npy")).string(), t});
  const std::vector<Written> state = checkpoint_files(args.output_dir, trainer.optimizer_state(), trainer.steps());
  std::vector<Written> all = written;
  all.insert(all.end(), state.begin(), state.end());
  write_output_dir(args.output_dir, all);
  if (!stopped.empty())
    throw Error(stopped + "; the params of step " + std::to_string(trainer.steps()) + " were written to " + args.output_dir);
  double peak_flops = 0;
  try {
    peak_flops = find_device("cpu").peak_for(trainer.plan().tensor(trainer.plan().outputs[0]).dtype);
  } catch (const Error&) {
  }
  if (args.json) {
    print_json(trainer, c, records, peak_flops, measured, written);
  } else {
    std::cout << "trained " << args.file << " for " << records.size() << " steps (" << name(opt.kind)
              << ", lr " << opt.lr << "): loss " << records.front().loss << " -> " << records.back().loss << "\n";
    std::cout << "params written to " << args.output_dir << "\n";
  }
  return 0;
}

}  // namespace einexpr::cli
