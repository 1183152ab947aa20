// The .npy reader: round trips in every supported dtype and both orders, and hand-made
// files in big endian, Fortran order, versions 2.0 and 3.0, and the other descr spellings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/npy.hpp"
#include "npy_support.hpp"

using namespace einexpr;
namespace tn = einexpr::testnpy;

namespace {

// Same shape, dtype and bit patterns (every element, in logical order).
void check_same(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  const Tensor a = got.contiguous(), b = want.contiguous();
  CHECK(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0);
}

std::string dict(const std::string& descr, bool fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

Tensor parse(const std::string& bytes, const NpyReadOptions& options = {}) {
  return parse_npy(tn::bytes(bytes), "hand.npy", options);
}

}  // namespace

TEST_CASE("round trips in every supported dtype, shape and order", "[npy]") {
  const std::vector<Shape> shapes = {{}, {0}, {7}, {2, 3, 4}, {3, 0, 2}, {1, 5, 1}};
  const DType dtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i64, DType::i32, DType::boolean};
  std::uint64_t seed = 1;
  for (DType d : dtypes)
    for (const Shape& shape : shapes)
      for (bool fortran : {false, true}) {
        CAPTURE(name(d), shape_str(shape), fortran);
        const Tensor x = Tensor::randn(shape, d, seed++);
        const Tensor back = parse_npy(npy_bytes(x, NpyWriteOptions{fortran, false}));
        check_same(back, x);
        if (fortran && x.dim() > 1) {
          Strides f(static_cast<std::size_t>(x.dim()));  // the column-major strides, as numpy returns them
          std::int64_t s = 1;
          for (std::size_t i = 0; i < f.size(); ++i) {
            f[i] = s;
            s *= std::max<std::int64_t>(shape[i], 1);
          }
          if (x.numel() > 0) CHECK(back.strides() == f);
        }
      }
  NpyWriteOptions u2{};
  u2.bf16_as_u2 = true;
  NpyReadOptions as_bf16{};
  as_bf16.u2_as_bf16 = true;
  const Tensor b = Tensor::randn({4, 5}, DType::bf16, 3);
  check_same(parse_npy(npy_bytes(b, u2), "b.npy", as_bf16), b);
  CHECK_THROWS_AS(parse_npy(npy_bytes(b, u2)), DTypeError);
}

TEST_CASE("round trips of non-contiguous tensors through files", "[npy]") {
  const tn::ScratchDir dir;
  const Tensor base = Tensor::randn({5, 6, 7}, DType::f32, 12);
  const Tensor views[] = {base.permute({2, 0, 1}), base.slice(1, 1, 6, 2), base.select(0, 4).transpose(0, 1)};
  int i = 0;
  for (const Tensor& v : views)
    for (bool fortran : {false, true}) {
      const std::string path = dir / ("v" + std::to_string(i++) + ".npy");
      write_npy(path, v, NpyWriteOptions{fortran, false});
      CAPTURE(path, shape_str(v.shape()), shape_str(v.strides()));
      check_same(read_npy(path), v);
    }
}

