// NormStep on the CPU: softmax, log_softmax, layer_norm and rms_norm along some dims, and
// their backward passes. The dims split into rows (the normalized dims: one row per index of
// the others); rows are shared among threads. A row that is contiguous in f32 / f64 is
// handed to vec_math's row kernel in place (the output streamed when it is large); any other
// row is gathered into the compute type first and scattered after. Backward rows are plain
// loops in the compute type with double sums: gradients are accounted and checked, not a
// hot path.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_kernels.hpp"
#include "element.hpp"
#include "strided_loop.hpp"
#include "vec_math.hpp"

namespace einexpr::cpu {

namespace {

constexpr std::int64_t stream_bytes = std::int64_t{8} << 20;  // as map_cpu.cpp

/// One view's rows: where each row starts (by the outer nest) and its elements' offsets.
struct RowGeometry {
  Nest<3> outer;                              // dst, src 0, src 1 over the kept dims
  std::vector<std::vector<std::int64_t>> at;  // per view: offsets of a row's elements
  std::vector<bool> contiguous;               // per view: the row is offsets 0, 1, ..., n-1
  std::int64_t n = 1;                         // elements per row
};

std::vector<std::int64_t> row_offsets(const Shape& shape, const Strides& strides) {
  std::vector<std::int64_t> out;
  std::int64_t n = 1;
  for (std::int64_t len : shape) n *= len;
  out.reserve(static_cast<std::size_t>(n));
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) off += index[d] * strides[d];
    out.push_back(off);
    for (std::size_t d = shape.size(); d-- > 0;)
      if (++index[d] < shape[d]) break;
      else index[d] = 0;
  }
  return out;
}

RowGeometry geometry(const std::vector<int>& axes, const std::vector<const Layout*>& views) {
  const Shape& shape = views[0]->shape;
  Shape outer_shape, inner_shape;
  std::array<Strides, 3> outer{};
  std::vector<Strides> inner(views.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const bool normalized = std::find(axes.begin(), axes.end(), static_cast<int>(d)) != axes.end();
    (normalized ? inner_shape : outer_shape).push_back(shape[d]);
    for (std::size_t v = 0; v < 3; ++v) {
      const std::int64_t s = v < views.size() ? views[v]->strides[d] : 0;
      if (normalized && v < views.size()) inner[v].push_back(s);
      if (!normalized) outer[v].push_back(s);
    }
  }
  RowGeometry g;
  g.outer = Nest<3>::make(outer_shape, outer);
  for (std::int64_t len : inner_shape) g.n *= len;
  for (const Strides& s : inner) {
    std::vector<std::int64_t> at = row_offsets(inner_shape, s);
    bool unit = true;
    for (std::size_t k = 0; k < at.size(); ++k) unit = unit && at[k] == static_cast<std::int64_t>(k);
    g.contiguous.push_back(unit);
    g.at.push_back(std::move(at));
  }
  return g;
}

template <class C>
vec::RowKernel<C> forward_row(Normalization kind) {
  const vec::Table& t = vec::best_table();
  const vec::RowKernels<C>& k = [&]() -> const vec::RowKernels<C>& {
    if constexpr (std::is_same_v<C, float>) return t.rows_f32;
    else return t.rows_f64;
  }();
  switch (kind) {
    case Normalization::softmax: return k.softmax;
    case Normalization::log_softmax: return k.log_softmax;
    case Normalization::layer_norm: return k.layer_norm;
    case Normalization::rms_norm: return k.rms_norm;
  }
  throw InternalError("NormStep: unknown normalization", __FILE__, __LINE__);
}

/// dX of one row from dY and v (Y for softmax and log_softmax, X for the norms).
template <class C>
void backward_row(Normalization kind, double eps, const C* dy, const C* v, C* dx, std::int64_t n) {
  const double inv_n = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
  switch (kind) {
    case Normalization::softmax: {  // y · (dY - sum(dY · y))
      double s = 0;
      for (std::int64_t i = 0; i < n; ++i) s += static_cast<double>(dy[i]) * v[i];
      for (std::int64_t i = 0; i < n; ++i) dx[i] = static_cast<C>(v[i] * (dy[i] - s));
      return;
    }
    case Normalization::log_softmax: {  // dY - exp(y) · sum(dY)
      double s = 0;
      for (std::int64_t i = 0; i < n; ++i) s += dy[i];
      for (std::int64_t i = 0; i < n; ++i) dx[i] = static_cast<C>(dy[i] - std::exp(static_cast<double>(v[i])) * s);
      return;
    }
    case Normalization::layer_norm:
    case Normalization::rms_norm: {
      // x̂ = (x - mean)·r (rms: x·r), r = 1/sqrt(var + eps) (rms: mean(x²) + eps);
      // dX = r·(dY - mean(dY) - x̂·mean(dY·x̂)) (rms: without mean(dY)).
      const bool centered = kind == Normalization::layer_norm;
      double mean = 0, m2 = 0;
      if (centered)
        for (std::int64_t i = 0; i < n; ++i) mean += v[i];
      mean *= inv_n;
      for (std::int64_t i = 0; i < n; ++i) m2 += (v[i] - mean) * (v[i] - mean);
      const double r = 1.0 / std::sqrt(m2 * inv_n + eps);
      double mdy = 0, mdyx = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        mdy += dy[i];
        mdyx += static_cast<double>(dy[i]) * (v[i] - mean) * r;
      }
      mdy = centered ? mdy * inv_n : 0.0;
      mdyx *= inv_n;
      for (std::int64_t i = 0; i < n; ++i) dx[i] = static_cast<C>(r * (dy[i] - mdy - (v[i] - mean) * r * mdyx));
      return;
    }
  }
}

