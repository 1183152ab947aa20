// Programs on a device mesh over MPI, run by `mpirun -np 2` and `-np 4` (tests/mpi/CMakeLists.txt):
// each case runs the program on one process (every rank, the whole tensors) and on the mesh,
// and rank 0 checks that the outputs, or the params after 5 Adam steps, are the one process's
// (f32: within 1e-5 of the largest element of each, relative; the optimizer state too, and a
// step after one process's checkpoint restored on the mesh), and every rank that the bytes it
// handed to MPI are the cost's, collective by collective. Then the refusals: a mesh of another
// size than the run's, one rank's bad input (every rank throws, naming it).
//
// A plain main, not Catch: every rank must run every case in the same order (the collectives
// pair up across ranks), so a failed check is counted, never thrown, and the exit status is
// whether any rank counted one.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "einexpr/mesh_run.hpp"
#include "tensor_difference.hpp"
#include "einexpr/parser/program.hpp"

using namespace einexpr;

namespace {

int rank = 0, world = 1, failures = 0, checks = 0;

void check(bool ok, const std::string& what) {
  ++checks;
  if (ok) return;
  ++failures;
  std::cerr << "rank " << rank << ": FAILED: " << what << "\n";
}

ast::Program model(const std::string& file) {
  std::ifstream f(std::string(EINEXPR_MODELS_DIR) + "/" + file);
  std::stringstream s;
  s << f.rdbuf();
  return parse_program(s.str(), file);
}

Tensor ids(Shape shape, std::int64_t below, std::uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<std::int64_t> v(static_cast<std::size_t>(checked_numel(shape)));
  for (auto& x : v) x = static_cast<std::int64_t>(g() % static_cast<std::uint32_t>(below));
  return Tensor::from_vector(v, shape);
}

Tensor scaled(Shape shape, double by, std::uint64_t seed) {
  Tensor t = Tensor::randn(std::move(shape), DType::f64, seed);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<double>()[i] *= by;
  return t.to(DType::f32);
}

// every param of a plan: N(0, 0.2²), and 1 + that for a norm's gain
TensorMap init_params(const ProgramPlan& plan, std::uint64_t seed) {
  TensorMap out;
  for (const ProgramTensor& t : plan.tensors)
    if (t.role == TensorRole::param) {
      Tensor x = scaled(t.shape, 0.2, seed++);
      if (t.name.find("_g") != std::string::npos)
        for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] += 1;
      out[t.name] = x;
    }
  return out;
}

std::string collectives_line(const std::vector<MeasuredCollective>& m) {
  std::int64_t bus = 0;
  for (const auto& c : m) bus += c.bus_bytes;
  return std::to_string(m.size()) + " collectives, " + std::to_string(bus) + " bus bytes";
}

// lecture2.ein's forward on the mesh against one process
void run_case(const std::string& label, const std::string& dims, const std::string& shard_text) {
  const ast::Program p = model("lecture2.ein");
  const AxisLengths axes = {{"B", 16}, {"D", 8}, {"E", 12}, {"K", 4}};
  TensorMap in{{"x", scaled({16, 8}, 1, 1)}, {"w1", scaled({8, 12}, 0.3, 2)}, {"w2", scaled({12, 4}, 0.3, 3)}};
  ProgramOptions o;
  o.axes = axes;
  const ProgramRun one = CompiledProgram(p, o).run(in);
  const MeshRun r = run_on_mesh(MPI_COMM_WORLD, p, parse_mesh(dims, shard_text), o, in);
  const std::string diff = compare_collectives(r.predicted.collectives, r.measured, {"forward"});
  check(diff.empty(), label + ": measured collectives differ from the cost's:\n" + diff);
  check(!r.measured.empty() || shard_text.find("E:") == std::string::npos, label + ": no collective issued");
  if (rank == 0) {
    const double e = test::max_relative_difference(r.outputs.at(0).second, one["loss"]);
    check(e <= 1e-5, label + ": loss differs by " + std::to_string(e));
    std::cout << "ok: run " << label << " (" << dims << "; " << shard_text << "): loss relative difference " << e << ", "
              << collectives_line(r.measured) << ", as predicted\n";
  }
}

