#pragma once
// SatCount: a count of FLOPs or elements that is exact below 2^128 and saturates at
// 2^128 - 1 instead of wrapping, so the contraction-order search compares costs exactly
// (never as doubles) and never overflows, even on plans whose cost() would refuse them.
#include <compare>
#include <cstdint>
#include <string>

#include "einexpr/codegen/count.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::order {

class SatCount {
 public:
  __extension__ using u128 = unsigned __int128;
  static constexpr u128 kMax = ~u128(0);

  constexpr SatCount() noexcept = default;
  constexpr SatCount(std::uint64_t v) noexcept : v_(v) {}  // NOLINT: implicit, as Count
  static constexpr SatCount from_u128(u128 v) noexcept { SatCount c; c.v_ = v; return c; }
  static constexpr SatCount max() noexcept { return from_u128(kMax); }

  constexpr u128 raw() const noexcept { return v_; }
  /// True when some step of the arithmetic left the exact range (the value is kMax).
  constexpr bool saturated() const noexcept { return v_ == kMax; }
  /// The exact count; ShapeError where it saturated (as Count's arithmetic would throw).
  Count count() const {
    if (saturated()) throw ShapeError("count overflow: the contraction costs 2^128 or more (counts never wrap)");
    return Count::from_u128(v_);
  }
  double to_double() const noexcept { return static_cast<double>(v_); }
  /// Exact decimal digits, or "2^128 or more" when saturated.
  std::string str() const { return saturated() ? std::string(kOver128Bits) : Count::from_u128(v_).str(); }

  friend constexpr SatCount operator+(SatCount a, SatCount b) noexcept {
    u128 r = 0;
    return from_u128(__builtin_add_overflow(a.v_, b.v_, &r) ? kMax : r);
  }
  friend constexpr SatCount operator*(SatCount a, SatCount b) noexcept {
    u128 r = 0;
    return from_u128(__builtin_mul_overflow(a.v_, b.v_, &r) ? kMax : r);
  }
  /// a - b for a >= b (0 otherwise); a saturated a stays saturated.
  friend constexpr SatCount operator-(SatCount a, SatCount b) noexcept {
    if (a.saturated()) return a;
    return from_u128(a.v_ > b.v_ ? a.v_ - b.v_ : 0);
  }
  SatCount& operator+=(SatCount o) noexcept { return *this = *this + o; }
  SatCount& operator*=(SatCount o) noexcept { return *this = *this * o; }
  friend constexpr bool operator==(SatCount a, SatCount b) noexcept { return a.v_ == b.v_; }
  friend constexpr std::strong_ordering operator<=>(SatCount a, SatCount b) noexcept { return a.v_ <=> b.v_; }

 private:
  u128 v_ = 0;
};

constexpr SatCount max(SatCount a, SatCount b) noexcept { return a < b ? b : a; }

}  // namespace einexpr::order
