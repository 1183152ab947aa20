// Per-call overhead with a cached plan (role call, absolute targets): a view-only rearrange
// of a 2x3x4 tensor, an 8x8 einsum, and first calls that parse and plan (caches emptied).
#include "bench.hpp"

namespace bench {

namespace {

using einexpr::Tensor;

void add_call(const std::string& w, double target_s, const std::function<std::function<void()>()>& make) {
  add(w, "call", 2, Work{0, 0, target_s}, [=](int) { return make(); });
}

}  // namespace

void register_overhead() {
  add_call("call rearrange a b c -> c b a 2x3x4 view", 1e-6, [] {
    const Tensor x = Tensor::arange(24).view({2, 3, 4});
    return [x] { benchmark_keep(einexpr::rearrange(x, "a b c -> c b a")); };
  });
  add_call("call compiled rearrange a b c -> c b a 2x3x4 view", 1e-6, [] {
    const Tensor x = Tensor::arange(24).view({2, 3, 4});
    auto c = std::make_shared<einexpr::Compiled>(einexpr::compile_rearrange("a b c -> c b a"));
    return [x, c] { benchmark_keep((*c)(x)); };
  });
  add_call("call einsum i j, j k -> i k 8x8", 2e-6, [] {
    const Tensor x = random_f32({8, 8}, 1), y = random_f32({8, 8}, 2);
    return [x, y] { benchmark_keep(einexpr::einsum(x, y, "i j, j k -> i k")); };
  });
  add_call("call einsum_into i j, j k -> i k 8x8", 2e-6, [] {
    const std::vector<Tensor> in{random_f32({8, 8}, 1), random_f32({8, 8}, 2)};
    auto out = std::make_shared<Tensor>(Tensor::empty({8, 8}));
    return [in, out] { einexpr::einsum_into(*out, in, "i j, j k -> i k"); };
  });
  add_call("call first rearrange a b c -> c b a 2x3x4 (parse + plan)", 10e-6, [] {
    const Tensor x = Tensor::arange(24).view({2, 3, 4});
    return [x] {
      einexpr::clear_caches();
      benchmark_keep(einexpr::rearrange(x, "a b c -> c b a"));
    };
  });
  add_call("call first einsum i j, j k -> i k 8x8 (parse + plan)", 10e-6, [] {
    const Tensor x = random_f32({8, 8}, 1), y = random_f32({8, 8}, 2);
    return [x, y] {
      einexpr::clear_caches();
      benchmark_keep(einexpr::einsum(x, y, "i j, j k -> i k"));
    };
  });
}

}  // namespace bench
