// plan_reduction on the CPU: each plan runs through an emulation of reduce_cuda.cu's
// kernels (outputs and reduced elements addressed only through the plan's collapsed dims,
// chunks, splits and partial layout) against a direct loop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "emulate.hpp"
#include "kernels.hpp"

using namespace einexpr;
using namespace einexpr::gpu;
using namespace einexpr::test;

namespace {

// Offset of linear index i (row-major over shape) with strides.
std::int64_t strided(std::int64_t i, const Shape& shape, const Strides& strides) {
  std::int64_t off = 0;
  for (std::size_t d = shape.size(); d-- > 0;) {
    off += (i % shape[d]) * strides[d];
    i /= shape[d];
  }
  return off;
}

double combine(Reduction op, double a, double b) {
  switch (op) {
    case Reduction::sum: case Reduction::mean: return a + b;
    case Reduction::prod: return a * b;
    case Reduction::max: return std::max(a, b);
    case Reduction::min: return std::min(a, b);
    default: return 0;
  }
}
double identity(Reduction op) {
  if (op == Reduction::prod) return 1;
  if (op == Reduction::max) return -INFINITY;
  if (op == Reduction::min) return INFINITY;
  return 0;
}

// reduce_cuda.cu's kernels, by the plan alone.
void emulate(const ReducePlan& p, const std::vector<double>& src, std::vector<double>& dst) {
  std::vector<double> partials(static_cast<std::size_t>(p.outputs * p.splits), NAN);
  for (std::int64_t o = 0; o < p.outputs; ++o) {
    const std::int64_t src_off = p.src_offset + strided(o, p.kept, p.kept_src);
    for (std::int64_t s = 0; s < p.splits; ++s) {
      double acc = identity(p.op);
      for (std::int64_t r = s * p.chunk; r < std::min(p.count, (s + 1) * p.chunk); ++r)
        acc = combine(p.op, acc, src.at(static_cast<std::size_t>(src_off + strided(r, p.reduced, p.reduced_src))));
      partials.at(static_cast<std::size_t>(p.partials_by_output() ? o * p.splits + s : s * p.outputs + o)) = acc;
    }
  }
  for (std::int64_t o = 0; o < p.outputs; ++o) {
    double acc = identity(p.op);
    for (std::int64_t s = 0; s < p.splits; ++s)
      acc = combine(p.op, acc, partials.at(static_cast<std::size_t>(p.partials_by_output() ? o * p.splits + s : s * p.outputs + o)));
    if (p.op == Reduction::mean) acc /= static_cast<double>(p.count);
    dst.at(static_cast<std::size_t>(p.dst_offset + strided(o, p.kept, p.kept_dst))) = acc;
  }
}

void check(const Layout& src, const std::vector<int>& axes, const Layout& dst, Reduction op, int sms, std::mt19937& rng) {
  CAPTURE(src.shape, src.strides, src.offset, axes, dst.shape, dst.strides, dst.offset, name(op), sms);
  const ReducePlan p = plan_reduction(sms, src, axes, dst, DType::f32, op);
  CAPTURE(p.kind == ReducePlan::Kind::inner, p.kept, p.kept_src, p.kept_dst, p.reduced, p.reduced_src, p.splits, p.chunk);
  REQUIRE(p.splits >= 1);
  REQUIRE(p.chunk * p.splits >= p.count);
  REQUIRE((p.splits - 1) * p.chunk < std::max<std::int64_t>(p.count, 1));
  const std::size_t accumulator = op == Reduction::max || op == Reduction::min ? 4 : 8;  // f32 sums add in double
  CHECK(p.partial_bytes == (p.splits > 1 ? static_cast<std::size_t>(p.outputs * p.splits) * accumulator : 0));
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<double> in(static_cast<std::size_t>(std::max<std::int64_t>(src.extent(), 1)));
  for (double& x : in) x = u(rng);
  std::vector<double> out(static_cast<std::size_t>(std::max<std::int64_t>(dst.extent(), 1)), NAN);
  if (p.outputs > 0) emulate(p, in, out);
  // direct loop
  std::vector<double> want(out.size(), NAN);
  std::vector<bool> reduced(src.shape.size(), false);
  for (int a : axes) reduced[static_cast<std::size_t>(a)] = true;
  std::int64_t count = 1;
  for (int a : axes) count *= src.shape[static_cast<std::size_t>(a)];
  for_each_index(dst.shape, [&](const std::vector<std::int64_t>& o) { want[static_cast<std::size_t>(offset_of(dst, o))] = identity(op); });
  for_each_index(src.shape, [&](const std::vector<std::int64_t>& i) {
    std::vector<std::int64_t> o;
    for (std::size_t d = 0; d < i.size(); ++d)
      if (!reduced[d]) o.push_back(i[d]);
    double& w = want[static_cast<std::size_t>(offset_of(dst, o))];
    w = combine(op, w, in[static_cast<std::size_t>(offset_of(src, i))]);
  });
  if (op == Reduction::mean)
    for_each_index(dst.shape, [&](const std::vector<std::int64_t>& o) { want[static_cast<std::size_t>(offset_of(dst, o))] /= static_cast<double>(count); });
  std::int64_t wrong = 0;
  for_each_index(dst.shape, [&](const std::vector<std::int64_t>& o) {
    const auto i = static_cast<std::size_t>(offset_of(dst, o));
    const bool both_nan = std::isnan(out[i]) && std::isnan(want[i]);
    const bool close = out[i] == want[i] || std::fabs(out[i] - want[i]) <= 1e-9 * std::max(1.0, std::fabs(want[i]));
    if (!both_nan && !close) ++wrong;
  });
  CHECK(wrong == 0);
}

Layout out_layout(const Layout& src, const std::vector<int>& axes, std::mt19937& rng) {
  Shape shape;
  for (int d = 0; d < src.dim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) shape.push_back(src.shape[static_cast<std::size_t>(d)]);
  return random_layout(shape, rng);
}

}  // namespace

