#include "einexpr/codegen/lower.hpp"

namespace einexpr {

Program lower(const Plan& plan, Device device) {
  return device.is_cpu() ? lower_cpu(plan) : lower_cuda(plan, device);
}

}  // namespace einexpr
