#pragma once
// Where a tensor lives: the CPU, or CUDA device i.
#include <string>
#include <string_view>

namespace einexpr {

struct Device {
  enum class Kind : unsigned char { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;

  static constexpr Device cpu() noexcept { return Device{Kind::cpu, 0}; }
  static constexpr Device cuda(int i = 0) noexcept { return Device{Kind::cuda, i}; }
  constexpr bool is_cpu() const noexcept { return kind == Kind::cpu; }
  constexpr bool is_cuda() const noexcept { return kind == Kind::cuda; }
  /// "cpu" or "cuda:0".
  std::string str() const;
  friend constexpr bool operator==(const Device&, const Device&) = default;
};

/// Parses "cpu", "cuda", "cuda:1". Throws DeviceError on anything else.
Device parse_device(std::string_view text);

/// Number of CUDA devices visible; 0 in builds without CUDA or with no GPU.
int cuda_device_count() noexcept;

}  // namespace einexpr
