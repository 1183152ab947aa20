// The elementwise math of the CPU lowering (codegen/lower/cpu/vec_math.hpp) against its
// stated error bounds in ULPs, over the whole input range: every table this CPU runs
// (scalar, AVX2, AVX-512), f32 against an f64 reference and f64 against a long double one,
// on random bit patterns (every exponent, denormals, ±inf, NaN), values where the
// functions bend or overflow, and ordinary values; then every bf16 and f16 value and
// every fp8 value through the map kernel, within one ULP of the dtype.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cpu_reference.hpp"
#include "lower/cpu/vec_math_bounds.hpp"
#include "lower/cpu/vec_math_ops.hpp"
#include "plan_builder.hpp"
#include "unary_reference.hpp"

using namespace einexpr;
using namespace einexpr::test;
using testing_support::unary_reference;
using LD = long double;
namespace vec = einexpr::cpu::vec;

namespace {

/// The error of `got` against the exact `want`, in ULPs of T at want (values beyond T's
/// range, infinities included, count as 2^max_exponent, one ULP above the largest finite
/// T); -1 when exactly one is NaN. An absolute error below T's smallest normal number counts
/// as 0 (vec_math_bounds.hpp: intermediates in the subnormal range lose their precision).
template <class T>
double ulp_error(T got, LD want) {
  using L = std::numeric_limits<T>;
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0 : -1;
  if (static_cast<LD>(got) == want) return 0;
  const LD top = std::ldexp(LD(1), L::max_exponent);
  auto clamped = [&](LD v) { return std::fabs(v) >= top ? std::copysign(top, v) : v; };
  const LD g = clamped(got), w = clamped(want);
  if (std::fabs(g - w) < L::min()) return 0;
  const int e = std::max(std::ilogb(std::min(std::fabs(w), static_cast<LD>(L::max()))), L::min_exponent - 1);
  return static_cast<double>(std::fabs(g - w) / std::ldexp(LD(1), e - (L::digits - 1)));
}

/// Inputs over the whole range: bit patterns, then the special and bending points, then
/// ordinary values in [-25, 25] and tiny ones.
template <class T>
std::vector<T> whole_range(std::size_t random_bits, std::uint64_t seed) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  using L = std::numeric_limits<T>;
  std::mt19937_64 rng(seed);
  std::vector<T> v;
  for (std::size_t i = 0; i < random_bits; ++i) {
    const U bits = static_cast<U>(rng());
    T x;
    std::memcpy(&x, &bits, sizeof x);
    v.push_back(x);
  }
  const T specials[] = {T(0), L::infinity(), L::quiet_NaN(), L::min(), L::denorm_min(), L::max(), T(1), T(0.5),
                        T(20), std::nextafter(T(20), T(21)), std::nextafter(T(20), T(19)), T(88.72), T(88.73),
                        T(87.33), T(103.97), T(709.78), T(709.79), T(745.2), T(10.4), T(9), T(13), T(1e-8),
                        T(1e-30), T(3e-39), T(5.5), T(0.7), std::nextafter(T(1), T(0)), T(1.30766165), T(7.42158508),
                        T(13.2), T(14.5), T(16)};
  for (T s : specials) v.insert(v.end(), {s, -s});
  std::uniform_real_distribution<double> wide(-25, 25), tiny(-1e-3, 1e-3);
  for (std::size_t i = 0; i < random_bits / 2; ++i) v.push_back(static_cast<T>(wide(rng)));
  for (std::size_t i = 0; i < random_bits / 8; ++i) v.push_back(static_cast<T>(tiny(rng)));
  return v;
}

