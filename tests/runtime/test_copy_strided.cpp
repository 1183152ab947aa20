// copy_strided's loops (runtime/copy_strided.cpp), each checked byte for byte against an
// element-by-element reference that also proves nothing outside the destination changed:
// row copies, broadcast fills, transposes (panels of register blocks, partial at the edges;
// test_copy_permute.cpp goes through every permutation) and strided gathers; outputs large
// enough for streaming stores, at misaligned offsets with ragged tails; every element size;
// and 1 and 2 threads giving identical bytes. copy_rows_together (several row copies in one
// pass: a split's outputs) against the same reference, and as_rows' view of a copy as rows.
// The streaming memcpy under them, each vector width this CPU runs, at every dst alignment.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "../../runtime/copy_simd.hpp"
#include "copy_reference.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/strided.hpp"
#include "einexpr/runtime/threads.hpp"

using namespace einexpr;

namespace {

using namespace copy_test;

/// Runs copy_strided on pattern data and compares with the reference, at `threads` threads.
Bytes check_copy(const Layout& dl, const Layout& sl, std::size_t es, int threads) {
  const Bytes src = pattern_bytes(extent(sl) * es, 1);
  Bytes dst = pattern_bytes(extent(dl) * es, 2);
  const Bytes want = reference(dst, dl, src, sl, es);
  const int saved = num_threads();
  set_num_threads(threads);
  copy_strided(dst.data(), dl, src.data(), sl, es);
  set_num_threads(saved);
  CHECK(first_difference(dst, want) == -1);
  return dst;
}

struct Case {
  std::string what;
  Layout dst, src;
};

/// A dst in row-major order and a src of the same shape stored in `src_order`.
Case permuted(const std::string& what, const Shape& shape, const std::vector<int>& src_order,
              std::int64_t dst_offset = 0, std::int64_t src_offset = 0) {
  std::vector<int> row_major(shape.size());
  std::iota(row_major.begin(), row_major.end(), 0);
  return {what, Layout{shape, strides_in_order(shape, row_major), dst_offset},
          Layout{shape, strides_in_order(shape, src_order), src_offset}};
}

}  // namespace

TEST_CASE("copy_strided transposes, copies rows, fills and gathers like the element loop", "[strided][copy]") {
  std::vector<Case> cases = {
      permuted("2-d transpose, ragged edges", {17, 33}, {1, 0}),
      permuted("b c h w -> b h w c, small", {2, 5, 7, 9}, {0, 3, 1, 2}),
      permuted("16x16 blocks and 8-wide rest", {40, 24}, {1, 0}),
      permuted("one tile line, many pages", {3, 2100, 16}, {0, 2, 1}),
      permuted("inner dim shorter than a block", {300, 3}, {1, 0}),
      permuted("J shorter than a block", {5, 200}, {1, 0}),
      permuted("at offsets", {19, 21}, {1, 0}, 5, 3),
      permuted("contiguous rows", {4, 6, 50}, {0, 1, 2}, 1, 2),
      permuted("rows of a split-off dim", {6, 4, 70}, {1, 0, 2}),
  };
  // broadcast: a stride-0 inner dim, and a stride-0 outer dim over contiguous rows
  cases.push_back({"broadcast inner", Layout{{7, 130}, {130, 1}, 0}, Layout{{7, 130}, {1, 0}, 0}});
  cases.push_back({"broadcast outer", Layout{{5, 90}, {90, 1}, 3}, Layout{{5, 90}, {0, 1}, 1}});
  // gather: no unit-stride src dim; a strided dst; a dst with gaps
  cases.push_back({"gather", Layout{{9, 11}, {11, 1}, 0}, Layout{{9, 11}, {2, 40}, 0}});
  cases.push_back({"into a transposed dst", Layout{{13, 29}, {1, 13}, 0}, Layout{{13, 29}, {29, 1}, 0}});
  cases.push_back({"into a dst with gaps", Layout{{10, 20}, {50, 2}, 1}, Layout{{10, 20}, {1, 10}, 0}});
  for (const Case& c : cases)
    for (std::size_t es : {1, 2, 4, 8, 16}) {
      CAPTURE(c.what, es);
      check_copy(c.dst, c.src, es, 1);
      check_copy(c.dst, c.src, es, 2);
    }
}

