// Count: exact, checked 128-bit counts of FLOPs and bytes (see count.hpp).
#include "einexpr/codegen/count.hpp"

#include <algorithm>

#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

[[noreturn]] void overflow(const Count& a, const char* op, const Count& b) {
  throw ShapeError("count overflow: " + a.str() + " " + op + " " + b.str() +
                   " does not fit in 128 bits (counts never wrap)");
}

}  // namespace

Count Count::from_int64(std::int64_t v) {
  if (v < 0) throw ShapeError("count: negative value " + std::to_string(v));
  return Count(static_cast<std::uint64_t>(v));
}

std::uint64_t Count::u64() const {
  if (!fits_u64()) throw ShapeError("count " + str() + " does not fit in 64 bits");
  return static_cast<std::uint64_t>(v_);
}

double Count::to_double() const noexcept {
  return static_cast<double>(v_);  // correctly rounded (libgcc's __floatuntidf)
}

std::string Count::str() const {
  if (v_ == 0) return "0";
  std::string digits;
  for (u128 v = v_; v != 0; v /= 10) digits += static_cast<char>('0' + static_cast<int>(v % 10));
  std::reverse(digits.begin(), digits.end());
  return digits;
}

Count Count::operator+(Count o) const {
  u128 r = 0;
  if (__builtin_add_overflow(v_, o.v_, &r)) overflow(*this, "+", o);
  return from_u128(r);
}

Count Count::operator-(Count o) const {
  if (o.v_ > v_) throw ShapeError("count: " + str() + " - " + o.str() + " is negative");
  return from_u128(v_ - o.v_);
}

Count Count::operator*(Count o) const {
  u128 r = 0;
  if (__builtin_mul_overflow(v_, o.v_, &r)) overflow(*this, "*", o);
  return from_u128(r);
}

MaybeCount checked_add(MaybeCount a, MaybeCount b) noexcept {
  Count::u128 r = 0;
  if (!a || !b || __builtin_add_overflow(a->raw(), b->raw(), &r)) return std::nullopt;
  return Count::from_u128(r);
}

MaybeCount checked_mul(MaybeCount a, MaybeCount b) noexcept {
  Count::u128 r = 0;
  if (!a || !b || __builtin_mul_overflow(a->raw(), b->raw(), &r)) return std::nullopt;
  return Count::from_u128(r);
}

std::string str(const MaybeCount& c) { return c ? c->str() : std::string(kOver128Bits); }

}  // namespace einexpr
