// Model programs and training from Python (see program.hpp): einexpr.Program's and
// einexpr.Trainer's C++ halves. The planning and lowering, a run and a step release the GIL.
#include "program.hpp"

#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "args.hpp"
#include "einexpr/einexpr.hpp"
#include "report.hpp"

namespace einexpr::python {

namespace {

using Release = py::call_guard<py::gil_scoped_release>;
using Sizes = std::vector<std::pair<std::string, std::int64_t>>;

/// NAME=LEN as the tool parses its arguments, so a length is checked and reported the same.
AxisLengths parse_sizes(const Sizes& sizes) {
  std::vector<std::string> args;
  for (const auto& [axis, length] : sizes) args.push_back(axis + "=" + std::to_string(length));
  return cli::parse_lengths(args);
}

/// The inputs and params of a run or a step, and their shapes and dtypes for the planner
/// (which binds axes to them and names them in its errors), as `program run` gives its files.
struct Given {
  TensorMap tensors;
  std::vector<GivenTensor> shapes;
};
Given given(const std::vector<std::pair<std::string, Tensor>>& named) {
  Given g;
  for (const auto& [name, t] : named) {
    g.tensors[name] = t;
    g.shapes.push_back({name, t.shape(), t.dtype(), "the tensor given for '" + name + "'"});
  }
  return g;
}

/// "(inputs: x; params: w1, w2)", for messages.
std::string declared(const ast::Program& program, bool params_too) {
  std::string inputs, params;
  for (const ast::Item& i : program.items)
    if (const auto* d = std::get_if<ast::TensorDecl>(&i)) {
      std::string& list = d->kind == ast::TensorKind::param ? params : inputs;
      list += (list.empty() ? "" : ", ") + d->name.name;
    }
  return "(inputs: " + (inputs.empty() ? std::string("none") : inputs) +
         (params_too ? "; params: " + (params.empty() ? std::string("none") : params) : "") + ")";
}

/// Every name given is an input (or, where params_too, a param) of the program.
void check_names(const ast::Program& program, const TensorMap& tensors, bool params_too, const std::string& what) {
  for (const auto& [name, t] : tensors) {
    const ast::Item* item = ast::find_tensor(program, name);
    const auto* decl = item ? std::get_if<ast::TensorDecl>(item) : nullptr;
    if (item && !decl)
      throw Error(what + " '" + name + "' is computed by the program: give its inputs " + declared(program, params_too));
    if (!decl)
      throw Error(what + " '" + name + "' names no input" + (params_too ? " or param" : "") + " of the program " +
                  declared(program, params_too));
    if (!params_too && decl->kind == ast::TensorKind::param)
      throw Error(what + " '" + name + "' is a param, which the trainer holds: give step() the inputs " +
                  declared(program, false));
  }
}

std::vector<std::pair<std::string, Tensor>> copies(const TensorMap& tensors) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, t] : tensors) out.emplace_back(name, t.clone());
  return out;
}

class PyTrainer {
 public:
  explicit PyTrainer(Trainer t) : trainer_(std::move(t)) {}

  double step(const std::vector<std::pair<std::string, Tensor>>& named) {
    TensorMap inputs;
    for (const auto& [name, t] : named) inputs[name] = t;
    check_names(trainer_.plan().program, inputs, false, "input");
    py::gil_scoped_release release;
    std::lock_guard lock(mutex_);  // one step at a time: a step writes the trainer's arena
    return trainer_.step(inputs);
  }
  /// Copies, taken between steps (a step in another thread waits, and is waited for).
  std::vector<std::pair<std::string, Tensor>> parameters() {
    std::lock_guard lock(mutex_);
    return copies(trainer_.parameters());
  }
  std::vector<std::pair<std::string, Tensor>> gradients() {
    std::lock_guard lock(mutex_);
    return copies(trainer_.gradients());
  }
  std::int64_t steps() const { return trainer_.steps(); }
  std::int64_t peak_bytes_predicted() const { return trainer_.peak_bytes_predicted(); }
  std::int64_t arena_bytes() const { return trainer_.arena_bytes(); }
  std::string recompute_flops() const { return trainer_.recompute_flops().str(); }
  std::string optimizer() const { return name(trainer_.optimizer().kind); }