/// Runs `op` from `table` over the inputs (in place, and streamed into a buffer one
/// element off its alignment) and checks every result against its bound.
template <class T, class R>
void check_table(const vec::Kernels<T>& kernels, UnaryOp op, const std::vector<T>& in, bool inline_gelu_erf = false) {
  const vec::Kernel<T> f = vec::kernel_for(kernels, op);
  REQUIRE(f != nullptr);
  std::vector<T> out = in;
  f(out.data(), out.data(), static_cast<std::int64_t>(out.size()), false);
  std::vector<T> streamed(in.size() + 1);
  f(in.data(), streamed.data() + 1, static_cast<std::int64_t>(in.size()), true);
  double worst = 0;
  int bad = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const LD want = unary_reference<R>(op, static_cast<R>(in[i]));
    const double err = ulp_error<T>(out[i], want), bound = vec::ulp_bound(op, static_cast<LD>(in[i]), inline_gelu_erf);
    worst = std::max(worst, err);
    const bool same = std::memcmp(&out[i], &streamed[i + 1], sizeof(T)) == 0 || (out[i] != out[i] && streamed[i + 1] != streamed[i + 1]);
    if ((err < 0 || err > bound || !same) && ++bad <= 5) {
      INFO("x = " << static_cast<double>(in[i]) << ": got " << static_cast<double>(out[i]) << " (streamed "
                  << static_cast<double>(streamed[i + 1]) << "), want " << static_cast<double>(want) << ": " << err
                  << " ULPs, bound " << bound);
      CHECK(false);
    }
  }
  INFO("worst error " << worst << " ULPs over " << in.size() << " inputs");
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("every vec_math table is within its ULP bounds over the whole f32 and f64 range", "[lower_cpu][vec_math]") {
  const vec::Tables tables = vec::runnable_tables();
  REQUIRE(tables.count >= 1);
  CHECK(std::string(vec::best_table().isa) == tables.list[tables.count - 1]->isa);
  const std::vector<float> f32 = whole_range<float>(1 << 14, 1);
  const std::vector<double> f64 = whole_range<double>(1 << 12, 2);
  for (int t = 0; t < tables.count; ++t)
    for (UnaryOp op : all_unary_ops) {
      CAPTURE(tables.list[t]->isa, name(op));
      check_table<float, double>(tables.list[t]->f32, op, f32, std::string(tables.list[t]->isa) != "scalar");
      check_table<double, LD>(tables.list[t]->f64, op, f64);
    }
}

TEST_CASE("docs/ops.md's table of error bounds is vec_math_bounds.hpp's, one row for each function", "[lower_cpu][vec_math][docs]") {
  std::ifstream file(EINEXPR_DOCS_DIR "/ops.md");
  REQUIRE(file);
  std::map<UnaryOp, int> rows;
  bool in_table = false;
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("| function | bound (ULP) |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("|---", 0) == 0) continue;
    if (line.rfind('|', 0) != 0) break;  // the table's end
    std::vector<std::string> cells;  // split at the '|' Markdown does not escape
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|' && line[i - 1] != '\\') {
        const std::size_t first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
        cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    CAPTURE(line);
    REQUIRE(cells.size() == 3);
    for (std::size_t at = 0; at < cells[0].size();) {  // "relu, abs, neg"
      const std::size_t comma = std::min(cells[0].find(", ", at), cells[0].size());
      const UnaryOp op = parse_unary_op(cells[0].substr(at, comma - at));
      CHECK(cells[1] == vec::ulp_bound_doc(op));
      ++rows[op];
      at = comma + 2;
    }
  }
  REQUIRE(in_table);
  for (UnaryOp op : all_unary_ops) {
    CAPTURE(name(op));
    CHECK(rows[op] == 1);
    // The words say what the function computes: a number is the bound everywhere.
    const std::string doc = vec::ulp_bound_doc(op);
    if (doc == "exact" || doc.find_first_not_of("0123456789.") == std::string::npos)
      for (const LD x : {-7.0L, -0.5L, 0.0L, 3.0L, 100.0L})
        for (const bool inline_gelu_erf : {false, true})
          CHECK(vec::ulp_bound(op, x, inline_gelu_erf) == (doc == "exact" ? 0.0 : std::stod(doc)));
  }
  // The two that are formulas, at a few points: 4 + 2.5|2z|, 2z = sqrt(8/pi)(x + 0.044715x^3).
  for (const LD x : {-3.0L, 0.5L, 2.0L})
    CHECK(vec::ulp_bound(UnaryOp::gelu, x, false) ==
          Approx(4 + 2.5 * std::fabs(std::sqrt(8 / M_PI) * (double(x) + 0.044715 * double(x * x * x)))).epsilon(1e-12));
  CHECK(vec::ulp_bound(UnaryOp::gelu_erf, -3.0L, true) == 6.0);
  CHECK(vec::ulp_bound(UnaryOp::gelu_erf, -3.0L, false) == 22.0);  // 4 + 2x^2
  CHECK(vec::ulp_bound(UnaryOp::gelu_erf, 2.0L, false) == 4.0);
}

