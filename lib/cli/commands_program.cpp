// program check, program cost: a model file checked (names, then shapes and dtypes in one
// axis environment) and costed for a training step, from the file and sizes alone.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "einexpr/codegen/compare.hpp"
#include "einexpr/codegen/mesh.hpp"
#include "einexpr/codegen/recompute.hpp"

#include "args.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "report.hpp"

namespace einexpr::cli {

namespace {

std::string shape_text(const ProgramPlan& plan, int id) {
  const ProgramTensor& t = plan.tensor(id);
  std::string s;
  for (std::size_t d = 0; d < t.dims.size(); ++d) s += (d ? ", " : "") + t.dims[d] + "=" + std::to_string(t.shape[d]);
  return "[" + s + "]";
}

// The bound of auto's search (recompute.hpp's RecomputeBound) as one JSON object, to a
// temporary beside `path` renamed into place: a failure leaves no file.
void write_recompute_bound(const std::string& path, const RecomputeBound& b) {
  std::ostringstream text;
  JsonWriter j(text);
  j.begin_object().field("memory_limit", b.memory_limit).field("fixed_bytes", b.fixed_bytes);
  j.key("statements").begin_array();
  for (std::size_t s = 0; s < b.statements.size(); ++s)
    j.begin_object().field("name", b.statements[s]).field("flops", b.statement_flops[s]).end_object();
  j.end_array().key("candidates").begin_array();
  for (std::size_t c = 0; c < b.candidates.size(); ++c)
    j.begin_object().field("name", b.candidates[c]).field("statement", b.candidate_statement[c]).end_object();
  j.end_array().key("first_reader").begin_array();
  for (int e : b.first_reader) j.value(e);
  j.end_array().key("last_reader").begin_array();
  for (int e : b.last_reader) j.value(e);
  j.end_array().key("needed").begin_array();
  for (const auto& [s, c] : b.needed) j.begin_array().value(s).value(c).end_array();
  j.end_array().key("chains").begin_array();
  for (const RecomputeBound::Chain& ch : b.chains) j.begin_array().value(ch.statement).value(ch.candidate).value(ch.maker).end_array();
  j.end_array().key("points").begin_array();
  for (const RecomputeBound::Point& p : b.points) {
    j.begin_object().field("at", p.at).field("base", p.base).key("kept").begin_array();
    for (const RecomputeBound::Term& t : p.kept) j.begin_array().value(t.candidate).value(t.bytes).end_array();
    j.end_array().key("read_again").begin_array();
    for (const RecomputeBound::ReadAgain& t : p.read_again)
      j.begin_array().value(t.candidate).value(t.statement).value(t.bytes).end_array();
    j.end_array().key("early").begin_array();
    for (const RecomputeBound::Term& t : p.early) j.begin_array().value(t.candidate).value(t.bytes).end_array();
    j.end_array().end_object();
  }
  j.end_array().end_object();
  text << "\n";
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text.str();
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(temp, ec);
      throw Error("--recompute-bound: cannot write '" + path + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw Error("--recompute-bound: cannot write '" + path + "': " + ec.message());
  }
}

}  // namespace

int program_check_command(const ProgramCheckArgs& args) {
  ProgramOptions options;
  options.axes = parse_lengths(args.lengths);
  const ProgramPlan plan = plan_program(read_program_file(args.file), options);
  std::cout << "ok: " << args.file << " (" << plan.axes_text() << ")\n";
  Table t({}, "llll");
  for (std::size_t id = 0; id < plan.tensors.size(); ++id) {
    const ProgramTensor& x = plan.tensors[id];
    const bool output = std::find(plan.outputs.begin(), plan.outputs.end(), static_cast<int>(id)) != plan.outputs.end();
    const std::string role = x.role == TensorRole::statement ? plan.statements[static_cast<std::size_t>(x.statement)].spec.str()
                                                             : name(x.role);
    t.add({x.name, role, shape_text(plan, static_cast<int>(id)) + " " + std::string(name(x.dtype)), output ? "output" : ""});
  }
  std::cout << t.str();
  return 0;
}

int program_cost_command(const ProgramCostArgs& args) {
  ProgramOptions options;
  options.axes = parse_lengths(args.lengths);
  options.dtype = parse_dtype(args.dtype);
  ProgramCostOptions cost_options;
  cost_options.device = args.device;
  cost_options.optimizer = parse_optimizer(args.optimizer);
  cost_options.mixed_precision = args.mixed_precision;
  find_device(args.device);  // an unknown device: exit 1 before any work
  const ast::Program program = read_program_file(args.file);
  cost_options.recompute = recompute_options(args.recompute, program);
  if (!args.recompute_bound.empty() &&
      (!cost_options.recompute || cost_options.recompute->mode != RecomputeMode::automatic || args.search))
    throw UsageError("--recompute-bound writes the bound of --recompute auto's search: give --recompute auto "
                     "--memory-limit BYTES (and no --search)");
  if (args.search) {
    const std::optional<Mesh> shape = program_mesh(program, args.mesh.dims, args.mesh.shard);
    if (!shape) throw UsageError("--search sizes a mesh: give its dimensions and links (--mesh 'dp=1@ib tp=1@nvlink' "
                                 "--shard 'B:dp H:tp F:tp', sizes ignored) or a mesh line");
    const LayoutSearch s =
        search_layouts(program, options, cost_options, *shape, {.devices = args.devices, .node = args.node, .batch_axis = args.batch_axis});
    if (!args.json) {
      std::cout << to_string(s);
      return 0;
    }
    JsonWriter j(std::cout);
    j.begin_object().field("device", s.device).field("device_memory", s.device_memory).field("devices", s.devices);
    j.field("tried", static_cast<std::int64_t>(s.tried)).field("fit", static_cast<std::int64_t>(s.fit)).field("seconds", s.seconds);
    j.key("fastest").begin_array();
    for (const LayoutChoice& c : s.fastest) {
      j.begin_object().field("mesh", c.mesh.str()).field("zero", static_cast<std::int64_t>(c.mesh.zero));
      j.field("micro_batches", static_cast<std::int64_t>(c.micro_batches)).field("recompute", c.recompute);
      j.field("compute_s", c.compute_s).field("micro_comm_s", c.micro_comm_s).field("step_comm_s", c.step_comm_s);
      j.field("step_s", c.step_s).field("overlapped_s", c.overlapped_s).field("memory_bytes", c.memory_bytes);
      j.field("params_bytes", c.micro.params_bytes).field("grads_bytes", c.micro.grads_bytes);
      j.field("optimizer_bytes", c.micro.optimizer_bytes).field("activations_bytes", c.micro.activations_bytes);
      j.end_object();
    }
    j.end_array();
    j.key("refused").begin_array();
    for (const std::string& r : s.refused) j.value(r);
    j.end_array().end_object();
    std::cout << "\n";
    return 0;
  }
  if (args.devices != 0) throw UsageError("--devices is for --search");
  const ProgramPlan plan = plan_program(program, options);
  if (!args.recompute_bound.empty())  // before the search: written also when no choice it tries fits
    write_recompute_bound(args.recompute_bound,
                          recompute_bound(plan, cost_options.recompute->memory_limit,
                                          step_fixed_bytes(plan, cost_options.optimizer, cost_options.mixed_precision)));
  const ProgramCost c = cost(plan, cost_options);
  std::optional<Comparisons> compared;
  if (args.compare || !args.compare_axes.empty()) {
    CompareOptions o;
    for (const std::string& va : args.compare_axes) {
      const std::size_t eq = va.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == va.size())
        throw Error("--compare-axes takes VAR=AXIS (a product as G*R), not '" + va + "'");
      o.axes.emplace_back(va.substr(0, eq), va.substr(eq + 1));
    }
    compared = compare(plan, c, o);
  }
  std::optional<MeshCost> meshed;
  if (const std::optional<Mesh> mesh = program_mesh(program, args.mesh.dims, args.mesh.shard, args.mesh.zero)) meshed = shard(plan, c, *mesh);
  if (args.json) {
    write_program_cost_json(std::cout, plan, c, args.file, args.dtype, compared ? &*compared : nullptr,
                            meshed ? &*meshed : nullptr);
    return 0;
  }
  std::cout << c.str();
  if (compared) std::cout << compared->str();
  if (meshed) std::cout << to_string(*meshed);
  return 0;
}

}  // namespace einexpr::cli
