// Hostile .npy files: each byte string is refused with an einexpr::Error (ShapeError or
// DTypeError where apt) whose whole message names the file and the problem, with no crash
// and no allocation sized by a lying header.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/npy.hpp"
#include "einexpr/runtime/storage.hpp"
#include "npy_support.hpp"

using namespace einexpr;
namespace tn = einexpr::testnpy;

namespace {

enum class Kind { error, shape, dtype };

struct Row {
  std::string bytes;
  Kind kind;
  std::string message;  // after "bad.npy: "
};

const std::string head = "bad .npy header at character ";
std::string f4(const std::string& shape) { return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + "}"; }
std::string v1(const std::string& header, const std::string& data = "") { return tn::file(1, header, data); }

std::vector<Row> hostile_rows() {
  const std::string deep = "{'shape': " + std::string(40, '(') + "1" + std::string(40, ')') + "}";
  return {
      // magic, version, lengths
      {"", Kind::error, "not a .npy file (it does not start with the magic string \\x93NUMPY)"},
      {"\x93NUMP", Kind::error, "not a .npy file (it does not start with the magic string \\x93NUMPY)"},
      {"PK\x03\x04 a zip file, not npy", Kind::error,
       "not a .npy file (it does not start with the magic string \\x93NUMPY)"},
      {"\x93NUMPY", Kind::error, "truncated .npy file: it ends inside the format version (6 bytes, 8 needed)"},
      {"\x93NUMPY\x01", Kind::error, "truncated .npy file: it ends inside the format version (7 bytes, 8 needed)"},
      {tn::prefix(4, 10) + "0123456789", Kind::error, "unsupported .npy format version 4.0 (einexpr reads 1.0, 2.0 and 3.0)"},
      {std::string("\x93NUMPY\x01\x01\x00\x00", 10), Kind::error,
       "unsupported .npy format version 1.1 (einexpr reads 1.0, 2.0 and 3.0)"},
      {std::string("\x93NUMPY\x00\x00\x00\x00", 10), Kind::error,
       "unsupported .npy format version 0.0 (einexpr reads 1.0, 2.0 and 3.0)"},
      {std::string("\x93NUMPY\x01\x00\x10", 9), Kind::error,
       "truncated .npy file: it ends inside the header length (9 bytes, 10 needed)"},
      {std::string("\x93NUMPY\x02\x00\x10\x00\x00", 11), Kind::error,
       "truncated .npy file: it ends inside the header length (11 bytes, 12 needed)"},
      {tn::prefix(1, 1000) + std::string(50, ' '), Kind::error,
       "the .npy header length 1000 reaches past the end of the file (60 bytes)"},
      {tn::prefix(2, 0xFFFFFFFF) + "{}", Kind::error, "the .npy header length 4294967295 is over the limit of 1048576 bytes"},
      // the header is not a Python dict literal
      {v1(""), Kind::error, head + "0: the header must be a dict, starting with '{' (the header is \"\")"},
      {v1("[1, 2]"), Kind::error, head + "0: the header must be a dict, starting with '{' (the header is \"[1, 2]\")"},
      {v1("{"), Kind::error, head + "1: expected a quoted key or '}' (the header is \"{\")"},
      {v1(std::string("{\0}", 3)), Kind::error, head + "1: expected a quoted key or '}' (the header is \"{\\x00}\")"},
      {v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)"), Kind::error,
       head + "54: expected ',' or '}' after the value of 'shape' "
              "(the header is \"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)\")"},
      {v1("{'descr' '<f4'}"), Kind::error,
       head + "9: expected ':' after the key 'descr' (the header is \"{'descr' '<f4'}\")"},
      {v1("{'descr': <f4}"), Kind::error, head + "10: expected a value (the header is \"{'descr': <f4}\")"},
      {v1(f4("(2, 3), ") + " x"), Kind::error,
       head + "60: unexpected text after the dict "
              "(the header is \"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } x\")"},
      {v1("{'descr': '<f4, 'fortran_order': False}"), Kind::error,
       head + "17: expected ',' or '}' after the value of 'descr' "
              "(the header is \"{'descr': '<f4, 'fortran_order': False}\")"},
      {v1("{'descr': '<f4"), Kind::error, head + "14: a string is not closed (the header is \"{'descr': '<f4\")"},
      {v1("{'descr': '<f\\x34'}"), Kind::error,
       head + "13: escape sequences in strings are not supported (the header is \"{'descr': '<f\\\\x34'}\")"},
      {v1("{'descr': {'a': 1}}"), Kind::error,
       head + "10: nested dicts are not supported (the header is \"{'descr': {'a': 1}}\")"},
      {v1("{'shape': (02,)}"), Kind::error,
       head + "13: an integer with leading zeros is not Python (the header is \"{'shape': (02,)}\")"},
      {v1("{'shape': (2.5,)}"), Kind::error, head + "12: expected an integer (the header is \"{'shape': (2.5,)}\")"},
      {v1("{'fortran_order': Ture}"), Kind::error, head + "18: expected a value (the header is \"{'fortran_order': Ture}\")"},
      {v1(deep), Kind::error,
       head + "43: values nested more than 32 deep (the header is \"" + deep.substr(0, 80) + "\"...)"},
      // keys and value types
      {v1("{'descr': '<f4', 'fortran_order': False}"), Kind::error, "the .npy header lacks the key 'shape'"},
      {v1("{}"), Kind::error, "the .npy header lacks the key 'descr'"},
      {v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}"), Kind::error,
       "the .npy header has the unexpected key 'extra' (expected exactly 'descr', 'fortran_order' and 'shape')"},
      {v1("{'descr': '<f4', 'descr': '<f8'}"), Kind::error, "the .npy header repeats the key 'descr'"},
      {v1("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}"), Kind::dtype,
       "'descr' in the .npy header must be a string (structured and subarray dtypes are not supported)"},
      {v1("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}"), Kind::error,
       "'fortran_order' in the .npy header must be True or False"},
      {v1(f4("(3)")), Kind::error, "'shape' in the .npy header must be a tuple of integers"},
      {v1(f4("[2, 3]")), Kind::error, "'shape' in the .npy header must be a tuple of integers"},
      {v1(f4("(2, 'a')")), Kind::error, "'shape' in the .npy header must be a tuple of integers"},
      {v1(f4("(2, None)")), Kind::error, "'shape' in the .npy header must be a tuple of integers"},
      // lengths
      {v1(f4("(2, -3)")), Kind::shape, "the .npy header's shape has a negative length -3"},
      {v1(f4("(99999999999999999999,)")), Kind::shape,
       "the .npy header's shape has a length 99999999999999999999 beyond 64 bits"},
      {v1(f4("(4294967296, 4294967296)")), Kind::shape,
       "the number of elements of shape [4294967296, 4294967296] overflows 64 bits"},
      {v1("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,)}"), Kind::shape,
       "size overflows 64 bits: 2305843009213693952 * 8"},
      // descrs
      {v1("{'descr': '<u4', 'fortran_order': False, 'shape': (1,)}", "abcd"), Kind::dtype,
       "unsupported dtype descr '<u4' (einexpr reads <f8 <f4 <f2 <i8 <i4 |b1 in either byte order, bf16 as "
       "'<V2' or 'bfloat16', 'float8_e4m3fn', 'float8_e5m2', and <u2 as bf16 with NpyReadOptions::u2_as_bf16)"},
      {v1("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", "abcdefgh"), Kind::dtype,
       "unsupported dtype descr '|O' (einexpr reads <f8 <f4 <f2 <i8 <i4 |b1 in either byte order, bf16 as "
       "'<V2' or 'bfloat16', 'float8_e4m3fn', 'float8_e5m2', and <u2 as bf16 with NpyReadOptions::u2_as_bf16)"},
      {v1("{'descr': '<u2', 'fortran_order': False, 'shape': (1,)}", "ab"), Kind::dtype,
       "descr '<u2' is uint16, which einexpr does not have; set NpyReadOptions::u2_as_bf16 to read it as bf16 "
       "bit patterns"},
      {v1("{'descr': '|V1', 'fortran_order': False, 'shape': (1,)}", "a"), Kind::dtype,
       "descr '|V1' is how np.save writes ml_dtypes' fp8 formats, which cannot tell float8_e4m3fn from "
       "float8_e5m2; write the descr as 'float8_e4m3fn' or 'float8_e5m2', or save the data as f16"},
      {v1("{'descr': '<f\xc3\xa9', 'fortran_order': False, 'shape': (1,)}", "a"), Kind::dtype,
       "unsupported dtype descr '<f\\xc3\\xa9' (einexpr reads <f8 <f4 <f2 <i8 <i4 |b1 in either byte order, bf16 "
       "as '<V2' or 'bfloat16', 'float8_e4m3fn', 'float8_e5m2', and <u2 as bf16 with NpyReadOptions::u2_as_bf16)"},
      // data size against the shape
      {v1(f4("(2, 3)"), std::string(20, 'x')), Kind::error,
       "the .npy data is 20 bytes, but shape [2, 3] of <f4 needs 24 (the file is truncated)"},
      {v1(f4("(2, 3)"), std::string(28, 'x')), Kind::error,
       "the .npy data is 28 bytes, but shape [2, 3] of <f4 needs 24 (the file has trailing bytes)"},
      {v1("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,)}", std::string(8, 'x')), Kind::error,
       "the .npy data is 8 bytes, but shape [1000000000000] of <f8 needs 8000000000000 (the file is truncated)"},
      {v1(f4("()")), Kind::error, "the .npy data is 0 bytes, but shape [] of <f4 needs 4 (the file is truncated)"},
  };
}

}  // namespace

