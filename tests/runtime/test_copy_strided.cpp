// copy_strided's loops (runtime/copy_strided.cpp), each checked byte for byte against an
// element-by-element reference that also proves nothing outside the destination changed:
// row copies, broadcast fills, transposes (panels of register blocks, partial at the edges;
// test_copy_permute.cpp goes through every permutation) and strided gathers; outputs large
// enough for streaming stores, at misaligned offsets with ragged tails; every element size;
// and 1 and 2 threads giving identical bytes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

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