TEST_CASE("vec_math kernels handle every length and alignment", "[lower_cpu][vec_math]") {
  const vec::Table& table = vec::best_table();
  std::vector<float> x(80), y(80);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.37f - 9.0f;
  for (std::int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 33, 63}) {
    for (int shift : {0, 1, 3}) {
      CAPTURE(n, shift);
      std::fill(y.begin(), y.end(), -1.0f);
      table.f32.exp(x.data(), y.data() + shift, n, true);
      for (std::int64_t i = 0; i < n; ++i) CHECK(y[static_cast<std::size_t>(shift + i)] == Approx(std::exp(x[static_cast<std::size_t>(i)])).epsilon(1e-6));
      CHECK(y[static_cast<std::size_t>(shift + n)] == -1.0f);  // nothing written past the end
      if (shift > 0) CHECK(y[static_cast<std::size_t>(shift - 1)] == -1.0f);
    }
  }
}

TEST_CASE("a value's map result does not depend on its neighbours in the vector", "[lower_cpu][vec_math]") {
  // vec_math_f32.hpp's gelu_erf takes a slower path for a vector with a lane beyond |x| =
  // 13.1, ±inf or NaN; the other lanes must come out bit for bit as on the fast path (so
  // must every function: exp also branches on a lane beyond 87).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> near(-13.1f, 13.1f);
  std::vector<float> alone(1 << 14);
  for (float& v : alone) v = near(rng);
  const float neighbours[] = {20.0f, -100.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  const vec::Tables tables = vec::runnable_tables();
  for (int t = 0; t < tables.count; ++t)
    for (UnaryOp op : all_unary_ops) {
      CAPTURE(tables.list[t]->isa, name(op));
      const vec::Kernel<float> f = vec::kernel_for(tables.list[t]->f32, op);
      std::vector<float> out(alone.size()), mixed_out(alone.size());
      f(alone.data(), out.data(), static_cast<std::int64_t>(alone.size()), false);
      for (std::size_t k = 0; k < 4; ++k) {
        std::vector<float> mixed = alone;  // every 8th value replaced: every vector of 8 or 16 holds one
        for (std::size_t i = 0; i < mixed.size(); i += 8) mixed[i + 5] = neighbours[k];
        f(mixed.data(), mixed_out.data(), static_cast<std::int64_t>(mixed.size()), false);
        int differ = 0;
        for (std::size_t i = 0; i < alone.size(); ++i)
          if (i % 8 != 5 && std::memcmp(&out[i], &mixed_out[i], sizeof(float)) != 0) ++differ;
        CHECK(differ == 0);
      }
    }
}

namespace {

/// Every value of a 1- or 2-byte dtype, as a tensor of its bit patterns.
Tensor every_value(DType dtype) {
  const std::size_t n = element_size(dtype) == 1 ? 256 : 65536;
  Tensor t = Tensor::zeros({static_cast<std::int64_t>(n)}, dtype);
  auto* p = static_cast<unsigned char*>(t.data_ptr());
  for (std::size_t i = 0; i < n; ++i) std::memcpy(p + i * element_size(dtype), &i, element_size(dtype));
  return t;
}

/// The spacing of `dtype`'s values at |v| (its finfo: digits of precision from eps, the
/// smallest normal's exponent).
double dtype_ulp(DType dtype, double v) {
  const FInfo f = finfo(dtype);
  const int digits = 1 - std::ilogb(f.eps);
  const int e = std::max(std::ilogb(std::max(std::fabs(v), f.smallest_normal)), std::ilogb(f.smallest_normal));
  return std::ldexp(1.0, e - (digits - 1));
}

}  // namespace

TEST_CASE("every bf16, f16 and fp8 value is within one ULP of the dtype through the map kernel",
          "[lower_cpu][vec_math]") {
  for (DType dtype : {DType::bf16, DType::f16, DType::f8_e4m3, DType::f8_e5m2}) {
    const Tensor x = every_value(dtype);
    const std::vector<double> in = x.to_vector<double>();
    for (UnaryOp op : all_unary_ops) {
      CAPTURE(name(dtype), name(op));
      PlanBuilder pb(dtype);
      const int src = pb.input(x);
      const std::vector<double> got = run_cpu(pb.finish(pb.map({src}, op, make_layout(x.shape()))), {x}).to_vector<double>();
      std::vector<double> exact;
      for (double v : in) exact.push_back(unary_reference(op, v));
      const std::vector<double> want = Tensor::from_doubles(exact, x.shape(), dtype).to_vector<double>();
      int bad = 0;
      for (std::size_t i = 0; i < in.size(); ++i) {
        const double g = got[i], w = want[i];
        const bool ok = g == w || (std::isnan(g) && std::isnan(w)) ||
                        (std::isfinite(g) && std::isfinite(w) && std::fabs(g - w) <= dtype_ulp(dtype, w)) ||
                        (std::isfinite(g) != std::isfinite(w) && std::fabs(std::isfinite(g) ? g : w) == finfo(dtype).max);
        if (!ok && ++bad <= 5) {
          INFO("x = " << in[i] << ": got " << g << ", want " << w << " (exact " << exact[i] << ")");
          CHECK(ok);
        }
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("the AVX2 and AVX-512 tables give the same f32 results bit for bit", "[lower_cpu][vec_math]") {
  // vec_math_f32.hpp writes f32 exp and gelu_erf once for both (so also sigmoid, silu and
  // gelu, which call exp_fast): the same operations on 8 or 16 lanes must give the same bits.
  // scripts/map_ulp.sh measures one table over every input; this extends it to the other.
  const vec::Tables tables = vec::runnable_tables();
  const vec::Table* avx2 = nullptr;
  const vec::Table* avx512 = nullptr;
  for (int t = 0; t < tables.count; ++t) {
    if (std::string(tables.list[t]->isa) == "avx2") avx2 = tables.list[t];
    if (std::string(tables.list[t]->isa) == "avx512") avx512 = tables.list[t];
  }
  if (avx2 == nullptr || avx512 == nullptr) {
    WARN("this CPU does not run both the AVX2 and the AVX-512 table: not compared");
    return;
  }
  std::vector<float> x = whole_range<float>(1 << 14, 3);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> near(-14.0f, 14.0f);
  for (int i = 0; i < (1 << 14); ++i) x.push_back(near(rng));  // both of gelu_erf's paths, mixed in vectors
  for (UnaryOp op : {UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::silu, UnaryOp::gelu, UnaryOp::gelu_erf}) {
    CAPTURE(name(op));
    std::vector<float> y2(x.size()), y512(x.size());
    vec::kernel_for(avx2->f32, op)(x.data(), y2.data(), static_cast<std::int64_t>(x.size()), false);
    vec::kernel_for(avx512->f32, op)(x.data(), y512.data(), static_cast<std::int64_t>(x.size()), false);
    int differ = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (std::memcmp(&y2[i], &y512[i], sizeof(float)) != 0 && !(std::isnan(y2[i]) && std::isnan(y512[i]))) {
        if (differ++ < 5) UNSCOPED_INFO("x = " << x[i] << ": AVX2 " << y2[i] << ", AVX-512 " << y512[i]);
      }
    CHECK(differ == 0);
  }
}

TEST_CASE("f32 gelu_erf beyond |x| = 13.1: x, subnormals to within 6 units of 2^-149, then -0", "[lower_cpu][vec_math]") {
  // vec_math_f32.hpp's slower path: x > 13.1 gives x, [-14.356068, -13.1) rounds its term into
  // the subnormals by integer conversion, x < -14.356068 gives -0 (the term rounds to 0).
  // The ULP test above counts any error below 2^-126 as none; this one reads the subnormals.
  std::vector<float> x;
  for (float v = -15.0f; v < -13.0f; v = std::nextafter(v, 0.0f)) x.push_back(v);  // every float
  for (float v = 13.0f; v < 13.5f; v = std::nextafter(v, 20.0f)) x.push_back(v);
  const vec::Tables tables = vec::runnable_tables();
  for (int t = 0; t < tables.count; ++t) {
    if (std::string(tables.list[t]->isa) == "scalar") continue;  // libm's erfc: bound 4 + 2x^2
    CAPTURE(tables.list[t]->isa);
    std::vector<float> y(x.size());
    vec::kernel_for(tables.list[t]->f32, UnaryOp::gelu_erf)(x.data(), y.data(), static_cast<std::int64_t>(x.size()), false);
    int bad = 0, subnormal = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = 0.5 * static_cast<double>(x[i]) * std::erfc(-static_cast<double>(x[i]) / std::sqrt(2.0));
      bool ok;
      if (x[i] > 13.1f) {
        ok = y[i] == x[i];
      } else if (x[i] < -14.356068f) {
        ok = y[i] == 0.0f && std::signbit(y[i]);
      } else if (std::fabs(want) < 0x1p-126) {
        ++subnormal;
        ok = std::fabs(static_cast<double>(y[i]) - want) <= 6 * 0x1p-149 && y[i] <= 0.0f;
      } else {
        continue;  // normal results: the ULP test's business
      }
      if (!ok && ++bad <= 5) UNSCOPED_INFO("x = " << x[i] << ": got " << y[i] << ", want " << want);
    }
    CHECK(subnormal > 100000);
    CHECK(bad == 0);
  }
}
