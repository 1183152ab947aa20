// The .npy writer: byte-exact output against headers written by hand as numpy 1.x / 2.x
// writes them (with its 21 spare spaces for the growth axis and padding to 64 bytes), C and
// Fortran order, non-contiguous tensors, version 2.0 for huge headers, fp8 refused, and
// write_npy's temporary file + rename (nothing left behind after a failure).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/npy.hpp"
#include "einexpr/runtime/threads.hpp"
#include "npy_support.hpp"

using namespace einexpr;
namespace tn = einexpr::testnpy;

TEST_CASE("npy_bytes writes numpy's exact header and little-endian data, for each dtype", "[npy]") {
  struct Row { Tensor t; NpyWriteOptions options; std::string header; std::string data; };
  const NpyWriteOptions c{};
  NpyWriteOptions u2{};
  u2.bf16_as_u2 = true;
  const Row rows[] = {
      {Tensor::from_vector<double>({1.5, -2, 3, 0.25, 5, 6}, {2, 3}), c,
       tn::v1_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 58),
       tn::raw<double>({1.5, -2, 3, 0.25, 5, 6})},
      {Tensor::from_vector<float>({1.5f, -2, 3, 0.25f, 5, 6}, {2, 3}), c,
       tn::v1_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 58),
       tn::raw<float>({1.5f, -2, 3, 0.25f, 5, 6})},
      {Tensor::from_doubles({1, -2, 0.5}, {3}, DType::f16), c,
       tn::v1_header("{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", 60),
       tn::raw<std::uint16_t>({0x3C00, 0xC000, 0x3800})},
      {Tensor::from_vector<std::int64_t>({-1, 2, 1LL << 40, 4}, {2, 2}), c,
       tn::v1_header("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", 58),
       tn::raw<std::int64_t>({-1, 2, 1LL << 40, 4})},
      {Tensor::full({}, -7, DType::i32), c,
       tn::v1_header("{'descr': '<i4', 'fortran_order': False, 'shape': (), }", 62),  // no growth axis
       tn::raw<std::int32_t>({-7})},
      {Tensor::from_vector<bool>({true, false, false, true}, {4}), c,
       tn::v1_header("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", 60), std::string("\1\0\0\1", 4)},
      {Tensor::from_doubles({1, -2}, {2}, DType::bf16), c,  // ml_dtypes' bfloat16 through np.save
       tn::v1_header("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", 60),
       tn::raw<std::uint16_t>({0x3F80, 0xC000})},
      {Tensor::from_doubles({1, -2}, {2}, DType::bf16), u2,
       tn::v1_header("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", 60),
       tn::raw<std::uint16_t>({0x3F80, 0xC000})},
      {Tensor::zeros({0}), c, tn::v1_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", 60), ""},
      {Tensor::zeros({100000, 0}), c,  // the growth axis' digits are taken from the spare spaces
       tn::v1_header("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 0), }", 53), ""},
      // Already a multiple of 64 without padding: numpy still pads, with a whole 64 spaces.
      {Tensor::zeros({0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}), c,
       tn::v1_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14), }",
                     20 + 64),
       ""},
  };
  for (const Row& r : rows) {
    CAPTURE(r.header);
    const std::string got = tn::text(npy_bytes(r.t, r.options));
    CHECK(r.header.size() % 64 == 0);  // the hand-written header is aligned as numpy aligns it
    CHECK(got == r.header + r.data);
  }
}

TEST_CASE("npy_bytes in Fortran order: the header says so, the data goes column by column", "[npy]") {
  NpyWriteOptions f{};
  f.fortran_order = true;
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(tn::text(npy_bytes(x, f)) ==
        tn::v1_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 59) +
            tn::raw<float>({1, 4, 2, 5, 3, 6}));
  // Three dims; numpy's spare spaces follow the last axis in Fortran order.
  const Tensor y = Tensor::arange(24, DType::f64).view({3, 2, 4});
  std::vector<double> column_major;
  for (std::int64_t k = 0; k < 4; ++k)
    for (std::int64_t j = 0; j < 2; ++j)
      for (std::int64_t i = 0; i < 3; ++i) column_major.push_back(static_cast<double>(i * 8 + j * 4 + k));
  CHECK(tn::text(npy_bytes(y, f)) ==
        tn::v1_header("{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2, 4), }", 56) +
            tn::raw<double>(column_major));
  // A 1-D tensor reads the same either way.
  CHECK(tn::text(npy_bytes(Tensor::arange(3), f)) ==
        tn::v1_header("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", 61) + tn::raw<float>({0, 1, 2}));
}

TEST_CASE("npy_bytes writes non-contiguous tensors in logical order", "[npy]") {
  const Tensor base = Tensor::randn({4, 6}, DType::f32, 8);
  const std::vector<Tensor> views = {base.transpose(0, 1), base.slice(1, 1, 6, 2), base.select(1, 3),
                                     base.as_strided({3, 2}, {0, 5}, 1)};
  for (const Tensor& v : views) {
    CAPTURE(shape_str(v.shape()), shape_str(v.strides()));
    const std::string got = tn::text(npy_bytes(v));
    const std::string data = tn::raw<float>(v.to_vector<float>());
    CHECK(got.size() % 64 == data.size() % 64);
    CHECK(got.substr(got.size() - data.size()) == data);
    CHECK(got == tn::text(npy_bytes(v.contiguous())));
  }
}

