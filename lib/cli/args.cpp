// The command line's own syntax: NAME=LEN lists, expressions given by sizes, dtypes and
// devices. Malformed text is a UsageError (exit 2); unknown names are the library's errors.
#include "args.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>

#include "einexpr/parser/ops.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/numpy_hint.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/npy.hpp"

namespace einexpr::cli {

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::pair<std::string, std::int64_t> parse_length(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos) throw UsageError("expected NAME=LEN, got '" + arg + "'");
  const std::string name = arg.substr(0, eq);
  const std::string_view len = std::string_view(arg).substr(eq + 1);
  if (!is_identifier(name))
    throw UsageError("bad NAME=LEN '" + arg + "': NAME must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  std::int64_t value = -1;
  const auto [end, ec] = std::from_chars(len.data(), len.data() + len.size(), value);
  if (len.empty() || !std::isdigit(static_cast<unsigned char>(len[0])) || ec != std::errc() ||
      end != len.data() + len.size())
    throw UsageError("bad NAME=LEN '" + arg + "': LEN must be a non-negative integer below 2^63");
  return {name, value};
}

bool is_expr_op(std::string_view op) { return find_op_row(op) != nullptr; }

/// NAME=LEN: an identifier, '=', digits (what split_map_args takes for a length).
bool looks_like_length(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos || eq + 1 == arg.size() || !is_identifier(std::string_view(arg).substr(0, eq)))
    return false;
  for (std::size_t i = eq + 1; i < arg.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(arg[i]))) return false;
  return true;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = text.find(sep, begin);
    parts.push_back(text.substr(begin, end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

std::string trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

bool is_normalization(std::string_view op) {
  const OpRow* row = find_op_row(op);
  return row != nullptr && row->op == Op::normalize;
}

double eps_or_default(Normalization kind, double eps) {
  if (eps >= 0) return eps;
  return default_eps(kind);
}

AxisLengths parse_lengths(const std::vector<std::string>& args) {
  AxisLengths out;
  std::set<std::string> seen;
  for (const std::string& arg : args) {
    auto kv = parse_length(arg);
    if (!seen.insert(kv.first).second) throw UsageError("axis '" + kv.first + "' is given twice");
    out.push_back(std::move(kv));
  }
  return out;
}

ExprSpec parse_expr_args(const std::string& op, const std::string& pattern, const std::vector<std::string>& rest,
                         std::int64_t correction, double eps, std::int64_t ignore_index, double p) {
  if (!is_expr_op(op)) throw Error("unknown op '" + op + "' (expected one of " + op_row_names() + ")");
  ExprSpec e;
  e.op = op;
  e.pattern = pattern;
  std::vector<std::string> lengths = rest;
  const bool named =
      !lengths.empty() && lengths.front().find('=') == std::string::npos && !lengths.front().ends_with(".npy");
  if (op == "map") {
    if (!named) throw UsageError("map takes a FUNCTION after the pattern (gelu, exp, ...; add, mul, ...)");
    e.function = lengths.front();
    lengths.erase(lengths.begin());
  } else if (named) {
    if (op != "reduce")
      throw UsageError("unexpected argument '" + lengths.front() + "': only reduce takes a REDUCTION and map a " +
                       "FUNCTION; " + op + " takes NAME=LEN...");
    e.reduction = parse_reduction(lengths.front());
    lengths.erase(lengths.begin());
  }
  if (correction >= 0) {
    if (op != "reduce" || (e.reduction != Reduction::var && e.reduction != Reduction::std))
      throw UsageError("--correction applies to reduce var and std only");
    e.correction = correction;
  }
  if (eps >= 0) {
    if (op != "layer_norm" && op != "rms_norm") throw UsageError("--eps applies to layer_norm and rms_norm only");
    e.eps = eps;
  }
  if (ignore_index != -100) {
    if (op != "cross_entropy") throw UsageError("--ignore-index applies to cross_entropy only");
    e.ignore_index = ignore_index;
  }
  if (p != -1) {
    if (op != "dropout") throw UsageError("--p applies to dropout only");
    e.p = p;
  }
  std::vector<std::string> sizes;
  for (std::string& arg : lengths) (arg.ends_with(".npy") ? e.files : sizes).push_back(std::move(arg));
  e.sizes = parse_lengths(sizes);
  // The files' dtype: all alike, but for an indexed op's integer index operand.
  const int index_operand = op_row(op).index_operand;
  for (std::size_t i = 0; i < e.files.size(); ++i) {
    const std::string& file = e.files[i];
    const NpyInfo info = read_npy_info(file);
    e.shapes.push_back(info.shape);
    e.file_dtypes.push_back(info.dtype);
    if (static_cast<int>(i) == index_operand) continue;
    if (e.files_dtype && *e.files_dtype != info.dtype)
      throw DTypeError(file + " is " + std::string(name(info.dtype)) + " but " + e.files.front() + " is " +
                       std::string(name(*e.files_dtype)) + "; give the operands in one dtype, or --dtype");
    e.files_dtype = info.dtype;
  }
  return e;
}

Plan plan_expr(ExprSpec& e, DType dtype) {
  if (e.files.empty()) return plan_from_sizes(e.op_spec(), e.pattern, e.sizes, dtype);
  OpSpec spec = e.op_spec();
  spec.lengths = e.sizes;
  std::vector<Layout> layouts;
  for (const Shape& s : e.shapes) layouts.push_back(Layout::contiguous(s));
  Plan p;
  // Each operand at the run's dtype, but an index operand at its file's.
  std::vector<DType> dtypes(layouts.size(), dtype);
  const int index_operand = op_row(spec.op()).index_operand;
  if (index_operand >= 0 && static_cast<std::size_t>(index_operand) < dtypes.size())
    dtypes[static_cast<std::size_t>(index_operand)] = e.file_dtypes[static_cast<std::size_t>(index_operand)];
  try {
    const ast::Pattern pattern = parse_pattern(spec.op(), e.pattern);
    p = plan(spec, &pattern, layouts, std::span<const DType>(dtypes));
  } catch (Error& error) {
    std::string files;
    for (std::size_t i = 0; i < e.files.size(); ++i) files += (i ? ", " : "") + e.files[i] + " " + shape_str(e.shapes[i]);
    error.add_context("in " + e.op + "('" + e.pattern + "') on " + files);
    if (const std::string hint = numpy_pattern_hint(e.pattern); !hint.empty()) error.add_context(hint);
    throw;
  }
  for (const Axis& a : p.axes.all())
    if (a.kind == AxisKind::named && std::none_of(e.sizes.begin(), e.sizes.end(), [&](const auto& kv) { return kv.first == a.name; }))
      e.sizes.emplace_back(a.name, a.length);
  return p;
}

DType expr_dtype(const std::string& text, const ExprSpec& e) {
  if (!text.empty()) return parse_dtype(text);
  return e.files_dtype.value_or(DType::f32);
}

OpSpec ExprSpec::op_spec() const {
  OpSpec spec = OpSpec::of(op_row(op).op);
  if (auto* r = spec.get_if<ReduceOptions>()) *r = {reduction, correction};
  if (auto* m = spec.get_if<MapOptions>()) m->function = parse_map_function(function, parse(pattern).operands.size());
  if (auto* n = spec.get_if<NormalizeOptions>()) {
    n->kind = parse_normalization(op);
    n->eps = eps_or_default(n->kind, eps);
  }
  if (auto* c = spec.get_if<CrossEntropyOptions>()) c->ignore_index = ignore_index;
  if (auto* d = spec.get_if<DropoutOptions>()) d->p = p;
  return spec;
}

MapArgs split_map_args(const std::vector<std::string>& args) {
  MapArgs m;
  std::vector<std::string> lengths;
  for (const std::string& a : args) (looks_like_length(a) ? lengths : m.files).push_back(a);
  if (m.files.empty() || m.files.size() > 2)
    throw UsageError("map takes one input file (a unary function) or two (a binary one), not " +
                     std::to_string(m.files.size()));
  m.lengths = parse_lengths(lengths);
  return m;
}

FileArgs split_file_args(const std::vector<std::string>& args, std::size_t files) {
  FileArgs f;
  if (args.size() < files)
    throw UsageError("the pattern has " + std::to_string(files) + " operands: give " + std::to_string(files) +
                     " input files, not " + std::to_string(args.size()));
  f.files.assign(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(files));
  f.lengths = parse_lengths(std::vector<std::string>(args.begin() + static_cast<std::ptrdiff_t>(files), args.end()));
  return f;
}

ExprSpec parse_expr_text(const std::string& text) {
  const std::vector<std::string> f = split(text, '|');
  const std::string op = f.empty() ? "" : trim(f[0]);
  const bool reduce_form = f.size() == 4 && (op == "reduce" || op == "map");
  if (f.size() != 3 && !reduce_form)
    throw UsageError("bad EXPR '" + text +
                     "': expected \"OP|PATTERN|NAME=LEN,...\" (reduce: "
                     "\"reduce|PATTERN|REDUCTION|NAME=LEN,...\", map: \"map|PATTERN|FUNCTION|NAME=LEN,...\")");
  std::vector<std::string> rest;
  if (reduce_form) rest.push_back(trim(f[2]));
  const std::string sizes = trim(f.back());
  if (!sizes.empty())
    for (const std::string& s : split(sizes, ',')) rest.push_back(trim(s));
  try {
    return parse_expr_args(op, trim(f[1]), rest);
  } catch (const UsageError& e) {
    throw UsageError("bad EXPR '" + text + "': " + e.what());
  }
}

DType parse_dtype(const std::string& text) { return dtype_from_name(text); }

Device parse_run_device(const std::string& text) {
  const Device d = parse_device(text);
  if (d.is_cpu()) return d;
  if (!has_cuda) throw DeviceError("--device " + text + ": this einexpr was built without CUDA (EINEXPR_CUDA=OFF)");
  const int n = cuda_device_count();
  if (n == 0) throw DeviceError("--device " + text + ": no CUDA device is visible");
  if (d.index >= n)
    throw DeviceError("--device " + text + ": only " + std::to_string(n) +
                      " CUDA device(s) visible (cuda:0..cuda:" + std::to_string(n - 1) + ")");
  return d;
}

void check_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw Error("cannot write " + path + ": directory " + dir.string() + " does not exist");
  if (fs::is_directory(p, ec)) throw Error("cannot write " + path + ": it is a directory");
}

ast::Program read_program_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("cannot read " + path + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + ": no such file or it is not readable");
  std::string text(max_program_length + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw Error("cannot read " + path);
  text.resize(static_cast<std::size_t>(in.gcount()));
  return parse_program(text, path);
}

std::optional<RecomputeOptions> recompute_options(const RecomputeArgs& a, const ast::Program& program) {
  const bool listed = a.checkpoints_given || !a.checkpoints.empty();
  if (a.mode.empty() && !listed && a.memory_limit.empty() && a.search_budget < 0) return std::nullopt;  // the file's
  const std::string mode = a.mode.empty() ? (listed ? "checkpoints" : "auto") : a.mode;
  RecomputeOptions o;
  try {
    o.mode = parse_recompute(mode);
  } catch (const Error& e) {
    throw UsageError(std::string("--") + e.what());
  }
  if (listed && o.mode != RecomputeMode::checkpoints)
    throw UsageError("--checkpoint names what --recompute checkpoints keeps, not --recompute " + mode);
  if (!a.memory_limit.empty() && o.mode != RecomputeMode::automatic)
    throw UsageError("--memory-limit is what --recompute auto fits the step into, not --recompute " + mode);
  if (a.search_budget >= 0 && o.mode != RecomputeMode::automatic)
    throw UsageError("--search-budget is for --recompute auto's search, not --recompute " + mode);
  if (a.search_budget >= 0) o.search_budget = a.search_budget;
  if (o.mode == RecomputeMode::automatic && a.memory_limit.empty())
    throw UsageError("--recompute auto needs --memory-limit BYTES: the most the step may hold at once");
  if (o.mode == RecomputeMode::checkpoints) {
    o.checkpoints = a.checkpoints;
    if (!listed)
      for (const ast::Identifier& c : program.checkpoints) o.checkpoints.push_back(c.name);
  }
  if (!a.memory_limit.empty()) {
    try {
      o.memory_limit = parse_bytes(a.memory_limit);
    } catch (const Error& e) {
      throw UsageError(std::string("--memory-limit: ") + e.what());
    }
  }
  return o;
}

}  // namespace einexpr::cli
