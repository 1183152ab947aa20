// lower_cpu's CopyStep (permutations, broadcast repeats, offsets, every dtype) and the
// Program it builds: buffer mapping, views without kernels, chains of steps, outputs at an
// offset, staging temporaries after the plan's.
#include <catch2/catch.hpp>

#include "cpu_reference.hpp"
#include "plan_builder.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

const DType all_copy_dtypes[] = {DType::f32, DType::f64, DType::bf16, DType::f16, DType::f8_e4m3,
                                 DType::i64, DType::i32, DType::boolean};

/// Copies `src` (an input) into a temporary with `dst` layout.
Tensor copy_of(const Tensor& src, const Layout& dst) {
  PlanBuilder pb(src.dtype());
  const int in = pb.input(src);
  return run_cpu(pb.finish(pb.copy(in, dst)), {src});
}

}  // namespace

TEST_CASE("copies permute, broadcast and honour offsets in every dtype", "[lower_cpu][copy]") {
  for (DType dtype : all_copy_dtypes) {
    CAPTURE(name(dtype));
    const Tensor x = Tensor::randn({2, 3, 4, 5}, dtype, 61);
    const Tensor permuted = x.permute({3, 1, 0, 2});
    const auto want = permuted.contiguous().to_vector<double>();
    CHECK(copy_of(permuted, make_layout(permuted.shape())).to_vector<double>() == want);
    CHECK(copy_of(permuted, make_layout(permuted.shape(), {3, 2, 1, 0})).to_vector<double>() == want);
    CHECK(copy_of(permuted, make_layout(permuted.shape(), {}, 2, 1, 7)).to_vector<double>() == want);

    const Tensor sliced = x.slice(1, 1, 3).slice(3, 0, 5, 2);
    CHECK(copy_of(sliced, make_layout(sliced.shape())).to_vector<double>() == sliced.contiguous().to_vector<double>());

    // repeat: a stride-0 view made by the plan, then a copy
    const Tensor row = Tensor::randn({3, 4}, dtype, 62);
    PlanBuilder pb(dtype);
    const int in = pb.input(row);
    const int rep = pb.view(in, Layout{{3, 5, 4}, {4, 0, 1}, 0});
    const Tensor got = run_cpu(pb.finish(pb.copy(rep, make_layout({3, 5, 4}))), {row});
    const auto r = row.to_vector<double>(), g = got.to_vector<double>();
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 5; ++j)
        for (std::int64_t k = 0; k < 4; ++k)
          CHECK(g[static_cast<std::size_t>((i * 5 + j) * 4 + k)] == r[static_cast<std::size_t>(i * 4 + k)]);
  }
}

TEST_CASE("a plan view at an offset is copied from the right elements", "[lower_cpu][copy]") {
  const Tensor x = Tensor::arange(24, DType::i64).view({4, 6});
  PlanBuilder pb(DType::i64);
  const int in = pb.input(x);
  const int col = pb.view(in, Layout{{4}, {6}, 2});  // x[:, 2]
  const Tensor got = run_cpu(pb.finish(pb.copy(col, make_layout({4}))), {x});
  CHECK(got.to_vector<std::int64_t>() == std::vector<std::int64_t>{2, 8, 14, 20});
}

TEST_CASE("a plan whose output views an input lowers to no kernels and shares storage", "[lower_cpu][program]") {
  const Tensor x = Tensor::randn({3, 4}, DType::f32, 71);
  PlanBuilder pb(DType::f32);
  const int in = pb.input(x);
  const Plan plan = pb.finish(pb.view(in, Layout{{4, 3}, {1, 4}, 0}));
  const Program program = lower_cpu(plan);
  CHECK(program.kernels.empty());
  CHECK(program.temp_bytes.empty());
  CHECK(program.output_buffer == 0);
  const Tensor got = program.run(std::vector<Tensor>{x});
  CHECK(got.same_storage(x));
  CHECK(got.to_vector<float>() == x.transpose(0, 1).to_vector<float>());
}

TEST_CASE("a chain of steps maps plan buffers to program buffers and runs in order", "[lower_cpu][program]") {
  for (DType dtype : {DType::f32, DType::bf16}) {
    CAPTURE(name(dtype));
    const Tensor a = Tensor::randn({4, 6}, dtype, 81), b = Tensor::randn({5, 6}, dtype, 82).transpose(0, 1);
    PlanBuilder pb(dtype);
    const int ia = pb.input(a), ib = pb.input(b);
    const int prod = pb.contract(ia, ib, make_layout({4, 5}, {}, 1, 0, 3), 0);  // at offset 3
    const int act = pb.map({prod}, UnaryOp::relu, make_layout({4, 5}, {1, 0}));
    const int sum = pb.reduce(act, Reduction::sum, {1}, make_layout({4}, {}, 1, 0, 2));
    const Plan plan = pb.finish(sum);
    const Program program = lower_cpu(plan);
    CHECK(program.dtype == dtype);
    CHECK(program.input_layouts == std::vector<Layout>{Layout{a.shape(), a.strides(), 0}, Layout{b.shape(), b.strides(), 0}});
    CHECK(program.kernels.size() == 3);
    REQUIRE(program.temp_bytes.size() >= 3);
    for (std::size_t i = 0; i < 3; ++i)
      CHECK(program.temp_bytes[i] == static_cast<std::size_t>(plan.buffers[i + 2].elements) * element_size(dtype));
    CHECK(program.temp_bytes.size() == (dtype == DType::f32 ? 3u : 6u));  // bf16 stages a, b and the product
    CHECK(program.output_buffer == 4);
    CHECK(program.output_layout == plan.output_value().layout);
    CHECK(program.str().find("gemm") != std::string::npos);
    CHECK(program.str().find("reduce sum") != std::string::npos);

    const auto x = a.to_vector<double>(), y = b.to_vector<double>();
    Expected want{{}, {}};
    for (int i = 0; i < 4; ++i) {
      double row = 0, mag = 0;
      for (int j = 0; j < 5; ++j) {
        double dot = 0;
        for (int k = 0; k < 6; ++k) dot += x[static_cast<std::size_t>(i * 6 + k)] * y[static_cast<std::size_t>(k * 5 + j)];
        row += std::max(dot, 0.0);
        for (int k = 0; k < 6; ++k)
          mag += std::abs(x[static_cast<std::size_t>(i * 6 + k)] * y[static_cast<std::size_t>(k * 5 + j)]);
      }
      want.value.push_back(row);
      want.magnitude.push_back(mag);
    }
    const std::vector<Tensor> inputs{a, b};
    check_close(program.run(inputs), want, 3);
    Tensor out = Tensor::zeros({4}, dtype);
    program.run_into(inputs, out);
    check_close(out, want, 3);
  }
}

TEST_CASE("the CPU GEMM backend is the one CMake chose and lower() picks lower_cpu for the CPU",
          "[lower_cpu][program]") {
  CHECK(std::string(cpu_gemm_backend()) == EINEXPR_EXPECTED_BLAS);
  const Tensor x = Tensor::randn({2, 3}, DType::f64, 91);
  PlanBuilder pb(DType::f64);
  const int in = pb.input(x);
  const Plan plan = pb.finish(pb.map({in}, UnaryOp::exp, make_layout({2, 3})));
  CHECK(lower(plan, Device::cpu()).kernels.size() == 1);
}
