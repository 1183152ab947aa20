// ContractStep on the GPU against an f64 reference: cuBLAS with operands in place
// (transposed, column-major, strided) or staged (broadcast matrix dims, no unit stride),
// batch dims merged, looped or staged, our integer and loop kernels, fp8.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "gpu_check.hpp"
#include "plan_builder.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

using Kind = ContractStep::Kind;

struct View {
  View(Shape s, Strides st = {}, std::int64_t off = 0) : shape(std::move(s)), strides(std::move(st)), offset(off) {}
  Shape shape;
  Strides strides;  // empty: contiguous
  std::int64_t offset = 0;
  Strides strides_or_contiguous() const { return strides.empty() ? contiguous_strides(shape) : strides; }
};

// c[B.., m, n] = sum_k a[B.., m, k] b[B.., k, n] in f64 over logical values.
std::vector<double> reference(const Tensor& a, const Tensor& b, int nb) {
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  const auto d = static_cast<std::size_t>(nb);
  const std::int64_t m = a.shape()[d], k = a.shape()[d + 1], n = b.shape()[d + 1];
  std::int64_t batches = 1;
  for (std::size_t i = 0; i < d; ++i) batches *= a.shape()[i];
  std::vector<double> c(static_cast<std::size_t>(batches * m * n), 0.0);
  for (std::int64_t t = 0; t < batches; ++t)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (std::int64_t q = 0; q < k; ++q)
          s += av[static_cast<std::size_t>((t * m + i) * k + q)] * bv[static_cast<std::size_t>((t * k + q) * n + j)];
        c[static_cast<std::size_t>((t * m + i) * n + j)] = s;
      }
  return c;
}

double contract_tolerance(DType d, std::int64_t k) {
  const char* tf32 = std::getenv("EINEXPR_TF32");
  if (d == DType::f32 && tf32 != nullptr && std::strcmp(tf32, "1") == 0) return 1e-3;
  return tolerance(d, k);
}

void check_contract(const View& a, const View& b, int nb, DType d, Kind kind, const Strides& dst = {}) {
  CAPTURE(a.shape, a.strides, b.shape, b.strides, nb, name(d), dst);
  const Input ia = make_input(a.shape, a.strides_or_contiguous(), d, 31, a.offset);
  const Input ib = make_input(b.shape, b.strides_or_contiguous(), d, 32, b.offset);
  PlanBuilder p(d, Op::einsum);
  const int x = p.input(a.shape, a.strides_or_contiguous());
  const int y = p.input(b.shape, b.strides_or_contiguous());
  const int out = p.contract(x, y, nb, kind, dst);
  const std::int64_t k = a.shape[static_cast<std::size_t>(nb) + 1];
  run_poisoned(p.finish(out), {ia.gpu, ib.gpu}, reference(ia.cpu, ib.cpu, nb), contract_tolerance(d, k));
}

const std::vector<DType> float_dtypes = {DType::f32, DType::f64, DType::f16, DType::bf16};

}  // namespace

TEST_CASE("'i j, j k -> i k' in every float dtype, contiguous", "[cuda][contract]") {
  for (DType d : float_dtypes) {
    check_contract({{33, 65}}, {{65, 17}}, 0, d, Kind::gemm);
    check_contract({{128, 256}}, {{256, 96}}, 0, d, Kind::gemm);
    check_contract({{1, 40}}, {{40, 1}}, 0, d, Kind::gemm);  // a dot product
  }
}

TEST_CASE("transposed operands are used in place, in every orientation", "[cuda][contract]") {
  for (DType d : float_dtypes) {
    check_contract({{33, 65}, {1, 33}}, {{65, 17}}, 0, d, Kind::gemm);                 // a column-major
    check_contract({{33, 65}}, {{65, 17}, {1, 65}}, 0, d, Kind::gemm);                 // b column-major
    check_contract({{33, 65}, {1, 33}}, {{65, 17}, {1, 65}}, 0, d, Kind::gemm);        // both
    check_contract({{33, 65}}, {{65, 17}}, 0, d, Kind::gemm, {1, 33});                 // c column-major
    check_contract({{33, 65}, {70, 1}, 3}, {{65, 17}, {20, 1}, 1}, 0, d, Kind::gemm);  // padded rows, offsets
  }
}