TEST_CASE("hostile .npy byte strings are refused with messages naming the file and the problem", "[npy][errors]") {
  const std::vector<Row> rows = hostile_rows();
  REQUIRE(rows.size() >= 25);
  const std::size_t in_use = allocator_for(Device::cpu()).stats().bytes_in_use;
  for (const Row& r : rows) {
    CAPTURE(r.message);
    const std::vector<std::byte> b = tn::bytes(r.bytes);
    CHECK_THROWS_WITH(parse_npy(b, "bad.npy"), "bad.npy: " + r.message);
    if (r.kind == Kind::shape) CHECK_THROWS_AS(parse_npy(b, "bad.npy"), ShapeError);
    if (r.kind == Kind::dtype) CHECK_THROWS_AS(parse_npy(b, "bad.npy"), DTypeError);
    if (r.kind == Kind::error) {
      try {
        parse_npy(b, "bad.npy");
      } catch (const ShapeError&) {
        FAIL("a ShapeError where a plain Error was expected");
      } catch (const DTypeError&) {
        FAIL("a DTypeError where a plain Error was expected");
      } catch (const Error&) {
      }
    }
  }
  CHECK(allocator_for(Device::cpu()).stats().bytes_in_use == in_use);  // nothing allocated and kept
}

TEST_CASE("the same hostile files on disk are refused by read_npy, naming the path", "[npy][errors]") {
  const tn::ScratchDir dir;
  const std::vector<Row> rows = hostile_rows();
  for (std::size_t i = 0; i < rows.size(); i += 5) {
    const std::string path = dir / ("bad" + std::to_string(i) + ".npy");
    tn::write_file(path, rows[i].bytes);
    CAPTURE(rows[i].message);
    CHECK_THROWS_WITH(read_npy(path), path + ": " + rows[i].message);
  }
}

