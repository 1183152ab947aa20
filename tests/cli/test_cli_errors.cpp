// Every error path of the tool: its exit status (1 rejected, 2 usage), its message on
// stderr, nothing on stdout, and no file written -- no output, no temporary, and an
// existing output file left exactly as it was.
#include <catch2/catch.hpp>

#include "cli_run.hpp"

using namespace einexpr;
using test::Sandbox;

namespace {

struct ErrorRow {
  std::vector<std::string> args;
  int status;
  std::vector<std::string> message;  // parts stderr must contain
};

/// x.npy (3, 4) f32, w.npy (5, 2) f32, old.npy an existing file the runs may not touch.
void prepare(const Sandbox& box) {
  box.write_npy("x.npy", Tensor::randn({3, 4}, DType::f32, 1));
  box.write_npy("w.npy", Tensor::randn({5, 2}, DType::f32, 2));
  box.write_bytes("old.npy", "the old file");
  std::filesystem::create_directory(box.dir() / "sub");
}

void check_error(const ErrorRow& row) {
  CAPTURE(row.args);
  Sandbox box;
  prepare(box);
  const std::set<std::string> before = box.files();
  const test::CliResult r = box.run(row.args);
  INFO(r);
  CHECK(r.status == row.status);
  CHECK(r.out.empty());
  for (const std::string& part : row.message) CHECK_THAT(r.err, Catch::Contains(part));
  if (row.status == 2) CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
  CHECK(box.files() == before);
  CHECK(box.read_bytes("old.npy") == "the old file");
}

}  // namespace

