// Contractions: einexpr's einsum beside the best GEMM called directly on the same
// already-laid-out matrices (Eigen's own kernels and OpenBLAS's sgemm, each with its own
// threads; for batches also one library call per batch item spread over OpenMP threads).
#include <omp.h>

#include <array>
#include <vector>

#include "bench.hpp"

namespace bench {

namespace {

using einexpr::Tensor;

/// A batch of row-major GEMMs c[i] = a[i] b[i] (b[i] transposed when b_t), as laid out.
struct Gemms {
  const float *a, *b;
  float* c;
  std::int64_t batch, m, n, k;
  bool b_t;
  std::int64_t sa() const { return m * k; }
  std::int64_t sb() const { return k * n; }
  std::int64_t sc() const { return m * n; }
  std::int64_t ldb() const { return b_t ? k : n; }
  /// Rows [r0, r1) of GEMM i.
  void rows(std::int64_t i, std::int64_t r0, std::int64_t r1, bool openblas) const {
    const float *ai = a + i * sa() + r0 * k, *bi = b + i * sb();
    float* ci = c + i * sc() + r0 * n;
    if (openblas) gemm_openblas(ai, k, bi, ldb(), ci, n, r1 - r0, n, k, b_t);
    else gemm_eigen(ai, k, bi, ldb(), ci, n, r1 - r0, n, k, b_t);
  }
  void one(std::int64_t i, bool openblas) const { rows(i, 0, m, openblas); }
  /// GEMM i on `threads` OpenMP threads, each one library call on a block of rows.
  void split(std::int64_t i, bool openblas, int threads) const {
#pragma omp parallel num_threads(threads)
    {
      const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::int64_t r0 = m * t / nt / 16 * 16, r1 = t + 1 == nt ? m : m * (t + 1) / nt / 16 * 16;
      rows(i, r0, r1, openblas);
    }
  }
};

/// The limit roles of a batch of GEMMs: a plain loop of library calls (library threads);
/// for batches, one single-threaded library call per item over OpenMP threads; for one
/// GEMM, one single-threaded call per thread on a block of rows.
void add_gemm_limits(const std::string& w, int threads, const Work& work,
                     const std::function<Gemms()>& make) {
  for (const bool openblas : {false, true}) {
    if (openblas && !have_openblas()) continue;
    const std::string lib = openblas ? "openblas" : "eigen";
    add(w, "limit:" + lib, threads, work, [=](int) {
      const Gemms g = make();
      return std::function<void()>([g, openblas] {
        for (std::int64_t i = 0; i < g.batch; ++i) g.one(i, openblas);
      });
    });
    if (make().batch == 1) {
      add(w, "limit:" + lib + " split rows", threads, work, [=](int t) {
        const Gemms g = make();
        set_openblas_threads(1);
        return std::function<void()>([g, openblas, t] { g.split(0, openblas, t); });
      });
      continue;
    }
    if (make().batch < threads) continue;
    add(w, "limit:" + lib + " omp batch", threads, work, [=](int t) {
      const Gemms g = make();
      set_openblas_threads(1);
      return std::function<void()>([g, openblas, t] {
#pragma omp parallel for num_threads(t) schedule(static)
        for (std::int64_t i = 0; i < g.batch; ++i) g.one(i, openblas);
      });
    });
  }
}

/// einsum over `operands` in both forms (out-parameter and fresh result).
void add_einsum(const std::string& w, const std::string& pattern, int threads, const Work& work,
                const std::function<std::vector<Tensor>()>& make) {
  add(w, "out", threads, work, [=](int) {
    const std::vector<Tensor> in = make();
    auto out = std::make_shared<Tensor>(einexpr::einsum(std::span<const Tensor>(in), pattern));
    return std::function<void()>([in, out, pattern] { einexpr::einsum_into(*out, in, pattern); });
  });
  add(w, "fresh", threads, work, [=](int) {
    const std::vector<Tensor> in = make();
    return std::function<void()>(
        [in, pattern] { benchmark_keep(einexpr::einsum(std::span<const Tensor>(in), pattern)); });
  });
}

float* f32(const Tensor& t) { return static_cast<float*>(t.data_ptr()); }

/// "b s1 h, b s2 h -> b s1 s2"-shaped: x[batch, m, k] y[batch, n, k] -> [batch, m, n].
void add_batched(const std::string& w, const std::string& pattern, const einexpr::Shape& xs,
                 const einexpr::Shape& ys, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k,
                 int threads) {
  const Work work{2.0 * batch * m * n * k, 4.0 * batch * (m * k + n * k + m * n), 0.9};
  auto inputs = [=] {
    return std::vector<Tensor>{input(w, "x", [&] { return random_f32(xs, 1); }),
                               input(w, "y", [&] { return random_f32(ys, 2); })};
  };
  add_einsum(w, pattern, threads, work, inputs);
  add_gemm_limits(w, threads, work, [=] {
    const auto in = inputs();
    const Tensor c = input(w, "c", [&] { return Tensor::empty({batch, m, n}); });
    return Gemms{f32(in[0]), f32(in[1]), f32(c), batch, m, n, k, true};
  });
}

/// "b d, d k -> b k": x[m, k] w[k, n].
void add_plain(std::int64_t m, std::int64_t k, std::int64_t n, int threads) {
  const std::string w = "einsum b d, d k -> b k " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                        std::to_string(n);
  const Work work{2.0 * m * n * k, 4.0 * (m * k + k * n + m * n), 0.95};
  auto inputs = [=] {
    return std::vector<Tensor>{input(w, "x", [&] { return random_f32({m, k}, 3); }),
                               input(w, "w", [&] { return random_f32({k, n}, 4); })};
  };
  add_einsum(w, "b d, d k -> b k", threads, work, inputs);
  add_gemm_limits(w, threads, work, [=] {
    const auto in = inputs();
    const Tensor c = input(w, "c", [&] { return Tensor::empty({m, n}); });
    return Gemms{f32(in[0]), f32(in[1]), f32(c), 1, m, n, k, false};
  });
}

/// "i j, j k, k l -> i l": the cheap order is (j k . k l) first, then i j . (j l).
void add_chain(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t l, int threads) {
  const std::string w = "einsum i j, j k, k l -> i l " + std::to_string(i) + "x" + std::to_string(j) + "x" +
                        std::to_string(k) + "x" + std::to_string(l);
  const Work work{2.0 * (j * k * l + i * j * l), 4.0 * (i * j + j * k + k * l + i * l), 0.85};
  auto inputs = [=] {
    return std::vector<Tensor>{input(w, "a", [&] { return random_f32({i, j}, 5); }),
                               input(w, "b", [&] { return random_f32({j, k}, 6); }),
                               input(w, "c", [&] { return random_f32({k, l}, 7); })};
  };
  add_einsum(w, "i j, j k, k l -> i l", threads, work, inputs);
  for (const bool openblas : {false, true}) {
    if (openblas && !have_openblas()) continue;
    add(w, openblas ? "limit:openblas" : "limit:eigen", threads, work, [=](int) {
      const auto in = inputs();
      const Tensor t = input(w, "t", [&] { return Tensor::empty({j, l}); });
      const Tensor out = input(w, "out", [&] { return Tensor::empty({i, l}); });
      return std::function<void()>([=] {
        const Gemms first{f32(in[1]), f32(in[2]), f32(t), 1, j, l, k, false};
        const Gemms second{f32(in[0]), f32(t), f32(out), 1, i, l, j, false};
        first.one(0, openblas);
        second.one(0, openblas);
      });
    });
    add(w, openblas ? "limit:openblas split rows" : "limit:eigen split rows", threads, work, [=](int th) {
      const auto in = inputs();
      const Tensor t = input(w, "t", [&] { return Tensor::empty({j, l}); });
      const Tensor out = input(w, "out", [&] { return Tensor::empty({i, l}); });
      set_openblas_threads(1);
      return std::function<void()>([=] {
        const Gemms first{f32(in[1]), f32(in[2]), f32(t), 1, j, l, k, false};
        const Gemms second{f32(in[0]), f32(t), f32(out), 1, i, l, j, false};
        first.split(0, openblas, th);
        second.split(0, openblas, th);
      });
    });
  }
}

}  // namespace

void register_gemm() {
  constexpr int t = 2;
  add_plain(1024, 256, 64, t);
  add_plain(2048, 2048, 2048, t);
  add_batched("einsum b s1 h, b s2 h -> b s1 s2 32x512x512x64", "b s1 h, b s2 h -> b s1 s2", {32, 512, 64},
              {32, 512, 64}, 32, 512, 512, 64, t);
  add_batched("einsum b s1 h, b s2 h -> b s1 s2 128x100x200x128", "b s1 h, b s2 h -> b s1 s2", {128, 100, 128},
              {128, 200, 128}, 128, 100, 200, 128, t);
  add_batched("einsum b h i d, b h j d -> b h i j 8x16x256x256x64", "b h i d, b h j d -> b h i j",
              {8, 16, 256, 64}, {8, 16, 256, 64}, 128, 256, 256, 64, t);
  add_chain(2048, 64, 2048, 64, t);
}

}  // namespace bench
