#pragma once
// The contraction-order note says how long the search took ("(optimal: matrix chain,
// 0.0123 ms)"), which differs from run to run: tests compare notes with that time masked.
#include <regex>
#include <string>

namespace testing_support {

/// `text` with every search time ", 0.0123 ms)" written ", T ms)".
inline std::string without_search_time(const std::string& text) {
  static const std::regex time(R"(, [0-9][0-9.e+-]* ms\))");
  return std::regex_replace(text, time, ", T ms)");
}

}  // namespace testing_support
