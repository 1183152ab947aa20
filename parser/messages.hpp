#pragma once
// The error messages of the grammar: error_message<Rule> for every rule that a must<> or
// reject<> can raise, and the control class that raises them. A rule raised without a
// message is a compile error (control<Rule>::raise's static_assert). "{}" in a message is
// replaced by the byte at the error, quoted ('#') or in hex (0xC3).
#include <cstdio>
#include <string>

#include <tao/pegtl.hpp>

#include "grammar.hpp"

namespace einexpr::grammar {

template <typename Rule>
inline constexpr const char* error_message = nullptr;

// clang-format off
// ---- structure ----
template <> inline constexpr const char* error_message<arrow> =
    "missing '->': a pattern is 'inputs -> output'";
template <> inline constexpr const char* error_message<second_arrow> =
    "a second '->': a pattern has exactly one '->'";
template <> inline constexpr const char* error_message<stray_plus> =
    "'+' outside parentheses: a concatenation is written in one dim, '(a + b)'";
template <> inline constexpr const char* error_message<output_end> =
    "unexpected text after the output";
template <> inline constexpr const char* error_message<dims_arrow> =
    "'->' in a normalization's pattern: it names one tensor's dims, the axes to work along in brackets (\"b h q [k]\")";
template <> inline constexpr const char* error_message<dims_comma> =
    "',' in a normalization's pattern: it names the dims of one tensor";
template <> inline constexpr const char* error_message<dims_end> =
    "unexpected text in a normalization's pattern";
// ---- parentheses ----
template <> inline constexpr const char* error_message<unclosed_paren> =
    "unbalanced parenthesis: '(' is never closed";
template <> inline constexpr const char* error_message<close_paren> =
    "unbalanced parenthesis: '(' is never closed";
template <> inline constexpr const char* error_message<stray_paren> =
    "unbalanced parenthesis: ')' has no matching '('";
template <> inline constexpr const char* error_message<nested_paren> =
    "nested parenthesis: axis composition is one level deep, '(a (b c))' is not allowed";
template <> inline constexpr const char* error_message<comma_in_group> =
    "',' inside parentheses: the axes of a group are separated by spaces";
// ---- tokens ----
template <> inline constexpr const char* error_message<separated> =
    "expected a space: axis names, numbers and '...' are separated by whitespace";
template <> inline constexpr const char* error_message<bad_dots> =
    "an ellipsis is exactly three dots '...'";
template <> inline constexpr const char* error_message<digit_name> =
    "invalid axis name: a name starts with a letter or '_', not a digit";
template <> inline constexpr const char* error_message<lone_dash> =
    "'-' without '>': the arrow is '->'";
template <> inline constexpr const char* error_message<non_ascii> =
    "unexpected byte {}: axis names are ASCII identifiers [A-Za-z_][A-Za-z0-9_]*";
template <> inline constexpr const char* error_message<unexpected_char> =
    "unexpected character {}: axis names are identifiers [A-Za-z_][A-Za-z0-9_]*";
// ---- pack patterns ----
template <> inline constexpr const char* error_message<pack_separated> =
    "expected a space: the axes of a pack pattern are separated by whitespace";
template <> inline constexpr const char* error_message<pack_paren> =
    "parentheses are not allowed in a pack pattern";
template <> inline constexpr const char* error_message<pack_ellipsis> =
    "'...' is not allowed in a pack pattern: '*' stands for the packed axes";
template <> inline constexpr const char* error_message<pack_number> =
    "invalid axis name: a pack pattern has only names and one '*'";
template <> inline constexpr const char* error_message<pack_unexpected> =
    "unexpected character {}: a pack pattern has names and one '*'";
template <> inline constexpr const char* error_message<pack_end> =
    "unexpected text at the end of the pack pattern";
// clang-format on

// Raised by the number action, not by a rule (the grammar cannot see int64's range).
struct number_too_large {};
struct zero_length {};
template <>
inline constexpr const char* error_message<number_too_large> =
    "number too large: an anonymous axis length must fit in int64 (at most 9223372036854775807)";
template <>
inline constexpr const char* error_message<zero_length> =
    "anonymous axis should have positive length, not 0";

/// The byte at `in`, for a message: "'#'" if printable, else "0xC3".
template <typename Input>
std::string describe_byte(const Input& in) {
  if (in.empty()) return "end of pattern";
  const unsigned char c = in.peek_uint8();
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(c));
  return hex;
}

/// Raises error_message<Rule> at the input's position (PEGTL's normal control otherwise).
template <typename Rule>
struct control : tao::pegtl::normal<Rule> {
  template <typename Input, typename... States>
  [[noreturn]] static void raise(const Input& in, States&&... /*unused*/) {
    static_assert(error_message<Rule> != nullptr, "a rule that can raise needs an error_message");
    std::string message = error_message<Rule>;
    if (const auto hole = message.find("{}"); hole != std::string::npos)
      message.replace(hole, 2, describe_byte(in));
    throw tao::pegtl::parse_error(message, in);
  }
};

}  // namespace einexpr::grammar
