// Hostile .npy inputs: the tool refuses each with exit 1, a message naming the file, and
// no output written (nor a temporary left behind).
#include <catch2/catch.hpp>

#include "cli_run.hpp"

using namespace einexpr;
using test::Sandbox;
using namespace std::string_literals;

namespace {

/// A version 1.0 .npy file with `dict` as its header (padded as numpy pads) and `data`.
std::string npy_file(const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string floats(std::size_t n) { return std::string(4 * n, '\0'); }

struct HostileRow {
  const char* what;
  std::string bytes;
  std::string message;  // part of the error after "bad.npy: "
};

}  // namespace

TEST_CASE("hostile .npy inputs are refused cleanly") {
  const std::string good = test::npy_text(Tensor::randn({3, 4}, DType::f32, 1));
  const std::vector<HostileRow> rows = {
      {"empty file", "", "not a .npy file"},
      {"wrong magic", "\x89PNG\r\n\x1a\n" + std::string(100, 'x'), "not a .npy file"},
      {"unsupported version", "\x93NUMPY\x07\x00"s + good.substr(8), "version 7.0"},
      {"truncated header", good.substr(0, 40), ""},
      {"truncated data", good.substr(0, good.size() - 5), "shape"},
      {"header length past the end", "\x93NUMPY\x01\x00\xff\xff{}"s, "header length"},
      {"header is not a dict", npy_file("import os", floats(12)), "bad .npy header"},
      {"header lacks the shape", npy_file("{'descr': '<f4', 'fortran_order': False, }", floats(12)), "'shape'"},
      {"shape larger than the data",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (100, 100), }", floats(12)), "shape"},
      {"shape smaller than the data", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", floats(12)),
       "shape"},
      {"huge declared shape",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, "
                "4611686018427387904), }",
                floats(12)),
       ""},
      {"shape beyond 64 bits",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", floats(12)),
       "beyond 64 bits"},
      {"negative shape", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }", floats(12)),
       "negative"},
      {"complex dtype", npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (3, 4), }", floats(24)),
       "unsupported dtype descr '<c8'"},
      {"uint16 without --bf16-u2",
       npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }", std::string(24, '\0')), "--bf16-u2"},
  };
  for (const HostileRow& row : rows) {
    CAPTURE(row.what);
    Sandbox box;
    box.write_bytes("bad.npy", row.bytes);
    const test::CliResult r = box.run({"rearrange", "a b -> b a", "bad.npy", "-o", "out.npy"});
    INFO(r);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::StartsWith("einexpr rearrange: error: bad.npy: "));
    CHECK_THAT(r.err, Catch::Contains(row.message));
    CHECK(box.files() == std::set<std::string>{"bad.npy"});
  }
}

TEST_CASE("a hostile operand among good ones writes nothing") {
  Sandbox box;
  box.write_npy("x.npy", Tensor::randn({3, 4}, DType::f32, 1));
  box.write_bytes("bad.npy", "\x93NUMPY\x01\x00"s);
  box.write_bytes("y.npy", "previous result");
  const test::CliResult r = box.run({"einsum", "a b, b c -> a c", "x.npy", "bad.npy", "-o", "y.npy"});
  INFO(r);
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("bad.npy"));
  CHECK(box.read_bytes("y.npy") == "previous result");
  CHECK(box.files() == std::set<std::string>{"bad.npy", "x.npy", "y.npy"});
}