TEST_CASE("max_bytes limits the data read, after the file's own size is checked", "[npy][errors]") {
  const std::vector<std::byte> b = tn::bytes(v1(f4("(2, 3)"), tn::raw<float>({1, 2, 3, 4, 5, 6})));
  NpyReadOptions limited{};
  limited.max_bytes = 16;
  CHECK_THROWS_WITH(parse_npy(b, "x.npy", limited),
                    "x.npy: the .npy data is 24 bytes, over the limit of 16 bytes (NpyReadOptions::max_bytes)");
  limited.max_bytes = 24;
  CHECK(parse_npy(b, "x.npy", limited).to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK_THROWS_WITH(parse_npy(tn::bytes(v1(f4("(2, 3)"), "short")), "x.npy", limited),
                    "x.npy: the .npy data is 5 bytes, but shape [2, 3] of <f4 needs 24 (the file is truncated)");
}

TEST_CASE("randomly mutated .npy files are read or refused with einexpr::Error, never worse", "[npy][errors]") {
  const std::vector<std::string> seeds = {
      tn::text(npy_bytes(Tensor::randn({2, 3}, DType::f32, 1))),
      tn::text(npy_bytes(Tensor::randn({4}, DType::bf16, 2), NpyWriteOptions{true, false})),
      tn::text(npy_bytes(Tensor::randn({2, 2, 2}, DType::i64, 3), NpyWriteOptions{true, false})),
      v1("{'descr': '>f8', 'fortran_order': True, 'shape': (1, 2)}", std::string(16, '\x40')),
  };
  const std::string alphabet = "(){}[],:'\"0123456789-+TFNLx <>|=?fiubV\n\t\\";
  std::mt19937_64 rng(12345);
  int read = 0, refused = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::string b = seeds[static_cast<std::size_t>(trial) % seeds.size()];
    for (int m = 0, n = 1 + static_cast<int>(rng() % 3); m < n && !b.empty(); ++m) {
      const std::size_t at = rng() % b.size();
      switch (rng() % 5) {
        case 0: b[at] = static_cast<char>(rng()); break;
        case 1: b[at] = alphabet[rng() % alphabet.size()]; break;
        case 2: b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), alphabet[rng() % alphabet.size()]); break;
        case 3: b.erase(at, 1); break;
        default: b.resize(at); break;
      }
    }
    try {
      const Tensor t = parse_npy(tn::bytes(b), "fuzz.npy");
      CHECK(t.nbytes() <= b.size());
      ++read;
    } catch (const Error& e) {
      if (std::string(e.what()).rfind("fuzz.npy: ", 0) != 0) CHECK(std::string(e.what()) == "fuzz.npy: ...");
      ++refused;
    }
  }
  CHECK(read + refused == 4000);
  CHECK(refused > 1000);  // most mutations break something; some leave a readable file
  CHECK(read > 100);
}
