// plan_gemm on the CPU: each plan runs through an emulation of cuBLAS's column-major
// strided-batched GEMM as documented (C[i + j ldc] = sum_l op(A)(i, l) op(B)(l, j), op(X)(r, c)
// = X[r + c ld] or, transposed, X[c + r ld]; batch b at offset b * stride; ld at least the
// stored matrix's rows), with the staging copies emulated too, against a direct loop.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "emulate.hpp"
#include "gemm_plan.hpp"

using namespace einexpr;
using namespace einexpr::gpu;
using namespace einexpr::test;

namespace {

struct Arrays {
  std::map<Source, std::vector<double>> buf;
};

void copy_logical(std::vector<double>& dst, const Layout& dl, const std::vector<double>& src, const Layout& sl) {
  for_each_index(dl.shape, [&](const std::vector<std::int64_t>& i) {
    dst.at(static_cast<std::size_t>(offset_of(dl, i))) = src.at(static_cast<std::size_t>(offset_of(sl, i)));
  });
}

// cuBLAS's GEMM, by its documentation; REQUIREs its argument rules.
void fake_gemm(Arrays& arr, const GemmPlan& g, std::int64_t op, std::int64_t oq, std::int64_t od, std::int64_t count,
               std::int64_t sp, std::int64_t sq, std::int64_t sd) {
  const std::int64_t p_rows = g.p.transpose ? g.k : g.m, q_rows = g.q.transpose ? g.n : g.k;
  REQUIRE(g.p.ld >= std::max<std::int64_t>(1, p_rows));
  REQUIRE(g.q.ld >= std::max<std::int64_t>(1, q_rows));
  REQUIRE(g.d.ld >= std::max<std::int64_t>(1, g.m));
  const std::vector<double>& P = arr.buf.at(g.p.source);
  const std::vector<double>& Q = arr.buf.at(g.q.source);
  std::vector<double>& D = arr.buf.at(g.d.source);
  for (std::int64_t t = 0; t < count; ++t)
    for (std::int64_t i = 0; i < g.m; ++i)
      for (std::int64_t j = 0; j < g.n; ++j) {
        double s = 0;
        for (std::int64_t l = 0; l < g.k; ++l) {
          const std::int64_t pi = op + t * sp + (g.p.transpose ? l + i * g.p.ld : i + l * g.p.ld);
          const std::int64_t qi = oq + t * sq + (g.q.transpose ? j + l * g.q.ld : l + j * g.q.ld);
          s += P.at(static_cast<std::size_t>(pi)) * Q.at(static_cast<std::size_t>(qi));
        }
        D.at(static_cast<std::size_t>(od + t * sd + i + j * g.d.ld)) = s;
      }
}

std::vector<double> random_store(const Layout& l, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(std::max<std::int64_t>(l.extent(), 1)));
  for (double& x : v) x = u(rng);
  return v;
}

// Runs the plan of a x b -> c and checks every element of c against a direct loop.
void check(const Layout& a, const Layout& b, const Layout& c, std::mt19937& rng) {
  CAPTURE(a.shape, a.strides, a.offset, b.shape, b.strides, b.offset, c.shape, c.strides, c.offset);
  const GemmPlan g = plan_gemm(a, b, c, 4, 4);
  CAPTURE(g.stage_a, g.stage_b, g.stage_c, g.m, g.n, g.k, g.batch, g.p.transpose, g.q.transpose);
  Arrays arr;
  arr.buf[Source::a] = random_store(a, rng);
  arr.buf[Source::b] = random_store(b, rng);
  arr.buf[Source::c] = std::vector<double>(static_cast<std::size_t>(std::max<std::int64_t>(c.extent(), 1)), NAN);
  if (g.stage_a) {
    arr.buf[Source::staged_a] = std::vector<double>(static_cast<std::size_t>(checked_numel(a.shape)), NAN);
    copy_logical(arr.buf[Source::staged_a], g.staged_a, arr.buf[Source::a], a);
  }
  if (g.stage_b) {
    arr.buf[Source::staged_b] = std::vector<double>(static_cast<std::size_t>(checked_numel(b.shape)), NAN);
    copy_logical(arr.buf[Source::staged_b], g.staged_b, arr.buf[Source::b], b);
  }
  if (g.stage_c) arr.buf[Source::staged_c] = std::vector<double>(static_cast<std::size_t>(checked_numel(c.shape)), NAN);
  int calls = 0;
  for_each_gemm_call(g, [&](std::int64_t op, std::int64_t oq, std::int64_t od, std::int64_t count, std::int64_t sp,
                            std::int64_t sq, std::int64_t sd) {
    ++calls;
    fake_gemm(arr, g, op, oq, od, count, sp, sq, sd);
  });
  if (g.stage_c) copy_logical(arr.buf[Source::c], c, arr.buf[Source::staged_c], g.staged_c);
  const std::size_t nb = a.shape.size() - 2;
  const std::int64_t k = a.shape[nb + 1];
  std::int64_t wrong = 0;
  for_each_index(c.shape, [&](const std::vector<std::int64_t>& i) {
    double s = 0;
    std::vector<std::int64_t> ia = i, ib = i;
    for (std::int64_t l = 0; l < k; ++l) {
      ia[nb + 1] = l;
      ib[nb] = l;
      s += arr.buf[Source::a][static_cast<std::size_t>(offset_of(a, ia))] * arr.buf[Source::b][static_cast<std::size_t>(offset_of(b, ib))];
    }
    const double got = arr.buf[Source::c][static_cast<std::size_t>(offset_of(c, i))];
    if (!(std::fabs(got - s) <= 1e-12)) ++wrong;
  });
  CHECK(calls >= 1);
  CHECK(wrong == 0);
}

