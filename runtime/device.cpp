#include "einexpr/runtime/device.hpp"

#include <charconv>
#include <string>

#include "backend.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

Device parse_device(std::string_view text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda" || text == "gpu") return Device::cuda(0);
  if (text.starts_with("cuda:")) {
    const std::string_view digits = text.substr(5);
    int index = -1;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && ptr == digits.data() + digits.size() && !digits.empty() &&
        index >= 0)
      return Device::cuda(index);
  }
  throw DeviceError("unknown device '" + std::string(text) +
                    "' (expected cpu, cuda or cuda:N)");
}

int cuda_device_count() noexcept { return backend::cuda_device_count(); }

}  // namespace einexpr
