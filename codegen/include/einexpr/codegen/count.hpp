#pragma once
// Count: an exact non-negative integer below 2^128 for FLOPs and bytes. Arithmetic that
// would leave that range throws ShapeError instead of wrapping, so a count is exact or
// an error, never silently wrong: 2*16384*32768*8192 = 8796093022208 and far beyond 2^63.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>

namespace einexpr {

class Count {
 public:
  __extension__ using u128 = unsigned __int128;

  constexpr Count() noexcept = default;
  constexpr Count(std::uint64_t v) noexcept : v_(v) {}  // NOLINT: implicit on purpose
  static Count from_int64(std::int64_t v);              // ShapeError if negative
  static constexpr Count from_u128(u128 v) noexcept { Count c; c.v_ = v; return c; }

  constexpr u128 raw() const noexcept { return v_; }
  bool fits_u64() const noexcept { return v_ <= UINT64_MAX; }
  std::uint64_t u64() const;   // ShapeError if it does not fit
  double to_double() const noexcept;
  /// Decimal digits, exact: "8796093022208".
  std::string str() const;

  Count operator+(Count o) const;
  Count operator-(Count o) const;  // ShapeError if negative
  Count operator*(Count o) const;
  Count& operator+=(Count o) { return *this = *this + o; }
  Count& operator*=(Count o) { return *this = *this * o; }
  friend constexpr bool operator==(Count a, Count b) noexcept { return a.v_ == b.v_; }
  friend constexpr std::strong_ordering operator<=>(Count a, Count b) noexcept {
    return a.v_ <=> b.v_;
  }

 private:
  u128 v_ = 0;
};

/// A figure given beside the counts a plan needs (numpy's naive count, say) may not fit in
/// 128 bits on a plan that itself fits; such a figure is an optional Count, std::nullopt
/// where it is 2^128 or more. Its sum and product stay nullopt once out of range.
using MaybeCount = std::optional<Count>;
MaybeCount checked_add(MaybeCount a, MaybeCount b) noexcept;
MaybeCount checked_mul(MaybeCount a, MaybeCount b) noexcept;
/// The digits, or kOver128Bits.
std::string str(const MaybeCount& c);
inline constexpr const char* kOver128Bits = "2^128 or more";

}  // namespace einexpr