Layout layout(Shape shape, Strides strides = {}, std::int64_t offset = 0) {
  if (strides.empty()) strides = contiguous_strides(shape);
  return Layout{std::move(shape), std::move(strides), offset};
}

}  // namespace

TEST_CASE("plan_gemm: the GPU tests' cases, emulated", "[cuda_host][gemm]") {
  std::mt19937 rng(1);
  check(layout({33, 65}), layout({65, 17}), layout({33, 17}), rng);
  check(layout({33, 65}, {1, 33}), layout({65, 17}, {1, 65}), layout({33, 17}), rng);
  check(layout({33, 65}), layout({65, 17}), layout({33, 17}, {1, 33}), rng);
  check(layout({20, 30}, {120, 2}), layout({30, 10}), layout({20, 10}), rng);
  check(layout({20, 30}, {0, 1}), layout({30, 10}), layout({20, 10}), rng);
  check(layout({20, 30}), layout({30, 10}, {1, 0}), layout({20, 10}), rng);
  check(layout({20, 30}), layout({30, 10}), layout({20, 10}, {20, 2}), rng);
  check(layout({1, 40}), layout({40, 1}), layout({1, 1}), rng);
  check(layout({4, 33, 20}), layout({4, 20, 17}, {0, 17, 1}), layout({4, 33, 17}), rng);
  check(layout({2, 3, 256, 16}, {16 * 256, 2 * 16 * 256, 16, 1}), layout({2, 3, 16, 8}), layout({2, 3, 256, 8}), rng);
  check(layout({8, 8, 8, 12}, {96, 8 * 96, 12, 1}), layout({8, 8, 12, 4}), layout({8, 8, 8, 4}), rng);
  check(layout({1, 3, 1, 16, 24}), layout({1, 3, 1, 24, 8}), layout({1, 3, 1, 16, 8}), rng);
  check(layout({2, 3, 40, 64}), layout({2, 3, 64, 56}, {3 * 56 * 64, 56 * 64, 1, 64}), layout({2, 3, 40, 56}), rng);
}

TEST_CASE("plan_gemm: the loop-or-stage choice", "[cuda_host][gemm]") {
  // 2 x 3 batches of 256 x 128 matrices that do not nest: 2 calls beat staging 768 KiB
  const GemmPlan loop = plan_gemm(layout({2, 3, 256, 128}, {32768, 65536, 128, 1}), layout({2, 3, 128, 64}),
                                  layout({2, 3, 256, 64}), 4, 4);
  CHECK_FALSE(loop.stage_a);
  CHECK(loop.batch.size() == 2);
  // 8 x 8 batches of 8 x 12 matrices: staging 24 KiB beats 8 calls
  const GemmPlan staged = plan_gemm(layout({8, 8, 8, 12}, {96, 768, 12, 1}), layout({8, 8, 12, 4}),
                                    layout({8, 8, 8, 4}), 4, 4);
  CHECK(staged.stage_a);
  CHECK(staged.batch == Shape{64});
  // contiguous batches merge into one call; C row-major means C^T = B^T A^T
  const GemmPlan merged = plan_gemm(layout({2, 3, 16, 24}), layout({2, 3, 24, 8}), layout({2, 3, 16, 8}), 2, 2);
  CHECK(merged.batch == Shape{6});
  CHECK(merged.m == 8);
  CHECK(merged.n == 16);
  CHECK(merged.p.source == Source::b);
  CHECK_FALSE(merged.stage_a);
  CHECK_FALSE(merged.stage_b);
}

TEST_CASE("plan_gemm: random layouts, broadcasts and batch dims, emulated", "[cuda_host][gemm]") {
  std::mt19937 rng(42);
  const std::int64_t lengths[] = {1, 2, 3, 5, 8};
  for (int trial = 0; trial < 3000; ++trial) {
    const auto nb = static_cast<std::size_t>(rng() % 4);
    Shape batch;
    for (std::size_t i = 0; i < nb; ++i) batch.push_back(1 + rng() % 3);
    const std::int64_t m = lengths[rng() % 5], n = lengths[rng() % 5], k = lengths[rng() % 5];
    Shape as = batch, bs = batch, cs = batch;
    as.insert(as.end(), {m, k});
    bs.insert(bs.end(), {k, n});
    cs.insert(cs.end(), {m, n});
    Layout a = random_layout(as, rng), b = random_layout(bs, rng), c = random_layout(cs, rng);
    if (rng() % 5 == 0 && nb > 0) a.strides[rng() % nb] = 0;  // a broadcast batch dim
    if (rng() % 5 == 0 && nb > 0) b.strides[rng() % nb] = 0;
    if (rng() % 7 == 0) a.strides[nb + rng() % 2] = 0;        // a broadcast matrix dim
    if (rng() % 7 == 0) b.strides[nb + rng() % 2] = 0;
    check(a, b, c, rng);
  }
}
