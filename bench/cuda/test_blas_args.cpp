// blas_args on the CPU: the direct cuBLAS baselines' arguments run through an emulation of
// cuBLAS's column-major GEMM as documented (C[i + j ldc] = sum_l op(A)(i, l) op(B)(l, j),
// op(X)(r, c) = X[r + c ld], or X[c + r ld] when transposed; batch t at t * stride; each ld
// at least the stored matrix's rows), against a direct row-major loop.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "blas_args.hpp"

using namespace einexpr::bench;

namespace {

std::vector<double> random_values(std::int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

/// cuBLAS's strided-batched GEMM by its documentation; REQUIREs its argument rules and
/// reads through .at(), so an argument reaching past an operand fails.
std::vector<double> emulate(const ColMajorGemm& g, const std::vector<double>& x, const std::vector<double>& y,
                            std::size_t c_size) {
  REQUIRE(g.lda >= std::max<std::int64_t>(1, g.transa ? g.k : g.m));
  REQUIRE(g.ldb >= std::max<std::int64_t>(1, g.transb ? g.n : g.k));
  REQUIRE(g.ldc >= std::max<std::int64_t>(1, g.m));
  const std::vector<double>* operands[2] = {&x, &y};
  const std::vector<double>& A = *operands[g.a_operand];
  const std::vector<double>& B = *operands[g.b_operand];
  std::vector<double> C(c_size, NAN);
  for (std::int64_t t = 0; t < g.batch; ++t)
    for (std::int64_t i = 0; i < g.m; ++i)
      for (std::int64_t j = 0; j < g.n; ++j) {
        double s = 0;
        for (std::int64_t l = 0; l < g.k; ++l) {
          const std::int64_t ai = t * g.stride_a + (g.transa ? l + i * g.lda : i + l * g.lda);
          const std::int64_t bi = t * g.stride_b + (g.transb ? j + l * g.ldb : l + j * g.ldb);
          s += A.at(static_cast<std::size_t>(ai)) * B.at(static_cast<std::size_t>(bi));
        }
        C.at(static_cast<std::size_t>(t * g.stride_c + i + j * g.ldc)) = s;
      }
  return C;
}

void require_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    REQUIRE(std::abs(got[i] - want[i]) <= 1e-12 * (1 + std::abs(want[i])));  // NaN (unwritten) fails
  }
}

}  // namespace

TEST_CASE("rowmajor_gemm: c[m, n] = x[m, k] y[k, n] through cuBLAS's column-major call") {
  std::mt19937 rng(1);
  const std::vector<std::array<std::int64_t, 3>> sizes = {{1, 1, 1}, {3, 5, 7}, {16, 1, 9}, {1, 8, 1}, {96, 160, 64}};
  for (const auto& [m, k, n] : sizes) {
    CAPTURE(m, k, n);
    const std::vector<double> x = random_values(m * k, rng), y = random_values(k * n, rng);
    std::vector<double> want(static_cast<std::size_t>(m * n), 0.0);
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t c = 0; c < n; ++c)
        for (std::int64_t l = 0; l < k; ++l) want[static_cast<std::size_t>(r * n + c)] += x[r * k + l] * y[l * n + c];
    require_close(emulate(rowmajor_gemm(m, k, n), x, y, want.size()), want);
  }
}

TEST_CASE("scores_gemm: s[t, i, j] = sum_d q[t, i, d] k[t, j, d] through one strided-batched call") {
  std::mt19937 rng(2);
  const std::vector<std::array<std::int64_t, 4>> sizes = {{1, 1, 1, 1}, {2, 3, 5, 7}, {6, 40, 24, 32}, {3, 1, 4, 2}};
  for (const auto& [t, ni, nj, nd] : sizes) {
    CAPTURE(t, ni, nj, nd);
    const std::vector<double> q = random_values(t * ni * nd, rng), k = random_values(t * nj * nd, rng);
    std::vector<double> want(static_cast<std::size_t>(t * ni * nj), 0.0);
    for (std::int64_t b = 0; b < t; ++b)
      for (std::int64_t i = 0; i < ni; ++i)
        for (std::int64_t j = 0; j < nj; ++j)
          for (std::int64_t d = 0; d < nd; ++d)
            want[static_cast<std::size_t>((b * ni + i) * nj + j)] +=
                q[(b * ni + i) * nd + d] * k[(b * nj + j) * nd + d];
    require_close(emulate(scores_gemm(t, ni, nj, nd), q, k, want.size()), want);
  }
}