TEST_CASE("hand-made files: big endian, native and other descr spellings", "[npy]") {
  struct Row { std::string file; std::vector<double> want; DType dtype; };
  const std::vector<double> values = {1.5, -2, 0.25};
  const Row rows[] = {
      {tn::file(1, dict(">f8", false, "(3,)"), tn::raw<double>({1.5, -2, 0.25}, true)), values, DType::f64},
      {tn::file(1, dict(">f4", false, "(3,)"), tn::raw<float>({1.5f, -2, 0.25f}, true)), values, DType::f32},
      {tn::file(1, dict(">f2", false, "(3,)"), tn::raw<std::uint16_t>({0x3E00, 0xC000, 0x3400}, true)), values,
       DType::f16},
      {tn::file(1, dict(">i8", false, "(3,)"), tn::raw<std::int64_t>({7, -1, 1LL << 50}, true)),
       {7, -1, static_cast<double>(1LL << 50)}, DType::i64},
      {tn::file(1, dict(">i4", false, "(3,)"), tn::raw<std::int32_t>({7, -1, 65536}, true)), {7, -1, 65536}, DType::i32},
      {tn::file(1, dict("=f4", false, "(3,)"), tn::raw<float>({1.5f, -2, 0.25f})), values, DType::f32},
      {tn::file(1, dict("f8", false, "(3,)"), tn::raw<double>({1.5, -2, 0.25})), values, DType::f64},
      {tn::file(1, dict("|i4", false, "(3,)"), tn::raw<std::int32_t>({1, 2, 3})), {1, 2, 3}, DType::i32},
      {tn::file(1, dict("?", false, "(3,)"), std::string("\1\0\1", 3)), {1, 0, 1}, DType::boolean},
      {tn::file(1, dict(">b1", false, "(3,)"), std::string("\0\1\1", 3)), {0, 1, 1}, DType::boolean},
      {tn::file(1, dict("|b1", false, "(4,)"), std::string("\0\2\xff\1", 4)), {0, 1, 1, 1}, DType::boolean},
      {tn::file(1, dict("<V2", false, "(3,)"), tn::raw<std::uint16_t>({0x3FC0, 0xC000, 0x3E80})), values, DType::bf16},
      {tn::file(1, dict("bfloat16", false, "(3,)"), tn::raw<std::uint16_t>({0x3FC0, 0xC000, 0x3E80})), values,
       DType::bf16},
      {tn::file(1, dict("float8_e4m3fn", false, "(3,)"), std::string("\x3c\xc0\x28", 3)), values, DType::f8_e4m3},
      {tn::file(1, dict("float8_e5m2", false, "(3,)"), std::string("\x3e\xc0\x34", 3)), values, DType::f8_e5m2},
      // Other writers: double quotes, another key order, no trailing comma, no padding or newline.
      {tn::file(1, "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<f4\"}", tn::raw<float>({1.5f, -2, 0.25f})),
       values, DType::f32},
      {tn::file(1, "{'descr':'<f4','fortran_order':False,'shape':(3,)}\t\r\n  ", tn::raw<float>({1.5f, -2, 0.25f})),
       values, DType::f32},
      {tn::file(1, dict("<f4", false, "(1, 3,)"), tn::raw<float>({1.5f, -2, 0.25f})), values, DType::f32},
      {tn::file(1, dict("<f4", false, "( 3 , )"), tn::raw<float>({1.5f, -2, 0.25f})), values, DType::f32},
  };
  for (const Row& r : rows) {
    CAPTURE(r.file.substr(10, 40));
    const Tensor t = parse(r.file);
    CHECK(t.dtype() == r.dtype);
    CHECK(t.numel() == static_cast<std::int64_t>(r.want.size()));
    CHECK(t.to_vector<double>() == r.want);
  }
  const Tensor flags = parse(rows[10].file);  // bool bytes other than 0 and 1 are stored as 1
  CHECK(std::memcmp(flags.data_ptr(), "\0\1\1\1", 4) == 0);
  NpyReadOptions as_bf16{};
  as_bf16.u2_as_bf16 = true;
  CHECK(parse(tn::file(1, dict(">u2", false, "(3,)"), tn::raw<std::uint16_t>({0x3FC0, 0xC000, 0x3E80}, true)), as_bf16)
            .to_vector<double>() == values);
}

