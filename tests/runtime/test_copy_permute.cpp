// copy_strided's permutation path (runtime/copy_permute.cpp) against the element loop, byte
// for byte and with nothing outside the destination touched: every permutation of ranks 1-6
// on small shapes, every element size, every panel kernel this CPU runs (AVX-512, AVX2, the
// element loop), contiguous and strided sources and destinations; sizes 1 and primes in
// every position; HPTT's 57 permutations (bench/suite_cases.py) at reduced sizes, streamed
// and on two threads; every dtype through Tensor::contiguous(); and how the nest is cut.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../../runtime/copy_permute.hpp"
#include "copy_reference.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/strided.hpp"
#include "einexpr/runtime/tensor.hpp"
#include "einexpr/runtime/threads.hpp"
#include "sanitized.hpp"

using namespace einexpr;
using namespace copy_test;

namespace {

/// The panel kernels to run: each this CPU has, and the element loop.
std::vector<std::string> kernels() {
  std::vector<std::string> out;
  for (const char* isa : {"avx512", "avx2", "scalar"})
    if (detail::force_panel_isa(isa)) out.push_back(isa);
  detail::force_panel_isa("");
  return out;
}

/// Restores the default kernel and thread count on scope exit.
struct Restore {
  int threads = num_threads();
  ~Restore() {
    detail::force_panel_isa("");
    set_num_threads(threads);
  }
};

/// How src and dst are laid out around the permutation.
enum class Lay { contiguous, strided_src, strided_dst, both_strided };

/// x of `shape` (row-major, or padded rows at an offset), copied into dst = x.permute(perm)
/// (row-major, or padded); true where copy_strided matched the reference.
bool check_permutation(const Shape& shape, const std::vector<int>& perm, std::size_t es, Lay lay) {
  const std::size_t r = shape.size();
  std::vector<int> order(r);
  std::iota(order.begin(), order.end(), 0);
  // padded: every dim's stride grows by one element more than dense (rows of odd length)
  auto strides_of = [&](const Shape& s, bool padded) {
    Strides st(s.size(), 1);
    for (std::size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d] + (padded ? 1 : 0);
    return st;
  };
  const bool ps = lay == Lay::strided_src || lay == Lay::both_strided;
  const bool pd = lay == Lay::strided_dst || lay == Lay::both_strided;
  const Strides xs = strides_of(shape, ps);
  Shape ds;
  Strides ss;
  for (int p : perm) {
    ds.push_back(shape[static_cast<std::size_t>(p)]);
    ss.push_back(xs[static_cast<std::size_t>(p)]);
  }
  const Layout sl{ds, ss, ps ? 3 : 0}, dl{ds, strides_of(ds, pd), pd ? 5 : 0};
  const Bytes src = pattern_bytes(extent(sl) * es, 1);
  Bytes dst = pattern_bytes(extent(dl) * es, 2);
  const Bytes want = reference(dst, dl, src, sl, es);
  copy_strided(dst.data(), dl, src.data(), sl, es);
  return first_difference(dst, want) == -1;
}

std::string str(const std::vector<std::int64_t>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
  return s;
}

}  // namespace

