// Messages in the tool's own terms: every C++ remedy in the library's messages rewritten
// (dialect.hpp; a lint of the sources finds remedies no row rewrites), numpy's one-letter
// patterns with a hint, "(1 gradient)", cost / explain / bench taking .npy files in place of
// NAME=LEN (headers only), and program run inferring one axis of a composition.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli_run.hpp"
#include "dialect.hpp"

using namespace einexpr;
using einexpr::cli::Dialect;
using einexpr::cli::to_dialect;
using test::Sandbox;

namespace {

/// What a C++ remedy looks like in a message: the C++ API's calls and types.
const std::regex cpp_remedy(R"re(\.to\(|DType::|Device::|Copy::|OpSpec::|ProgramOptions::|\{"\w+", length\})re");
/// What must not be left in Python's form (torch's .to() and .to(torch.f32) are Python).
const std::regex cpp_in_python(R"re(\.to\((DType|Device)|DType::|Device::|Copy::|OpSpec::|ProgramOptions::|\{"\w+", length\})re");

/// The string literals of one source line, unescaped and joined, an expression between two
/// of them standing as "x": `"(pass {\"" + n + "\", length})"` -> `(pass {"x", length})`.
std::string literals_of(const std::string& line) {
  static const std::regex literal(R"re("((?:[^"\\]|\\.)*)")re");
  std::string joined;
  bool first = true;
  for (std::sregex_iterator it(line.begin(), line.end(), literal), end; it != end; ++it) {
    std::string text = (*it)[1];
    std::string unescaped;
    for (std::size_t i = 0; i < text.size(); ++i) unescaped += text[i] == '\\' && i + 1 < text.size() ? text[++i] : text[i];
    joined += (first ? "" : "x") + unescaped;
    first = false;
  }
  return joined;
}

}  // namespace

TEST_CASE("every C++ remedy has a Python and a command-line form") {
  struct Row {
    std::string cpp, python, cli;
  };
  const Row rows[] = {
      {"reduce 'mean' on i64: mean is not defined for integer dtypes; convert with .to(DType::f32) first",
       "reduce 'mean' on i64: mean is not defined for integer dtypes; convert with .astype(numpy.float32) (numpy) or "
       ".to(torch.float32) (torch) first",
       "reduce 'mean' on i64: mean is not defined for integer dtypes; save the .npy input as float32 first"},
      {"einsum on bool tensors is not supported; convert with .to(DType::i64) first",
       "einsum on bool tensors is not supported; convert with .astype(numpy.int64) (numpy) or .to(torch.int64) (torch) "
       "first",
       "einsum on bool tensors is not supported; save the .npy input as int64 first"},
      {"map 'exp' on bool tensors is not supported; convert with .to() first",
       "map 'exp' on bool tensors is not supported; convert with .astype() (numpy) or .to() (torch) first",
       "map 'exp' on bool tensors is not supported; save the .npy inputs in a dtype einexpr takes here first"},
      {"einsum operands are on different devices: cpu (operand 1) and cuda:0 (operand 2); move them with .to() first",
       "einsum operands are on different devices: cpu (operand 1) and cuda:0 (operand 2); move them to one device with "
       ".to(device) (torch) first",
       "einsum operands are on different devices: cpu (operand 1) and cuda:0 (operand 2); run them on one --device"},
      {"layer_norm backward on 9 dims): move the tensor with .to(Device::cpu())",
       "layer_norm backward on 9 dims): move the tensor to the CPU with .cpu() (torch)",
       "layer_norm backward on 9 dims): run it with --device cpu"},
      {"data needs a CPU tensor; this one is on cuda:0 (use .to(Device::cpu()))",
       "data needs a CPU tensor; this one is on cuda:0 (use .cpu() (torch))",
       "data needs a CPU tensor; this one is on cuda:0 (run it with --device cpu)"},
      {"E5M2; convert it first, e.g. .to(DType::f16), which holds every fp8 value exactly",
       "E5M2; convert it first, e.g. to numpy.float16 / torch.float16, which holds every fp8 value exactly",
       "E5M2; convert it first, e.g. to float16, which holds every fp8 value exactly"},
      {"repeat: the length of new axis c is not given (pass {\"c\", length})",
       "repeat: the length of new axis c is not given (pass c=LENGTH)",
       "repeat: the length of new axis c is not given (give c=LEN)"},
      {"rearrange cannot be a view of this input (shape [2, 3]); Copy::never forbids the copy",
       "rearrange cannot be a view of this input (shape [2, 3]); the copy is forbidden (copy never)",
       "rearrange cannot be a view of this input (shape [2, 3]); --copy never forbids the copy"},
      {"a map's cost needs its function: plan_from_sizes(OpSpec::map(f), ...)",
       "a map's cost needs its function: cost(\"map\", pattern, FUNCTION, ...)",
       "a map's cost needs its function: einexpr cost map PATTERN FUNCTION NAME=LEN..."},
      {"give all but one of H, K a length (ProgramOptions::axes) and the last is inferred from the shape",
       "give all but one of H, K a length and the last is inferred from the shape",
       "give all but one of H, K a length (NAME=LEN) and the last is inferred from the shape"},
      {"axis d is 4 in operand 1 (dim 1) but 8 in operand 2 (dim 0)", "axis d is 4 in operand 1 (dim 1) but 8 in operand 2 (dim 0)",
       "axis d is 4 in operand 1 (dim 1) but 8 in operand 2 (dim 0)"},  // nothing to rewrite
  };
  for (const Row& r : rows) {
    CAPTURE(r.cpp);
    CHECK(to_dialect(r.cpp, Dialect::cpp) == r.cpp);
    CHECK(to_dialect(r.cpp, Dialect::python) == r.python);
    CHECK(to_dialect(r.cpp, Dialect::cli) == r.cli);
  }
  CHECK(cli::usage_to_python("unexpected argument 'mean': only reduce takes a REDUCTION and map a FUNCTION; einsum "
                             "takes NAME=LEN...") ==
        "unexpected argument 'mean': only reduce takes a reduction and map a function; einsum takes axis lengths as "
        "keywords (name=length)");
}

TEST_CASE("no C++ remedy in the library's messages is left without a Python and a command-line form") {
  namespace fs = std::filesystem;
  int found = 0;
  for (const char* folder : {"codegen", "lib", "parser", "runtime"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(EINEXPR_SOURCE_DIR) / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu") continue;
      if (entry.path().filename() == "dialect.cpp") continue;  // the table itself
      std::ifstream in(entry.path());
      int number = 0;
      for (std::string line; std::getline(in, line);) {
        ++number;
        const auto code = line.find_first_not_of(' ');
        if (code == std::string::npos || line.compare(code, 2, "//") == 0) continue;
        const std::string text = literals_of(line);
        if (!std::regex_search(text, cpp_remedy)) continue;
        ++found;
        CAPTURE(entry.path().string(), number, text);
        CHECK_FALSE(std::regex_search(to_dialect(text, Dialect::python), cpp_in_python));
        CHECK_FALSE(std::regex_search(to_dialect(text, Dialect::cli), cpp_remedy));
      }
    }
  }
  CHECK(found >= 14);  // the remedies there are when this was written: the lint reads them
}

TEST_CASE("the tool's errors speak its language: NAME=LEN, .npy files, --copy") {
  Sandbox box;
  box.write_npy("x.npy", Tensor::randn({8, 4}, DType::f32, 1));
  box.write_npy("i.npy", Tensor::arange(12, DType::i64).view({3, 4}));
  box.write_npy("b.npy", Tensor::zeros({3, 4}, DType::boolean));
  struct Row {
    std::vector<std::string> args;
    std::string err;
  };
  const Row rows[] = {
      {{"repeat", "a b -> a b c", "x.npy", "-o", "y.npy"},
       "einexpr repeat: error: repeat: the length of new axis c is not given (give c=LEN)\n"},
      {{"reduce", "a b -> a", "mean", "i.npy", "-o", "y.npy"},
       "einexpr reduce: error: reduce 'mean' on i64: mean is not defined for integer dtypes; save the .npy input as "
       "float32 first\n"},
      {{"map", "a b -> a b", "exp", "b.npy", "-o", "y.npy"},
       "einexpr map: error: map 'exp' on bool tensors is not supported; save the .npy inputs in a dtype einexpr takes "
       "here first\n"},
      {{"einsum", "a b, b c -> a c", "b.npy", "b.npy", "-o", "y.npy"},
       "einexpr einsum: error: einsum on bool tensors is not supported; save the .npy input as int64 first\n"},
      {{"bench", "rearrange", "a b -> (b a)", "a=4", "b=5", "--copy", "never", "--min-time", "0"},
       "; --copy never forbids the copy\n"},
  };
  for (const Row& r : rows) {
    const test::CliResult out = box.run(r.args);
    INFO(out);
    CHECK(out.status == 1);
    CHECK_THAT(out.err, Catch::Contains(r.err));
    CHECK_FALSE(std::regex_search(out.err, cpp_remedy));
    CHECK_FALSE(box.files().count("y.npy"));
  }
}

TEST_CASE("numpy's one-letter patterns get a hint: axes are names separated by spaces") {
  Sandbox box;
  box.write_npy("x.npy", Tensor::randn({8, 4}, DType::f32, 1));
  box.write_npy("w.npy", Tensor::randn({4, 3}, DType::f32, 2));
  const std::string hint = "\n  einexpr's axes are names separated by spaces: numpy's 'bd,dk->bk' is 'b d, d k -> b k' here\n";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"einsum", "bd,dk->bk", "x.npy", "w.npy", "-o", "y.npy"},
        std::vector<std::string>{"check", "bd,dk->bk"},
        std::vector<std::string>{"cost", "einsum", "bd,dk->bk", "x.npy", "w.npy"},
        std::vector<std::string>{"cost", "einsum", "bd,dk->bk", "b=8", "d=4", "k=3"}}) {
    const test::CliResult r = box.run(args);
    INFO(r);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::Contains(hint));
  }
  const test::CliResult arrowless = box.run({"check", "ij,jk"});
  CHECK_THAT(arrowless.err, Catch::Contains("numpy's 'ij,jk' is 'i j, j k' here"));
  const test::CliResult fine = box.run({"check", "b d, d k -> b k"});
  CHECK(fine.status == 0);
  const test::CliResult other = box.run({"check", "b d, d k -> b q"});  // a mistake, but not numpy's form
  CHECK(other.status == 1);
  CHECK_THAT(other.err, !Catch::Contains("numpy's"));
}

