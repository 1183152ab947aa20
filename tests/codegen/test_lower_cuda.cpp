// lower_cuda without a usable GPU: in a build without CUDA it says so; in a CUDA build on
// a machine without a GPU it names the missing device. (The GPU tests are in tests/cuda.)
#include <catch2/catch.hpp>

#include "einexpr/codegen/lower.hpp"
#include "einexpr/config.hpp"
#include "einexpr/runtime/device.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/storage.hpp"
#include "einexpr/runtime/tensor.hpp"

using namespace einexpr;

namespace {

// %0 = input [2, 3]; %1 = copy %0 (transposed view read, contiguous write)
Plan small_plan() {
  Plan p;
  p.op = Op::rearrange;
  p.pattern = "a b -> b a";
  p.dtype = DType::f32;
  const AxisId a = p.axes.add({"a", 2, AxisKind::named}), b = p.axes.add({"b", 3, AxisKind::named});
  p.num_inputs = 1;
  p.buffers = {PlanBuffer{0, 0}, PlanBuffer{-1, 6}};
  p.values = {Value{0, Layout::contiguous({2, 3}), {{a}, {b}}}, Value{0, Layout{{3, 2}, {1, 3}, 0}, {{b}, {a}}},
              Value{1, Layout::contiguous({3, 2}), {{b}, {a}}}};
  p.steps = {ViewStep{0, 1}, CopyStep{1, 2}};
  p.output = 2;
  validate(p);
  return p;
}

}  // namespace

TEST_CASE("without CUDA, lower_cuda and CUDA tensors say why they cannot run", "[lower_cuda]") {
  const Plan plan = small_plan();
  if constexpr (!has_cuda) {
    CHECK(cuda_device_count() == 0);
    CHECK_THROWS_AS(lower_cuda(plan, Device::cuda(0)), DeviceError);
    CHECK_THROWS_WITH(lower_cuda(plan, Device::cuda(0)), "einexpr was built without CUDA");
    CHECK_THROWS_WITH(lower(plan, Device::cuda(0)), "einexpr was built without CUDA");
    CHECK_THROWS_WITH(allocator_for(Device::cuda(0)), "einexpr was built without CUDA");
    CHECK_THROWS_WITH(Tensor::zeros({2}, DType::f32, Device::cuda(0)), "einexpr was built without CUDA");
  } else if (cuda_device_count() == 0) {
    CHECK_THROWS_AS(lower_cuda(plan, Device::cuda(0)), DeviceError);
    CHECK_THROWS_WITH(lower_cuda(plan, Device::cuda(0)), "cuda:0 does not exist (0 CUDA devices are visible)");
    CHECK_THROWS_WITH(allocator_for(Device::cuda(0)), "cuda:0 does not exist (0 CUDA devices are visible)");
    CHECK_THROWS_WITH(Tensor::zeros({2}, DType::f32, Device::cuda(0)), Catch::Contains("cuda:0 does not exist"));
  } else {
    CHECK_THROWS_WITH(lower_cuda(plan, Device::cuda(cuda_device_count())), Catch::Contains("does not exist"));
    CHECK_THROWS_WITH(lower_cuda(plan, Device::cpu()), Catch::Contains("needs a CUDA device"));
  }
}