TEST_CASE("every permutation of ranks 1-6, every element size and panel kernel, contiguous and strided",
          "[strided][copy][permute]") {
  Restore restore;
  const std::vector<std::int64_t> lengths = {1, 2, 3, 5, 7, 13, 16, 17, 19, 31, 32, 33, 48, 64, 67};
  const std::int64_t budget[7] = {0, 4096, 6000, 5000, 3000, 1500, 800};
  for (const std::string& isa : kernels()) {
    REQUIRE(detail::force_panel_isa(isa));
    std::mt19937 rng(12345);
    for (int rank = 1; rank <= 6; ++rank) {
      std::vector<int> perm(static_cast<std::size_t>(rank));
      std::iota(perm.begin(), perm.end(), 0);
      int index = 0;
      do {
        Shape shape;
        std::int64_t total = 1;
        for (int d = 0; d < rank; ++d) {
          std::int64_t len = lengths[rng() % lengths.size()];
          while (len > 1 && total * len > budget[rank]) len = len / 2;
          shape.push_back(len);
          total *= len;
        }
        const std::size_t sizes[5] = {1, 2, 4, 8, 16};
        for (int k = 0; k < (rank == 6 ? 2 : 5); ++k) {
          const std::size_t es = sizes[(static_cast<std::size_t>(index) + static_cast<std::size_t>(k) * 3) % 5];
          const Lay lay = static_cast<Lay>((index + k) % 4);
          CAPTURE(isa, str(shape), perm, es, static_cast<int>(lay));
          CHECK(check_permutation(shape, perm, es, lay));
        }
        ++index;
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
  }
}

TEST_CASE("sizes 1 and primes in every position of every permutation kind", "[strided][copy][permute]") {
  Restore restore;
  const std::vector<std::vector<int>> perms = {{1, 0}, {0, 2, 1}, {2, 1, 0}, {1, 2, 0}, {3, 2, 1, 0},
                                               {2, 0, 3, 1}, {1, 0, 3, 2}, {4, 3, 2, 1, 0}, {2, 0, 4, 1, 3}};
  for (const std::string& isa : kernels()) {
    REQUIRE(detail::force_panel_isa(isa));
    for (const auto& perm : perms) {
      const Shape base(perm.size(), perm.size() <= 3 ? 24 : 8);
      for (std::size_t pos = 0; pos < perm.size(); ++pos)
        for (std::int64_t odd : {1, 2, 3, 7, 13, 61}) {
          Shape shape = base;
          shape[pos] = odd;
          for (std::size_t es : {1, 2, 4, 8})
            for (Lay lay : {Lay::contiguous, Lay::both_strided}) {
              CAPTURE(isa, str(shape), perm, es, static_cast<int>(lay));
              CHECK(check_permutation(shape, perm, es, lay));
            }
        }
    }
  }
}

namespace {

struct Suite {
  std::vector<int> perm;  // output dim k is input dim perm[k]
  Shape shape;            // the input's, row-major
};

/// HPTT's permutations in row-major form (bench/suite_cases.py), each size above 8 divided
/// by one factor per case (odd ones kept odd) to at most 2^17 elements.
const std::vector<Suite>& hptt_reduced() {
  static const std::vector<Suite> cases = {
    {{1, 0}, {345, 345}},  // 1: a b -> b a 7264x7264
    {{1, 0}, {60, 2170}},  // 2: a b -> b a 1216x43408
    {{1, 0}, {2170, 60}},  // 3: a b -> b a 43408x1216
    {{1, 0, 2}, {48, 48, 46}},  // 4: a b c -> b a c 384x384x368
    {{1, 0, 2}, {48, 8, 268}},  // 5: a b c -> b a c 384x64x2144
    {{1, 0, 2}, {289, 8, 46}},  // 6: a b c -> b a c 2307x64x368
    {{0, 2, 1}, {45, 48, 48}},  // 7: a b c -> a c b 355x384x384
    {{0, 2, 1}, {9, 48, 290}},  // 8: a b c -> a c b 59x384x2320
    {{0, 2, 1}, {9, 290, 48}},  // 9: a b c -> a c b 59x2320x384
    {{2, 1, 0}, {48, 45, 48}},  // 10: a b c -> c b a 384x355x384
    {{2, 1, 0}, {48, 9, 290}},  // 11: a b c -> c b a 384x59x2320
    {{2, 1, 0}, {290, 9, 48}},  // 12: a b c -> c b a 2320x59x384
    {{2, 1, 0, 3}, {19, 15, 19, 16}},  // 13: a b c d -> c b a d 96x75x96x80
    {{2, 1, 0, 3}, {16, 13, 8, 77}},  // 14: a b c d -> c b a d 96x75x16x464
    {{2, 1, 0, 3}, {83, 11, 8, 11}},  // 15: a b c d -> c b a d 582x75x16x80
    {{3, 0, 2, 1}, {15, 19, 15, 19}},  // 16: a b c d -> d a c b 75x96x75x96
    {{3, 0, 2, 1}, {11, 13, 8, 86}},  // 17: a b c d -> d a c b 75x96x12x608
    {{3, 0, 2, 1}, {11, 86, 8, 13}},  // 18: a b c d -> d a c b 75x608x12x96
    {{2, 0, 3, 1}, {15, 19, 15, 19}},  // 19: a b c d -> c a d b 75x96x75x96
    {{2, 0, 3, 1}, {11, 13, 8, 86}},  // 20: a b c d -> c a d b 75x96x12x608
    {{2, 0, 3, 1}, {11, 86, 8, 13}},  // 21: a b c d -> c a d b 75x608x12x96
    {{1, 0, 3, 2}, {15, 15, 19, 19}},  // 22: a b c d -> b a d c 75x75x96x96
    {{1, 0, 3, 2}, {11, 8, 13, 86}},  // 23: a b c d -> b a d c 75x12x96x608
    {{1, 0, 3, 2}, {11, 8, 86, 13}},  // 24: a b c d -> b a d c 75x12x608x96
    {{3, 2, 1, 0}, {19, 15, 15, 19}},  // 25: a b c d -> d c b a 96x75x75x96
    {{3, 2, 1, 0}, {13, 11, 8, 86}},  // 26: a b c d -> d c b a 96x75x12x608
    {{3, 2, 1, 0}, {86, 11, 8, 13}},  // 27: a b c d -> d c b a 608x75x12x96
    {{1, 3, 2, 0, 4}, {12, 8, 8, 12, 8}},  // 28: a b c d e -> b d c a e 48x28x28x48x32
    {{1, 3, 2, 0, 4}, {8, 8, 8, 8, 29}},  // 29: a b c d e -> b d c a e 48x28x28x8x176
    {{1, 3, 2, 0, 4}, {29, 8, 8, 8, 8}},  // 30: a b c d e -> b d c a e 298x28x28x8x32
    {{4, 0, 3, 2, 1}, {8, 12, 8, 8, 12}},  // 31: a b c d e -> e a d c b 28x48x28x28x48
    {{4, 0, 3, 2, 1}, {8, 8, 8, 4, 58}},  // 32: a b c d e -> e a d c b 28x48x28x4x352
    {{4, 0, 3, 2, 1}, {8, 58, 8, 4, 8}},  // 33: a b c d e -> e a d c b 28x352x28x4x48
    {{1, 3, 0, 4, 2}, {8, 8, 12, 8, 12}},  // 34: a b c d e -> b d a e c 28x28x48x28x48
    {{1, 3, 0, 4, 2}, {8, 8, 8, 4, 58}},  // 35: a b c d e -> b d a e c 28x28x48x4x352
    {{1, 3, 0, 4, 2}, {8, 8, 58, 4, 8}},  // 36: a b c d e -> b d a e c 28x28x352x4x48
    {{2, 0, 4, 1, 3}, {8, 8, 8, 12, 12}},  // 37: a b c d e -> c a e b d 28x28x28x48x48
    {{2, 0, 4, 1, 3}, {8, 8, 4, 8, 58}},  // 38: a b c d e -> c a e b d 28x28x4x48x352
    {{2, 0, 4, 1, 3}, {8, 8, 4, 58, 8}},  // 39: a b c d e -> c a e b d 28x28x4x352x48
    {{4, 3, 2, 1, 0}, {12, 8, 8, 8, 12}},  // 40: a b c d e -> e d c b a 48x28x28x28x48
    {{4, 3, 2, 1, 0}, {8, 8, 8, 4, 58}},  // 41: a b c d e -> e d c b a 48x28x28x4x352
    {{4, 3, 2, 1, 0}, {58, 8, 8, 4, 8}},  // 42: a b c d e -> e d c b a 352x28x28x4x48
    {{4, 1, 0, 3, 2, 5}, {9, 9, 8, 9, 8, 8}},  // 43: a b c d e f -> e b a d c f 15x15x32x15x32x16
    {{4, 1, 0, 3, 2, 5}, {9, 9, 8, 9, 8, 8}},  // 44: a b c d e f -> e b a d c f 15x15x32x15x10x48
    {{4, 1, 0, 3, 2, 5}, {9, 9, 9, 9, 8, 8}},  // 45: a b c d e f -> e b a d c f 15x15x103x15x10x16
    {{1, 4, 0, 5, 3, 2}, {9, 9, 8, 9, 9, 8}},  // 46: a b c d e f -> b e a f d c 15x15x32x15x15x32
    {{1, 4, 0, 5, 3, 2}, {9, 9, 8, 9, 5, 8}},  // 47: a b c d e f -> b e a f d c 15x15x32x15x5x112
    {{1, 4, 0, 5, 3, 2}, {9, 9, 8, 9, 5, 8}},  // 48: a b c d e f -> b e a f d c 15x15x112x15x5x32
    {{2, 0, 4, 1, 5, 3}, {9, 9, 9, 8, 9, 8}},  // 49: a b c d e f -> c a e b f d 15x15x15x32x15x32
    {{2, 0, 4, 1, 5, 3}, {9, 9, 9, 8, 5, 8}},  // 50: a b c d e f -> c a e b f d 15x15x15x32x5x112
    {{2, 0, 4, 1, 5, 3}, {9, 9, 9, 8, 5, 8}},  // 51: a b c d e f -> c a e b f d 15x15x15x112x5x32
    {{1, 5, 4, 0, 3, 2}, {9, 9, 8, 9, 9, 8}},  // 52: a b c d e f -> b f e a d c 15x15x32x15x15x32
    {{1, 5, 4, 0, 3, 2}, {9, 9, 8, 9, 5, 8}},  // 53: a b c d e f -> b f e a d c 15x15x32x15x5x112
    {{1, 5, 4, 0, 3, 2}, {9, 9, 8, 9, 5, 8}},  // 54: a b c d e f -> b f e a d c 15x15x112x15x5x32
    {{5, 4, 3, 2, 1, 0}, {8, 9, 9, 9, 9, 8}},  // 55: a b c d e f -> f e d c b a 32x15x15x15x15x32
    {{5, 4, 3, 2, 1, 0}, {8, 9, 9, 9, 5, 8}},  // 56: a b c d e f -> f e d c b a 32x15x15x15x5x112
    {{5, 4, 3, 2, 1, 0}, {8, 9, 9, 9, 5, 8}},  // 57: a b c d e f -> f e d c b a 112x15x15x15x5x32
  };
  return cases;
}

}  // namespace

TEST_CASE("HPTT's 57 permutations at reduced sizes: every kernel, streamed, one and two threads",
          "[strided][copy][permute][suite]") {
  Restore restore;
  REQUIRE(hptt_reduced().size() == 57);
  for (const std::string& isa : kernels()) {
    REQUIRE(detail::force_panel_isa(isa));
    int index = 0;
    for (const Suite& c : hptt_reduced()) {
      ++index;
      if (::test::sanitized && index % 2 == 0) continue;  // every other one under a sanitizer
      for (std::size_t es : {1, 2, 4, 8}) {
        CAPTURE(isa, index, es);
        CHECK(check_permutation(c.shape, c.perm, es, Lay::contiguous));
        // copy_permute itself with streaming stores and threads, which copy_strided turns
        // on only for large copies
        Shape ds;
        Strides ss;
        const Strides xs = strides_in_order(c.shape, [&] {
          std::vector<int> o(c.shape.size());
          std::iota(o.begin(), o.end(), 0);
          return o;
        }());
        for (int p : c.perm) {
          ds.push_back(c.shape[static_cast<std::size_t>(p)]);
          ss.push_back(xs[static_cast<std::size_t>(p)]);
        }
        std::vector<int> row_major(ds.size());
        std::iota(row_major.begin(), row_major.end(), 0);
        const Layout sl{ds, ss, 0}, dl{ds, strides_in_order(ds, row_major), 0};
        const CollapsedDims cd = collapse_dims(ds, {&dl.strides, &sl.strides});
        const Bytes src = pattern_bytes(extent(sl) * es, 3);
        const Bytes want = reference(pattern_bytes(extent(dl) * es, 4), dl, src, sl, es);
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          Bytes dst = pattern_bytes(extent(dl) * es, 4);
          const bool ran = detail::copy_permute(dst.data(), src.data(), cd.shape, cd.strides[0], cd.strides[1], es,
                                                true, true);
          if (ran) CHECK(first_difference(dst, want) == -1);
        }
      }
    }
  }
}

TEST_CASE("permutations large enough to stream, at 1 and 2 threads, misaligned", "[strided][copy][permute][stream]") {
  Restore restore;
  struct Big {
    Shape shape;
    std::vector<int> perm;
  };
  // just over 8 MiB of 4-byte elements; odd lengths on both unit-stride dims
  const std::vector<Big> bigs = {{{37, 61, 31, 31}, {3, 2, 1, 0}}, {{75, 12, 96, 31}, {1, 0, 3, 2}},
                                 {{15, 15, 33, 15, 5, 13}, {5, 4, 3, 2, 1, 0}}};
  for (const Big& b : bigs)
    for (std::size_t es : {2, 4, 8})
      for (Lay lay : {Lay::contiguous, Lay::strided_dst}) {
        std::vector<Bytes> results;
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          CAPTURE(str(b.shape), b.perm, es, threads, static_cast<int>(lay));
          CHECK(check_permutation(b.shape, b.perm, es, lay));
        }
      }
}

