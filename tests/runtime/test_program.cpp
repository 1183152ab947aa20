// Program, built by hand with lambdas as kernels: run() into a temporary and as a view of an
// input, run_into() directly and through a copy, and the errors of check_inputs / run_into.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/program.hpp"

using namespace einexpr;

namespace {

// out = 2 * in + 1 over a [2, 3] f32 input, through one temporary; records where it wrote.
Program doubling_program(std::byte** written = nullptr) {
  Program p;
  p.dtype = DType::f32;
  p.input_layouts = {Layout::contiguous({2, 3})};
  p.temp_bytes = {6 * sizeof(float)};
  p.kernels.push_back({"scale", [written](const Workspace& w) {
                         const auto* in = reinterpret_cast<const float*>(w.buffers[0]);
                         auto* out = reinterpret_cast<float*>(w.buffers[1]);
                         for (int i = 0; i < 6; ++i) out[i] = 2 * in[i] + 1;
                         if (written) *written = w.buffers[1];
                       }});
  p.output_buffer = 1;
  p.output_layout = Layout::contiguous({2, 3});
  return p;
}

// The transpose of its [2, 3] input, as a view: no kernels, no temporaries.
Program transpose_program() {
  Program p;
  p.input_layouts = {Layout::contiguous({2, 3})};
  p.output_buffer = 0;
  p.output_layout = Layout{{3, 2}, {1, 3}, 0};
  return p;
}

std::vector<float> doubled(const std::vector<float>& v) {
  std::vector<float> out;
  for (float x : v) out.push_back(2 * x + 1);
  return out;
}

}  // namespace

TEST_CASE("Program::run executes its kernels in order into a temporary", "[program]") {
  Program p = doubling_program();
  p.kernels.push_back({"negate", [](const Workspace& w) {  // a second kernel sees the first's result
                         auto* out = reinterpret_cast<float*>(w.buffers[1]);
                         for (int i = 0; i < 6; ++i) out[i] = -out[i];
                       }});
  const Tensor x = Tensor::randn({2, 3}, DType::f32, 1);
  const Tensor y = p.run(std::vector<Tensor>{x});
  std::vector<float> want = doubled(x.to_vector<float>());
  for (float& v : want) v = -v;
  CHECK(y.to_vector<float>() == want);
  CHECK_FALSE(same_storage(x, y));
  CHECK(p.workspace_bytes() == 24);
  CHECK(p.num_inputs() == 1);
  CHECK(p.str() ==
        "program on cpu, 1 input(s), 1 temporaries (24 bytes)\n"
        "  0: scale\n"
        "  1: negate\n"
        "  output: buffer 1 shape [2, 3] strides [3, 1]");
}

TEST_CASE("Program::run takes its inputs by pointer too, and more buffers than fit inline", "[program]") {
  // out = x0 + ... + x9 over [4] f32: ten inputs and a temporary, eleven buffers (eight
  // are kept inline in Workspace::buffers, the rest on the heap).
  Program p;
  p.dtype = DType::f32;
  for (int i = 0; i < 10; ++i) p.input_layouts.push_back(Layout::contiguous({4}));
  p.temp_bytes = {4 * sizeof(float)};
  p.kernels.push_back({"sum", [](const Workspace& w) {
                         REQUIRE(w.buffers.size() == 11);
                         auto* out = reinterpret_cast<float*>(w.buffers.at(10));
                         for (int j = 0; j < 4; ++j) {
                           out[j] = 0;
                           for (std::size_t i = 0; i < 10; ++i) out[j] += reinterpret_cast<const float*>(w.buffers[i])[j];
                         }
                       }});
  p.output_buffer = 10;
  p.output_layout = Layout::contiguous({4});
  std::vector<Tensor> xs;
  std::vector<const Tensor*> refs;
  std::vector<float> want(4, 0.0f);
  for (int i = 0; i < 10; ++i) {
    xs.push_back(Tensor::randn({4}, DType::f32, static_cast<std::uint64_t>(20 + i)));
    const std::vector<float> v = xs.back().to_vector<float>();
    for (int j = 0; j < 4; ++j) want[static_cast<std::size_t>(j)] += v[static_cast<std::size_t>(j)];
  }
  for (const Tensor& x : xs) refs.push_back(&x);
  const std::vector<float> by_value = p.run(xs).to_vector<float>();
  const std::vector<float> by_pointer = p.run(std::span<const Tensor* const>(refs)).to_vector<float>();
  CHECK(by_value == by_pointer);
  for (int j = 0; j < 4; ++j) CHECK(by_value[static_cast<std::size_t>(j)] == Approx(want[static_cast<std::size_t>(j)]));
  refs.pop_back();
  CHECK_THROWS_WITH(p.run(std::span<const Tensor* const>(refs)), "the program takes 10 inputs, got 9");
}

TEST_CASE("Program::run returns a view of an input when the output is one", "[program]") {
  const Program p = transpose_program();
  const Tensor base = Tensor::randn({4, 3}, DType::f32, 2);
  const Tensor x = base.slice(0, 1, 3);  // an input with a storage offset
  const Tensor y = p.run(std::vector<Tensor>{x});
  CHECK(same_storage(y, base));
  CHECK(y.shape() == Shape{3, 2});
  CHECK(y.to_vector<float>() == x.transpose(0, 1).to_vector<float>());
}

