// The ops of "Ops as data" at GPT-2 small's sizes, each beside the memory traffic it cannot
// avoid, measured in the same run at 2 threads (bench/torch_indexed.py times torch on the same
// values in the same run):
//   get_at        the embedding lookup "[v] d, b s -> b s d" (V=50257, D=768, B=8, S=1024):
//                 memcpy of the 24 MiB it gathers (target 0.9)
//   add_at grad   get_at's gradient (zeros of V x D, then dY added at the tokens): memset of
//                 the 147 MiB table plus a read of the 24 MiB of dY (target 0.9)
//   cross_entropy forward on (8192, 50257) f32 logits (1.5 GiB): a read of the logits
//                 (target 0.5); backward (dlogits from dY and the loss): the same read (target
//                 0.5), and beside it a memcpy of the logits (dlogits are written as large)
//   concatenation "b s1 d, b s2 d -> b (s1 + s2) d" (256 MiB out): memcpy of the same bytes
//                 (target 0.9); a split into three contiguous outputs, the same
// Tokens and targets are (i · 7919 + 17) mod V, the values pattern_f32: the torch script makes
// the same ones.
#include <memory>

#include "bench.hpp"
#include "einexpr/codegen/backward.hpp"
#include "einexpr/codegen/lower.hpp"

namespace bench {

namespace {

using einexpr::DType;
using einexpr::Tensor;

constexpr std::int64_t V = 50257, D = 768, B = 8, S = 1024, ROWS = 8192;
constexpr int threads_used = 2;

Tensor tokens(const einexpr::Shape& shape) {
  Tensor t = Tensor::empty(shape, DType::i64);
  auto* p = static_cast<std::int64_t*>(t.data_ptr());
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = (i * 7919 + 17) % V;
  return t;
}

/// A plan's gradient toward input 0, lowered once: (program, the sources it reads).
struct Backward {
  einexpr::Program program;
  std::vector<einexpr::GradientSource> sources;
};
Backward backward_of(const einexpr::Plan& forward) {
  const std::vector<einexpr::Gradient> g = einexpr::gradients(forward);
  return {einexpr::lower_cpu(g.at(0).plan), g.at(0).sources};
}

/// The tensors a gradient reads, in its sources' order: dY, the forward's output Y (the
/// cross-entropy's loss), the forward's inputs.
std::vector<Tensor> sources_of(const Backward& g, const std::vector<Tensor>& in, const Tensor& dy, const Tensor& y) {
  std::vector<Tensor> out;
  for (const einexpr::GradientSource& s : g.sources) {
    switch (s.kind) {
      case einexpr::GradientSource::Kind::output_gradient: out.push_back(dy); break;
      case einexpr::GradientSource::Kind::output: out.push_back(y); break;
      case einexpr::GradientSource::Kind::input: out.push_back(in.at(static_cast<std::size_t>(s.input))); break;
    }
  }
  return out;
}

void add_get_at() {
  const std::string w = "get_at [v] d, b s -> b s d 50257x768 8x1024 f32";
  const double bytes = 2.0 * B * S * D * 4;  // the rows read, the output written
  const Work work{0, bytes, 0.9};
  add(w, "fresh", threads_used, work, [=](int) {
    const Tensor table = input(w, "wte", [] { return pattern_f32({V, D}); });
    const Tensor idx = input(w, "tokens", [] { return tokens({B, S}); });
    return std::function<void()>([=] { benchmark_keep(einexpr::get_at(table, idx, "[v] d, b s -> b s d").numel()); });
  });
  add(w, "limit:memcpy", threads_used, work, [=](int threads) {
    auto* src = static_cast<float*>(input(w, "wte", [] { return pattern_f32({V, D}); }).data_ptr());
    auto* dst = static_cast<float*>(input(w, "rows", [] { return pattern_f32({B, S, D}); }).data_ptr());
    return std::function<void()>([=] { memcpy_threads(dst, src, static_cast<std::size_t>(B * S * D) * 4, threads); });
  });
}

void add_embedding_backward() {
  const std::string w = "add_at grad zeros [v] d, b s, b s d 50257x768 8x1024 f32";
  const Work work{static_cast<double>(B * S * D), 4.0 * (V * D + B * S * D), 0.9};
  add(w, "fresh", threads_used, work, [=](int) {
    const Tensor table = input(w, "wte", [] { return pattern_f32({V, D}); });
    const Tensor idx = input(w, "tokens", [] { return tokens({B, S}); });
    const Tensor dy = input(w, "dy", [] { return pattern_f32({B, S, D}); });
    const einexpr::Compiled c(einexpr::OpSpec::get_at(), "[v] d, b s -> b s d");
    const std::vector<Tensor> in{table, idx};
    auto bw = std::make_shared<Backward>(backward_of(c.plan(in)));
    const std::vector<Tensor> sources = sources_of(*bw, in, dy, Tensor());  // dY, then the indices
    return std::function<void()>([=] { benchmark_keep(bw->program.run(std::span<const Tensor>(sources)).numel()); });
  });
  add(w, "limit:memset+read", threads_used, work, [=](int threads) {
    auto* table = static_cast<float*>(input(w, "dst", [] { return pattern_f32({V, D}); }).data_ptr());
    auto* dy = static_cast<float*>(input(w, "dy", [] { return pattern_f32({B, S, D}); }).data_ptr());
    return std::function<void()>([=] {
      fill_memset(table, static_cast<std::size_t>(V * D) * 4, threads);
      benchmark_keep(read_sum(dy, static_cast<std::size_t>(B * S * D), threads));
    });
  });
}

void add_cross_entropy() {
  const std::string fw = "cross_entropy b [v], b 8192x50257 f32 forward";
  const std::string bw = "cross_entropy b [v], b 8192x50257 f32 backward";
  const double n = static_cast<double>(ROWS * V);
  const auto logits = [] { return pattern_f32({ROWS, V}); };
  const auto targets = [] { return tokens({ROWS}); };
  add(fw, "fresh", threads_used, Work{4 * n + ROWS, 4 * n, 0.5}, [=](int) {
    const Tensor x = input(fw, "logits", logits), t = input(fw, "targets", targets);
    return std::function<void()>([=] { benchmark_keep(einexpr::cross_entropy(x, t, "b [v], b -> b").numel()); });
  });
  add(fw, "limit:read", threads_used, Work{4 * n + ROWS, 4 * n, 0.5}, [=](int threads) {
    auto* x = static_cast<float*>(input(fw, "logits", logits).data_ptr());
    return std::function<void()>([=] { benchmark_keep(read_sum(x, static_cast<std::size_t>(n), threads)); });
  });
  add(bw, "fresh", threads_used, Work{3 * n + 2 * ROWS, 8 * n, 0.5}, [=](int) {
    const Tensor x = input(fw, "logits", logits), t = input(fw, "targets", targets);
    const Tensor dy = input(bw, "dy", [] { return pattern_f32({ROWS}); });
    const einexpr::Compiled c(einexpr::OpSpec::cross_entropy(), "b [v], b -> b");
    const std::vector<Tensor> in{x, t};
    auto g = std::make_shared<Backward>(backward_of(c.plan(in)));
    const std::vector<Tensor> sources = sources_of(*g, in, dy, input(bw, "loss", [=] { return einexpr::cross_entropy(x, t, "b [v], b -> b"); }));
    return std::function<void()>([=] { benchmark_keep(g->program.run(std::span<const Tensor>(sources)).numel()); });
  });
  add(bw, "out", threads_used, Work{3 * n + 2 * ROWS, 8 * n, 0.5}, [=](int) {
    const Tensor x = input(fw, "logits", logits), t = input(fw, "targets", targets);
    const Tensor dy = input(bw, "dy", [] { return pattern_f32({ROWS}); });
    const einexpr::Compiled c(einexpr::OpSpec::cross_entropy(), "b [v], b -> b");
    const std::vector<Tensor> in{x, t};
    auto g = std::make_shared<Backward>(backward_of(c.plan(in)));
    const std::vector<Tensor> sources = sources_of(*g, in, dy, input(bw, "loss", [=] { return einexpr::cross_entropy(x, t, "b [v], b -> b"); }));
    auto out = std::make_shared<Tensor>(Tensor::empty(x.shape(), x.dtype()));
    return std::function<void()>([=] { g->program.run_into(std::span<const Tensor>(sources), *out); });
  });
  add(bw, "limit:read", threads_used, Work{3 * n + 2 * ROWS, 8 * n, 0.5}, [=](int threads) {
    auto* x = static_cast<float*>(input(fw, "logits", logits).data_ptr());
    return std::function<void()>([=] { benchmark_keep(read_sum(x, static_cast<std::size_t>(n), threads)); });
  });
  // dlogits are as large as the logits: a copy of them is what the backward's memory must do.
  add(bw, "limit:memcpy", threads_used, Work{3 * n + 2 * ROWS, 8 * n, 0.5}, [=](int threads) {
    // Held as tensors: input() lets a workload's tensors go when another workload asks.
    const Tensor x = input(fw, "logits", logits), dst = input(bw, "copy", logits);
    return std::function<void()>([=] { memcpy_threads(dst.data_ptr(), x.data_ptr(), static_cast<std::size_t>(n) * 4, threads); });
  });
}

void add_concat_split() {
  // 256 MiB out: b=16, s1 + s2 = 1024 + 3072, d = 1024.
  constexpr std::int64_t b = 16, s1 = 1024, s2 = 3072, d = 1024;
  const std::string w = "concat b s1 d, b s2 d -> b (s1 + s2) d 16x(1024+3072)x1024 f32";
  const double bytes = 2.0 * b * (s1 + s2) * d * 4;
  add(w, "fresh", threads_used, Work{0, bytes, 0.9}, [=](int) {
    const Tensor x = input(w, "x", [] { return pattern_f32({b, s1, d}); });
    const Tensor y = input(w, "y", [] { return pattern_f32({b, s2, d}); });
    return std::function<void()>(
        [=] { benchmark_keep(einexpr::rearrange({x, y}, "b s1 d, b s2 d -> b (s1 + s2) d").numel()); });
  });
  add(w, "limit:memcpy", threads_used, Work{0, bytes, 0.9}, [=](int threads) {
    auto* src = static_cast<float*>(input(w, "src", [] { return pattern_f32({b, s1 + s2, d}); }).data_ptr());
    auto* dst = static_cast<float*>(input(w, "dst", [] { return pattern_f32({b, s1 + s2, d}); }).data_ptr());
    return std::function<void()>(
        [=] { memcpy_threads(dst, src, static_cast<std::size_t>(b * (s1 + s2) * d) * 4, threads); });
  });
  add(w, "limit:stream", threads_used, Work{0, bytes, 0.9}, [=](int threads) {
    auto* src = static_cast<float*>(input(w, "src", [] { return pattern_f32({b, s1 + s2, d}); }).data_ptr());
    auto* dst = static_cast<float*>(input(w, "dst", [] { return pattern_f32({b, s1 + s2, d}); }).data_ptr());
    return std::function<void()>(
        [=] { stream_copy_threads(dst, src, static_cast<std::size_t>(b * (s1 + s2) * d), threads); });
  });
  // A fused QKV split into three new contiguous tensors (Copy::always): 256 MiB read and written.
  constexpr std::int64_t rows = 16 * 1024, h = 1024;
  const std::string sw = "split b (q + k + v) 16384x(3x1024) f32, copied";
  const double sbytes = 2.0 * rows * 3 * h * 4;
  add(sw, "fresh", threads_used, Work{0, sbytes, 0.9}, [=](int) {
    const Tensor x = input(sw, "x", [] { return pattern_f32({rows, 3 * h}); });
    return std::function<void()>([=] {
      benchmark_keep(einexpr::split(x, "b (q + k + v) -> b q, b k, b v", {{"q", h}, {"k", h}}, einexpr::Copy::always)
                         .size());
    });
  });
  add(sw, "limit:memcpy", threads_used, Work{0, sbytes, 0.9}, [=](int threads) {
    auto* src = static_cast<float*>(input(sw, "x", [] { return pattern_f32({rows, 3 * h}); }).data_ptr());  // same shape
    auto* dst = static_cast<float*>(input(sw, "dst", [] { return pattern_f32({rows, 3 * h}); }).data_ptr());
    return std::function<void()>([=] { memcpy_threads(dst, src, static_cast<std::size_t>(rows * 3 * h) * 4, threads); });
  });
}

}  // namespace

void register_indexed() {
  add_get_at();
  add_embedding_backward();
  add_cross_entropy();
  add_concat_split();
}

}  // namespace bench