TEST_CASE("plan_reduction: kinds and splits", "[cuda_host][reduce]") {
  const ReducePlan outer = plan_reduction(132, Layout::contiguous({4, 300, 64}), {1}, Layout::contiguous({4, 64}),
                                          DType::f32, Reduction::sum);
  CHECK(outer.kind == ReducePlan::Kind::outer);
  CHECK(outer.kept == Shape{4, 64});  // src strides [19200, 1]: b and h do not collapse
  CHECK(outer.reduced == Shape{300});
  const ReducePlan inner = plan_reduction(132, Layout::contiguous({64, 1000}), {1}, Layout::contiguous({64}),
                                          DType::bf16, Reduction::sum);
  CHECK(inner.kind == ReducePlan::Kind::inner);
  CHECK(inner.splits == 1);
  const ReducePlan all = plan_reduction(132, Layout::contiguous({512, 2048}), {0, 1}, Layout::contiguous({}),
                                        DType::f32, Reduction::max);
  CHECK(all.reduced == Shape{512 * 2048});
  CHECK(all.splits > 1);
  CHECK(all.partial_bytes == static_cast<std::size_t>(all.splits) * 4);
}

TEST_CASE("plan_reduction: the GPU tests' cases, emulated", "[cuda_host][reduce]") {
  std::mt19937 rng(5);
  for (int sms : {1, 132}) {
    for (Reduction op : {Reduction::sum, Reduction::mean, Reduction::max, Reduction::prod}) {
      check(Layout::contiguous({4, 300, 64}), {1}, Layout::contiguous({4, 64}), op, sms, rng);
      check(Layout::contiguous({64, 1000}), {1}, Layout::contiguous({64}), op, sms, rng);
      check(Layout::contiguous({100000, 8}), {0}, Layout::contiguous({8}), op, sms, rng);
      check(Layout::contiguous({4, 100000}), {1}, Layout::contiguous({4}), op, sms, rng);
      check(Layout{{40, 60}, {1, 40}, 0}, {1}, Layout::contiguous({40}), op, sms, rng);
      check(Layout::contiguous({3, 4, 5, 6}), {1, 3}, Layout::contiguous({3, 5}), op, sms, rng);
      check(Layout{{6, 7, 8}, {56, 8, 1}, 0}, {1}, Layout{{6, 8}, {1, 6}, 0}, op, sms, rng);
      check(Layout{{5, 64}, {0, 1}, 0}, {0}, Layout::contiguous({64}), op, sms, rng);
      check(Layout::contiguous({3, 0}), {1}, Layout::contiguous({3}), op, sms, rng);
      check(Layout::contiguous({3, 4}), {}, Layout::contiguous({3, 4}), op, sms, rng);
    }
  }
}

TEST_CASE("plan_reduction: random layouts and axis sets, emulated", "[cuda_host][reduce]") {
  std::mt19937 rng(9);
  const std::int64_t lengths[] = {1, 2, 3, 7, 40};
  for (int trial = 0; trial < 2000; ++trial) {
    Shape shape;
    const int rank = 1 + static_cast<int>(rng() % 4);
    for (int d = 0; d < rank; ++d) shape.push_back(lengths[rng() % 5]);
    Layout src = random_layout(shape, rng);
    if (rng() % 6 == 0) src.strides[rng() % shape.size()] = 0;  // a broadcast dim
    std::vector<int> axes;
    for (int d = 0; d < rank; ++d)
      if (rng() % 2) axes.push_back(d);
    const Reduction op = std::vector<Reduction>{Reduction::sum, Reduction::mean, Reduction::max, Reduction::min}[rng() % 4];
    check(src, axes, out_layout(src, axes, rng), op, rng() % 2 ? 132 : 1, rng);
  }
}
