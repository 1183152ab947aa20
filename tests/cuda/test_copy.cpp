// CopyStep on the GPU: permutations (the tiled kernel, with and without 16-byte vectors),
// broadcasts and repeats (stride-0 sources), slices, strided destinations; every element
// size. A copy is exact: the output's logical values are the input's.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gpu_check.hpp"
#include "plan_builder.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

const std::vector<DType> copy_dtypes = {DType::f64, DType::f32, DType::bf16, DType::f8_e4m3, DType::i64, DType::boolean};

// input [shape] with strides and offset -> permute(perm) -> copy (dst strides, default contiguous)
void check_permuted_copy(const Shape& shape, const Strides& strides, std::int64_t offset, const std::vector<int>& perm,
                         DType dtype, const Strides& dst_strides = {}) {
  CAPTURE(shape, strides, offset, perm, name(dtype), dst_strides);
  const Input in = make_input(shape, strides, dtype, 21, offset);
  PlanBuilder p(dtype, Op::rearrange);
  const int x = p.input(shape, strides);
  Layout view;
  for (int d : perm) {
    view.shape.push_back(shape[static_cast<std::size_t>(d)]);
    view.strides.push_back(strides[static_cast<std::size_t>(d)]);
  }
  const int v = p.view(x, view);
  const int out = p.copy(v, dst_strides);
  run_poisoned(p.finish(out), {in.gpu}, in.cpu.permute(perm).to_vector<double>(), 0);
}

}  // namespace

TEST_CASE("'b c h w -> b h w c' copies through the tile kernel", "[cuda][copy]") {
  for (DType d : copy_dtypes) {
    for (const Shape& s : {Shape{2, 64, 16, 16}, Shape{2, 3, 5, 7}, Shape{3, 33, 9, 17}, Shape{1, 128, 8, 8}}) {
      check_permuted_copy(s, contiguous_strides(s), 0, {0, 2, 3, 1}, d);
    }
  }
}

TEST_CASE("'b (h d) s -> b h s d' copies through the tile kernel", "[cuda][copy]") {
  for (DType d : copy_dtypes) {
    for (auto [b, h, dd, s] : std::vector<std::array<std::int64_t, 4>>{{2, 4, 64, 40}, {1, 3, 5, 9}, {2, 2, 24, 100}}) {
      // the input [b, (h d), s] viewed as [b, h, d, s] is an input of that shape and strides
      const Shape shape{b, h, dd, s};
      check_permuted_copy(shape, contiguous_strides(shape), 0, {0, 1, 3, 2}, d);
    }
  }
}

TEST_CASE("transposes with misaligned or odd strides fall back to scalar tiles", "[cuda][copy]") {
  for (DType d : {DType::f32, DType::bf16, DType::f8_e5m2, DType::i32}) {
    check_permuted_copy({40, 72}, {72, 1}, 1, {1, 0}, d);       // offset by one element: not 16-byte aligned
    check_permuted_copy({40, 72}, {75, 1}, 0, {1, 0}, d);       // row stride not a multiple of the vector
    check_permuted_copy({33, 130}, {130, 1}, 0, {1, 0}, d);     // lengths not multiples of the vector
    check_permuted_copy({16, 24, 3}, {72, 3, 1}, 0, {2, 1, 0}, d);  // a short dim
  }
}

TEST_CASE("copies into strided destinations", "[cuda][copy]") {
  for (DType d : copy_dtypes) {
    check_permuted_copy({24, 40}, {40, 1}, 0, {0, 1}, d, {1, 24});       // row-major into column-major
    check_permuted_copy({24, 40}, {40, 1}, 0, {0, 1}, d, {80, 2});       // every other element
    check_permuted_copy({5, 6, 7}, {42, 7, 1}, 0, {2, 0, 1}, d, {1, 7, 35});
  }
}

TEST_CASE("broadcast and repeat copies read stride-0 sources", "[cuda][copy]") {
  for (DType d : copy_dtypes) {
    CAPTURE(name(d));
    {  // 'b h -> b c h': repeat a middle dim
      const Input in = make_input({3, 64}, d, 4);
      PlanBuilder p(d, Op::repeat);
      const int x = p.input({3, 64});
      const int v = p.view(x, Layout{{3, 5, 64}, {64, 0, 1}, 0});
      run_poisoned(p.finish(p.copy(v)), {in.gpu}, in.cpu.as_strided({3, 5, 64}, {64, 0, 1}, 0).to_vector<double>(), 0);
    }
    {  // 'h -> h c': repeat the last dim
      const Input in = make_input({37}, d, 5);
      PlanBuilder p(d, Op::repeat);
      const int x = p.input({37});
      const int v = p.view(x, Layout{{37, 6}, {1, 0}, 0});
      run_poisoned(p.finish(p.copy(v)), {in.gpu}, in.cpu.as_strided({37, 6}, {1, 0}, 0).to_vector<double>(), 0);
    }
    {  // a scalar everywhere
      const Input in = make_input({1}, d, 6);
      PlanBuilder p(d, Op::repeat);
      const int x = p.input({1});
      const int v = p.view(x, Layout{{4, 9, 3}, {0, 0, 0}, 0});
      run_poisoned(p.finish(p.copy(v)), {in.gpu}, in.cpu.as_strided({4, 9, 3}, {0, 0, 0}, 0).to_vector<double>(), 0);
    }
  }
}

TEST_CASE("sliced inputs with offsets and steps", "[cuda][copy]") {
  for (DType d : copy_dtypes) {
    CAPTURE(name(d));
    // x[2:9:2, 3:17] of a [10, 20] tensor: an input view at offset 43 with strides [40, 1]
    const Input in = make_input({4, 14}, {40, 1}, d, 8, 43);
    PlanBuilder p(d, Op::rearrange);
    const int x = p.input({4, 14}, {40, 1});
    run_poisoned(p.finish(p.copy(x)), {in.gpu}, values(in), 0);
    // a view inside the plan with its own offset: x[1:, 2:10]
    PlanBuilder q(d, Op::rearrange);
    const int y = q.input({4, 14}, {40, 1});
    const int v = q.view(y, Layout{{3, 8}, {40, 1}, 42});
    run_poisoned(q.finish(q.copy(v)), {in.gpu}, in.cpu.slice(0, 1, 4).slice(1, 2, 10).to_vector<double>(), 0);
  }
}

TEST_CASE("a large permutation with more than one batch dim", "[cuda][copy]") {
  // [2, 3, 48, 4, 80] -> [3, 80, 2, 4, 48]: dst-contiguous dim and src-contiguous dim far apart
  check_permuted_copy({2, 3, 48, 4, 80}, contiguous_strides(Shape{2, 3, 48, 4, 80}), 0, {1, 4, 0, 3, 2}, DType::bf16);
  check_permuted_copy({2, 3, 48, 4, 80}, contiguous_strides(Shape{2, 3, 48, 4, 80}), 0, {1, 4, 0, 3, 2}, DType::f32);
}