TEST_CASE("copy_strided streams large outputs, misaligned and ragged, the same at 1 and 2 threads",
          "[strided][copy][stream]") {
  const std::int64_t mib8 = std::int64_t{8} << 20;
  for (std::size_t es : {1, 2, 4, 8}) {
    const auto e = static_cast<std::int64_t>(es);
    // transposes just over 8 MiB with edges in both dims; at a dst offset that breaks alignment
    const std::int64_t cols = 2049, rows = mib8 / e / cols + 7;
    std::vector<Case> cases = {permuted("transpose", {rows, cols}, {1, 0}),
                               permuted("transpose misaligned", {rows, cols}, {1, 0}, 1, 0),
                               permuted("rows misaligned", {3, mib8 / e / 3 + 5}, {0, 1}, 3, 1)};
    cases.push_back({"broadcast fill", Layout{{mib8 / e + 13}, {1}, 1}, Layout{{mib8 / e + 13}, {0}, 2}});
    cases.push_back({"repeat rows", Layout{{9, mib8 / e / 9 + 3}, {mib8 / e / 9 + 3, 1}, 0},
                     Layout{{9, mib8 / e / 9 + 3}, {0, 1}, 0}});
    for (const Case& c : cases) {
      CAPTURE(c.what, es);
      const Bytes one = check_copy(c.dst, c.src, es, 1);
      const Bytes two = check_copy(c.dst, c.src, es, 2);
      CHECK(first_difference(one, two) == -1);
    }
  }
}

TEST_CASE("stream_copy: every dst alignment and short length, each width this CPU runs, nothing else written",
          "[strided][copy][stream]") {
  std::vector<std::pair<std::string, void (*)(std::byte*, const std::byte*, std::size_t)>> kernels{
      {"dispatched", simd::stream_copy}};
#if defined(__x86_64__)
  simd::PanelKernel k[2];
  const int n = simd::panel_kernels(4, k);
  for (int i = 0; i < n; ++i) {
    if (std::string(k[i].isa) == "avx512") kernels.emplace_back("avx512", simd::detail::avx512_panels().stream_copy);
    if (std::string(k[i].isa) == "avx2") kernels.emplace_back("avx2", simd::detail::avx2_panels().stream_copy);
  }
#endif
  const Bytes src = pattern_bytes(8192 + 64, 1), before = pattern_bytes(8192 + 192, 2);
  std::vector<std::size_t> lengths;
  for (std::size_t len = 0; len <= 200; ++len) lengths.push_back(len);
  for (std::size_t len : {255, 256, 257, 1000, 3072, 4099, 8192}) lengths.push_back(len);
  for (const auto& [isa, copy] : kernels) {
    REQUIRE(copy != nullptr);
    Bytes dst = before;
    // dst's 64-byte boundary, found in the buffer (vector storage need not be line aligned)
    const std::size_t line = (64 - reinterpret_cast<std::uintptr_t>(dst.data()) % 64) % 64;
    for (std::size_t dst_off = 0; dst_off <= 64; ++dst_off)
      for (std::size_t src_off : {0, 1, 5, 32})
        for (std::size_t len : lengths) {
          CAPTURE(isa, dst_off, src_off, len);
          std::byte* d = dst.data() + line + dst_off;
          copy(d, src.data() + src_off, len);
          simd::store_fence();
          const std::size_t at = line + dst_off;
          bool same = std::memcmp(d, src.data() + src_off, len) == 0;
          bool untouched = std::memcmp(dst.data(), before.data(), at) == 0 &&
                           std::memcmp(d + len, before.data() + at + len, dst.size() - at - len) == 0;
          if (!same || !untouched) {
            CHECK(same);
            CHECK(untouched);
            return;
          }
          std::memcpy(d, before.data() + at, len);  // as before, for the next case
        }
  }
}

