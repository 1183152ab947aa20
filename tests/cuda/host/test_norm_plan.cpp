// plan_normalization on the CPU: each plan runs through an emulation of norm_cuda.cu's
// addressing (rows through the plan's collapsed kept dims and base offsets, a row's elements
// through its collapsed normalized dims, element 0 first) against a direct loop over the
// original layouts, forward and backward; and the errors it gives.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "kernels.hpp"

using namespace einexpr;
using namespace einexpr::gpu;

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

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t len : shape) n *= len;
  return n;
}

// A row function that tells elements apart by position and reads both sources: the
// forward uses element 0 (layer_norm's pivot) and a weighted sum; the backward a softmax
// gradient, v · (dy - sum(dy · v)).
std::vector<double> row_function(bool backward, const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(a.size());
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += backward ? a[k] * b[k] : a[k] * static_cast<double>(k + 1);
  for (std::size_t k = 0; k < a.size(); ++k) out[k] = backward ? b[k] * (a[k] - s) : (a[k] - a[0]) * 3 + s;
  return out;
}

// norm_cuda.cu's kernels, by the plan alone.
void emulate(const NormPlan& p, std::vector<double>& dst, const std::vector<double>& src0,
             const std::vector<double>& src1) {
  const std::int64_t rows = numel(p.outer);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t base[3];
    for (std::size_t v = 0; v < 3; ++v) base[v] = p.base[v] + strided(r, p.outer, p.outer_strides[v]);
    std::vector<double> a, b;
    for (std::int64_t k = 0; k < p.n; ++k) {
      a.push_back(src0.at(static_cast<std::size_t>(base[1] + strided(k, p.inner, p.inner_strides[1]))));
      b.push_back(p.backward ? src1.at(static_cast<std::size_t>(base[2] + strided(k, p.inner, p.inner_strides[2]))) : 0);
    }
    const std::vector<double> out = row_function(p.backward, a, b);
    for (std::int64_t k = 0; k < p.n; ++k)
      dst.at(static_cast<std::size_t>(base[0] + strided(k, p.inner, p.inner_strides[0]))) = out[static_cast<std::size_t>(k)];
  }
}

// The same over the original layouts: rows are the kept dims' indices, a row's elements the
// normalized dims' in row-major order.
void direct(const Shape& shape, const std::vector<int>& axes, const std::vector<Layout>& views, bool backward,
            std::vector<double>& dst, const std::vector<double>& src0, const std::vector<double>& src1) {
  Shape kept, row;
  std::vector<std::size_t> kept_dims, row_dims;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const bool in = std::find(axes.begin(), axes.end(), static_cast<int>(d)) != axes.end();
    (in ? row : kept).push_back(shape[d]);
    (in ? row_dims : kept_dims).push_back(d);
  }
  auto offset = [&](const Layout& l, std::int64_t r, std::int64_t k) {
    std::int64_t off = l.offset;
    for (std::size_t j = kept.size(); j-- > 0;) {
      off += (r % kept[j]) * l.strides[kept_dims[j]];
      r /= kept[j];
    }
    for (std::size_t j = row.size(); j-- > 0;) {
      off += (k % row[j]) * l.strides[row_dims[j]];
      k /= row[j];
    }
    return off;
  };
  const std::int64_t rows = numel(kept), n = numel(row);
  if (n == 0) return;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<double> a, b;
    for (std::int64_t k = 0; k < n; ++k) {
      a.push_back(src0.at(static_cast<std::size_t>(offset(views[1], r, k))));
      b.push_back(backward ? src1.at(static_cast<std::size_t>(offset(views[2], r, k))) : 0);
    }
    const std::vector<double> out = row_function(backward, a, b);
    for (std::int64_t k = 0; k < n; ++k) dst.at(static_cast<std::size_t>(offset(views[0], r, k))) = out[static_cast<std::size_t>(k)];
  }
}

Layout contiguous(const Shape& s) { return Layout::contiguous(s); }
Layout transposed(const Shape& s) {
  const Shape rev(s.rbegin(), s.rend());
  const Strides r = contiguous_strides(rev);
  return Layout{s, Strides(r.rbegin(), r.rend()), 0};
}
Layout sliced(const Shape& s) {
  Strides st = contiguous_strides(s);
  for (auto& v : st) v *= 2;
  return Layout{s, st, 1};
}
Layout broadcast_last(const Shape& s) {
  Layout l = Layout::contiguous(s);
  l.strides.back() = 0;
  return l;
}

std::vector<double> buffer(const Layout& l, double fill) {
  return std::vector<double>(static_cast<std::size_t>(std::max<std::int64_t>(l.extent(), 1)), fill);
}
std::vector<double> random_buffer(const Layout& l, unsigned seed) {
  std::vector<double> v = buffer(l, 0);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(seed * 7919 + i)) * 3;
  return v;
}

}  // namespace

