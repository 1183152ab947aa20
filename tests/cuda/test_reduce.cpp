// ReduceStep on the GPU against an f64 reference: inner (warp per output) and outer
// (thread per output) kernels, with and without the split second pass, every reduction,
// strided and empty inputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gpu_check.hpp"
#include "plan_builder.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

// The reduction of `x` (CPU, logical values) over `axes`, in f64; integers wrap as int64
// would only beyond these tests' sizes, so f64 is exact for them here.
std::vector<double> reference(const Tensor& x, const std::vector<int>& axes, Reduction op) {
  const Shape& shape = x.shape();
  std::vector<bool> reduced(shape.size(), false);
  for (int a : axes) reduced[static_cast<std::size_t>(a)] = true;
  Shape out_shape;
  std::int64_t count = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d]) count *= shape[d];
    else out_shape.push_back(shape[d]);
  }
  const std::int64_t outputs = checked_numel(out_shape);
  double init = 0;
  if (op == Reduction::prod || op == Reduction::all) init = 1;
  if (op == Reduction::max) init = -std::numeric_limits<double>::infinity();
  if (op == Reduction::min) init = std::numeric_limits<double>::infinity();
  std::vector<double> acc(static_cast<std::size_t>(outputs), init);
  std::vector<std::vector<double>> members(static_cast<std::size_t>(outputs));  // var, std, logsumexp
  const std::vector<double> v = x.to_vector<double>();
  if (!v.empty()) {
    std::vector<std::int64_t> index(shape.size(), 0);
    std::size_t i = 0;
    do {
      std::vector<std::int64_t> out_index;
      for (std::size_t d = 0; d < shape.size(); ++d)
        if (!reduced[d]) out_index.push_back(index[d]);
      double& a = acc[static_cast<std::size_t>(linear(out_index, out_shape))];
      const double e = v[i++];
      switch (op) {
        case Reduction::sum: case Reduction::mean: a += e; break;
        case Reduction::prod: a *= e; break;
        case Reduction::max: a = std::max(a, e); break;
        case Reduction::min: a = std::min(a, e); break;
        case Reduction::any: a = (a != 0 || e != 0) ? 1 : 0; break;
        case Reduction::all: a = (a != 0 && e != 0) ? 1 : 0; break;
        case Reduction::var: case Reduction::std: case Reduction::logsumexp:
          members[static_cast<std::size_t>(linear(out_index, out_shape))].push_back(e);
          break;
      }
    } while (next_index(index, shape));
  }
  if (op == Reduction::mean)
    for (double& a : acc) a = count == 0 ? std::numeric_limits<double>::quiet_NaN() : a / static_cast<double>(count);
  for (std::size_t o = 0; o < members.size(); ++o) {
    const std::vector<double>& m = members[o];
    if (op == Reduction::logsumexp) {  // max-subtracted
      const double mx = m.empty() ? -std::numeric_limits<double>::infinity() : *std::max_element(m.begin(), m.end());
      double s = 0;
      for (double e : m) s += std::exp(e - mx);
      acc[o] = m.empty() ? mx : mx + std::log(s);
    } else if (op == Reduction::var || op == Reduction::std) {  // correction 1 (ReduceStep's default)
      double mean = 0, ss = 0;
      for (double e : m) mean += e / static_cast<double>(m.size());
      for (double e : m) ss += (e - mean) * (e - mean);
      acc[o] = ss / static_cast<double>(std::max<std::int64_t>(0, static_cast<std::int64_t>(m.size()) - 1));
      if (op == Reduction::std) acc[o] = std::sqrt(acc[o]);
    }
  }
  return acc;
}

void check_reduce(const Shape& shape, const Strides& strides, const std::vector<int>& axes, Reduction op, DType d,
                  const Strides& dst = {}) {
  CAPTURE(shape, strides, axes, name(op), name(d), dst);
  const Strides s = strides.empty() ? contiguous_strides(shape) : strides;
  const bool bounded = op == Reduction::prod;  // keep products near 1
  const Input in = make_input(shape, s, d, 41, 0, bounded ? [](double x) { return 1.0 + 0.05 * x; } : std::function<double(double)>{});
  PlanBuilder p(d, Op::reduce);
  const int x = p.input(shape, s);
  const int out = p.reduce(x, op, axes, dst);
  std::int64_t terms = 1;
  for (int a : axes) terms *= shape[static_cast<std::size_t>(a)];
  const bool exact = op == Reduction::max || op == Reduction::min || !is_floating(d);
  run_poisoned(p.finish(out), {in.gpu}, reference(in.cpu, axes, op), exact ? 0 : tolerance(d, terms));
}

}  // namespace