/// The rows [begin, end) of one thread. S: the stored type, C: the computed one.
template <class S>
struct RowRunner {
  using C = compute_t<S>;
  const NormStep* step;
  const RowGeometry* g;
  S* dst;
  const S* src[2];
  bool stream;

  void run(std::int64_t begin, std::int64_t end) const {
    const std::size_t n = static_cast<std::size_t>(g->n);
    std::vector<C> in0(n), in1(n), out(n), scratch(n);
    Odometer<3> odo(g->outer.shape, g->outer.strides, g->outer.shape.size());
    odo.seek(begin);
    for (std::int64_t r = begin; r < end; ++r, odo.next()) {
      const auto& off = odo.offsets();
      const C* x0 = load(0, src[0] + off[1], in0);
      if (!step->backward) {
        C* y = direct(0) ? reinterpret_cast<C*>(dst + off[0]) : out.data();
        forward_row<C>(step->kind)(x0, y, g->n, static_cast<C>(step->eps), stream && y != out.data(), scratch.data());
        if (y == out.data()) scatter(dst + off[0], out);
      } else {
        const C* x1 = load(1, src[1] + off[2], in1);
        backward_row<C>(step->kind, step->eps, x0, x1, out.data(), g->n);
        scatter(dst + off[0], out);
      }
    }
  }

  bool direct(std::size_t view) const { return std::is_same_v<S, C> && g->contiguous[view]; }

  /// Source `i`'s row (view i + 1) as C: in place where it is contiguous C, else gathered.
  const C* load(std::size_t i, const S* base, std::vector<C>& buf) const {
    if (direct(i + 1)) return reinterpret_cast<const C*>(base);
    const std::vector<std::int64_t>& at = g->at[i + 1];
    for (std::size_t k = 0; k < at.size(); ++k) buf[k] = Element<S>::load(base[at[k]]);
    return buf.data();
  }
  void scatter(S* base, const std::vector<C>& row) const {
    const std::vector<std::int64_t>& at = g->at[0];
    for (std::size_t k = 0; k < at.size(); ++k) base[at[k]] = Element<S>::store(row[k]);
  }
};

template <class S>
void run_rows(const NormStep& step, const RowGeometry& g, S* dst, const S* s0, const S* s1, bool stream) {
  const std::int64_t rows = g.outer.rows() * g.outer.row_length();
  if (rows == 0 || g.n == 0) return;
  const RowRunner<S> runner{&step, &g, dst, {s0, s1}, stream};
  if (num_threads() <= 1 || rows * g.n < parallel_threshold) {
    runner.run(0, rows);
  } else {
    const std::int64_t grain = std::max<std::int64_t>(1, parallel_threshold / 4 / g.n);  // rows a piece
    parallel_for(rows, pieces_for(rows, grain), [&](std::int64_t, std::int64_t b, std::int64_t e) { runner.run(b, e); });
  }
  if (stream) vec::best_table().rows_f32.fence();
}

}  // namespace

Kernel norm_kernel(const NormStep& step, const std::vector<Operand>& srcs, const Operand& dst, DType dtype) {
  EINEXPR_ASSERT(srcs.size() == (step.backward ? 2u : 1u), "NormStep: wrong number of sources");
  std::vector<const Layout*> views = {&dst.layout};
  for (const Operand& s : srcs) views.push_back(&s.layout);
  const RowGeometry g = geometry(step.axes, views);
  Kernel kernel;
  kernel.name = std::string(step.backward ? "d." : "") + name(step.kind) + " " + std::string(name(dtype)) + " " +
                layout_str(dst.layout);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<compute_t<S>>) {
      throw DTypeError(std::string(name(step.kind)) + " needs a floating dtype, not " + std::string(name(dtype)));
    } else {
      const bool stream = !step.backward && g.contiguous[0] &&
                          g.n * g.outer.numel() * static_cast<std::int64_t>(sizeof(S)) >= stream_bytes;
      kernel.run = [step, g, srcs, dst, stream](const Workspace& ws) {
        auto src = [&](std::size_t i) -> const S* {
          return i < srcs.size() ? buffer_ptr<const S>(ws, srcs[i].buffer) + srcs[i].layout.offset : nullptr;
        };
        run_rows<S>(step, g, buffer_ptr<S>(ws, dst.buffer) + dst.layout.offset, src(0), src(1), stream);
      };
    }
  });
  return kernel;
}

}  // namespace einexpr::cpu