// max, min and sum over a split axis in bf16, f16 and f32 (the 16-bit ones as words that
// einexpr's own MPI ops reduce): max and min bit for bit as one process; the sum within its
// terms' rounding steps (each rank's partial sum is rounded before it is sent)
void reduce_case(DType dtype, const std::string& dims) {
  const ast::Program p = parse_program("axes B=16 E=12\ninput x: B E\n"
                                       "mx = reduce(x, \"B E -> E\", \"max\")\n"
                                       "mn = reduce(x, \"B E -> E\", \"min\")\n"
                                       "sm = reduce(x, \"B E -> E\", \"sum\")\noutput mx\noutput mn\noutput sm\n",
                                       "reductions.ein");
  ProgramOptions o;
  o.dtype = dtype;
  const TensorMap in{{"x", scaled({16, 12}, 3, 11).to(dtype)}};
  const ProgramRun one = CompiledProgram(p, o).run(in);
  const MeshRun r = run_on_mesh(MPI_COMM_WORLD, p, parse_mesh(dims, "B:dp"), o, in);
  const std::string label = "max, min and sum over a split axis in " + std::string(name(dtype));
  const std::string diff = compare_collectives(r.predicted.collectives, r.measured, {"forward"});
  check(diff.empty(), label + ": measured collectives differ from the cost's:\n" + diff);
  check(r.measured.size() == 3, label + ": " + std::to_string(r.measured.size()) + " collectives, not one a reduction");
  if (rank != 0) return;
  check(r.outputs.size() == 3, label + ": " + std::to_string(r.outputs.size()) + " outputs");
  for (const auto& [out, t] : r.outputs) {
    const Tensor want = one[out].contiguous(), got = t.contiguous();
    check(got.dtype() == dtype && got.shape() == want.shape(), label + ": " + out + "'s dtype or shape");
    if (out == "sm") {
      const double e = test::max_relative_difference(got, want);
      // 16 terms summed in another order (each rank's part rounded first): at most 16 rounding
      // steps of their absolute sum, about twice the largest result here
      const double step = dtype == DType::bf16 ? 0x1p-8 : dtype == DType::f16 ? 0x1p-11 : 0x1p-24;
      check(e <= 32 * step, label + ": the sum differs by " + std::to_string(e));
    } else {
      check(std::memcmp(got.data_ptr(), want.data_ptr(), static_cast<std::size_t>(want.nbytes())) == 0,
            label + ": " + out + " differs from one process's");
    }
  }
  std::cout << "ok: run " << label << " (" << dims << "; B:dp): max and min as one process, bit for bit; "
            << collectives_line(r.measured) << ", as predicted\n";
}

struct TrainCase {
  std::string file;
  AxisLengths axes;
  std::function<TensorMap(int step)> inputs;
  Optimizer optimizer = Optimizer::adam;
  DType dtype = DType::f32;
  double tolerance = 1e-5;
};

TrainCase lecture2() {
  return {"lecture2.ein", {{"B", 16}, {"D", 8}, {"E", 12}, {"K", 4}},
          [](int s) { return TensorMap{{"x", scaled({16, 8}, 1, 100 + static_cast<std::uint64_t>(s))}}; }};
}

// lecture2 at sizes where f32 Adam is noisier than the mesh: in f64, the mesh is one process
// to rounding (f32 single-process runs differ from f64 by 1.4e-4 of w1 here, README "Beyond one
// machine")
TrainCase lecture2_f64() {
  TrainCase c{"lecture2.ein", {{"B", 64}, {"D", 32}, {"E", 32}, {"K", 8}},
              [](int s) { return TensorMap{{"x", scaled({64, 32}, 1, 200 + static_cast<std::uint64_t>(s))}}; }};
  c.dtype = DType::f64;
  c.tolerance = 1e-12;
  return c;
}

