#pragma once
// A naive reference for every op, independent of the planner: it resolves the pattern's
// axes by itself and loops over every index combination, reading inputs by logical index
// (to_vector) and accumulating in double (int64 for integer dtypes). Slow and obviously
// right; the tests compare the engine against it.
#include <string>
#include <vector>

#include "einexpr/einexpr.hpp"

namespace reference {

struct Result {
  einexpr::Shape shape;
  std::vector<double> values;  // row-major
};

Result rearrange(const einexpr::Tensor& x, const std::string& pattern, const einexpr::AxisLengths& lengths = {});
/// var and std divide by max(0, n - correction); logsumexp is max-subtracted.
Result reduce(const einexpr::Tensor& x, const std::string& pattern, einexpr::Reduction reduction,
              const einexpr::AxisLengths& lengths = {}, std::int64_t correction = 1);
/// A normalization along the atoms of `dims` that `kept` lacks ("b h q k" and "b h q": along
/// k), the row's statistics in f64 by the definitions in plan.hpp.
Result normalize(const einexpr::Tensor& x, const std::string& dims, const std::string& kept,
                 einexpr::Normalization kind, double eps, const einexpr::AxisLengths& lengths = {});
Result repeat(const einexpr::Tensor& x, const std::string& pattern, const einexpr::AxisLengths& lengths = {});
Result einsum(const std::vector<einexpr::Tensor>& xs, const std::string& pattern,
              const einexpr::AxisLengths& lengths = {});
/// The gradient of every operand of an einsum for output gradient `dy` (row-major, of the
/// output's shape): one pass over every assignment of the axes, adding dY times the other
/// operands' product into each operand's element (diagonals, broadcast dims and axes only
/// one operand has follow from the index arithmetic).
std::vector<Result> einsum_gradients(const std::vector<einexpr::Tensor>& xs, const std::string& pattern,
                                     const std::vector<double>& dy, const einexpr::AxisLengths& lengths = {});
Result binary(const einexpr::Tensor& x, const einexpr::Tensor& y, const std::string& pattern, einexpr::BinaryOp op,
              const einexpr::AxisLengths& lengths = {});
double unary(einexpr::UnaryOp op, double v);

/// The largest |a - b| / max(1, |b|) over the elements, after checking the shapes match.
double max_rel_error(const einexpr::Tensor& got, const Result& want);

/// A tensor of `shape` whose layout is made non-contiguous the given way, with random values.
enum class Layout { contiguous, transposed, sliced, broadcast };
const char* name(Layout layout);
einexpr::Tensor make_input(const einexpr::Shape& shape, einexpr::DType dtype, Layout layout, std::uint64_t seed);

/// Tolerance for comparing a result of `dtype` computed with `terms` terms per element.
double tolerance(einexpr::DType dtype, std::int64_t terms);

}  // namespace reference