TEST_CASE("as_rows sees a copy as rows only where both views have contiguous rows", "[strided][copy]") {
  std::byte d[1024], s[1024];  // the views below reach into these only as offsets
  // a split's output: rows of 5 out of 16 at an offset; dst contiguous
  const std::optional<RowCopy> r = as_rows(d, Layout{{4, 3, 5}, {15, 5, 1}, 2}, s, Layout{{4, 3, 5}, {48, 16, 1}, 7}, 4);
  REQUIRE(r);
  CHECK(r->rows == 12);
  CHECK(r->length == 5);
  CHECK(r->dst_step == 5);
  CHECK(r->src_step == 16);
  CHECK(r->dst == d + 2 * 4);
  CHECK(r->src == s + 7 * 4);
  // both contiguous: one row of everything
  const std::optional<RowCopy> whole = as_rows(d, Layout{{6, 7}, {7, 1}, 0}, s, Layout{{6, 7}, {7, 1}, 0}, 2);
  REQUIRE(whole);
  CHECK(whole->rows == 1);
  CHECK(whole->length == 42);
  // empty: no rows
  const std::optional<RowCopy> none = as_rows(d, Layout{{0, 7}, {7, 1}, 0}, s, Layout{{0, 7}, {9, 1}, 0}, 2);
  REQUIRE(none);
  CHECK(none->rows == 0);
  // a column: rows of one element
  const std::optional<RowCopy> column = as_rows(d, Layout{{9, 1}, {1, 1}, 0}, s, Layout{{9, 1}, {13, 1}, 4}, 2);
  REQUIRE(column);
  CHECK(column->rows == 9);
  CHECK(column->length == 1);
  CHECK(column->dst_step == 1);
  CHECK(column->src_step == 13);
  // a transpose, a strided inner dim, three dims that do not collapse: not rows
  CHECK_FALSE(as_rows(d, Layout{{6, 7}, {7, 1}, 0}, s, Layout{{6, 7}, {1, 6}, 0}, 4));
  CHECK_FALSE(as_rows(d, Layout{{6, 7}, {7, 1}, 0}, s, Layout{{6, 7}, {20, 2}, 0}, 4));
  CHECK_FALSE(as_rows(d, Layout{{2, 3, 4}, {12, 4, 1}, 0}, s, Layout{{2, 3, 4}, {40, 8, 1}, 0}, 4));
}

TEST_CASE("copy_rows_together: a split's copies in one pass, like copy_strided each, at 1 and 2 threads",
          "[strided][copy][stream]") {
  // rows of `parts` elements side by side in one source row of `src_row` (a gap at the end),
  // each part copied into its own destination; small (one thread, cached stores) and past
  // stream_output_bytes in all (pieces on both threads, streamed), the destinations at
  // offsets that break the alignment of every row
  struct Split {
    std::string what;
    std::int64_t rows;
    std::vector<std::int64_t> parts;
    std::int64_t gap, dst_offset;
  };
  const std::int64_t mib = std::int64_t{1} << 20;
  for (std::size_t es : {1, 2, 4, 8, 16}) {
    const auto e = static_cast<std::int64_t>(es);
    const std::vector<Split> splits = {
        {"small, three parts", 70, {5, 7, 4}, 0, 0},
        {"small, a gap, misaligned", 65, {3, 1, 9}, 2, 1},
        {"past the streaming size", 3 * mib / e / 1000 + 1, {1000, 1000, 1000 + 3}, 0, 0},
        {"past the streaming size, misaligned", 8 * mib / e / 700 + 5, {300, 401}, 5, 3},
    };
    for (const Split& sp : splits) {
      if (sp.rows > 100 && es != 1 && es != 8) continue;  // the large ones at two sizes: the reference is slow
      CAPTURE(sp.what, es);
      std::int64_t src_row = sp.gap;
      for (std::int64_t p : sp.parts) src_row += p;
      const Layout src_all{{sp.rows, src_row}, {src_row, 1}, 0};
      const Bytes src = pattern_bytes(extent(src_all) * es, 3);
      std::vector<Bytes> by_thread[2];
      for (int threads : {1, 2}) {
        std::vector<Bytes> dsts, wants;
        std::vector<RowCopy> copies;
        std::int64_t at = 0;
        for (std::size_t j = 0; j < sp.parts.size(); ++j) {
          const std::int64_t n = sp.parts[j];
          const Layout dl{{sp.rows, n}, {n, 1}, sp.dst_offset};
          const Layout sl{{sp.rows, n}, {src_row, 1}, at};
          at += n;
          dsts.push_back(pattern_bytes(extent(dl) * es, 4 + static_cast<unsigned>(j)));
          wants.push_back(reference(dsts.back(), dl, src, sl, es));
        }
        at = 0;
        for (std::size_t j = 0; j < sp.parts.size(); ++j) {
          const std::int64_t n = sp.parts[j];
          const std::optional<RowCopy> r = as_rows(dsts[j].data(), Layout{{sp.rows, n}, {n, 1}, sp.dst_offset}, src.data(),
                                                   Layout{{sp.rows, n}, {src_row, 1}, at}, es);
          at += n;
          REQUIRE(r);
          CHECK(r->rows == sp.rows);
          copies.push_back(*r);
        }
        const int saved = num_threads();
        set_num_threads(threads);
        copy_rows_together(copies, es);
        set_num_threads(saved);
        for (std::size_t j = 0; j < dsts.size(); ++j) {
          CAPTURE(j, threads);
          CHECK(first_difference(dsts[j], wants[j]) == -1);
        }
        by_thread[threads - 1] = std::move(dsts);
      }
      for (std::size_t j = 0; j < by_thread[0].size(); ++j) CHECK(first_difference(by_thread[0][j], by_thread[1][j]) == -1);
    }
  }
}