 private:
  Trainer trainer_;
  std::mutex mutex_;
};

/// Python's recompute=, checkpoints=, memory_limit=: (mode, checkpoints given, checkpoints,
/// memory limit), "" for what is not given.
using RecomputeTuple = std::tuple<std::string, bool, std::vector<std::string>, std::string>;

cli::RecomputeArgs recompute_args(const RecomputeTuple& t) {
  cli::RecomputeArgs a;
  a.mode = std::get<0>(t);
  a.checkpoints_given = std::get<1>(t);
  a.checkpoints = std::get<2>(t);
  a.memory_limit = std::get<3>(t);
  return a;
}

class PyProgram {
 public:
  /// is_file: `source` is a path, read as `program check FILE` reads it; else program text.
  PyProgram(const std::string& source, bool is_file, const Sizes& sizes)
      : program_(is_file ? cli::read_program_file(source) : parse_program(source, "<program>")),
        file_(is_file ? source : "<program>"),
        sizes_(parse_sizes(sizes)) {}

  void check() const {
    ProgramOptions options;
    options.axes = sizes_;
    plan_program(program_, options);
  }

  /// The inputs' and params' shapes and dtypes, planned with the sizes (and `dtype` for
  /// those declared without one).
  std::vector<std::tuple<std::string, Shape, std::string>> shapes(const std::string& dtype) const {
    ProgramOptions options;
    options.axes = sizes_;
    options.dtype = cli::parse_dtype(dtype);
    const ProgramPlan plan = plan_program(program_, options);
    std::vector<std::tuple<std::string, Shape, std::string>> out;
    for (const ProgramTensor& t : plan.tensors)
      if (t.role == TensorRole::input || t.role == TensorRole::param) out.emplace_back(t.name, t.shape, name(t.dtype));
    return out;
  }

  /// `program cost FILE NAME=LEN... --json`'s text, from the same steps and printer.
  std::string cost_json(const std::string& optimizer, bool mixed_precision, const std::string& dtype,
                        const std::string& device, const RecomputeTuple& recompute) const {
    ProgramOptions options;
    options.axes = sizes_;
    options.dtype = cli::parse_dtype(dtype);
    ProgramCostOptions cost_options;
    cost_options.device = device;
    cost_options.optimizer = parse_optimizer(optimizer);
    cost_options.mixed_precision = mixed_precision;
    cost_options.recompute = cli::recompute_options(recompute_args(recompute), program_);
    find_device(device);
    const ProgramPlan plan = plan_program(program_, options);
    const ProgramCost c = cost(plan, cost_options);
    std::ostringstream os;
    cli::write_program_cost_json(os, plan, c, file_, dtype);
    return os.str();
  }

