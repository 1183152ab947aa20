// Every public op on CUDA tensors against the f64 reference of tests/lib/reference.cpp, on
// contiguous, transposed, sliced and broadcast inputs, in f32, bf16 and f16, with the GPU's
// allocations poisoned (0xFF, then 0x5A) so an unwritten element cannot pass; and a cached
// expression that does no cudaMalloc on its second call.
#include <catch2/catch.hpp>

#include <functional>

#include "einexpr/einexpr.hpp"
#include "gpu_check.hpp"
#include "reference.hpp"

using namespace einexpr;
using test::cuda0;

namespace {

const std::vector<DType> gpu_dtypes = {DType::f32, DType::bf16, DType::f16};

/// Strides making `shape` contiguous, transposed (dims reversed), sliced (every other
/// element, offset 1) or broadcast (the first dim longer than 1 has stride 0).
std::pair<Strides, std::int64_t> layout_of(const Shape& shape, reference::Layout layout) {
  Strides s = contiguous_strides(shape);
  switch (layout) {
    case reference::Layout::contiguous: return {s, 0};
    case reference::Layout::transposed: {
      Shape rev(shape.rbegin(), shape.rend());
      const Strides r = contiguous_strides(rev);
      return {Strides(r.rbegin(), r.rend()), 0};
    }
    case reference::Layout::sliced:
      for (auto& v : s) v *= 2;
      return {s, 1};
    case reference::Layout::broadcast:
      for (std::size_t d = 0; d < shape.size(); ++d)
        if (shape[d] > 1) {
          s[d] = 0;
          break;
        }
      return {s, 0};
  }
  return {s, 0};
}

/// Runs op on GPU inputs twice with poisoned allocations and checks each result against
/// the reference computed from the CPU twins.
void check_op(const std::vector<Shape>& shapes, std::int64_t terms,
              const std::function<Tensor(const std::vector<Tensor>&)>& op,
              const std::function<reference::Result(const std::vector<Tensor>&)>& want) {
  std::uint64_t seed = 1;
  for (DType dtype : gpu_dtypes)
    for (reference::Layout layout : {reference::Layout::contiguous, reference::Layout::transposed,
                                     reference::Layout::sliced, reference::Layout::broadcast}) {
      CAPTURE(name(dtype), reference::name(layout));
      std::vector<Tensor> gpu, cpu;
      for (const Shape& s : shapes) {
        const auto [strides, offset] = layout_of(s, layout);
        const test::Input in = test::make_input(s, strides, dtype, seed++, offset);
        gpu.push_back(in.gpu);
        cpu.push_back(in.cpu);
      }
      const reference::Result ref = want(cpu);
      for (int poison : {0xFF, 0x5A}) {
        CAPTURE(poison);
        gpu::testing::poison_allocations(poison);
        Tensor out;
        try {
          out = op(gpu);
          synchronize(cuda0);
        } catch (...) {
          gpu::testing::poison_allocations(-1);
          throw;
        }
        gpu::testing::poison_allocations(-1);
        CHECK(out.device() == cuda0);
        REQUIRE(out.shape() == ref.shape);
        test::check_close(out, ref.values, test::tolerance(dtype, terms));
      }
    }
}

}  // namespace

TEST_CASE("rearrange and repeat on the GPU", "[cuda][ops]") {
  for (const char* p : {"b h w c -> b (h w) c", "b c h w -> b h w c", "b (h d) s -> b h s d", "a b c -> (c a) b",
                        "b h w c -> (b c) h w"}) {
    CAPTURE(p);
    const AxisLengths l = std::string(p).find("(h d)") != std::string::npos ? AxisLengths{{"h", 2}} : AxisLengths{};
    const Shape shape = std::string(p).find("(h d)") != std::string::npos ? Shape{2, 4, 3} : Shape{2, 3, 4, 5};
    check_op({std::string(p).find("a b c") != std::string::npos ? Shape{2, 3, 4} : shape}, 0,
             [&](const auto& in) { return rearrange(in[0], p, l, Copy::always); },
             [&](const auto& in) { return reference::rearrange(in[0], p, l); });
  }
  check_op({{3, 4}}, 0, [](const auto& in) { return repeat(in[0], "h w -> (h 2) (w c)", {{"c", 3}}); },
           [](const auto& in) { return reference::repeat(in[0], "h w -> (h 2) (w c)", {{"c", 3}}); });
  check_op({{3, 4}}, 0, [](const auto& in) { return repeat(in[0], "h w -> c h w", {{"c", 5}}, Copy::always); },
           [](const auto& in) { return reference::repeat(in[0], "h w -> c h w", {{"c", 5}}); });
}