TEST_CASE("rows that are not whole lines, gathered and streamed: row lengths, element sizes, offsets",
          "[strided][copy][permute][stream]") {
  // dims in dst order (Q, P, row): rows contiguous on both sides, so copy_permute moves rows;
  // where a row is not a whole number of 64-byte lines a block gathers rows enough to end on
  // one and streams the run (at most 8 KiB: longer ones are copied row by row)
  Restore restore;
  for (std::size_t es : {1, 2, 4, 8})
    for (std::int64_t row : {3, 23, 24, 46, 184, 1000, 2047, 4099})
      for (std::int64_t off : {0, 1, 7}) {
        const std::int64_t nq = 7, np = 13;
        const Shape shape{nq, np, row};
        const Layout dl{shape, {np * row, row, 1}, off}, sl{shape, {row, nq * row, 1}, 2 * off};
        const Bytes src = pattern_bytes(extent(sl) * es, 5);
        const Bytes want = reference(pattern_bytes(extent(dl) * es, 6), dl, src, sl, es);
        for (int threads : {1, 2}) {
          CAPTURE(es, row, off, threads);
          set_num_threads(threads);
          Bytes dst = pattern_bytes(extent(dl) * es, 6);
          REQUIRE(detail::copy_permute(dst.data() + off * static_cast<std::int64_t>(es),
                                       src.data() + 2 * off * static_cast<std::int64_t>(es), shape, dl.strides,
                                       sl.strides, es, true, true));
          CHECK(first_difference(dst, want) == -1);
        }
      }
}

