#pragma once
// einexpr's messages are written for C++ callers ("convert with .to(DType::f32) first",
// "pass {"h", length}"). The Python module and the command-line tool show them in their
// own terms: to_dialect() rewrites each C++ remedy into the Python or command-line one
// (".astype(numpy.float32) (numpy) or .to(torch.float32) (torch)", "h=LENGTH"; "save the
// .npy input as float32", "h=LEN"), and adds nothing else. Every C++ remedy a message in the
// library can carry is a row of its table (tests/cli/test_cli_dialect.cpp greps the sources
// for remedies no row rewrites).
#include <string>
#include <string_view>
#include <vector>

namespace einexpr::cli {

enum class Dialect { cpp, python, cli };

/// `message` with every C++ remedy in it rewritten for `dialect` (cpp: unchanged).
std::string to_dialect(std::string_view message, Dialect dialect);

/// The tool's argument errors (UsageError) in Python's terms, for einexpr.cost() and explain(),
/// which parse their arguments as the tool does: "a FUNCTION after the pattern" -> "a function
/// after the pattern: cost("map", pattern, "gelu", ...)", "NAME=LEN..." -> "axis lengths as
/// keywords (name=length)".
std::string usage_to_python(std::string_view message);

/// The C++ remedies to_dialect() rewrites, as regular expressions (ECMAScript).
std::vector<std::string> cpp_remedy_patterns();

}  // namespace einexpr::cli