TEST_CASE("cost counts one gradient as (1 gradient)") {
  Sandbox box;
  const test::CliResult one = box.run({"cost", "reduce", "b d -> b", "b=8", "d=4"});
  CHECK(one.status == 0);
  CHECK_THAT(one.out, Catch::Contains("(1 gradient)\n"));
  const test::CliResult two = box.run({"cost", "einsum", "b d, d k -> b k", "b=8", "d=4", "k=3"});
  CHECK_THAT(two.out, Catch::Contains("(2 gradients)\n"));
}

TEST_CASE("cost, explain and bench take .npy files in place of NAME=LEN, reading only their headers") {
  Sandbox box;
  box.write_npy("x.npy", Tensor::randn({8, 12}, DType::f64, 1));
  box.write_npy("w.npy", Tensor::randn({12, 3}, DType::f64, 2));
  box.write_npy("i.npy", Tensor::arange(12, DType::i64).view({3, 4}));
  // A header whose data is cut off is refused as read_npy refuses it: the size is checked.
  const std::string whole = box.read_bytes("w.npy");
  box.write_bytes("cut.npy", whole.substr(0, whole.size() - 8));
  auto json = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "cost");
    args.push_back("--json");
    const test::CliResult r = box.run(args);
    INFO(r);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json files = json({"einsum", "b d, d k -> b k", "x.npy", "w.npy"});
  const nlohmann::json sizes = json({"einsum", "b d, d k -> b k", "b=8", "d=12", "k=3", "--dtype", "f64"});
  CHECK(files == sizes);  // the same object: sizes and dtype from the headers
  CHECK(files["dtype"] == "f64");
  CHECK(json({"einsum", "b d, d k -> b k", "x.npy", "w.npy", "--dtype", "bf16"})["dtype"] == "bf16");
  // A composition takes the lengths its shape leaves open as NAME=LEN, as rearrange does.
  CHECK(json({"rearrange", "b (h d) -> b h d", "x.npy", "h=3"}) ==
        json({"rearrange", "b (h d) -> b h d", "b=8", "h=3", "d=4", "--dtype", "f64"}));
  CHECK(json({"reduce", "b d -> b", "mean", "x.npy"}) == json({"reduce", "b d -> b", "mean", "b=8", "d=12", "--dtype", "f64"}));
  const test::CliResult table = box.run({"cost", "einsum", "b d, d k -> b k", "x.npy", "w.npy"});
  CHECK_THAT(table.out, Catch::StartsWith("einsum 'b d, d k -> b k' (f64)  b=8 d=12 k=3\n"));
  const test::CliResult explain = box.run({"explain", "einsum", "b d, d k -> b k", "x.npy", "w.npy"});
  CHECK(explain.status == 0);
  CHECK_THAT(explain.out, Catch::StartsWith("einsum 'b d, d k -> b k' (f64)\n  %0 = input 0 : [b=8, d=12]"));
  const test::CliResult bench =
      box.run({"bench", "einsum", "b d, d k -> b k", "x.npy", "w.npy", "--json", "--min-time", "0", "--repeats", "2"});
  INFO(bench);
  REQUIRE(bench.status == 0);
  const nlohmann::json b = nlohmann::json::parse(bench.out);
  CHECK(b["dtype"] == "f64");
  CHECK(b["flops"] == 2 * 8 * 12 * 3);
  struct Bad {
    std::vector<std::string> args;
    std::string err;
  };
  const Bad bad[] = {
      {{"cost", "einsum", "b d, d k -> b k", "x.npy", "x.npy"},
       "axis d is 12 in operand 1 (dim 1) but 8 in operand 2 (dim 0)\n  in einsum('b d, d k -> b k') on x.npy [8, 12], "
       "x.npy [8, 12]\n"},
      {{"cost", "einsum", "b d, d k -> b k", "x.npy", "i.npy"},
       "i.npy is i64 but x.npy is f64; give the operands in one dtype, or --dtype\n"},
      {{"cost", "einsum", "b d, d k -> b k", "x.npy", "missing.npy"}, "missing.npy: cannot open"},
      {{"cost", "einsum", "b d, d k -> b k", "x.npy", "cut.npy"}, "cut.npy: the .npy data is 280 bytes, but shape"},
      {{"explain", "einsum", "b d, d k -> b k", "x.npy"}, "has 2 operands but 1"},
  };
  for (const Bad& r : bad) {
    const test::CliResult out = box.run(r.args);
    INFO(out);
    CHECK(out.status == 1);
    CHECK_THAT(out.err, Catch::Contains(r.err));
  }
}

