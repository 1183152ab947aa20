// Built only without CUDA: the CUDA lowering exists and says so.
#include "einexpr/codegen/lower.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

Program lower_cuda(const Plan&, Device) { throw DeviceError("einexpr was built without CUDA"); }
Program detail::lower_cuda(const Plan&, Device, bool) { throw DeviceError("einexpr was built without CUDA"); }

}  // namespace einexpr