TEST_CASE("run_into writes directly where the layouts agree, else copies", "[program]") {
  std::byte* written = nullptr;
  const Program p = doubling_program(&written);
  const Tensor x = Tensor::randn({2, 3}, DType::f32, 3);
  Tensor out = Tensor::zeros({2, 3});
  p.run_into(std::vector<Tensor>{x}, out);
  CHECK(written == out.data_ptr());  // the kernel wrote into out: no temporary, no copy
  CHECK(out.to_vector<float>() == doubled(x.to_vector<float>()));

  Tensor base = Tensor::zeros({3, 2});
  Tensor transposed = base.transpose(0, 1);  // right shape, other strides: computed, then copied
  p.run_into(std::vector<Tensor>{x}, transposed);
  CHECK(written != transposed.data_ptr());
  CHECK(transposed.to_vector<float>() == doubled(x.to_vector<float>()));
  CHECK(base.to_vector<float>() == transposed.transpose(0, 1).contiguous().to_vector<float>());

  const Program view = transpose_program();
  Tensor into = Tensor::zeros({3, 2});
  view.run_into(std::vector<Tensor>{x}, into);
  CHECK(into.to_vector<float>() == x.transpose(0, 1).to_vector<float>());
}

TEST_CASE("check_inputs and run_into name what is wrong", "[program][errors]") {
  const Program p = doubling_program();
  const Tensor x = Tensor::randn({2, 3}, DType::f32, 4);
  struct Row { std::function<void()> call; std::string message; };
  Tensor out = Tensor::zeros({2, 3});
  Tensor wrong_shape = Tensor::zeros({3, 2});
  Tensor wrong_dtype = Tensor::zeros({2, 3}, DType::f64);
  Tensor shared = x.view({2, 3});
  Tensor undefined;
  const Row rows[] = {
      {[&] { p.run(std::vector<Tensor>{x, x}); }, "the program takes 1 inputs, got 2"},
      {[&] { p.run(std::vector<Tensor>{}); }, "the program takes 1 inputs, got 0"},
      {[&] { p.run(std::vector<Tensor>{Tensor()}); }, "input 0 is an undefined tensor"},
      {[&] { p.run(std::vector<Tensor>{x.to(DType::f64)}); },
       "input 0 is f64 but the program was planned for f32"},
      {[&] { p.run(std::vector<Tensor>{x.transpose(0, 1)}); },
       "input 0 has shape [3, 2] and strides [1, 3] but the program was planned for shape [2, 3] and strides [3, 1]"},
      {[&] { p.run(std::vector<Tensor>{x.view({3, 2})}); },
       "input 0 has shape [3, 2] and strides [2, 1] but the program was planned for shape [2, 3] and strides [3, 1]"},
      {[&] { p.run_into(std::vector<Tensor>{x}, wrong_shape); },
       "the output tensor has shape [3, 2] but the result has shape [2, 3]"},
      {[&] { p.run_into(std::vector<Tensor>{x}, wrong_dtype); }, "the output tensor is f64 but the result is f32"},
      {[&] { p.run_into(std::vector<Tensor>{x}, shared); },
       "the output tensor shares storage with an input; write into a separate tensor"},
      {[&] { p.run_into(std::vector<Tensor>{x}, undefined); }, "the output tensor is undefined"},
      {[&] { p.run_into(std::vector<Tensor>{x.to(DType::i32)}, out); },
       "input 0 is i32 but the program was planned for f32"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.message);
    CHECK_THROWS_WITH(r.call(), r.message);
  }
  CHECK_THROWS_AS(p.run(std::vector<Tensor>{x.to(DType::f64)}), DTypeError);
  CHECK_THROWS_AS(p.run(std::vector<Tensor>{x.transpose(0, 1)}), ShapeError);
  CHECK_THROWS_AS(p.run_into(std::vector<Tensor>{x}, wrong_dtype), DTypeError);
  CHECK(out.to_vector<float>() == std::vector<float>(6, 0.0f));  // nothing written by a refused run
}

TEST_CASE("run_into refuses an out whose elements overlap, and takes any that do not", "[program][errors]") {
  const Program p = doubling_program();
  const Tensor x = Tensor::randn({2, 3}, DType::f32, 4);
  const std::vector<double> want = p.run(std::vector<Tensor>{x}).to_vector<double>();
  const Tensor store = Tensor::zeros({12});
  // Once, a broadcast out took every result element in turn and kept the last one.
  for (const Strides& strides : {Strides{0, 1}, Strides{1, 0}, Strides{1, 1}, Strides{2, 1}}) {
    CAPTURE(strides);
    Tensor o = store.as_strided({2, 3}, strides, 0);
    CHECK_THROWS_WITH(p.run_into(std::vector<Tensor>{x}, o), Catch::Contains("the output tensor has overlapping elements"));
  }
  CHECK(store.to_vector<float>() == std::vector<float>(12, 0.0f));
  for (const Strides& strides : {Strides{3, 1}, Strides{1, 2}, Strides{6, 2}, Strides{1, 4}}) {
    CAPTURE(strides);
    Tensor o = store.as_strided({2, 3}, strides, 0);
    p.run_into(std::vector<Tensor>{x}, o);
    CHECK(o.to_vector<double>() == want);
  }
}
