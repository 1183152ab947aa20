// A model as named statements, from C++: the lecture's two-layer model built statement by
// statement, costed for a training step, then compiled once and run on random data.
#include <einexpr/einexpr.hpp>

#include <iostream>

int main() {
  using namespace einexpr;
  ProgramBuilder b("lecture2");
  b.axes({{"B", 1024}, {"D", 256}, {"E", 256}, {"K", 64}})
      .input("x", "B D")
      .param("w1", "D E")
      .param("w2", "E K")
      .statement("h1", "einsum", {"x", "w1"}, "B D, D E -> B E")
      .statement("h2", "einsum", {"h1", "w2"}, "B E, E K -> B K")
      .statement("sq", "map", {"h2"}, "B K -> B K", "square")
      .statement("loss", "reduce", {"sq"}, "B K ->", "mean");
  const ast::Program program = b.build();
  std::cout << b.text() << '\n';

  ProgramCostOptions options;
  options.optimizer = Optimizer::adam;
  const ProgramCost c = cost(program, {}, options);
  std::cout << "forward " << c.forward_flops.str() << " FLOPs, backward " << c.backward_flops.str()
            << " (the first layer's gradient toward x is never computed), adam update " << c.optimizer_flops.str()
            << "\npeak memory through forward and backward: " << c.memory.peak_bytes.str() << " bytes; 6·N·P "
            << c.estimate.rule.str() << " against the exact " << c.estimate.exact.str() << "\n\n";

  ProgramOptions sizes;
  sizes.axes = {{"B", 32}};
  const CompiledProgram model(program, sizes);  // planned, lowered and its memory laid out once
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    const ProgramRun r = model.run({{"x", Tensor::randn({32, 256}, DType::f32, seed)},
                                    {"w1", Tensor::randn({256, 256}, DType::f32, 10 + seed)},
                                    {"w2", Tensor::randn({256, 64}, DType::f32, 20 + seed)}});
    std::cout << "run " << seed << ": loss " << r["loss"].to_vector<float>()[0] << ", peak " << r.peak_bytes_measured
              << " bytes (predicted " << model.peak_bytes_predicted() << "; without reuse the buffers take "
              << model.unshared_bytes() << ")\n";
  }
}
