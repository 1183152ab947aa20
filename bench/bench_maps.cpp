// Elementwise maps on 256 MiB of f32 (the target size), each beside memcpy and a
// streaming-store copy of the same bytes at 2 threads (the limit: the faster of the two):
// the transcendental ones through vec_math's vector functions (target 0.5 of memcpy), relu
// and square as plain vector loops (target 0.9). Inputs are pattern_f32's values in [-1, 1);
// gelu_erf runs again on them times 16, in [-16, 16), where 18% of the values lie beyond
// 13.1 and every vector of 8 floats holds one, so every vector takes its slower path
// (vec_math_f32.hpp): its worst case. bench/torch_maps.py times torch on the same values in
// the same run.
#include <memory>

#include "bench.hpp"

namespace bench {

namespace {

using einexpr::Tensor;
using einexpr::UnaryOp;

constexpr std::int64_t map_elements = std::int64_t{64} << 20;  // 256 MiB of f32
constexpr int map_threads = 2;

/// `scale` multiplies pattern_f32's values (exactly: a power of two); `suffix` ends the name.
void add_map(UnaryOp op, double target, float scale = 1, const char* suffix = "") {
  const std::string w = std::string("map ") + einexpr::name(op) + " 256 MiB f32" + suffix;
  const auto make = [scale] {
    Tensor t = pattern_f32({map_elements});
    auto* p = static_cast<float*>(t.data_ptr());
    if (scale != 1)
      for (std::int64_t i = 0; i < map_elements; ++i) p[i] *= scale;
    return t;
  };
  const double bytes = 2.0 * 4.0 * static_cast<double>(map_elements);
  const Work work{einexpr::flops_per_element(op).to_double() * static_cast<double>(map_elements), bytes, target};
  add(w, "out", map_threads, work, [=](int) {
    const Tensor x = input(w, "x", make);
    auto out = std::make_shared<Tensor>(Tensor::empty(x.shape(), x.dtype()));
    return std::function<void()>([=] { einexpr::map_into(*out, x, op); });
  });
  add(w, "fresh", map_threads, work, [=](int) {
    const Tensor x = input(w, "x", make);
    return std::function<void()>([=] { benchmark_keep(einexpr::map(x, op).numel()); });
  });
  add(w, "limit:memcpy", map_threads, work, [=](int threads) {
    auto* src = static_cast<float*>(input(w, "x", make).data_ptr());
    auto* dst = static_cast<float*>(input(w, "dst", make).data_ptr());
    return std::function<void()>(
        [=] { memcpy_threads(dst, src, static_cast<std::size_t>(map_elements) * sizeof(float), threads); });
  });
  add(w, "limit:stream", map_threads, work, [=](int threads) {
    auto* src = static_cast<float*>(input(w, "x", make).data_ptr());
    auto* dst = static_cast<float*>(input(w, "dst", make).data_ptr());
    return std::function<void()>(
        [=] { stream_copy_threads(dst, src, static_cast<std::size_t>(map_elements), threads); });
  });
}

}  // namespace

void register_maps() {
  for (UnaryOp op : {UnaryOp::gelu, UnaryOp::gelu_erf, UnaryOp::tanh, UnaryOp::exp, UnaryOp::sigmoid, UnaryOp::silu})
    add_map(op, 0.5);
  add_map(UnaryOp::gelu_erf, 0.5, 16, " in [-16, 16)");
  for (UnaryOp op : {UnaryOp::relu, UnaryOp::square}) add_map(op, 0.9);
}

}  // namespace bench