TEST_CASE("program run infers the one axis of a composition its input's shape leaves open") {
  Sandbox box;
  box.write_bytes("comp.ein",
                  "axes B=2 H=4 K=3\n"
                  "input x: B (H K)\n"
                  "y = rearrange(x, \"B (H K) -> B H K\")\n");
  box.write_npy("x.npy", Tensor::arange(48, DType::f32).view({2, 24}));
  const test::CliResult r = box.run({"program", "run", "comp.ein", "H=4", "x=x.npy", "-o", "out"});
  INFO(r);
  REQUIRE(r.status == 0);
  const Tensor y = box.read_npy("out/y.npy");
  CHECK(y.shape() == Shape{2, 4, 6});  // K = 24 / 4
  CHECK(y.to_vector<float>() == Tensor::arange(48, DType::f32).to_vector<float>());
  const test::CliResult also = box.run({"program", "run", "comp.ein", "K=8", "x=x.npy", "-o", "out2"});
  REQUIRE(also.status == 0);
  CHECK(box.read_npy("out2/y.npy").shape() == Shape{2, 3, 8});  // H = 24 / 8
  struct Bad {
    std::vector<std::string> args;
    std::string err;
  };
  const Bad bad[] = {
      {{"program", "run", "comp.ein", "x=x.npy", "-o", "bad"},
       "dim 1 of x=x.npy is 24 but it is (H K) = 12: H=4 (line 1), K=3 (line 1); give all but one of H, K a length "
       "(NAME=LEN) and the last is inferred from the shape\n"},
      {{"program", "run", "comp.ein", "H=5", "x=x.npy", "-o", "bad"},
       "dim 1 of x=x.npy is 24 but it is (H K) = 15: H=5 (given as H=5), K=3 (line 1); K cannot be inferred: 24 is "
       "not a multiple of 5 (the other axes' product)\n"},
  };
  for (const Bad& b : bad) {
    const test::CliResult out = box.run(b.args);
    INFO(out);
    CHECK(out.status == 1);
    CHECK_THAT(out.err, Catch::Contains(b.err));
    CHECK_FALSE(box.files().count("bad"));
  }
}