// mixed precision: bf16 params, activations and gradients (their collectives in bf16, each
// pair of elements added in f32 and rounded), f32 master weights. A split sum is rounded once
// per part and once more when added, one process's once, so gradients differ in their last
// bits: SGD's steps follow them (Adam's move each element by about lr whatever its gradient's
// size, and a rounding that flips a tiny one's sign moves it the other way), within 2^-6 of
// the largest element after 5 steps (bf16 keeps 8 bits)
TrainCase bf16(TrainCase c) {
  c.dtype = DType::bf16;
  c.optimizer = Optimizer::sgd;
  c.tolerance = 1.0 / 64;
  return c;
}

TensorMap tokens(std::int64_t b, std::int64_t s, std::int64_t v, int step) {
  Tensor mask = Tensor::zeros({s, s});
  for (std::int64_t i = 0; i < s; ++i)
    for (std::int64_t j = i + 1; j < s; ++j) mask.data<float>()[i * s + j] = -1e9f;
  return {{"tok", ids({b, s}, v, 10 + static_cast<std::uint32_t>(step))},
          {"tgt", ids({b, s}, v, 50 + static_cast<std::uint32_t>(step))},
          {"mask", mask}};
}

TrainCase gpt2_train() {
  return {"gpt2_train.ein", {{"B", 4}}, [](int s) { return tokens(4, 8, 32, s); }};
}

// gpt2.ein: GPT-2's block over L layers, with its dropouts
TrainCase gpt2_layers() {
  return {"gpt2.ein",
          {{"L", 2}, {"B", 4}, {"S", 8}, {"T", 8}, {"D", 16}, {"H", 2}, {"K", 8}, {"F", 32}, {"V", 24}},
          [](int s) { return tokens(4, 8, 24, s); },
          // momentum, not Adam: b_k's gradient is 0 but for rounding (softmax over T does not see
          // it), and Adam divides that noise by its own size into steps of about lr
          Optimizer::momentum};
}

// llama2.ein: LLaMA's block over L layers (no dropout), rotary tables as inputs
TrainCase llama2_layers() {
  return {"llama2.ein",
          {{"L", 2}, {"B", 4}, {"S", 8}, {"T", 8}, {"D", 16}, {"G", 2}, {"R", 1}, {"K", 8}, {"K1", 4}, {"K2", 4}, {"F", 32}, {"V", 24}},
          [](int s) {
            TensorMap in = tokens(4, 8, 24, s);
            in["cos"] = scaled({8, 8}, 1, 300);
            in["sin"] = scaled({8, 8}, 1, 301);
            return in;
          },
          Optimizer::momentum};
}

// a model's forward (a run: dropout the identity) on the mesh against one process: the loss
void model_run_case(const std::string& label, const TrainCase& c, const std::string& dims, const std::string& shard_text) {
  const ast::Program p = model(c.file);
  ProgramOptions o;
  o.axes = c.axes;
  o.training = false;
  TensorMap in = init_params(plan_program(p, o), 7);
  for (const auto& [name, t] : c.inputs(0)) in[name] = t;
  const ProgramRun one = CompiledProgram(p, o).run(in);
  const MeshRun r = run_on_mesh(MPI_COMM_WORLD, p, parse_mesh(dims, shard_text), o, in);
  const std::string diff = compare_collectives(r.predicted.collectives, r.measured, {"forward"});
  check(diff.empty(), label + ": measured collectives differ from the cost's:\n" + diff);
  if (rank != 0) return;
  const double e = test::max_relative_difference(r.outputs.at(0).second, one[r.outputs.at(0).first]);
  check(e <= 1e-5, label + ": " + r.outputs.at(0).first + " differs by " + std::to_string(e));
  std::cout << "ok: run " << label << " (" << dims << "; " << shard_text << "): " << r.outputs.at(0).first
            << " relative difference " << e << ", " << collectives_line(r.measured) << ", as predicted\n";
}

