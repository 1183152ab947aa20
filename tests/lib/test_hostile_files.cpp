// Hostile file input and output: writes that must fail leave nothing behind (no file, no
// temporary, an existing file unchanged); reads of things that are not .npy files, or of
// .npy files whose headers lie, are refused with an Error naming the path. (The byte-level
// header cases are in tests/runtime/test_npy_hostile.cpp; these go through the file system.)
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "einexpr/einexpr.hpp"
#include "einexpr/runtime/npy.hpp"
#include "hostile_support.hpp"

using namespace einexpr;
using Catch::Matchers::Contains;

namespace {

void write_text(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }
std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A .npy file: version 1.0 prefix, `header` and `data` (no padding: the reader allows it).
std::string npy_file(const std::string& header, const std::string& data) {
  std::string s = "\x93NUMPY\x01";
  s += '\0';
  s += static_cast<char>(header.size() & 0xFF);
  s += static_cast<char>(header.size() >> 8);
  return s + header + data;
}

struct WriteRow {
  const char* what;
  std::function<void(const std::string& path)> write;  // into `path`, which must stay as it was
  std::string message;
};

const Tensor fp8 = Tensor::randn({2}, DType::f8_e4m3, 1);
const Tensor huge = Tensor::zeros({1}).as_strided({std::int64_t{1} << 40, 1024}, {0, 0}, 0);

std::vector<WriteRow> write_rows() {
  return {
      {"an undefined tensor", [](const std::string& p) { write_npy(p, Tensor()); },
       "cannot write an undefined tensor to a .npy file"},
      {"fp8, which .npy cannot name", [](const std::string& p) { write_npy(p, fp8); }, "f8_e4m3"},
      {"a 4 PiB broadcast view, made contiguous", [](const std::string& p) { write_npy(p, huge); },
       "could not allocate 4503599627370496 bytes"},
  };
}

}  // namespace

TEST_CASE("a refused write leaves no file, no temporary, and an existing file unchanged", "[hostile][npy]") {
  const hostile::ScratchDir dir;
  for (const WriteRow& r : write_rows()) {
    CAPTURE(r.what);
    const std::string fresh = dir / "fresh.npy", existing = dir / "existing.npy";
    write_text(existing, "the old contents");
    const auto before = dir.entries();
    try {
      r.write(fresh);
      FAIL("written");
    } catch (const Error& e) {
      CHECK_THAT(std::string(e.what()), Contains(r.message));
    }
    try {
      r.write(existing);
      FAIL("written");
    } catch (const Error& e) {
      CHECK_THAT(std::string(e.what()), Contains(r.message));
    }
    CHECK(dir.entries() == before);
    CHECK(read_text(existing) == "the old contents");
  }
}

TEST_CASE("writes to impossible places are refused, leaving nothing", "[hostile][npy]") {
  const hostile::ScratchDir dir;
  const Tensor t = Tensor::randn({2, 2}, DType::f32, 1);
  CHECK_THROWS_WITH(write_npy(dir / "no/such/dir/x.npy", t), Contains("cannot create a temporary file beside it"));
  std::filesystem::create_directory(dir / "a_directory");
  CHECK_THROWS_WITH(write_npy(dir / "a_directory", t), Contains("cannot rename the temporary file onto it"));
  CHECK(dir.entries() == std::set<std::string>{"a_directory"});  // the temporary is gone too
  CHECK(std::filesystem::is_empty(dir.path() / "a_directory"));
}

TEST_CASE("reads of what is not a .npy file, or of lying headers, name the path", "[hostile][npy]") {
  const hostile::ScratchDir dir;
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  struct Row {
    const char* what;
    std::string bytes;  // empty: the path is not written
    std::string message;
  };
  const std::vector<Row> rows = {
      {"a missing file", "", "cannot open"},
      {"an empty file", std::string(), "not a .npy file"},
      {"a text file", "hello, world\n", "not a .npy file"},
      {"a header with a NUL byte", npy_file(std::string("{'descr': '<f4'\0}", 17), ""), "bad .npy header"},
      {"a shape of nested tuples", npy_file(f4 + "((2, 3),)}", ""), "'shape' in the .npy header must be a tuple of integers"},
      {"a shape bigger than the file", npy_file(f4 + "(1000000, 1000000)}", std::string(16, 'x')), "(the file is truncated)"},
      {"a shape whose bytes overflow", npy_file(f4 + "(4611686018427387904,)}", ""), "overflows 64 bits"},
      {"data past the shape", npy_file(f4 + "(1,)}", std::string(8, 'x')), "(the file has trailing bytes)"},
      {"a Fortran-order 0-d array, truncated", npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': ()}", "abc"), "the file is truncated"},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(rows[i].what);
    const std::string path = dir / ("in" + std::to_string(i) + ".npy");
    if (i > 0) write_text(path, rows[i].bytes);
    CHECK_THROWS_WITH(read_npy(path), Contains(path + ": ") && Contains(rows[i].message));
  }
  CHECK_THROWS_WITH(read_npy(dir.path().string()), Contains("not a regular file"));
  CHECK_THROWS_WITH(read_npy("/dev/null"), Contains("not a regular file"));
}