  /// Plans for the given tensors' shapes and dtypes (the last plan is kept for the next run
  /// with the same ones), then runs.
  std::vector<std::pair<std::string, Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& named) {
    Given g = given(named);
    check_names(program_, g.tensors, true, "input");
    for (const ast::Item& i : program_.items)  // before planning, which would fault on a dtype
      if (const auto* d = std::get_if<ast::TensorDecl>(&i); d && !g.tensors.count(d->name.name))
        throw Error(std::string("missing ") + (d->kind == ast::TensorKind::param ? "param" : "input") + " '" +
                    d->name.name + "': run() takes every input and param " + declared(program_, true));
    const Device device = named.empty() ? Device::cpu() : named.front().second.device();
    std::string key = device.str();
    for (const GivenTensor& s : g.shapes) {
      key += ";" + s.name + ":" + std::string(name(s.dtype));
      for (std::int64_t n : s.shape) key += "," + std::to_string(n);
    }
    std::shared_ptr<const CompiledProgram> compiled = key == compiled_key_ ? compiled_ : nullptr;
    py::gil_scoped_release release;
    if (!compiled) {
      ProgramOptions options;
      options.axes = sizes_;
      options.given = g.shapes;
      compiled = std::make_shared<const CompiledProgram>(program_, options, device);
      py::gil_scoped_acquire gil;  // the cache is the GIL's to guard
      compiled_key_ = key;
      compiled_ = compiled;
    }
    ProgramRun r = compiled->run(g.tensors);
    return std::move(r.outputs);
  }

  PyTrainer* trainer(const std::string& optimizer, double lr, double momentum, double weight_decay, double beta1,
                     double beta2, double eps, const std::string& dtype, bool mixed_precision, int micro_batches,
                     const std::string& batch_axis, const RecomputeTuple& recompute, std::uint64_t seed,
                     const std::vector<std::pair<std::string, Tensor>>& params) const {
    Given g = given(params);
    check_names(program_, g.tensors, true, "param");
    for (const auto& [name, t] : g.tensors) {
      const auto* decl = std::get_if<ast::TensorDecl>(ast::find_tensor(program_, name));
      if (decl->kind != ast::TensorKind::param)
        throw Error("'" + name + "' is an input, not a param: give it to step(), not trainer()");
      if (!t.device().is_cpu())
        throw DeviceError("param '" + name + "' is on " + t.device().str() + ": the trainer runs on the CPU only");
    }
    OptimizerOptions o;
    o.kind = parse_optimizer(optimizer);
    o.lr = lr;
    o.momentum = momentum;
    o.weight_decay = weight_decay;
    o.beta1 = beta1;
    o.beta2 = beta2;
    o.eps = eps;
    o.mixed_precision = mixed_precision;
    o.micro_batches = micro_batches;
    o.batch_axis = batch_axis;
    o.seed = seed;
    o.recompute = cli::recompute_options(recompute_args(recompute), program_);
    ProgramOptions options;
    options.axes = sizes_;
    options.given = g.shapes;
    if (!dtype.empty()) options.dtype = cli::parse_dtype(dtype);
    py::gil_scoped_release release;
    return new PyTrainer(compile_training(program_, options, o, g.tensors));
  }

  const std::string& file() const { return file_; }
  std::vector<std::pair<std::string, std::string>> declarations() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const ast::Item& i : program_.items)
      if (const auto* d = std::get_if<ast::TensorDecl>(&i))
        out.emplace_back(d->name.name, d->kind == ast::TensorKind::param ? "param" : "input");
    return out;
  }
  std::vector<std::string> outputs() const {
    std::vector<std::string> out;
    for (const auto& o : program_.outputs) out.push_back(o.name);
    return out;
  }
  const std::string& text() const { return program_.text; }

 private:
  ast::Program program_;
  std::string file_;
  AxisLengths sizes_;
  std::string compiled_key_;
  std::shared_ptr<const CompiledProgram> compiled_;
};

}  // namespace

void bind_program(py::module_& m) {
  py::class_<PyTrainer>(m, "Trainer")
      .def("step", &PyTrainer::step, py::arg("inputs"))
      .def("parameters", &PyTrainer::parameters, Release())
      .def("gradients", &PyTrainer::gradients, Release())
      .def_property_readonly("steps", &PyTrainer::steps)
      .def_property_readonly("peak_bytes_predicted", &PyTrainer::peak_bytes_predicted)
      .def_property_readonly("arena_bytes", &PyTrainer::arena_bytes)
      .def_property_readonly("recompute_flops", [](const PyTrainer& t) { return py::int_(py::str(t.recompute_flops())); })
      .def_property_readonly("optimizer", &PyTrainer::optimizer);
  py::class_<PyProgram>(m, "Program")
      .def(py::init<const std::string&, bool, const Sizes&>(), py::arg("source"), py::arg("is_file"), py::arg("sizes"))
      .def("check", &PyProgram::check, Release())
      .def("cost_json", &PyProgram::cost_json, Release())
      .def("shapes", &PyProgram::shapes, Release())
      .def("run", &PyProgram::run, py::arg("inputs"))
      .def("trainer", &PyProgram::trainer, py::return_value_policy::take_ownership)
      .def_property_readonly("file", &PyProgram::file)
      .def_property_readonly("text", &PyProgram::text)
      .def("declarations", &PyProgram::declarations)
      .def("outputs", &PyProgram::outputs);
}

}  // namespace einexpr::python
