// softmax and layer_norm along the last axis of a (65536, 1024) f32 tensor (256 MiB), the
// issue's target size, each beside memcpy and a streaming-store copy of the same bytes at 2 threads (target 0.5 of
// memcpy: the row is read once from memory and the result written once, streamed).
// Inputs are pattern_f32 (as the maps); bench/torch_maps.py times torch's softmax and
// layer_norm on the same values in the same run.
#include <memory>

#include "bench.hpp"

namespace bench {

namespace {

using einexpr::Normalization;
using einexpr::Tensor;

constexpr std::int64_t norm_rows = 65536, norm_cols = 1024;
constexpr int norm_threads = 2;

void add_norm(Normalization kind, double eps) {
  const std::string w = std::string(einexpr::name(kind)) + " [d] 65536x1024 f32";
  const auto make = [] { return pattern_f32({norm_rows, norm_cols}); };
  const double n = static_cast<double>(norm_rows * norm_cols);
  const einexpr::Cost c = einexpr::cost_normalize("s [d]", kind, {{"s", norm_rows}, {"d", norm_cols}},
                                                  einexpr::DType::f32, eps);
  const Work work{c.flops.to_double(), 2.0 * 4.0 * n, 0.5};
  add(w, "out", norm_threads, work, [=](int) {
    const Tensor x = input(w, "x", make);
    auto out = std::make_shared<Tensor>(Tensor::empty(x.shape(), x.dtype()));
    return std::function<void()>([=] { einexpr::normalize_into(*out, x, "s [d]", kind, eps); });
  });
  add(w, "fresh", norm_threads, work, [=](int) {
    const Tensor x = input(w, "x", make);
    return std::function<void()>([=] { benchmark_keep(einexpr::normalize(x, "s [d]", kind, eps).numel()); });
  });
  add(w, "limit:memcpy", norm_threads, work, [=](int threads) {
    auto* src = static_cast<float*>(input(w, "x", make).data_ptr());
    auto* dst = static_cast<float*>(input(w, "dst", make).data_ptr());
    return std::function<void()>(
        [=] { memcpy_threads(dst, src, static_cast<std::size_t>(n) * sizeof(float), threads); });
  });
  add(w, "limit:stream", norm_threads, work, [=](int threads) {
    auto* src = static_cast<float*>(input(w, "x", make).data_ptr());
    auto* dst = static_cast<float*>(input(w, "dst", make).data_ptr());
    return std::function<void()>([=] { stream_copy_threads(dst, src, static_cast<std::size_t>(n), threads); });
  });
}

}  // namespace

void register_norms() {
  add_norm(Normalization::softmax, 0);
  add_norm(Normalization::layer_norm, 1e-5);
}

}  // namespace bench