TEST_CASE("panels whose P rows are not whole lines, staged and streamed: sizes, element sizes, offsets, gaps",
          "[strided][copy][permute][stream]") {
  // dims in dst order (Q1, Q0, P): P the dst's unit-stride dim, Q0 and Q1 the src's, Q0 next
  // to P in dst; P rows of np elements are no whole number of lines, so a block's Q positions
  // go through an L1 buffer where they are one run in dst (dense), and straight to dst where a
  // gap in the dst's Q1 stride breaks the run
  Restore restore;
  for (const std::string& isa : kernels()) {
    REQUIRE(detail::force_panel_isa(isa));
    for (std::size_t es : {1, 2, 4, 8})
      for (std::int64_t np : {24, 40, 72})
        for (std::int64_t q0 : {5, 48})
          for (std::int64_t gap : {0, 7})
            for (std::int64_t off : {0, 3}) {
              const std::int64_t q1 = 9;
              const Shape shape{q1, q0, np};
              const Layout dl{shape, {q0 * np + gap, np, 1}, off}, sl{shape, {q0, 1, q0 * q1}, off};
              const Bytes src = pattern_bytes(extent(sl) * es, 7);
              const Bytes want = reference(pattern_bytes(extent(dl) * es, 8), dl, src, sl, es);
              for (int threads : {1, 2}) {
                CAPTURE(isa, es, np, q0, gap, off, threads);
                set_num_threads(threads);
                Bytes dst = pattern_bytes(extent(dl) * es, 8);
                const auto o = off * static_cast<std::int64_t>(es);
                REQUIRE(detail::copy_permute(dst.data() + o, src.data() + o, shape, dl.strides, sl.strides, es, true,
                                             true));
                CHECK(first_difference(dst, want) == -1);
              }
            }
  }
}