TEST_CASE("'b s h -> b h': the kept dim is contiguous, one thread per output", "[cuda][reduce]") {
  for (DType d : {DType::f32, DType::bf16, DType::f64, DType::f16}) {
    for (Reduction op : {Reduction::sum, Reduction::mean, Reduction::max, Reduction::min}) {
      check_reduce({4, 300, 64}, {}, {1}, op, d);
    }
  }
  for (DType d : {DType::i64, DType::i32})
    for (Reduction op : {Reduction::sum, Reduction::max, Reduction::min}) check_reduce({4, 300, 64}, {}, {1}, op, d);
}

TEST_CASE("reducing the contiguous dim: one warp per output", "[cuda][reduce]") {
  for (DType d : {DType::f32, DType::bf16, DType::i64}) {
    check_reduce({64, 1000}, {}, {1}, Reduction::sum, d);
    check_reduce({64, 1000}, {}, {1}, Reduction::max, d);
    check_reduce({3, 5, 77}, {}, {2}, Reduction::min, d);
  }
  check_reduce({64, 1000}, {}, {1}, Reduction::mean, DType::f32);
}

TEST_CASE("few outputs of many elements are split, then combined", "[cuda][reduce]") {
  for (DType d : {DType::f32, DType::bf16, DType::i32}) {
    check_reduce({1 << 20}, {}, {0}, Reduction::sum, d);           // everything, inner kernel
    check_reduce({512, 2048}, {}, {0, 1}, Reduction::max, d);      // everything, two dims collapsed
    check_reduce({100000, 8}, {}, {0}, Reduction::sum, d);         // outer kernel, 8 outputs
    check_reduce({4, 100000}, {}, {1}, Reduction::min, d);         // inner kernel, 4 outputs
  }
  check_reduce({100000, 8}, {}, {0}, Reduction::mean, DType::f32);
}

TEST_CASE("strided inputs, middle axes and strided outputs", "[cuda][reduce]") {
  for (DType d : {DType::f32, DType::bf16, DType::i64}) {
    check_reduce({40, 60}, {1, 40}, {1}, Reduction::sum, d);             // a transposed input
    check_reduce({3, 4, 5, 6}, {}, {1, 3}, Reduction::sum, d);           // every other axis
    check_reduce({3, 4, 5, 6}, {}, {0, 2}, Reduction::max, d);
    check_reduce({6, 50}, {100, 2}, {1}, Reduction::sum, d);             // every other element
    check_reduce({6, 7, 8}, {}, {1}, Reduction::sum, d, {1, 6});         // column-major output
    check_reduce({5, 64}, {0, 1}, {0}, Reduction::sum, d);               // a broadcast (stride-0) axis
  }
}

TEST_CASE("products, and reductions of nothing", "[cuda][reduce]") {
  for (DType d : {DType::f32, DType::f64, DType::bf16}) {
    check_reduce({8, 5}, {}, {1}, Reduction::prod, d);
    check_reduce({3, 0}, {}, {1}, Reduction::sum, d);    // 0
    check_reduce({3, 0}, {}, {1}, Reduction::prod, d);   // 1
    check_reduce({3, 0}, {}, {1}, Reduction::mean, d);   // NaN, as numpy
    check_reduce({3, 4}, {}, {}, Reduction::sum, d);     // no axes: a copy
  }
  check_reduce({8, 5}, {}, {1}, Reduction::prod, DType::i64);
}

TEST_CASE("var, std and logsumexp: inner and outer kernels, strided inputs", "[cuda][reduce]") {
  for (Reduction op : {Reduction::var, Reduction::std, Reduction::logsumexp})
    for (DType d : {DType::f32, DType::f64, DType::bf16}) {
      check_reduce({64, 1000}, {}, {1}, op, d);     // inner: one warp per output
      check_reduce({4, 300, 64}, {}, {1}, op, d);   // outer: one thread per output
      check_reduce({40, 60}, {1, 40}, {1}, op, d);  // a transposed input
    }
}

TEST_CASE("any and all on bool", "[cuda][reduce]") {
  for (Reduction op : {Reduction::any, Reduction::all}) {
    check_reduce({16, 5}, {}, {1}, op, DType::boolean);
    check_reduce({7, 300}, {}, {1}, op, DType::boolean);
    check_reduce({300, 7}, {}, {0}, op, DType::boolean);
    check_reduce({3, 0}, {}, {1}, op, DType::boolean);
  }
}
