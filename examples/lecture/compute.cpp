// Compute accounting: FLOPs of the models, arithmetic intensity, MFU of measured runs.
#include <cstdio>
#include <iostream>

#include "lecture.hpp"

namespace lecture {

using namespace einexpr;

namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

void flops_of_models(const Setup& s) {
  heading("FLOPs of the linear model and the two-layer model");
  for (auto [B, D, K] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1024, 256, 64}, {16384, 32768, 8192}}) {
    const AxisLengths sizes = {{"b", B}, {"d", D}, {"k", K}};
    const Cost c = cost_einsum("b d, d k -> b k", sizes);
    const BackwardCost back = backward_cost(plan_from_sizes("einsum", "b d, d k -> b k", sizes));
    std::cout << "linear model B=" << B << " D=" << D << " K=" << K << ": forward " << c.flops.str() << " FLOPs = "
              << c.flops_formula.str() << ", backward " << back.flops.str() << " (forward + backward = "
              << (c.flops + back.flops).str() << " = 6·B·D·K)\n";
  }
  const AxisLengths big = {{"b", 16384}, {"d", 32768}, {"e", 32768}, {"k", 8192}};
  const Count h1 = cost_einsum("b d, d e -> b e", big).flops, h2 = cost_einsum("b e, e k -> b k", big).flops;
  std::cout << "two-layer model h1 = x @ w1, h2 = h1 @ w2 (B=16384 D=32768 K=8192): (2·B·D·D) + (2·B·D·K) = "
            << (h1 + h2).str() << " = " << fmt("%.3e", (h1 + h2).to_double()) << " FLOPs\n";
  const Plan chain = plan_from_sizes("einsum", "b d, d e, e k -> b k", big);
  std::cout << "as one einsum \"b d, d e, e k -> b k\" einexpr picks the order itself: " << chain.notes.at(0) << '\n';
  (void)s;
}

std::vector<RooflinePoint> arithmetic_intensity() {
  heading("Arithmetic intensity against H100's accelerator intensity (bf16)");
  const DeviceSpec& h100 = find_device("h100");
  std::cout << "H100: " << fmt("%.4g", h100.peak_for(DType::bf16)) << " FLOP/s / " << fmt("%.4g", h100.bandwidth)
            << " B/s = accelerator intensity " << fmt("%.4f", h100.accelerator_intensity(DType::bf16)) << '\n';
  const std::int64_t n = 1024 * 1024, m = 1024;
  struct Row {
    std::string name;
    Cost cost;
  };
  const std::vector<Row> rows = {
      {"ReLU (n=1024^2)", cost_map(UnaryOp::relu, {n}, DType::bf16)},
      {"GELU (n=1024^2)", cost_map(UnaryOp::gelu, {n}, DType::bf16)},
      {"dot product (n=1024^2)", cost_einsum("i, i ->", {{"i", n}}, DType::bf16)},
      {"matrix-vector (n=1024)", cost_einsum("i, i j -> j", {{"i", m}, {"j", m}}, DType::bf16)},
      {"matrix-matrix (n=1024)", cost_einsum("i j, j k -> i k", {{"i", m}, {"j", m}, {"k", m}}, DType::bf16)},
  };
  std::vector<RooflinePoint> points;
  for (const Row& r : rows) {
    const Roofline rl = roofline(r.cost, h100);
    std::cout << "  " << r.name << ": " << r.cost.flops_exact.str() << " FLOPs / " << r.cost.ideal_bytes().str()
              << " bytes = intensity " << fmt("%.4f", r.cost.intensity_exact()) << " -> " << rl.bound()
              << "-bound, at least " << fmt("%.3g", rl.time_s) << " s on H100\n";
    points.push_back({r.name, r.cost.intensity(), rl.compute_bound ? rl.peak_flops : rl.intensity * rl.bandwidth, false});
  }
  return points;
}

std::vector<RooflinePoint> measured_matmuls(const Setup& s) {
  heading("A measured matmul: achieved FLOP/s and MFU");
  const DeviceSpec& spec = find_device(s.spec);
  std::cout << "promised peak of '" << spec.name << "' (" << spec.description << "): "
            << fmt("%.4g", spec.peak_for(DType::f32)) << " FLOP/s f32\n  source: " << spec.source << '\n';
  std::vector<RooflinePoint> points;
  const Compiled linear = compile_einsum("b d, d k -> b k");
  for (auto [B, D, K] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{s.B, s.D, s.K}, {1024, 1024, 1024}}) {
    const std::array<Tensor, 2> in{Tensor::randn({B, D}, DType::f32, 1).to(s.device),
                                   Tensor::randn({D, K}, DType::f32, 2).to(s.device)};
    const RunReport r = measure_run(linear, in, spec);
    std::cout << "  B=" << B << " D=" << D << " K=" << K << ": " << r.cost.flops.str() << " FLOPs in "
              << fmt("%.4g", r.time.median_s) << " s (median of " << r.time.repeats << ") = "
              << fmt("%.4g", r.flops_per_s) << " FLOP/s, MFU " << fmt("%.3f", r.mfu) << '\n';
    points.push_back({"b d, d k -> b k  " + std::to_string(B) + "x" + std::to_string(D) + "x" + std::to_string(K),
                      r.cost.intensity(), r.flops_per_s, true});
  }
  // The seeds' T4 example: 8796093022208 FLOPs in 1.73267 s against a promised 8e12.
  DeviceSpec t4 = find_device("t4");
  t4.peak_flops["f32"] = 8e12;
  std::cout << "  the seeds' T4 run: MFU = " << fmt("%.4f", mfu(Count(8796093022208ULL), 1.73267, t4, DType::f32))
            << " (8796093022208 FLOPs in 1.73267 s against a promised 8e12 FLOP/s)\n";
  return points;
}

}  // namespace lecture