TEST_CASE("operands without a unit stride, or broadcast along a matrix dim, are staged", "[cuda][contract]") {
  for (DType d : {DType::f32, DType::bf16}) {
    check_contract({{20, 30}, {120, 2}}, {{30, 10}}, 0, d, Kind::gemm);      // every other column
    check_contract({{20, 30}, {0, 1}}, {{30, 10}}, 0, d, Kind::gemm);        // one row, broadcast
    check_contract({{20, 30}}, {{30, 10}, {1, 0}}, 0, d, Kind::gemm);        // one column, broadcast
    check_contract({{20, 30}}, {{30, 10}}, 0, d, Kind::gemm, {20, 2});       // output every other element
  }
}

TEST_CASE("batch dims: one, several merged, broadcast, looped and staged", "[cuda][contract]") {
  for (DType d : {DType::f32, DType::bf16, DType::f64}) {
    check_contract({{4, 33, 20}}, {{4, 20, 17}}, 1, d, Kind::batched_gemm);
    check_contract({{2, 3, 16, 24}}, {{2, 3, 24, 8}}, 2, d, Kind::batched_gemm);             // merge into 6
    check_contract({{1, 3, 1, 16, 24}}, {{1, 3, 1, 24, 8}}, 3, d, Kind::batched_gemm);       // unit batch dims
    check_contract({{4, 33, 20}}, {{4, 20, 17}, {0, 17, 1}}, 1, d, Kind::batched_gemm);      // b broadcast
    // a's batch dims swapped in memory: they cannot merge. Big matrices, 2 calls: a loop.
    check_contract({{2, 3, 256, 128}, {128 * 256, 2 * 128 * 256, 128, 1}}, {{2, 3, 128, 64}}, 2, d,
                   Kind::batched_gemm);
    // ... small matrices, 8 calls: staging a is cheaper.
    check_contract({{8, 8, 8, 12}, {96, 8 * 96, 12, 1}}, {{8, 8, 12, 4}}, 2, d, Kind::batched_gemm);
  }
}

TEST_CASE("attention scores 'b h i d, b h j d -> b h i j'", "[cuda][contract]") {
  for (DType d : {DType::bf16, DType::f16, DType::f32}) {
    const std::int64_t B = 2, H = 3, I = 40, J = 56, D = 64;
    // k is [b, h, j, d] in memory; the plan reads it as [b, h, d, j] (a transposed view)
    check_contract({{B, H, I, D}}, {{B, H, D, J}, {H * J * D, J * D, 1, D}}, 2, d, Kind::batched_gemm);
  }
}

TEST_CASE("integer contractions are exact, with our tiled kernel", "[cuda][contract]") {
  for (DType d : {DType::i64, DType::i32}) {
    check_contract({{33, 65}}, {{65, 17}}, 0, d, Kind::gemm);
    check_contract({{33, 65}, {1, 33}}, {{65, 17}, {1, 65}}, 0, d, Kind::gemm);
    check_contract({{3, 2, 17, 20}}, {{3, 2, 20, 9}, {0, 180, 9, 1}}, 2, d, Kind::batched_gemm);
    check_contract({{5, 16}}, {{16, 16}}, 0, d, Kind::gemm, {1, 5});
  }
}

TEST_CASE("generic contractions (no contracted dim) use the loop kernel", "[cuda][contract]") {
  for (DType d : {DType::f32, DType::bf16, DType::i64, DType::f64}) {
    check_contract({{4, 30, 1}}, {{4, 1, 1}}, 1, d, Kind::generic);   // a Hadamard-like product
    check_contract({{30, 1}}, {{1, 25}}, 0, d, Kind::generic);        // an outer product
  }
}

TEST_CASE("an empty contracted dim gives zeros", "[cuda][contract]") {
  for (DType d : {DType::f32, DType::i32, DType::bf16}) check_contract({{5, 0}}, {{0, 7}}, 0, d, Kind::gemm);
}

TEST_CASE("fp8 contractions accumulate in f32 and round once", "[cuda][contract]") {
  for (DType d : {DType::f8_e4m3, DType::f8_e5m2}) {
    check_contract({{32, 48}}, {{48, 40}}, 0, d, Kind::gemm);                 // k not a multiple of 16
    check_contract({{2, 33, 64}}, {{2, 64, 17}, {0, 1, 64}}, 1, d, Kind::batched_gemm);
    check_contract({{64, 128}, {1, 64}}, {{128, 32}}, 0, d, Kind::gemm, {1, 64});
  }
}
