// to_dialect(): C++ remedies in einexpr's messages, rewritten for Python and the command line.
#include "dialect.hpp"

#include <cstring>
#include <regex>
#include <utility>
#include <vector>

namespace einexpr::cli {

namespace {

/// einexpr's dtype name -> numpy's and torch's.
struct DTypeNames {
  const char* einexpr;
  const char* numpy;  // as numpy.X (ml_dtypes for bf16)
  const char* torch;  // as torch.X
};
constexpr DTypeNames dtype_names[] = {
    {"f64", "numpy.float64", "torch.float64"}, {"f32", "numpy.float32", "torch.float32"},
    {"f16", "numpy.float16", "torch.float16"}, {"bf16", "ml_dtypes.bfloat16", "torch.bfloat16"},
    {"i64", "numpy.int64", "torch.int64"},     {"i32", "numpy.int32", "torch.int32"},
    {"boolean", "numpy.bool_", "torch.bool"},
};

const DTypeNames* find_dtype(const std::string& name) {
  for (const DTypeNames& d : dtype_names)
    if (name == d.einexpr) return &d;
  return nullptr;
}

/// The numpy name without its module: "float32".
std::string short_numpy(const DTypeNames& d) {
  const std::string s = d.numpy;
  return s.substr(s.find('.') + 1);
}

/// One C++ remedy (a regex; $1 a dtype or an axis name) and its Python and command-line forms.
struct Row {
  const char* cpp;  // ECMAScript regex
  std::string (*python)(const std::smatch&);
  std::string (*cli)(const std::smatch&);
};

const Row rows[] = {
    // "convert with .to(DType::f32) first"
    {R"(convert with \.to\(DType::(\w+)\) first)",
     [](const std::smatch& m) {
       const DTypeNames* d = find_dtype(m[1]);
       return d ? "convert with .astype(" + std::string(d->numpy) + ") (numpy) or .to(" + d->torch + ") (torch) first"
                : "convert it to " + std::string(m[1]) + " first";
     },
     [](const std::smatch& m) {
       const DTypeNames* d = find_dtype(m[1]);
       return "save the .npy input as " + (d ? short_numpy(*d) : std::string(m[1])) + " first";
     }},
    // "convert with .to() first" (to another dtype)
    {R"(convert with \.to\(\) first)",
     [](const std::smatch&) { return std::string("convert with .astype() (numpy) or .to() (torch) first"); },
     [](const std::smatch&) { return std::string("save the .npy inputs in a dtype einexpr takes here first"); }},
    // "move them with .to() first" (to one device)
    {R"(move them with \.to\(\) first)",
     [](const std::smatch&) { return std::string("move them to one device with .to(device) (torch) first"); },
     [](const std::smatch&) { return std::string("run them on one --device"); }},
    // " (use .to(Device::cpu()))"
    {R"( \(use \.to\(Device::cpu\(\)\)\))",
     [](const std::smatch&) { return std::string(" (use .cpu() (torch))"); },
     [](const std::smatch&) { return std::string(" (run it with --device cpu)"); }},
    // "move the tensor with .to(Device::cpu())"
    {R"(move the tensor with \.to\(Device::cpu\(\)\))",
     [](const std::smatch&) { return std::string("move the tensor to the CPU with .cpu() (torch)"); },
     [](const std::smatch&) { return std::string("run it with --device cpu"); }},
    // "e.g. .to(DType::f16)" (a dtype to convert to)
    {R"(e\.g\. \.to\(DType::(\w+)\))",
     [](const std::smatch& m) {
       const DTypeNames* d = find_dtype(m[1]);
       return "e.g. to " + std::string(d ? d->numpy : "") + " / " + (d ? d->torch : "");
     },
     [](const std::smatch& m) {
       const DTypeNames* d = find_dtype(m[1]);
       return "e.g. to " + (d ? short_numpy(*d) : std::string(m[1]));
     }},
    // "(pass {"h", length})"
    {R"re(\(pass \{"(\w+)", length\}\))re",
     [](const std::smatch& m) { return "(pass " + std::string(m[1]) + "=LENGTH)"; },
     [](const std::smatch& m) { return "(give " + std::string(m[1]) + "=LEN)"; }},
    // "; Copy::never forbids the copy"
    {R"(Copy::never forbids the copy)",
     [](const std::smatch&) { return std::string("the copy is forbidden (copy never)"); },
     [](const std::smatch&) { return std::string("--copy never forbids the copy"); }},
    // "give all but one of H, K a length (ProgramOptions::axes)"
    {R"( a length \(ProgramOptions::axes\))",
     [](const std::smatch&) { return std::string(" a length"); },
     [](const std::smatch&) { return std::string(" a length (NAME=LEN)"); }},
    // "a map's cost needs its function: plan_from_sizes(OpSpec::map(f), ...)"
    {R"(plan_from_sizes\(OpSpec::map\(f\), \.\.\.\))",
     [](const std::smatch&) { return std::string("cost(\"map\", pattern, FUNCTION, ...)"); },
     [](const std::smatch&) { return std::string("einexpr cost map PATTERN FUNCTION NAME=LEN..."); }},
};

}  // namespace

std::string to_dialect(std::string_view message, Dialect dialect) {
  std::string text(message);
  if (dialect == Dialect::cpp) return text;
  for (const Row& row : rows) {
    const std::regex re(row.cpp);
    std::string out;
    auto at = text.cbegin();
    for (std::sregex_iterator it(text.cbegin(), text.cend(), re), end; it != end; ++it) {
      out.append(at, (*it)[0].first);
      out += dialect == Dialect::python ? row.python(*it) : row.cli(*it);
      at = (*it)[0].second;
    }
    out.append(at, text.cend());
    text = std::move(out);
  }
  return text;
}

std::string usage_to_python(std::string_view message) {
  static const std::pair<const char*, const char*> words[] = {
      {"map takes a FUNCTION after the pattern", "map takes a function after the pattern (cost(\"map\", pattern, \"gelu\", ...))"},
      {"takes NAME=LEN...", "takes axis lengths as keywords (name=length)"},
      {"NAME=LEN", "name=length"},
      {"a REDUCTION", "a reduction"},
      {"a FUNCTION", "a function"},
  };
  std::string text(message);
  for (const auto& [cli, python] : words)
    for (std::size_t at = text.find(cli); at != std::string::npos; at = text.find(cli, at + std::strlen(python)))
      text.replace(at, std::strlen(cli), python);
  return text;
}

std::vector<std::string> cpp_remedy_patterns() {
  std::vector<std::string> out;
  for (const Row& row : rows) out.emplace_back(row.cpp);
  return out;
}

}  // namespace einexpr::cli