TEST_CASE("rejected runs exit 1 with the reason and write nothing") {
  const std::vector<ErrorRow> rows = {
      // a pattern error carries its caret lines
      {{"rearrange", "a (b -> b a", "x.npy", "-o", "out.npy"},
       1,
       {"einexpr rearrange: error: ", "'(' is never closed at position 2\n  a (b -> b a\n    ^"}},
      {{"rearrange", "a b -> b c", "x.npy", "-o", "old.npy"}, 1, {"(should be on both)", "\n  ^\n"}},
      {{"reduce", "a b -> a c", "sum", "x.npy", "-o", "old.npy"}, 1, {"a b -> a c", "^"}},
      // files
      {{"rearrange", "a b -> b a", "missing.npy", "-o", "out.npy"}, 1, {"missing.npy: cannot open"}},
      {{"rearrange", "a b -> b a", "sub", "-o", "out.npy"}, 1, {"sub: not a regular file"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "nodir/out.npy"}, 1, {"directory nodir does not exist"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "sub"}, 1, {"cannot write sub: it is a directory"}},
      {{"einsum", "a b, b c -> a c", "x.npy", "missing.npy", "-o", "old.npy"}, 1, {"missing.npy"}},
      // shapes and lengths
      {{"einsum", "b d, d k -> b k", "x.npy", "w.npy", "-o", "out.npy"}, 1, {"axis d is 4", "but 5"}},
      {{"einsum", "b d, d k -> b k", "x.npy", "-o", "old.npy"}, 1, {"has 2 operands but 1"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "a=4"}, 1, {"axis a is 3", "4 was given"}},
      {{"rearrange", "(a b) c -> a b c", "x.npy", "-o", "out.npy", "a=5"}, 1, {"not divisible by 5"}},
      {{"repeat", "h w -> c h w", "x.npy", "-o", "out.npy"}, 1, {"c"}},
      // 4.8e14 bytes: more than a process can address, so the allocation fails everywhere
      {{"repeat", "h w -> c h w", "x.npy", "-o", "old.npy", "c=10000000000000"}, 1, {"could not allocate"}},
      // unknown names
      {{"reduce", "a b -> a", "avg", "x.npy", "-o", "out.npy"}, 1, {"unknown reduction 'avg'", "mean"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "out.npy", "--device", "tpu"}, 1, {"unknown device 'tpu'"}},
      {{"cost", "frobnicate", "a b -> b a", "a=1", "b=2"}, 1, {"unknown op 'frobnicate'"}},
      {{"bench", "frobnicate", "a b -> b a", "a=1", "b=2"}, 1, {"unknown op 'frobnicate'"}},
      {{"check", "a b -> b a", "--op", "frobnicate"}, 1, {"unknown op 'frobnicate'"}},
      {{"cost", "einsum", "a b -> b a", "a=1", "b=2", "--dtype", "f17"}, 1, {"unknown dtype 'f17'", "bf16"}},
      {{"cost", "einsum", "a b -> b a", "a=1", "b=2", "--device", "tpu"}, 1, {"unknown device 'tpu'", "h100"}},
      {{"cost", "einsum", "a b -> b a", "a=1", "b=2", "--device", "t4", "--dtype", "bf16"}, 1, {"no peak"}},
      {{"cost", "reduce", "a b -> a", "avg", "a=1", "b=2"}, 1, {"unknown reduction 'avg'"}},
      {{"cost", "einsum", "a b -> b a", "a=1"}, 1, {"axis b is not given"}},
      {{"explain", "einsum", "a b, b -> a (", "a=1", "b=2"}, 1, {"^"}},
      {{"check", "a b -> b a b"}, 1, {"^"}},
      {{"roofline", "out.svg", "einsum|a b -> b c|a=1,b=2"}, 1, {"^"}},
      {{"roofline", "nodir/out.svg", "einsum|a b -> b a|a=1,b=2"}, 1, {"directory nodir does not exist"}},
      // map and the new reductions
      {{"map", "a b -> b a", "gelux", "x.npy", "-o", "out.npy"}, 1, {"unknown function 'gelux'", "gelu_erf", "add"}},
      {{"map", "a b, b -> a b", "gelu", "x.npy", "x.npy", "-o", "out.npy"}, 1, {"'gelu' takes one operand, but 2"}},
      {{"map", "a b -> a", "exp", "x.npy", "-o", "old.npy"}, 1, {"axis 'b' of input 1 is not in the output", "^"}},
      {{"map", "a b, b -> a b", "add", "x.npy", "-o", "out.npy"}, 1, {"'add' takes two operands, but 1 is given"}},
      {{"map", "a b, b -> a b", "gelu", "x.npy", "-o", "out.npy"}, 1, {"takes 1 operand, got 2 in the pattern and 1 tensor"}},
      {{"map", "(a c) b -> a c b", "exp", "x.npy", "-o", "out.npy", "a=2"}, 1, {"not divisible by 2"}},
      {{"reduce", "a b -> a", "var", "old.npy", "-o", "out.npy"}, 1, {"old.npy"}},
      {{"cost", "map", "a b -> b a", "frob", "a=1", "b=2"}, 1, {"unknown function 'frob'"}},
      {{"cost", "map", "a b -> b a", "add", "a=1", "b=2"}, 1, {"'add' takes two operands, but 1 is given"}},
  };
  for (const ErrorRow& row : rows) check_error(row);
}

