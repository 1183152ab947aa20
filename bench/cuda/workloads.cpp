#include "workloads.hpp"

#include <cstdio>

#include "random_fill.hpp"

namespace einexpr::bench {

namespace {

using Reference = std::function<double(const std::vector<HostCopy>&, std::int64_t)>;

std::string sizes_text(const AxisLengths& sizes) {
  std::string s;
  for (const auto& [axis, n] : sizes) s += (s.empty() ? "" : " ") + axis + "=" + std::to_string(n);
  return s;
}

/// einexpr's two forms and cuBLAS, each run once on poisoned outputs, against a float64
/// reference at sampled outputs (every output with --quick); einexpr's results also
/// against cuBLAS's at every element.
bool check_against_blas(Env& env, const std::vector<Tensor>& in, const std::function<void()>& into, Tensor& out,
                        const std::function<Tensor()>& fresh, const std::function<void()>& blas, Tensor& blas_out,
                        const Reference& reference, std::int64_t terms) {
  bool ok = env.record_inputs_random(in);
  const auto [got_into, got_fresh] = run_forms_poisoned(into, out, fresh);
  memset_device(blas_out, 0xFF, blas_out.nbytes());
  blas();
  const HostCopy want(blas_out);
  std::vector<HostCopy> host;
  for (const Tensor& t : in) host.emplace_back(t);
  const DType dtype = in[0].dtype();
  const double tol = tolerance(dtype, terms, env.tf32 && dtype == DType::f32);
  const Samples ref = reference_samples(want.numel(), env.quick ? want.numel() : 1024, env.next_seed(),
                                        [&](std::int64_t i) { return reference(host, i); });
  const std::string at = env.quick ? " (every element)" : " (1024 sampled elements)";
  ok &= env.record({"cuBLAS vs float64" + at, sampled_error(want, ref), tol});
  ok &= env.record({"einexpr into vs float64" + at, sampled_error(got_into, ref), tol});
  ok &= env.record({"einexpr fresh vs float64" + at, sampled_error(got_fresh, ref), tol});
  ok &= env.record({"einexpr into vs cuBLAS (every element)", relative_error(got_into, want), tol});
  ok &= env.record({"einexpr fresh vs cuBLAS (every element)", relative_error(got_fresh, want), tol});
  return ok;
}

/// einexpr's two forms, run once on poisoned outputs, byte for byte against `expected`
/// (the CPU backend's result on the same input).
bool check_exact(Env& env, const std::vector<Tensor>& in, const std::function<void()>& into, Tensor& out,
                 const std::function<Tensor()>& fresh, const Tensor& expected) {
  bool ok = env.record_inputs_random(in);
  const auto [got_into, got_fresh] = run_forms_poisoned(into, out, fresh);
  const auto differing = [&](const HostCopy& got) { return static_cast<double>(differing_elements(got, expected)); };
  ok &= env.record({"einexpr into vs CPU backend: differing elements", differing(got_into), 0});
  ok &= env.record({"einexpr fresh vs CPU backend: differing elements", differing(got_fresh), 0});
  return ok;
}

/// The memory workloads' primary baseline: a D2D copy between two scratch buffers (kept in
/// src and dst) moving the workload's ideal bytes (half read, half written).
std::vector<Contender> memory_baselines(Env& env, const Cost& cost, Tensor& src, Tensor& dst) {
  const auto copied = static_cast<std::size_t>(cost.ideal_bytes().to_double() / 2);
  src = scratch_bytes(env, copied);
  dst = scratch_bytes(env, copied);
  return {{"memcpy D2D", [&src, &dst, copied] { copy_d2d(dst, src, copied); }}};
}

std::vector<Row> bench_gemm(Env& env, std::int64_t nb, std::int64_t nd, std::int64_t nk, DType dtype,
                            double mfu_target) {
  const std::string pattern = "b d, d k -> b k";
  const std::string sizes = sizes_text({{"B", nb}, {"D", nd}, {"K", nk}});
  env.current = pattern + " " + std::string(name(dtype)) + " " + sizes;
  const Tensor a = random_gpu({nb, nd}, dtype, env.next_seed(), env.device);
  const Tensor w = random_gpu({nd, nk}, dtype, env.next_seed(), env.device);
  const std::vector<Tensor> in{a, w};
  Tensor out = Tensor::empty({nb, nk}, dtype, env.gpu()), blas_out = Tensor::empty({nb, nk}, dtype, env.gpu());
  const Compiled expr = compile_einsum(pattern);
  const Case c{pattern, sizes, dtype, cost(expr.plan(in)), 0.97, mfu_target};
  print_case(c, expr.plan(in), env);
  const auto into = [&] { einsum_into(out, in, pattern); };
  const auto fresh = [&] { return expr.run(in); };
  const auto blas = [&] { env.blas->gemm(a, w, blas_out); };
  const Reference reference = [nd, nk](const std::vector<HostCopy>& h, std::int64_t i) {
    const std::int64_t row = i / nk, col = i % nk;
    double sum = 0;
    for (std::int64_t d = 0; d < nd; ++d) sum += h[0][row * nd + d] * h[1][d * nk + col];
    return sum;
  };
  if (!check_against_blas(env, in, into, out, fresh, blas, blas_out, reference, nd)) return {};
  return time_case(env, c, {{"into", into}, {"fresh", [&] { (void)fresh(); }}}, {{"cuBLAS", blas}});
}

std::vector<Row> bench_scores(Env& env, const AxisLengths& sizes) {
  const std::string pattern = "b h i d, b h j d -> b h i j";
  const std::int64_t nb = sizes[0].second, nh = sizes[1].second, ni = sizes[2].second, nj = sizes[3].second,
                     nd = sizes[4].second;
  const DType dtype = DType::bf16;
  env.current = pattern + " bf16 " + sizes_text(sizes);
  const Tensor q = random_gpu({nb, nh, ni, nd}, dtype, env.next_seed(), env.device);
  const Tensor k = random_gpu({nb, nh, nj, nd}, dtype, env.next_seed(), env.device);
  const std::vector<Tensor> in{q, k};
  const Shape s_shape{nb, nh, ni, nj};
  Tensor out = Tensor::empty(s_shape, dtype, env.gpu()), blas_out = Tensor::empty(s_shape, dtype, env.gpu());
  const Compiled expr = compile_einsum(pattern);
  const Case c{pattern, sizes_text(sizes), dtype, cost(expr.plan(in)), 0.97, 0};
  print_case(c, expr.plan(in), env);
  const auto into = [&] { einsum_into(out, in, pattern); };
  const auto fresh = [&] { return expr.run(in); };
  const auto blas = [&] { env.blas->scores(q, k, blas_out); };
  const Reference reference = [ni, nj, nd](const std::vector<HostCopy>& h, std::int64_t idx) {
    const std::int64_t j = idx % nj, i = idx / nj % ni, bh = idx / (ni * nj);
    double sum = 0;
    for (std::int64_t d = 0; d < nd; ++d) sum += h[0][(bh * ni + i) * nd + d] * h[1][(bh * nj + j) * nd + d];
    return sum;
  };
  if (!check_against_blas(env, in, into, out, fresh, blas, blas_out, reference, nd)) return {};
  Tensor src, dst;
  std::vector<Contender> baselines{{"cuBLAS", blas}};
  for (Contender& b : memory_baselines(env, c.cost, src, dst)) baselines.push_back(std::move(b));
  return time_case(env, c, {{"into", into}, {"fresh", [&] { (void)fresh(); }}}, baselines);
}

std::vector<Row> bench_rearrange(Env& env, const std::string& pattern, const Shape& shape, const AxisLengths& lengths,
                                 const std::string& sizes) {
  const DType dtype = DType::bf16;
  env.current = pattern + " bf16 " + sizes;
  const Tensor x = random_gpu(shape, dtype, env.next_seed(), env.device);
  const std::vector<Tensor> in{x};
  const Tensor expected = rearrange(x.to(Device::cpu()), pattern, lengths, Copy::always);  // the CPU backend
  Tensor out = Tensor::empty(expected.shape(), dtype, env.gpu());
  const Compiled expr = compile_rearrange(pattern, lengths, Copy::always);
  const Case c{pattern, sizes, dtype, cost(expr.plan(in)), 0.85, 0};
  print_case(c, expr.plan(in), env);
  const auto into = [&] { rearrange_into(out, x, pattern, lengths); };
  const auto fresh = [&] { return expr.run(in); };
  if (!check_exact(env, in, into, out, fresh, expected)) return {};
  Tensor src, dst;
  return time_case(env, c, {{"into", into}, {"fresh", [&] { (void)fresh(); }}},
                   memory_baselines(env, c.cost, src, dst));
}

std::vector<Row> bench_reduce(Env& env, std::int64_t nb, std::int64_t ns, std::int64_t nh) {
  const std::string pattern = "b s h -> b h", sizes = sizes_text({{"b", nb}, {"s", ns}, {"h", nh}});
  const DType dtype = DType::bf16;
  env.current = pattern + " (sum) bf16 " + sizes;
  const Tensor x = random_gpu({nb, ns, nh}, dtype, env.next_seed(), env.device);
  const std::vector<Tensor> in{x};
  Tensor out = Tensor::empty({nb, nh}, dtype, env.gpu());
  const Compiled expr = compile_reduce(pattern, Reduction::sum);
  const Case c{pattern + " (sum)", sizes, dtype, cost(expr.plan(in)), 0.85, 0};
  print_case(c, expr.plan(in), env);
  const auto into = [&] { reduce_into(out, x, pattern, Reduction::sum); };
  const auto fresh = [&] { return expr.run(in); };
  bool ok = env.record_inputs_random(in);
  const auto [got_into, got_fresh] = run_forms_poisoned(into, out, fresh);
  std::vector<double> want(static_cast<std::size_t>(nb * nh), 0.0);
  {
    const HostCopy hx(x);  // float64 sums, in order: the reference
    for (std::int64_t b = 0; b < nb; ++b)
      for (std::int64_t s = 0; s < ns; ++s)
        for (std::int64_t h = 0; h < nh; ++h) want[static_cast<std::size_t>(b * nh + h)] += hx[(b * ns + s) * nh + h];
  }
  const double tol = tolerance(dtype, ns);
  ok &= env.record({"einexpr into vs float64 (every element)", relative_error(got_into, want), tol});
  ok &= env.record({"einexpr fresh vs float64 (every element)", relative_error(got_fresh, want), tol});
  if (!ok) return {};
  Tensor src, dst;
  return time_case(env, c, {{"into", into}, {"fresh", [&] { (void)fresh(); }}},
                   memory_baselines(env, c.cost, src, dst));
}

std::vector<Row> bench_repeat(Env& env, std::int64_t nb, std::int64_t nh, std::int64_t nc) {
  const std::string pattern = "b h -> b c h", sizes = sizes_text({{"b", nb}, {"h", nh}, {"c", nc}});
  const AxisLengths lengths{{"c", nc}};
  const DType dtype = DType::bf16;
  env.current = pattern + " bf16 " + sizes;
  const Tensor x = random_gpu({nb, nh}, dtype, env.next_seed(), env.device);
  const std::vector<Tensor> in{x};
  const Tensor expected = repeat(x.to(Device::cpu()), pattern, lengths, Copy::always);  // the CPU backend
  Tensor out = Tensor::empty(expected.shape(), dtype, env.gpu());
  const Compiled expr = compile_repeat(pattern, lengths, Copy::always);  // materialized, never a view
  const Case c{pattern + " (materialized)", sizes, dtype, cost(expr.plan(in)), 0.85, 0};
  print_case(c, expr.plan(in), env);
  const auto into = [&] { repeat_into(out, x, pattern, lengths); };
  const auto fresh = [&] { return expr.run(in); };
  if (!check_exact(env, in, into, out, fresh, expected)) return {};
  Tensor src, dst, set = Tensor::empty(expected.shape(), dtype, env.gpu());
  std::vector<Contender> baselines = memory_baselines(env, c.cost, src, dst);
  baselines.push_back({"memset", [&] { memset_device(set, 0x3C, set.nbytes()); }});
  return time_case(env, c, {{"into", into}, {"fresh", [&] { (void)fresh(); }}}, baselines);
}

}  // namespace

std::vector<Workload> workloads(bool quick) {
  const std::int64_t B = quick ? 96 : 16384, D = quick ? 160 : 32768, K = quick ? 64 : 8192, N = quick ? 128 : 8192;
  const AxisLengths scores = quick ? AxisLengths{{"b", 2}, {"h", 3}, {"i", 40}, {"j", 24}, {"d", 32}}
                                   : AxisLengths{{"b", 4}, {"h", 32}, {"i", 2048}, {"j", 2048}, {"d", 128}};
  const AxisLengths bchw = quick ? AxisLengths{{"b", 2}, {"c", 40}, {"h", 6}, {"w", 10}}
                                 : AxisLengths{{"b", 64}, {"c", 512}, {"h", 128}, {"w", 128}};
  const AxisLengths bhds = quick ? AxisLengths{{"b", 2}, {"h", 4}, {"d", 16}, {"s", 24}}
                                 : AxisLengths{{"b", 16}, {"h", 32}, {"d", 128}, {"s", 8192}};
  const std::int64_t rb = quick ? 3 : 32, rs = quick ? 100 : 8192, rh = quick ? 33 : 4096;
  const std::int64_t pb = quick ? 5 : 1024, ph = quick ? 24 : 4096, pc = quick ? 3 : 128;
  const auto v = [](const AxisLengths& l, std::size_t i) { return l[i].second; };
  const std::string bk = " B=" + std::to_string(B) + " D=" + std::to_string(D) + " K=" + std::to_string(K);
  return {
      {"gemm-bf16: b d, d k -> b k bf16" + bk, [=](Env& e) { return bench_gemm(e, B, D, K, DType::bf16, 0); }},
      {"gemm-f32: b d, d k -> b k f32" + bk, [=](Env& e) { return bench_gemm(e, B, D, K, DType::f32, 0); }},
      {"gemm-bf16-cube: b d, d k -> b k bf16 B=D=K=" + std::to_string(N),
       [=](Env& e) { return bench_gemm(e, N, N, N, DType::bf16, 0.7); }},
      {"scores: b h i d, b h j d -> b h i j bf16 " + sizes_text(scores),
       [=](Env& e) { return bench_scores(e, scores); }},
      {"permute-bchw: b c h w -> b h w c bf16 " + sizes_text(bchw),
       [=](Env& e) {
         return bench_rearrange(e, "b c h w -> b h w c", {v(bchw, 0), v(bchw, 1), v(bchw, 2), v(bchw, 3)}, {},
                                sizes_text(bchw));
       }},
      {"permute-bhsd: b (h d) s -> b h s d bf16 " + sizes_text(bhds),
       [=](Env& e) {
         return bench_rearrange(e, "b (h d) s -> b h s d", {v(bhds, 0), v(bhds, 1) * v(bhds, 2), v(bhds, 3)},
                                {{"h", v(bhds, 1)}}, sizes_text(bhds));
       }},
      {"reduce: b s h -> b h (sum) bf16", [=](Env& e) { return bench_reduce(e, rb, rs, rh); }},
      {"repeat: b h -> b c h bf16", [=](Env& e) { return bench_repeat(e, pb, ph, pc); }},
  };
}

}  // namespace einexpr::bench