// recompute: what the mesh's backward keeps (one process keeps everything: recomputation
// changes no value); `repeats`: the cost must have this many collectives made again (-1: not
// checked; measured against predicted still is)
void train_case(const std::string& label, const TrainCase& c, const std::string& dims, const std::string& shard_text,
                int zero, const RecomputeOptions& recompute = {}, int repeats = 0, int micro_batches = 1) {
  const ast::Program p = model(c.file);
  ProgramOptions o;
  o.axes = c.axes;
  o.dtype = c.dtype;
  const ProgramPlan plan = plan_program(p, o);
  TensorMap params = init_params(plan, 7);
  for (auto& [name, t] : params) t = t.to(c.dtype);
  const auto inputs = [&](int step) {
    TensorMap in = c.inputs(step);
    for (auto& [name, t] : in)
      if (is_floating(t.dtype())) t = t.to(c.dtype);
    return in;
  };
  OptimizerOptions opt;
  opt.kind = c.optimizer;
  opt.lr = c.optimizer == Optimizer::adam ? 1e-2 : 1e-1;
  opt.seed = 3;
  opt.recompute = RecomputeOptions{};  // none: what the backward reads is kept
  opt.mixed_precision = c.dtype == DType::bf16 || c.dtype == DType::f16;  // f32 masters and state
  // one process takes the batch whole (the same gradients), but with dropout in the same
  // micro-batches (a micro-batch draws its own masks)
  const bool dropout = std::any_of(plan.tensors.begin(), plan.tensors.end(), [](const ProgramTensor& t) { return t.dropout >= 0; });
  if (dropout) opt.micro_batches = micro_batches;
  Trainer one = compile_training(p, o, opt, params);
  opt.recompute = recompute;
  opt.micro_batches = micro_batches;
  MeshTrainer mesh(MPI_COMM_WORLD, p, parse_mesh(dims, shard_text, zero), o, opt, params);
  int again = 0;
  for (const Collective& x : mesh.predicted().collectives) again += x.why.rfind("recomputed", 0) == 0 ? 1 : 0;
  check(repeats < 0 || again == repeats, label + ": " + std::to_string(again) +
                                             " collectives made again by recomputation, not " + std::to_string(repeats));
  check((mesh.local().recompute_flops() == Count{}) == (recompute.mode == RecomputeMode::none),
        label + ": recomputes " + mesh.local().recompute_flops().str() + " FLOPs");
  if (recompute.mode == RecomputeMode::automatic)
    check(mesh.local().peak_bytes_predicted() <= recompute.memory_limit,
          label + ": a device's predicted peak " + std::to_string(mesh.local().peak_bytes_predicted()) + " is over " +
              std::to_string(recompute.memory_limit));
  double loss_diff = 0;
  for (int s = 0; s < 5; ++s) {
    const TensorMap in = inputs(s);
    const double a = one.step(in), b = mesh.step(in);
    loss_diff = std::max(loss_diff, std::abs(a - b) / std::abs(a));
    const std::string diff = compare_collectives(mesh.predicted().collectives, mesh.measured(), {"forward", "backward", "optimizer"});
    check(diff.empty(), label + ", step " + std::to_string(s + 1) + ": measured collectives differ from the cost's:\n" + diff);
  }
  check(loss_diff <= c.tolerance, label + ": the losses differ by " + std::to_string(loss_diff));
  const TensorMap trained = mesh.parameters(), state = mesh.optimizer_state();  // whole on rank 0
  double worst = 0, worst_state = 0, worst_resumed = 0;
  std::string at, at_state;
  if (rank == 0) {
    for (const auto& [name, w] : one.parameters()) {
      const double e = test::max_relative_difference(trained.at(name), w);
      if (e > worst) worst = e, at = name;
    }
    // the state whole, shaped as one process keeps it (ZeRO's parts put back in place), each
    // relative to the largest of its kind over every param (a param whose gradient is rounding
    // alone, as gpt2's b_k, has a state of rounding alone)
    const TensorMap want = one.optimizer_state();
    check(state.size() == want.size(), label + ": " + std::to_string(state.size()) + " state tensors");
    std::map<std::string, double> largest;  // kind ("exp_avg", ...) -> its largest element
    const auto kind = [](const std::string& key) { return key.substr(key.rfind('.') + 1); };
    for (const auto& [key, v] : want) {
      const Tensor x = v.to(DType::f64).contiguous();
      for (std::int64_t i = 0; i < x.numel(); ++i) largest[kind(key)] = std::max(largest[kind(key)], std::abs(x.data<double>()[i]));
    }
    for (const auto& [key, v] : want) {
      const auto it = state.find(key);
      const bool same = it != state.end() && it->second.shape() == v.shape() && it->second.dtype() == v.dtype();
      check(same, label + ": the mesh's state '" + key + "' missing or misshapen");
      if (!same) continue;
      const Tensor a = it->second.to(DType::f64).contiguous(), b = v.to(DType::f64).contiguous();
      double diff = 0;
      for (std::int64_t i = 0; i < b.numel(); ++i) diff = std::max(diff, std::abs(a.data<double>()[i] - b.data<double>()[i]));
      const double e = largest[kind(key)] > 0 ? diff / largest[kind(key)] : diff;
      if (e > worst_state) worst_state = e, at_state = key;
    }
  }
  // one process's checkpoint restored on a fresh mesh trainer: its next step is one process's
  MeshTrainer resumed(MPI_COMM_WORLD, p, parse_mesh(dims, shard_text, zero), o, opt, params);
  resumed.restore(one.parameters(), one.optimizer_state(), one.steps());
  check(resumed.steps() == 5, label + ": restored at step " + std::to_string(resumed.steps()));
  const TensorMap sixth = inputs(5);
  (void)one.step(sixth);
  (void)resumed.step(sixth);
  const TensorMap after = resumed.parameters();
  if (rank != 0) return;
  for (const auto& [name, w] : one.parameters()) worst_resumed = std::max(worst_resumed, test::max_relative_difference(after.at(name), w));
  check(worst <= c.tolerance, label + ": param '" + at + "' differs by " + std::to_string(worst) + " after 5 Adam steps");
  check(worst_state <= c.tolerance, label + ": state '" + at_state + "' differs by " + std::to_string(worst_state));
  check(worst_resumed <= c.tolerance, label + ": a step from one process's checkpoint differs by " + std::to_string(worst_resumed));
  std::cout << "ok: train " << label << " (" << dims << "; " << shard_text << (zero ? "; ZeRO-" + std::to_string(zero) : "")
            << (micro_batches > 1 ? "; " + std::to_string(micro_batches) + " micro-batches" : "")
            << ", " << name(c.dtype) << "): params after 5 " << name(c.optimizer) << " steps within " << worst << " (" << at << "), state within "
            << worst_state << ", a 6th step from one process's checkpoint within " << worst_resumed << ", losses within " << loss_diff << ", "
            << collectives_line(mesh.measured()) << " a step, as predicted\n";
}