TEST_CASE("every dtype permutes through Tensor::contiguous like the element loop", "[strided][copy][permute]") {
  const Shape shape = {3, 17, 5, 33};
  const std::vector<int> perm = {3, 1, 0, 2};
  for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::f8_e4m3, DType::f8_e5m2, DType::i64,
                   DType::i32, DType::boolean}) {
    CAPTURE(name(dt));
    Tensor x = Tensor::empty(shape, dt);
    const std::size_t es = x.element_size();
    Bytes bytes = pattern_bytes(static_cast<std::size_t>(x.nbytes()), 9);
    if (dt == DType::boolean)
      for (auto& v : bytes) v = static_cast<std::byte>(static_cast<unsigned>(v) & 1u);
    std::memcpy(x.data_ptr(), bytes.data(), bytes.size());
    const Tensor view = x.permute(perm);
    const Tensor y = view.contiguous();
    REQUIRE(y.is_contiguous());
    const Layout vl{view.shape(), view.strides(), 0}, yl{y.shape(), y.strides(), 0};
    const Bytes want = reference(Bytes(static_cast<std::size_t>(y.nbytes())), yl, bytes, vl, es);
    const auto* got = static_cast<const std::byte*>(y.data_ptr());
    CHECK(first_difference(Bytes(got, got + y.nbytes()), want) == -1);
  }
}

