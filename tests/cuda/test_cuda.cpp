#include <catch2/catch.hpp>

#include "einexpr/einexpr.hpp"

using namespace einexpr;

TEST_CASE("a tensor round-trips through the GPU", "[cuda]") {
  const Tensor x = Tensor::randn({4, 5}, DType::f32, 1);
  const Tensor back = x.to(Device::cuda(0)).to(Device::cpu());
  CHECK(back.to_vector<float>() == x.to_vector<float>());
}
