#pragma once
// Helpers for the hostile-input tables: where a caret should stand, bytes made printable
// for CAPTURE, and a scratch directory whose listing shows what a failed write left behind.
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>

#include "scratch_dir.hpp"

namespace hostile {

/// The caret's column under byte `position`: code points before it (UTF-8 continuation
/// bytes take no column), plus the bytes past the end.
inline std::size_t caret_column(const std::string& text, std::size_t position) {
  std::size_t column = 0;
  for (std::size_t i = 0; i < position && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
  return column + (position > text.size() ? position - text.size() : 0);
}

/// The text with bytes outside printable ASCII as \xAB, shortened past 120 bytes.
inline std::string printable(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < 120; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return s.size() > 120 ? out + "... (" + std::to_string(s.size()) + " bytes)" : out;
}

/// A scratch directory whose entries() show what a failed write left behind.
using testing_support::ScratchDir;

}  // namespace hostile