TEST_CASE("malformed command lines exit 2 with one line") {
  const std::vector<ErrorRow> rows = {
      {{}, 2, {"a command is required"}},
      {{"frobnicate"}, 2, {"frobnicate"}},
      {{"rearrange"}, 2, {"PATTERN is required", "einexpr rearrange --help"}},
      {{"rearrange", "a b -> b a", "x.npy"}, 2, {"--output is required"}},
      {{"reduce", "a b -> a", "sum", "x.npy"}, 2, {"--output is required"}},
      {{"einsum", "a b -> b a", "x.npy"}, 2, {"--output is required"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "--frobnicate"}, 2, {"--frobnicate"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "h=abc"}, 2, {"bad NAME=LEN 'h=abc'"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "h=-1"}, 2, {"bad NAME=LEN 'h=-1'"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "h=99999999999999999999"}, 2, {"below 2^63"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "h="}, 2, {"bad NAME=LEN 'h='"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "=3"}, 2, {"NAME must be an identifier"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "1h=3"}, 2, {"NAME must be an identifier"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "h"}, 2, {"expected NAME=LEN, got 'h'"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "a=3", "a=3"}, 2, {"'a' is given twice"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "--threads", "0"}, 2, {"--threads"}},
      {{"rearrange", "a b -> b a", "x.npy", "-o", "old.npy", "--threads", "two"}, 2, {"--threads"}},
      {{"cost", "einsum"}, 2, {"PATTERN is required"}},
      {{"cost", "einsum", "a b -> b a", "sum", "a=1", "b=2"}, 2, {"only reduce takes a REDUCTION"}},
      {{"cost", "einsum", "a b -> b a", "a=1", "b"}, 2, {"expected NAME=LEN, got 'b'"}},
      {{"bench", "einsum", "a b -> b a", "a=1", "b=2", "--repeats", "0"}, 2, {"--repeats"}},
      {{"roofline", "out.svg"}, 2, {"EXPR is required"}},
      {{"roofline", "out.svg", "einsum|a b -> b a"}, 2, {"bad EXPR 'einsum|a b -> b a'"}},
      {{"roofline", "out.svg", "einsum|a b -> b a|a=1|b=2"}, 2, {"bad EXPR"}},
      {{"roofline", "out.svg", "einsum|a b -> b a|a=1,b"}, 2, {"bad EXPR", "expected NAME=LEN, got 'b'"}},
      {{"devices", "extra"}, 2, {"extra"}},
      {{"map", "a b -> b a"}, 2, {"FUNCTION is required"}},
      {{"map", "a b -> b a", "exp", "x.npy"}, 2, {"--output is required"}},
      {{"map", "a b -> b a", "exp", "x.npy", "x.npy", "x.npy", "-o", "out.npy"}, 2, {"one input file", "not 3"}},
      {{"cost", "map", "a b -> b a", "a=1", "b=2"}, 2, {"map takes a FUNCTION"}},
      {{"cost", "reduce", "a b -> a", "sum", "a=1", "b=2", "--correction", "0"}, 2, {"--correction applies to"}},
      {{"reduce", "a b -> a", "mean", "x.npy", "-o", "out.npy", "--correction", "0"}, 2, {"--correction applies"}},
      {{"cost", "reduce", "a b -> a", "var", "a=1", "b=2", "--correction", "-1"}, 2, {"--correction"}},
  };
  for (const ErrorRow& row : rows) check_error(row);
}

TEST_CASE("help and version print on stdout and exit 0") {
  Sandbox box;
  test::CliResult r = box.run({"--help"});
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("Exit status") && Catch::Contains("b d, d k -> b k"));
  r = box.run({"--version"});
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::StartsWith(std::string("einexpr ") + version));
  const std::vector<std::pair<std::string, std::string>> examples = {
      {"rearrange", "c h w -> c w h"},
      {"reduce", "c (h h2) (w w2) -> c h w\" mean img.npy -o pooled.npy h2=20 w2=20"},
      {"repeat", "h w -> c h w\" grey.npy -o rgba.npy c=4"},
      {"einsum", "batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2"},
      {"cost", "b=1024 d=256 k=64"},
      {"explain", "batch seq1 hidden"},
      {"check", "--op reduce"},
      {"bench", "b=1024 d=256 k=64"},
      {"roofline", "einsum|i j, j k -> i k|i=1024,j=1024,k=1024"},
      {"devices", "EINEXPR_DEVICES"},
  };
  for (const auto& [command, example] : examples) {
    CAPTURE(command);
    r = box.run({command, "--help"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("einexpr " + command) && Catch::Contains(example));
  }
  CHECK_THAT(box.run({"rearrange", "--help"}).out, Catch::Contains("--bf16-u2"));
}