TEST_CASE("hand-made files in Fortran order read as the transposed view numpy returns", "[npy]") {
  const Tensor x = parse(tn::file(1, dict("<f4", true, "(2, 3)"), tn::raw<float>({1, 4, 2, 5, 3, 6})));
  CHECK(x.shape() == Shape{2, 3});
  CHECK(x.strides() == Strides{1, 2});
  CHECK_FALSE(x.is_contiguous());
  CHECK(x.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  std::vector<double> column_major;  // element [i, j, k] = 100 i + 10 j + k
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) column_major.push_back(100 * i + 10 * j + k);
  const Tensor y = parse(tn::file(1, dict(">f8", true, "(2, 3, 4)"), tn::raw<double>(column_major, true)));
  CHECK(y.strides() == Strides{1, 2, 6});
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t k = 0; k < 4; ++k) CHECK(y.at<double>({i, j, k}) == static_cast<double>(100 * i + 10 * j + k));
  CHECK(parse(tn::file(1, dict("<i4", true, "(3,)"), tn::raw<std::int32_t>({1, 2, 3}))).strides() == Strides{1});
}

TEST_CASE("hand-made files in format versions 2.0 and 3.0", "[npy]") {
  const std::string data = tn::raw<float>({1, 2, 3, 4});
  for (int major : {1, 2, 3}) {
    CAPTURE(major);
    std::string header = dict("<f4", false, "(2, 2)");
    header += std::string(64 - (header.size() + (major == 1 ? 10 : 12) + 1) % 64, ' ') + "\n";
    const std::string file = tn::file(major, header, data);
    CHECK((file.size() - data.size()) % 64 == 0);
    CHECK(parse(file).to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  }
  // Version 3.0 is the one whose header is UTF-8; einexpr's names are ASCII, so non-ASCII
  // can only be part of a refused descr, which the message shows escaped.
  CHECK_THROWS_WITH(parse(tn::file(3, dict("\xe2\x82\xac", false, "(1,)"), "abcd")),
                    Catch::StartsWith("hand.npy: unsupported dtype descr '\\xe2\\x82\\xac'"));
}

TEST_CASE("read_npy: files that cannot be opened or are not regular files", "[npy][errors]") {
  const tn::ScratchDir dir;
  CHECK_THROWS_WITH(read_npy(dir / "absent.npy"), dir / "absent.npy" + ": cannot open: No such file or directory");
  std::filesystem::create_directory(dir / "d.npy");
  CHECK_THROWS_WITH(read_npy(dir / "d.npy"), dir / "d.npy" + ": not a regular file");
  tn::write_file(dir / "empty.npy", "");
  CHECK_THROWS_WITH(read_npy(dir / "empty.npy"),
                    dir / "empty.npy" + ": not a .npy file (it does not start with the magic string \\x93NUMPY)");
}

TEST_CASE("read_npy_info: the dtype and shape read_npy gives, from the header alone", "[npy]") {
  const tn::ScratchDir dir;
  int i = 0;
  for (DType d : {DType::f64, DType::f32, DType::bf16, DType::i32, DType::boolean})
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{3, 4}, Shape{2, 3, 5}})
      for (bool fortran : {false, true}) {
        const std::string path = dir / ("x" + std::to_string(i++) + ".npy");
        write_npy(path, Tensor::randn(shape, d, 7), NpyWriteOptions{fortran, false});
        CAPTURE(path, name(d), shape_str(shape), fortran);
        const NpyInfo info = read_npy_info(path);
        const Tensor t = read_npy(path);
        CHECK(info.dtype == t.dtype());
        CHECK(info.shape == t.shape());
        CHECK(info.fortran_order == fortran);
      }
  // A header that lies about the data is refused as read_npy refuses it, and a missing file.
  const std::string cut = dir / "cut.npy";
  tn::write_file(cut, tn::file(1, dict("<f4", false, "(2, 3)"), tn::raw<float>({1, 2, 3, 4, 5})));
  CHECK_THROWS_WITH(read_npy_info(cut), Catch::Contains("cut.npy: the .npy data is 20 bytes, but shape [2, 3] of <f4 "
                                                        "needs 24 (the file is truncated)"));
  CHECK_THROWS_WITH(read_npy_info(dir / "none.npy"), Catch::Contains("none.npy: cannot open"));
}
