#include "einexpr/codegen/lower.hpp"

namespace einexpr {

Program lower(const Plan& plan, Device device) {
  return device.is_cpu() ? lower_cpu(plan) : lower_cuda(plan, device);
}

Program lower_validated(const Plan& plan, Device device) {
  return device.is_cpu() ? detail::lower_cpu(plan, false) : detail::lower_cuda(plan, device, false);
}

}  // namespace einexpr