TEST_CASE("plan_normalization: rows and row elements through collapsed dims reach every element once",
          "[cuda_host][norm]") {
  struct Row {
    const char* what;
    Shape shape;
    std::vector<int> axes;
    Layout (*dst)(const Shape&);
    Layout (*src0)(const Shape&);
    Layout (*src1)(const Shape&);
    bool backward;
    Shape outer, inner;  // the collapsed dims expected
  };
  const Row rows[] = {
      {"last axis, contiguous", {2, 3, 4, 5}, {3}, contiguous, contiguous, contiguous, false, {24}, {5}},
      {"two axes apart, transposed source", {2, 3, 4, 5}, {1, 3}, contiguous, transposed, contiguous, false,
       {2, 4}, {3, 5}},
      {"outer axes, sliced source into a transposed destination", {3, 4, 5}, {0, 2}, transposed, sliced, contiguous,
       false, {4}, {3, 5}},
      {"a broadcast kept dim", {4, 6}, {0}, contiguous, broadcast_last, contiguous, false, {6}, {4}},
      {"length-1 dims dropped, the rest merged", {2, 1, 3, 1, 4}, {1, 2, 4}, contiguous, contiguous, contiguous,
       false, {2}, {12}},
      {"every dim normalized: one row", {5, 2}, {0, 1}, contiguous, sliced, contiguous, false, {}, {10}},
      {"backward: three layouts", {2, 3, 4, 5}, {1, 3}, transposed, contiguous, sliced, true, {2, 4}, {3, 5}},
      {"backward: a broadcast source", {3, 4, 5}, {0}, contiguous, sliced, broadcast_last, true, {4, 5}, {3}},
      {"no rows", {0, 4}, {1}, contiguous, contiguous, contiguous, false, {0}, {4}},
      {"empty rows", {3, 0}, {1}, contiguous, contiguous, contiguous, true, {3}, {0}},
  };
  unsigned seed = 1;
  for (const Row& row : rows) {
    CAPTURE(row.what);
    const Layout dst = row.dst(row.shape), s0 = row.src0(row.shape), s1 = row.src1(row.shape);
    NormStep step;
    step.srcs = row.backward ? std::vector<int>{1, 2} : std::vector<int>{1};
    step.dst = 0;
    step.kind = Normalization::layer_norm;
    step.backward = row.backward;
    step.axes = row.axes;
    step.eps = 1e-5;
    std::vector<const Layout*> srcs = {&s0};
    if (row.backward) srcs.push_back(&s1);
    const NormPlan p = plan_normalization(step, dst, srcs, DType::f32);
    CHECK(p.kind == Normalization::layer_norm);
    CHECK(p.backward == row.backward);
    CHECK(p.eps == 1e-5);
    CHECK(p.outer == row.outer);
    CHECK(p.inner == row.inner);
    const std::vector<double> a = random_buffer(s0, seed++), b = random_buffer(s1, seed++);
    std::vector<double> got = buffer(dst, NAN), want = buffer(dst, NAN);
    emulate(p, got, a, b);
    direct(row.shape, row.axes, {dst, s0, s1}, row.backward, want, a, b);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
      else CHECK(got[i] == want[i]);
    }
  }
}

TEST_CASE("plan_normalization refuses integer dtypes and rows the kernels cannot index", "[cuda_host][norm]") {
  NormStep step;
  step.srcs = {1};
  step.kind = Normalization::softmax;
  step.axes = {0};
  const Layout small = Layout::contiguous({3, 4});
  CHECK_THROWS_AS(plan_normalization(step, small, {&small}, DType::i32), DTypeError);
  CHECK_THROWS_WITH(plan_normalization(step, small, {&small}, DType::i64),
                    Catch::Contains("softmax needs a floating dtype, not i64"));
  // A row of 2^31 elements (never allocated: only its layout is planned).
  const Layout huge = Layout::contiguous({std::int64_t{1} << 31});
  CHECK_THROWS_WITH(plan_normalization(step, huge, {&huge}, DType::f32),
                    Catch::Contains("softmax on the GPU does not support rows of 2147483648 elements over 1 strided "
                                    "dims yet") &&
                        Catch::Contains(".to(Device::cpu())"));
  // 13 normalized dims that do not collapse: the destination is contiguous, the source transposed.
  const Shape thirteen(13, 2);
  const Layout dst = Layout::contiguous(thirteen), src = transposed(thirteen);
  step.axes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  step.kind = Normalization::rms_norm;
  CHECK_THROWS_WITH(plan_normalization(step, dst, {&src}, DType::f32),
                    Catch::Contains("rms_norm on the GPU does not support rows of 8192 elements over 13 strided dims"));
  const NormPlan fine = plan_normalization(step, dst, {&dst}, DType::f32);  // contiguous: one dim
  CHECK(fine.inner == Shape{8192});
  CHECK(fine.outer.empty());
}
