// vec_math.hpp's kernels one element at a time with <cmath>, for CPUs without AVX2 (and
// builds for other architectures): the same formulas (vec_math_kernels.hpp), the C
// library's functions in place of Sleef's.
#include <cmath>

#include "vec_math_kernels.hpp"
#include "vec_math_rows.hpp"

namespace einexpr::cpu::vec {

namespace {

template <class Type>
struct Scalar {
  using T = Type;
  using R = Type;
  using M = bool;
  static constexpr int width = 1;
  static constexpr unsigned align = sizeof(T);
  static R load(const T* p) { return *p; }
  static void store(T* p, R v) { *p = v; }
  static void stream(T* p, R v) { *p = v; }
  static void fence() {}
  static R set(T c) { return c; }
  static R zero() { return T(0); }
  static R add(R a, R b) { return a + b; }
  static R sub(R a, R b) { return a - b; }
  static R mul(R a, R b) { return a * b; }
  static R div(R a, R b) { return a / b; }
  static R fma(R a, R b, R c) { return a * b + c; }
  static R max(R a, R b) { return a > b ? a : b; }  // b where unordered, as maxps
  static R min(R a, R b) { return a < b ? a : b; }  // b where unordered, as minps
  static R abs(R x) { return std::fabs(x); }
  static R neg(R x) { return -x; }
  static M lt(R a, R b) { return a < b; }
  static M gt(R a, R b) { return a > b; }
  static M eq(R a, R b) { return a == b; }
  static R select(M m, R a, R b) { return m ? a : b; }
  static R sqrt(R x) { return std::sqrt(x); }
  static R exp(R x) { return std::exp(x); }
  static R log(R x) { return std::log(x); }
  static R log1p(R x) { return std::log1p(x); }
  static R tanh(R x) { return std::tanh(x); }
  static R erf(R x) { return std::erf(x); }
  static R erfc(R x) { return std::erfc(x); }
};

}  // namespace

Table detail::scalar_table() noexcept {
  Table t;
  t.isa = "scalar";
  t.f32 = make_kernels<Scalar<float>>();
  t.f64 = make_kernels<Scalar<double>>();
  t.rows_f32 = make_row_kernels<Scalar<float>>();
  t.rows_f64 = make_row_kernels<Scalar<double>>();
  t.fma_f32 = make_fma_probe<Scalar<float>>();
  t.fma_f64 = make_fma_probe<Scalar<double>>();
  return t;
}

}  // namespace einexpr::cpu::vec
