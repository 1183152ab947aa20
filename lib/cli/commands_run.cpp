// Every op of the registry: .npy files in, one .npy file out (several for a split or an
// unpack). Every argument is
// checked and the result computed before anything is written; write_npy then writes a
// temporary beside the output and renames it, so a failed run leaves no file behind and
// an existing output unchanged.
#include <algorithm>
#include <charconv>
#include <type_traits>
#include <variant>
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

/// The OpSpec of a run command: the registry row its name is, with the options its
/// arguments give (the reduction, the function, eps, ignore_index) and the lengths.
OpSpec spec_of(const OpArgs& args, std::size_t files, const AxisLengths& lengths) {
  const OpRow& row = op_row(args.op);
  OpSpec spec = OpSpec::of(row.op, lengths);
  std::visit(
      [&](auto& o) {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, ReduceOptions>) {
          o.reduction = parse_reduction(args.reduction);
          o.correction = args.correction < 0 ? 1 : args.correction;
        } else if constexpr (std::is_same_v<O, MapOptions>) {
          o.function = parse_map_function(args.function, files);
          if (files > 1 && !lengths.empty()) throw Error("map: NAME=LEN lengths are taken by unary maps only");
        } else if constexpr (std::is_same_v<O, NormalizeOptions>) {
          o.kind = parse_normalization(row.name);
          o.eps = takes_eps(o.kind) ? eps_or_default(o.kind, args.eps) : 0.0;
        } else if constexpr (std::is_same_v<O, CrossEntropyOptions>) {
          o.ignore_index = args.ignore_index;
        } else if constexpr (std::is_same_v<O, DropoutOptions>) {
          o.p = args.p;
        }
      },
      spec.options);
  return spec;
}

/// unpack's "*" shapes, one argument each: "3,4", "()" for none, "-1,4" (one -1, inferred).
std::vector<Shape> parse_star_shapes(std::span<const std::string> args) {
  std::vector<Shape> shapes;
  for (const std::string& a : args) {
    Shape s;
    if (a != "()") {
      std::size_t at = 0;
      while (true) {
        const std::size_t comma = a.find(',', at);
        const std::string part = a.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        std::int64_t v = 0;
        const char* end = part.data() + part.size();
        const auto r = std::from_chars(part.data(), end, v);
        if (part.empty() || r.ec != std::errc() || r.ptr != end || v < -1)
          throw UsageError("unpack: bad shape '" + a + "': give each output's '*' dims as LEN,LEN,... (-1 once to " +
                           "infer one, () for none)");
        s.push_back(v);
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
    }
    shapes.push_back(std::move(s));
  }
  if (shapes.empty()) throw UsageError("unpack: give one shape per output after the packed file, e.g. 3,4 () 5");
  return shapes;
}

/// The command's results: one, or one per output of a split ("b (q + k) -> b q, b k") or
/// of an unpack.
std::vector<Tensor> compute(const OpArgs& args, std::span<const Tensor> in, const AxisLengths& lengths,
                            const std::vector<Shape>& star_shapes) {
  if (args.op == "unpack") return einexpr::unpack(in[0], star_shapes, args.pattern);
  OpSpec spec = spec_of(args, in.size(), lengths);
  const std::size_t arrow = args.pattern.find("->");
  const bool split = spec.op() == Op::rearrange && in.size() == 1 && arrow != std::string::npos &&
                     args.pattern.find(',', arrow) != std::string::npos;
  if (!split) return {apply(spec, in, args.pattern)};
  return einexpr::split(in[0], args.pattern, lengths);
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
  std::vector<Shape> star_shapes;
  if (args.op == "pack") {  // every argument a file: "*" stands for each one's own dims
    if (!args.input.empty()) paths.insert(paths.begin(), args.input);
  } else if (args.op == "unpack") {  // the packed file, then one "*" shape per output
    if (!args.input.empty()) paths.insert(paths.begin(), args.input);
    if (paths.empty()) throw UsageError("unpack: give the packed .npy file, then one shape per output");
    star_shapes = parse_star_shapes(std::span<const std::string>(paths).subspan(1));
    paths.resize(1);
  } else if (args.op == "map") {
    MapArgs m = split_map_args(args.inputs);
    paths = std::move(m.files);
    lengths = std::move(m.lengths);
  } else if (const OpRow& row = op_row(args.op); row.max_inputs > 1 && row.op != Op::einsum && row.op != Op::normalize) {
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
  if (args.outputs.size() > 1 && args.op != "rearrange" && args.op != "unpack")
    throw UsageError(args.op + " writes one output file, not " + std::to_string(args.outputs.size()));
  for (const std::string& out : args.outputs) check_output_path(out);
  const std::vector<Tensor> inputs = read_inputs(args, paths, device);
  std::vector<Tensor> results = compute(args, inputs, lengths, star_shapes);
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