// f must throw MeshError on every rank, its message holding `part`
void refused(const std::string& label, const std::function<void()>& f, const std::string& part) {
  std::string message;
  try {
    f();
  } catch (const MeshError& e) {
    message = e.what();
  } catch (const std::exception& e) {
    message = std::string("not a MeshError: ") + e.what();
  }
  check(message.find(part) != std::string::npos, label + ": expected an error with '" + part + "', got '" + message + "'");
  if (rank == 0) std::cout << "ok: refused " << label << ": " << message << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  try {
    const std::string n = std::to_string(world);
    run_case("data-parallel", "dp=" + n, "B:dp");
    run_case("tensor-parallel", "tp=" + n, "E:tp");
    run_case("the output's axis split (a mean over K)", "tp=" + n, "K:tp");
    if (world == 4) run_case("dp and tp", "dp=2 tp=2", "B:dp E:tp");
    for (DType d : {DType::bf16, DType::f16, DType::f32}) reduce_case(d, "dp=" + n);
    train_case("lecture2, data-parallel", lecture2(), "dp=" + n, "B:dp", 0);
    train_case("lecture2, tensor-parallel", lecture2(), "tp=" + n, "E:tp", 0);
    train_case("lecture2, dp and tp", lecture2_f64(), world == 4 ? "dp=2 tp=2" : "dp=2", world == 4 ? "B:dp E:tp" : "B:dp", 1);
    train_case("gpt2_train, data-parallel", gpt2_train(), "dp=" + n, "B:dp", 0);
    if (world == 2) train_case("gpt2_train, Megatron's tensor parallelism", gpt2_train(), "tp=2", "H:tp F:tp", 0);
    if (world == 4) train_case("gpt2_train, dp and Megatron's tp", gpt2_train(), "dp=2 tp=2", "B:dp H:tp F:tp", 0);
    for (int zero = 1; zero <= 3; ++zero) {
      train_case("lecture2, ZeRO", lecture2(), "dp=" + n, "B:dp", zero);
      train_case("gpt2_train, ZeRO", gpt2_train(), world == 4 ? "dp=2 tp=2" : "dp=2",
                 world == 4 ? "B:dp H:tp F:tp" : "B:dp", zero);
    }
    // recomputation: the forward's all-reduces made again before the gradients that read
    // their results (Megatron's full recomputation); nothing kept but the outputs, then the
    // choice of auto under a limit below each device's no-recompute peak
    {
      const RecomputeOptions nothing{.mode = RecomputeMode::checkpoints, .checkpoints = {}};
      const std::string tp = world == 4 ? "dp=2 tp=2" : "tp=2", tp_shard = world == 4 ? "B:dp H:tp F:tp" : "H:tp F:tp";
      train_case("gpt2_train, Megatron's tp, everything recomputed", gpt2_train(), tp, tp_shard, 0, nothing, 2);
      train_case("gpt2_train, Megatron's tp, ZeRO-3, everything recomputed", gpt2_train(), tp, tp_shard, 3, nothing, 2);
      train_case("lecture2, tensor-parallel, everything recomputed", lecture2(), "tp=" + n, "E:tp", 0, nothing, 1);
      // auto: the limit is each device's (its part of the program), below its peak keeping
      // everything; the cost then counts what the trainer chose (here statements without
      // collectives: the einsums that all-reduce are the dearest to make again)
      const TrainCase c = gpt2_train();
      ProgramOptions og;
      og.axes = c.axes;
      OptimizerOptions keep_all;
      keep_all.kind = c.optimizer;
      keep_all.recompute = RecomputeOptions{};
      const std::int64_t peak = MeshTrainer(MPI_COMM_WORLD, model(c.file), parse_mesh(tp, tp_shard), og, keep_all,
                                            init_params(plan_program(model(c.file), og), 7))
                                    .local()
                                    .peak_bytes_predicted();
      const RecomputeOptions limited{.mode = RecomputeMode::automatic, .memory_limit = peak - peak / 20};
      train_case("gpt2_train, Megatron's tp, auto under 95% of a device's peak keeping everything (" + std::to_string(limited.memory_limit) +
                     " bytes)",
                 c, tp, tp_shard, 0, limited, -1);
    }
    train_case("lecture2 in bf16 (mixed precision), tensor-parallel", bf16(lecture2()), "tp=" + n, "E:tp", 0);
    train_case("lecture2 in bf16 (mixed precision), data-parallel, ZeRO-1", bf16(lecture2()), "dp=" + n, "B:dp", 1);
    train_case("gpt2_train in bf16 (mixed precision), dp and Megatron's tp", bf16(gpt2_train()),
               world == 4 ? "dp=2 tp=2" : "tp=2", world == 4 ? "B:dp H:tp F:tp" : "H:tp F:tp", 0);
    // micro-batches: the forward's and the activations' collectives each micro-batch, the
    // params' gradients' once a step on their sum (ZeRO 0-1) or each micro-batch's
    // reduce-scattered (ZeRO-2/3; ZeRO-3's gathers each micro-batch too)
    for (int zero = 0; zero <= 3; ++zero) {
      train_case("lecture2, data-parallel, 2 micro-batches", lecture2(), "dp=" + n, "B:dp", zero, {}, 0, 2);
      train_case("gpt2_train, Megatron's tp, 2 micro-batches", gpt2_train(), world == 4 ? "dp=2 tp=2" : "tp=2",
                 world == 4 ? "B:dp H:tp F:tp" : "H:tp F:tp", zero, {}, 0, 2);
    }
    // mixed precision: the f32 sum moves in bf16 (ZeRO 0-1), each micro-batch's bf16 gradient (2)
    for (int zero : {0, 1, 2})
      train_case("lecture2 in bf16 (mixed precision), data-parallel, 2 micro-batches", bf16(lecture2()), "dp=" + n, "B:dp",
                 zero, {}, 0, 2);
    train_case("gpt2_train in bf16 (mixed precision), Megatron's tp, 2 micro-batches", bf16(gpt2_train()),
               world == 4 ? "dp=2 tp=2" : "tp=2", world == 4 ? "B:dp H:tp F:tp" : "H:tp F:tp", 1, {}, 0, 2);
    train_case("llama2.ein (2 layers), 2 micro-batches, ZeRO-1", llama2_layers(), world == 4 ? "dp=2 tp=2" : "dp=2",
               world == 4 ? "B:dp G:tp F:tp" : "B:dp", 1, {}, 0, 2);
    train_case("lecture2, tensor-parallel, 4 micro-batches, everything recomputed", lecture2(), "tp=" + n, "E:tp", 0,
               {.mode = RecomputeMode::checkpoints, .checkpoints = {}}, 4, 4);
    train_case("gpt2.ein (2 layers, dropout), data-parallel", gpt2_layers(), "dp=" + n, "B:dp", 0);
    // Megatron's vocabulary parallelism: the embedding's lookup on each device's rows (zeros
    // for the others', all-reduced), the loss on its classes (each row's statistics completed
    // by all-reduces inside the kernel, forward and backward), the tied head's input gradient
    {
      const std::string tp = world == 4 ? "dp=2 tp=2" : "tp=2";
      const std::string with = world == 4 ? "B:dp H:tp F:tp V:tp" : "H:tp F:tp V:tp";
      model_run_case("gpt2_train, the vocabulary split", gpt2_train(), tp, with);
      train_case("gpt2_train, Megatron's tp with the vocabulary split", gpt2_train(), tp, with, 0);
      train_case("gpt2_train, the vocabulary split, ZeRO-1", gpt2_train(), tp, with, 1);
      train_case("gpt2_train in bf16 (mixed precision), the vocabulary split", bf16(gpt2_train()), tp, with, 0);
      train_case("gpt2.ein (2 layers, dropout), the vocabulary split", gpt2_layers(), "tp=" + n, "V:tp", 0);
    }
    train_case("gpt2.ein (2 layers, dropout), ZeRO", gpt2_layers(), "dp=" + n, "B:dp", 2);
    // with micro-batches: each rank's micro-batch draws its rows' masks of one process's micro-batch
    train_case("gpt2.ein (2 layers, dropout), data-parallel, 2 micro-batches", gpt2_layers(),
               world == 4 ? "dp=2 tp=2" : "dp=2", "B:dp", 1, {}, 0, 2);  // B=4: 1 row a micro-batch

    const ast::Program p = model("lecture2.ein");
    ProgramOptions o;
    o.axes = {{"B", 16}, {"D", 8}, {"E", 12}, {"K", 4}};
    TensorMap in{{"x", scaled({16, 8}, 1, 1)}, {"w1", scaled({8, 12}, 0.3, 2)}, {"w2", scaled({12, 4}, 0.3, 3)}};
    refused("a mesh of another size", [&] { (void)run_on_mesh(MPI_COMM_WORLD, p, parse_mesh("dp=" + std::to_string(2 * world), "B:dp"), o, in); },
            "launch it with mpirun -np " + std::to_string(2 * world));
    refused("one rank's input of another shape", [&] {
      TensorMap mine = in;
      if (rank == 1) mine["x"] = scaled({16, 9}, 1, 1);
      (void)run_on_mesh(MPI_COMM_WORLD, p, parse_mesh("dp=" + n, "B:dp"), o, mine);
    }, "rank 1 of " + n);
    refused("an axis that does not split", [&] {
      ProgramOptions odd = o;
      odd.axes[0].second = 2 * world + 1;
      TensorMap x = in;
      x["x"] = scaled({2 * world + 1, 8}, 1, 1);
      (void)run_on_mesh(MPI_COMM_WORLD, p, parse_mesh("dp=" + n, "B:dp"), odd, x);
    }, "does not split over dp");
    refused("a statement-level layout (sequence parallelism)", [&] {
      (void)run_on_mesh(MPI_COMM_WORLD, p, parse_mesh("tp=" + n, "E:tp B:tp@h2+sq"), o, in);
    }, "not run on MPI yet");
    refused("a split axis read whole under another name (an all-gather)", [&] {
      const TrainCase c = gpt2_train();
      ProgramOptions og;
      og.axes = c.axes;
      TensorMap all = c.inputs(0);
      for (const auto& [name, t] : init_params(plan_program(model(c.file), og), 1)) all[name] = t;
      // S split in ln1 (B S D), which k0 reads as B T D: gathered whole along T
      (void)run_on_mesh(MPI_COMM_WORLD, model(c.file), parse_mesh("tp=" + n, "S:tp"), og, all);
    }, "not run on MPI yet");
    refused("dropout split along another dim", [&] {
      const TrainCase c = gpt2_layers();
      ProgramOptions og;
      og.axes = c.axes;
      og.axes[5].second = 2 * world;  // H
      OptimizerOptions opt;
      opt.recompute = RecomputeOptions{};
      MeshTrainer t(MPI_COMM_WORLD, model(c.file), parse_mesh("tp=" + n, "H:tp"), og, opt,
                    init_params(plan_program(model(c.file), og), 1));
    }, "only a split first dim");
    refused("micro-batches that do not cut the batch evenly", [&] {
      OptimizerOptions opt;
      opt.micro_batches = 3;
      MeshTrainer t(MPI_COMM_WORLD, p, parse_mesh("dp=" + n, "B:dp"), o, opt, {{"w1", in.at("w1")}, {"w2", in.at("w2")}});
    }, "axis 'B' is 16: it does not split into 3 equal micro-batches");
    refused("micro-batches and a dropout mask whose first dim is not the batch axis", [&] {
      const ast::Program q = parse_program("axes B=16 D=8 E=12 K=4\ninput x: B D\nparam w1: D E\n"
                                           "h = einsum(x, w1, \"B D, D E -> E B\")\nd = dropout(h, 0.1)\n"
                                           "loss = reduce(d, \"E B ->\", \"mean\")\n", "transposed.ein");
      OptimizerOptions opt;
      opt.micro_batches = 2;
      MeshTrainer t(MPI_COMM_WORLD, q, parse_mesh("tp=" + n, "D:tp"), o, opt, {{"w1", in.at("w1")}});
    }, "with micro-batches on a mesh: its mask's first dim is E, not the batch axis B");
  } catch (const std::exception& e) {
    std::cerr << "rank " << rank << ": " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int any = 0;
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::cout << (any ? "FAILED: " : "passed: ") << checks << " checks on each of " << world << " ranks, " << any << " failed\n";
  MPI_Finalize();
  return any ? 1 : 0;
}
