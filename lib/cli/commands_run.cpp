// rearrange, reduce, repeat, einsum, map, softmax, log_softmax, layer_norm, rms_norm: .npy
// files in, one .npy file out. Every argument is
// checked and the result computed before anything is written; write_npy then writes a
// temporary beside the output and renames it, so a failed run leaves no file behind and
// an existing output unchanged.
#include <algorithm>
#include <span>

#include "args.hpp"
#include "commands.hpp"

namespace einexpr::cli {

namespace {

std::vector<Tensor> read_inputs(const OpArgs& args, const std::vector<std::string>& paths, Device device) {
  NpyReadOptions options;
  options.u2_as_bf16 = args.bf16_u2;
  std::vector<Tensor> inputs;
  for (const std::string& path : paths) {
    try {
      inputs.push_back(read_npy(path, options).to(device));
    } catch (DTypeError& e) {
      if (!args.bf16_u2 && std::string_view(e.what()).find("uint16") != std::string_view::npos)
        e.add_context("(einexpr: --bf16-u2 reads '<u2' data as bf16 bit patterns)");
      throw;
    }
  }
  return inputs;
}

Tensor compute_one(const OpArgs& args, std::span<const Tensor> in, const AxisLengths& lengths);

std::vector<Tensor> compute(const OpArgs& args, std::span<const Tensor> in, const AxisLengths& lengths) {
  if (args.op == "rearrange") {
    if (in.size() > 1) return {rearrange(in, args.pattern, lengths)};
    const std::size_t arrow = args.pattern.find("->");
    if (arrow == std::string::npos || args.pattern.find(',', arrow) == std::string::npos)
      return {rearrange(in[0], args.pattern, lengths)};
    std::vector<Tensor> parts = split(in[0], args.pattern, lengths);
    if (parts.size() != args.outputs.size())
      throw UsageError("'" + args.pattern + "' has " + std::to_string(parts.size()) + " outputs but " +
                       std::to_string(args.outputs.size()) + " -o files are given");
    return parts;
  }
  if (args.op == "get_at") return {get_at(in[0], in[1], args.pattern, lengths)};
  if (args.op == "add_at") return {add_at(in[0], in[1], in[2], args.pattern, lengths)};
  if (args.op == "cross_entropy") return {cross_entropy(in[0], in[1], args.pattern, args.ignore_index, lengths)};
  return {compute_one(args, in, lengths)};
}

Tensor compute_one(const OpArgs& args, std::span<const Tensor> in, const AxisLengths& lengths) {
  if (args.op == "reduce")
    return reduce(in[0], args.pattern, parse_reduction(args.reduction), lengths,
                  args.correction < 0 ? 1 : args.correction);
  if (args.op == "repeat") return repeat(in[0], args.pattern, lengths);
  if (args.op == "map") {
    if (in.size() == 1) return map(in[0], args.pattern, args.function, lengths);
    if (!lengths.empty()) throw Error("map: NAME=LEN lengths are taken by unary maps only");
    return map(in[0], in[1], args.pattern, args.function);
  }
  if (is_normalization(args.op)) {
    const Normalization kind = parse_normalization(args.op);
    return normalize(in[0], args.pattern, kind, eps_or_default(kind, args.eps), lengths);
  }
  return einsum(in, args.pattern, lengths);
}

/// The number of operands left of "->" (so many input files come first); 1 if it cannot tell.
std::size_t pattern_operands(const std::string& pattern) {
  const std::size_t arrow = pattern.find("->");
  if (arrow == std::string::npos) return 1;
  return 1 + static_cast<std::size_t>(std::count(pattern.begin(), pattern.begin() + static_cast<std::ptrdiff_t>(arrow), ','));
}

/// Checks the function and the reduction's options before any I/O (exit 1 / 2 early).
void check_names(const OpArgs& args, std::size_t files) {
  if (args.op == "reduce") {
    const Reduction r = parse_reduction(args.reduction);
    if (args.correction >= 0 && r != Reduction::var && r != Reduction::std)
      throw UsageError("--correction applies to reduce var and std only");
  }
  if (args.op == "map") parse_map_function(args.function, files);
}

}  // namespace

void apply_threads(const RunOptions& run) {
  if (run.threads > 0) set_num_threads(run.threads);
}

int run_op(const OpArgs& args) {
  std::vector<std::string> paths = args.inputs;
  AxisLengths lengths;
  if (args.op == "map") {
    MapArgs m = split_map_args(args.inputs);
    paths = std::move(m.files);
    lengths = std::move(m.lengths);
  } else if (args.op == "rearrange" || args.op == "get_at" || args.op == "add_at" || args.op == "cross_entropy") {
    FileArgs f = split_file_args(args.inputs, pattern_operands(args.pattern));
    paths = std::move(f.files);
    lengths = std::move(f.lengths);
  } else {
    lengths = parse_lengths(args.lengths);
    if (!args.input.empty()) paths.insert(paths.begin(), args.input);
  }
  check_names(args, paths.size());
  const Device device = parse_run_device(args.run.device);
  apply_threads(args.run);
  if (args.outputs.size() > 1 && args.op != "rearrange")
    throw UsageError(args.op + " writes one output file, not " + std::to_string(args.outputs.size()));
  for (const std::string& out : args.outputs) check_output_path(out);
  const std::vector<Tensor> inputs = read_inputs(args, paths, device);
  std::vector<Tensor> results = compute(args, inputs, lengths);
  if (results.size() != args.outputs.size())
    throw UsageError("'" + args.pattern + "' has " + std::to_string(results.size()) + " output" +
                     (results.size() == 1 ? "" : "s") + " but " + std::to_string(args.outputs.size()) +
                     " -o files are given");
  for (Tensor& r : results) r = r.to(Device::cpu()).contiguous();
  NpyWriteOptions options;
  options.bf16_as_u2 = args.bf16_u2;
  // Every result computed first; then each file written (a temporary renamed into place).
  for (std::size_t i = 0; i < results.size(); ++i) write_npy(args.outputs[i], results[i], options);
  return 0;
}

}  // namespace einexpr::cli
