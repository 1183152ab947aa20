// program run: a model file on .npy inputs, each output written to OUTDIR/NAME.npy. The
// input files' shapes bind the program's axes (over its axes lines; NAME=LEN and the other
// files must agree). Nothing is written until every output has been computed and turned
// into bytes; then each goes to a temporary in OUTDIR and all are renamed into place, so a
// failed run leaves no output file (and no temporary) behind.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "args.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "program_io.hpp"

namespace einexpr::cli {

namespace fs = std::filesystem;

// NAME=IN.npy (or, where folders are allowed, NAME=DIR of .npy files) where NAME is an input
// or param of the program, else NAME=LEN.
RunInputs read_inputs(const ast::Program& program, const std::vector<std::string>& args, Device device,
                      bool folders) {
  RunInputs in;
  std::vector<std::string> lengths;
  for (const std::string& arg : args) {
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("expected NAME=LEN or NAME=IN.npy, got '" + arg + "'");
    const std::string name = arg.substr(0, eq), path = arg.substr(eq + 1);
    const ast::Item* item = ast::find_tensor(program, name);
    if (item && std::holds_alternative<ast::Statement>(*item))
      throw Error("'" + name + "' is computed by the program: give its inputs and params, not " + arg);
    if (!item) {
      if (ast::find_axis(program, name) == nullptr)
        throw Error("'" + name + "' in " + arg + " names no input, param or axis of the program");
      lengths.push_back(arg);
      continue;
    }
    if (in.tensors.count(name)) throw UsageError("tensor '" + name + "' is given twice");
    std::error_code ec;
    std::string first = path;
    if (folders && fs::is_directory(path, ec)) {
      std::vector<std::string> files;
      for (const fs::directory_entry& e : fs::directory_iterator(path, ec))
        if (e.path().extension() == ".npy") files.push_back(e.path().string());
      if (ec) throw Error("cannot read the folder " + path + ": " + ec.message());
      if (files.empty()) throw Error("the folder " + path + " given for '" + name + "' holds no .npy file");
      std::sort(files.begin(), files.end());
      first = files.front();
      in.folders[name] = std::move(files);
    }
    Tensor t = read_npy(first);
    in.given.push_back({name, t.shape(), t.dtype(), name + "=" + first});
    in.tensors[name] = t.to(device);
  }
  in.lengths = parse_lengths(lengths);
  return in;
}

namespace {

// Temporaries in `dir`, then renames; on a failure every temporary is removed.
void write_outputs(const std::string& dir, const std::vector<Written>& outputs,
                   const std::vector<std::vector<std::byte>>& bytes) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("cannot write to " + dir + ": it is not a directory");
  for (const Written& w : outputs)  // a rename that would fail, found before anything is written
    if (fs::is_directory(w.path, ec)) throw Error("cannot write " + w.path + ": it is a directory");
  std::vector<std::string> temps;
  try {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      temps.push_back(outputs[i].path + ".einexpr-tmp-" + std::to_string(::getpid()));
      std::ofstream f(temps.back(), std::ios::binary | std::ios::trunc);
      f.write(reinterpret_cast<const char*>(bytes[i].data()), static_cast<std::streamsize>(bytes[i].size()));
      f.close();
      if (!f) throw Error("cannot write " + outputs[i].path);
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      fs::rename(temps[i], outputs[i].path, ec);
      if (ec) throw Error("cannot write " + outputs[i].path + ": " + ec.message());
    }
  } catch (...) {
    for (const std::string& t : temps) fs::remove(t, ec);
    throw;
  }
}

}  // namespace

void write_output_dir(const std::string& dir, const std::vector<Written>& written) {
  std::vector<std::vector<std::byte>> bytes;  // every refusal (fp8) before a file is touched
  for (const Written& w : written) bytes.push_back(npy_bytes(w.tensor));
  std::error_code ec;
  const bool created = !fs::exists(dir, ec);
  if (created && !fs::create_directories(dir, ec)) throw Error("cannot create " + dir + ": " + ec.message());
  try {
    write_outputs(dir, written, bytes);
  } catch (...) {
    if (created) fs::remove(dir, ec);
    throw;
  }
}

void outputs_json(JsonWriter& j, const std::vector<Written>& written) {
  j.key("outputs").begin_array();
  for (const Written& w : written) {
    j.begin_object().field("name", w.name).field("path", w.path).field("dtype", name(w.tensor.dtype()));
    j.key("shape").begin_array();
    for (std::int64_t n : w.tensor.shape()) j.value(n);
    j.end_array().end_object();
  }
  j.end_array();
}

namespace {

void print_run_json(const CompiledProgram& m, const ProgramRun& r, const std::vector<Written>& written) {
  JsonWriter j(std::cout);
  j.begin_object().field("device", m.device().str());
  outputs_json(j, written);
  j.field("peak_bytes_predicted", m.peak_bytes_predicted()).field("peak_bytes_measured", r.peak_bytes_measured);
  j.field("arena_bytes", m.arena_bytes()).field("unshared_bytes", m.unshared_bytes());
  j.end_object();
}

}  // namespace

int program_run_command(const ProgramRunArgs& args) {
  const Device device = parse_run_device(args.run.device);
  apply_threads(args.run);
  const ast::Program program = read_program_file(args.file);
  std::error_code ec;
  if (fs::exists(args.output_dir, ec) && !fs::is_directory(args.output_dir, ec))
    throw Error("cannot write to " + args.output_dir + ": it is not a directory");
  if (const std::optional<Mesh> mesh = program_mesh(program, args.mesh.dims, args.mesh.shard)) {
    if (device != Device::cpu())
      throw Error("a run on a mesh runs each rank on the CPU for now, not " + args.run.device + " (NCCL is not in Debian 12)");
    return program_run_on_mesh(args, program, *mesh);
  }
  RunInputs in = read_inputs(program, args.args, device, false);
  ProgramOptions options;
  options.axes = in.lengths;
  options.given = in.given;
  const CompiledProgram compiled(program, options, device);
  const ProgramRun run = compiled.run(in.tensors);
  std::vector<Written> written;
  for (const auto& [name, tensor] : run.outputs)
    written.push_back({name, (fs::path(args.output_dir) / (name + ".npy")).string(), tensor.to(Device::cpu())});
  write_output_dir(args.output_dir, written);
  if (args.json) print_run_json(compiled, run, written);
  return 0;
}

}  // namespace einexpr::cli
