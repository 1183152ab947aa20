// ProgramBuilder (a program's text, line by line, then parse_program) and cost(program, ...).
#include "einexpr/program.hpp"

#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

/// Text that goes into one line of the program: no line break, and no '"' inside a string.
std::string_view checked(std::string_view what, std::string_view text, bool quoted) {
  for (const char c : text) {
    if (c == '\n' || c == '\r')
      throw Error("ProgramBuilder: the " + std::string(what) + " '" + std::string(text) + "' holds a line break");
    if (quoted && c == '"')
      throw Error("ProgramBuilder: the " + std::string(what) + " '" + std::string(text) + "' holds a '\"'");
  }
  return text;
}

std::string lengths_text(const AxisLengths& lengths, const char* separator) {
  std::string s;
  for (const auto& [name, length] : lengths)
    s += separator + std::string(checked("axis name", name, false)) + "=" + std::to_string(length);
  return s;
}

}  // namespace

ProgramBuilder::ProgramBuilder(std::string file) : file_(std::move(file)) {}

ProgramBuilder& ProgramBuilder::line(std::string text) {
  text_ += text + "\n";
  return *this;
}

ProgramBuilder& ProgramBuilder::axes(const AxisLengths& lengths) { return line("axes" + lengths_text(lengths, " ")); }

ProgramBuilder& ProgramBuilder::input(std::string_view name, std::string_view dims, std::string_view dtype) {
  return line("input " + std::string(checked("tensor name", name, false)) + ":" +
              (dims.empty() ? "" : " " + std::string(checked("dims", dims, false))) +
              (dtype.empty() ? "" : " " + std::string(checked("dtype", dtype, false))));
}

ProgramBuilder& ProgramBuilder::param(std::string_view name, std::string_view dims, std::string_view dtype) {
  return line("param " + std::string(checked("tensor name", name, false)) + ":" +
              (dims.empty() ? "" : " " + std::string(checked("dims", dims, false))) +
              (dtype.empty() ? "" : " " + std::string(checked("dtype", dtype, false))));
}

ProgramBuilder& ProgramBuilder::statement(std::string_view name, std::string_view op,
                                          const std::vector<std::string>& inputs, std::string_view pattern,
                                          std::string_view function, const AxisLengths& lengths) {
  std::string s = std::string(checked("tensor name", name, false)) + " = " + std::string(checked("op", op, false)) + "(";
  for (const std::string& in : inputs) s += std::string(checked("tensor name", in, false)) + ", ";
  s += "\"" + std::string(checked("pattern", pattern, true)) + "\"";
  if (!function.empty()) s += ", \"" + std::string(checked("function", function, true)) + "\"";
  return line(s + lengths_text(lengths, ", ") + ")");
}

ProgramBuilder& ProgramBuilder::output(const std::vector<std::string>& names) {
  std::string s = "output";
  for (const std::string& n : names) s += " " + std::string(checked("tensor name", n, false));
  return line(s);
}

ast::Program ProgramBuilder::build() const { return parse_program(text_, file_); }

ProgramCost cost(const ast::Program& program, const AxisLengths& sizes, const ProgramCostOptions& options,
                 DType dtype) {
  ProgramOptions o;
  o.axes = sizes;
  o.dtype = dtype;
  return cost(plan_program(program, o), options);
}

const Tensor& ProgramRun::operator[](std::string_view name) const {
  std::string names;
  for (const auto& [n, t] : outputs) {
    if (n == name) return t;
    names += (names.empty() ? "" : ", ") + n;
  }
  throw Error("'" + std::string(name) + "' is not an output of the program (outputs: " + names + ")");
}

}  // namespace einexpr