TEST_CASE("copy_permute cuts the nest into P, Q, outer dims and slabs as documented", "[strided][copy][permute]") {
  Restore restore;
  REQUIRE(detail::force_panel_isa("scalar"));
  struct Row {
    Shape shape;
    Strides dst, src;
    std::size_t es;
    std::string want;
  };
  // the collapsed nest: dims in dst order; the dst is row-major
  const std::vector<Row> rows = {
      // a 2-d transpose: P the dst's rows (800 bytes, whole lines), Q the src's; a slab is
      // every P row (13 blocks of 16) across all of Q (100 x 4 bytes < 16 KiB)
      {{100, 200}, {200, 1}, {1, 100}, 4, "P [d1=200] Q [d0=100] outer [] slab 208x100 block 16x16 (scalar)"},
      // 12^3 reversed, f32: a row of 12 (48 bytes) is shorter than a line, so P takes the
      // next dst dim too (144 elements, 9 lines); Q is the src's unit-stride dim alone
      {{12, 12, 12}, {144, 12, 1}, {1, 12, 144}, 4, "P [d2=12 d1=12] Q [d0=12] outer [] slab 144x12 block 16x16 (scalar)"},
      // rows of 75 f32 (300 bytes, not whole lines): P takes the next dim (75 x 96, 450 lines)
      {{96, 96, 75}, {7200, 75, 1}, {1, 7200, 96}, 4, "P [d2=75 d1=96] Q [d0=96] outer [] slab 336x96 block 16x16 (scalar)"},
      // a 4-d reversal: P's row of 96 is whole lines; Q keeps d0 and d1 (its first 16 KiB);
      // P grows past 1 KiB with d2; Q in 2 even chunks of at most 4096 (3600: 14400 bytes a P
      // row), slabs of one block of 16 P rows (the most 128 KiB allow, and at least one)
      {{96, 75, 75, 96}, {540000, 7200, 96, 1}, {1, 96, 7200, 540000}, 4,
       "P [d3=96 d2=75] Q [d0=96 d1=75] outer [] slab 16x3600 block 16x16 (scalar)"},
      // a step along Q moves the dst 512 bytes: Q's dst lines alias, so chunks of 4 KiB
      // (1024) and slabs of 32 P rows (128 KiB)
      {{8192, 128}, {128, 1}, {1, 8192}, 4, "P [d1=128] Q [d0=8192] outer [] slab 32x1024 block 16x16 (scalar)"},
      // the same with 480 bytes: 16 KiB chunks (4096), one block of P rows a slab
      {{8192, 120}, {120, 1}, {1, 8192}, 4, "P [d1=120] Q [d0=8192] outer [] slab 16x4096 block 16x16 (scalar)"},
      // f64: Q chunks of at most 16 KiB (2048 elements), here all 300
      {{300, 300}, {300, 1}, {1, 300}, 8, "P [d1=300] Q [d0=300] outer [] slab 48x300 block 8x16 (scalar)"},
      // rows of 16 f32 contiguous on both sides (64 bytes) are moved whole: P and Q are the
      // next dims of each side, strides counted in rows
      {{32, 15, 16}, {240, 16, 1}, {16, 512, 1}, 4, "P [d1=15] Q [d0=32] outer [] slab 16x32 block 16x1 (rows of 16)"},
      // the same unit-stride dim on both sides and no other dim contiguous in src: rows
      {{10, 20}, {20, 1}, {40, 1}, 4, ""},
      // P rows of 24 f32 (96 bytes, not whole lines) next to Q's first dim in dst: the element
      // loop writes them as they come (with a vector panel they are staged: below)
      {{9, 5000, 24}, {120000, 24, 1}, {5000, 1, 45000}, 4,
       "P [d2=24] Q [d1=5000 d0=9] outer [] slab 16x4096 block 16x16 (scalar)"},
      // rows of 184 f32 (736 bytes, not whole lines): two rows a block (1472 bytes, 23 lines),
      // gathered and streamed; Q in 2 chunks of 16 (11776 bytes), slabs of 10 P rows
      {{32, 15, 184}, {2760, 184, 1}, {184, 5888, 1}, 4, "P [d1=15] Q [d0=32] outer [] slab 10x16 block 2x1 (rows of 184) staged"},
      // rows of 1 KiB (256 f32) too, one row a block: P a single row (1 KiB), Q chunks of 16
      // rows (16 KiB), slabs of 8 P rows (128 KiB)
      {{32, 15, 256}, {3840, 256, 1}, {256, 8192, 1}, 4, "P [d1=15] Q [d0=32] outer [] slab 8x16 block 1x1 (rows of 256)"},
      // rows of 64 KiB and more go to copy_strided's row loop
      {{4, 3, 16384}, {49152, 16384, 1}, {16384, 65536, 1}, 4, ""},
  };
  for (const Row& r : rows) {
    CAPTURE(str(r.shape));
    CHECK(detail::describe_permute(r.shape, r.dst, r.src, r.es) == r.want);
  }
  // staged panels: a slab holds every P row (2 blocks of 16), its chunk cut to about 256 KiB
  // of src (262144 / 96 bytes = 2730 positions at most: 17 even chunks of 2648, whole blocks)
  if (detail::force_panel_isa("avx2"))
    CHECK(detail::describe_permute({9, 5000, 24}, {120000, 24, 1}, {5000, 1, 45000}, 4) ==
          "P [d2=24] Q [d1=5000 d0=9] outer [] slab 32x2648 block 16x8 (avx2) staged");
}