TEST_CASE("every reduction on the GPU", "[cuda][ops]") {
  struct Row {
    const char* pattern;
    Shape shape;
    std::int64_t terms;
  };
  for (const Row& r : std::vector<Row>{{"b s h -> b h", {3, 50, 7}, 50}, {"b s h -> s", {4, 5, 300}, 1200},
                                       {"a b c ->", {6, 7, 8}, 336}, {"a (b 2) c -> c a", {3, 8, 5}, 8}}) {
    for (Reduction red : {Reduction::sum, Reduction::mean, Reduction::max, Reduction::min}) {
      CAPTURE(r.pattern, name(red));
      check_op({r.shape}, r.terms, [&](const auto& in) { return reduce(in[0], r.pattern, red); },
               [&](const auto& in) { return reference::reduce(in[0], r.pattern, red); });
    }
  }
}

TEST_CASE("einsum on the GPU", "[cuda][ops]") {
  struct Row {
    const char* pattern;
    std::vector<Shape> shapes;
    std::int64_t terms;
  };
  for (const Row& r : std::vector<Row>{
           {"i j, j k -> i k", {{33, 65}, {65, 17}}, 65},
           {"b s1 h, b s2 h -> b s1 s2", {{4, 9, 64}, {4, 11, 64}}, 64},
           {"b h i d, b h j d -> b h i j", {{2, 3, 8, 16}, {2, 3, 10, 16}}, 16},
           {"i j, j k, k l -> i l", {{16, 4}, {4, 16}, {16, 4}}, 64},
           {"i j, j k -> k i", {{7, 8}, {8, 9}}, 8},
           {"b i, b -> b i", {{5, 6}, {5}}, 1},
           {"i i ->", {{9, 9}}, 9},
           {"b (h d), h d k -> b k", {{3, 12}, {3, 4, 5}}, 12},
       }) {
    CAPTURE(r.pattern);
    check_op(r.shapes, r.terms, [&](const auto& in) { return einsum(std::span<const Tensor>(in), r.pattern); },
             [&](const auto& in) { return reference::einsum(in, r.pattern); });
  }
}

TEST_CASE("maps on the GPU", "[cuda][ops]") {
  for (UnaryOp op : {UnaryOp::relu, UnaryOp::gelu, UnaryOp::exp, UnaryOp::tanh, UnaryOp::silu}) {
    CAPTURE(name(op));
    check_op({{17, 33}}, 1, [&](const auto& in) { return map(in[0], op); },
             [&](const auto& in) {
               reference::Result r{in[0].shape(), in[0].template to_vector<double>()};
               for (double& v : r.values) v = reference::unary(op, v);
               return r;
             });
  }
  check_op({{4, 5, 6}, {6}}, 1, [](const auto& in) { return map(in[0], in[1], "b s h, h -> b s h", "add"); },
           [](const auto& in) { return reference::binary(in[0], in[1], "b s h, h -> b s h", BinaryOp::add); });
}

TEST_CASE("a cached expression does no device allocation on its second call", "[cuda][ops]") {
  const Tensor x = Tensor::randn({64, 128}, DType::bf16, 1).to(cuda0);
  const Tensor y = Tensor::randn({128, 32}, DType::bf16, 2).to(cuda0);
  Tensor first = einsum(x, y, "i k, k j -> i j");
  first = Tensor();  // its block goes back to the cache
  synchronize(cuda0);
  const std::uint64_t before = allocator_for(cuda0).stats().system_allocations;
  const Tensor second = einsum(x, y, "i k, k j -> i j");
  synchronize(cuda0);
  CHECK(allocator_for(cuda0).stats().system_allocations == before);
  const Compiled f = compile_rearrange("i k -> k i", {}, Copy::always);
  Tensor t1 = f(x);
  t1 = Tensor();
  const std::uint64_t before2 = allocator_for(cuda0).stats().system_allocations;
  const Tensor t2 = f(x);
  CHECK(allocator_for(cuda0).stats().system_allocations == before2);
}