TEST_CASE("npy_bytes switches to version 2.0 only when the header passes 65535 bytes", "[npy]") {
  const Tensor t = Tensor::zeros(Shape(22000, 1));
  const std::string got = tn::text(npy_bytes(t));
  std::string shape = "(1";
  for (int i = 1; i < 22000; ++i) shape += ", 1";
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + "), }";
  REQUIRE(got.size() > 12 + dict.size());
  CHECK(got.substr(0, 8) == std::string("\x93NUMPY\x02\x00", 8));
  const std::size_t len = static_cast<unsigned char>(got[8]) | static_cast<unsigned char>(got[9]) << 8 |
                          static_cast<unsigned char>(got[10]) << 16 | static_cast<unsigned char>(got[11]) << 24;
  CHECK(len + 12 + 4 == got.size());  // header, then one f32
  CHECK((12 + len) % 64 == 0);
  CHECK(got.substr(12, dict.size()) == dict);
  const std::string padding = got.substr(12 + dict.size(), len - dict.size() - 1);
  CHECK(padding == std::string(padding.size(), ' '));
  CHECK(padding.size() >= 21);   // 20 spare spaces and at least one of padding
  CHECK(padding.size() <= 84);
  CHECK(got[12 + len - 1] == '\n');
  CHECK(tn::text(npy_bytes(Tensor::zeros(Shape(20000, 1)))).substr(6, 2) == std::string("\x01\x00", 2));
}

TEST_CASE("fp8 tensors are refused: no .npy descr tells E4M3 from E5M2", "[npy][errors]") {
  for (DType d : {DType::f8_e4m3, DType::f8_e5m2}) {
    CAPTURE(name(d));
    const Tensor t = Tensor::ones({2}, d);
    CHECK_THROWS_AS(npy_bytes(t), DTypeError);
    CHECK_THROWS_WITH(npy_bytes(t), std::string(name(d)) +
                          " cannot be stored unambiguously in a .npy file: ml_dtypes writes every fp8 format as a "
                          "1-byte void ('|V1'), so no reader can tell E4M3 from E5M2; convert it first, e.g. "
                          ".to(DType::f16), which holds every fp8 value exactly");
    CHECK(t.to(DType::f16).to(d).to_vector<double>() == t.to_vector<double>());
  }
  CHECK_THROWS_WITH(npy_bytes(Tensor()), "cannot write an undefined tensor to a .npy file");
}

TEST_CASE("write_npy writes through a temporary file renamed into place", "[npy]") {
  const tn::ScratchDir dir;
  const Tensor x = Tensor::randn({3, 5}, DType::f64, 4);
  write_npy(dir / "x.npy", x);
  CHECK(dir.entries() == std::set<std::string>{"x.npy"});
  CHECK(tn::read_file(dir / "x.npy") == tn::text(npy_bytes(x)));
  tn::write_file(dir / "y.npy", "old contents");
  write_npy(dir / "y.npy", x.transpose(0, 1), NpyWriteOptions{true, false});  // replaces a file
  CHECK(tn::read_file(dir / "y.npy") == tn::text(npy_bytes(x.transpose(0, 1), NpyWriteOptions{true, false})));
  CHECK(dir.entries() == std::set<std::string>{"x.npy", "y.npy"});
}

TEST_CASE("a failed write_npy leaves no file and no temporary behind", "[npy][errors]") {
  const tn::ScratchDir dir;
  const Tensor x = Tensor::ones({256}, DType::f32);
  struct Row { std::string path; Tensor t; std::string message; };
  const Row rows[] = {
      {dir / "missing/x.npy", x,
       dir / "missing/x.npy" + ": cannot create a temporary file beside it (" + dir / "missing/x.npy" +
           ".einexpr-tmp-"},
      {dir / "fp8.npy", Tensor::ones({2}, DType::f8_e5m2),
       dir / "fp8.npy" + ": f8_e5m2 cannot be stored unambiguously in a .npy file"},
      {dir / "sub", x, dir / "sub" + ": cannot rename the temporary file onto it: Is a directory"},
  };
  std::filesystem::create_directory(dir / "sub");
  for (const Row& r : rows) {
    CAPTURE(r.path);
    CHECK_THROWS_WITH(write_npy(r.path, r.t), Catch::StartsWith(r.message));
    CHECK(dir.entries() == std::set<std::string>{"sub"});
  }
  CHECK_THROWS_AS(write_npy(dir / "fp8.npy", Tensor::ones({2}, DType::f8_e4m3)), DTypeError);
  CHECK_THROWS_WITH(write_npy(dir / "missing/x.npy", x), Catch::EndsWith("No such file or directory"));
}

TEST_CASE("a write that fails part way (file size limit) removes its temporary", "[npy][errors]") {
  const tn::ScratchDir dir;
  // Start OpenMP before the limit: LLVM's libomp (clang builds) writes a registration file
  // in /dev/shm at start-up, which a 512-byte limit makes fail (SIGBUS).
  (void)num_threads();
  const Tensor ones = Tensor::ones({1000}, DType::f32);
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  void (*old_handler)(int) = ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG
  rlimit limited = old;
  limited.rlim_cur = 512;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
  std::string message;
  try {
    write_npy(dir / "big.npy", ones);
  } catch (const Error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  CHECK(message == dir / "big.npy" + ": cannot write: File too large");
  CHECK(dir.entries().empty());
  write_npy(dir / "big.npy", Tensor::ones({1000}, DType::f32));  // fine again without the limit
  CHECK(dir.entries() == std::set<std::string>{"big.npy"});
}
