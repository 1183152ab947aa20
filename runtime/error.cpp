#include "einexpr/runtime/error.hpp"

#include <algorithm>
#include <string>

namespace einexpr {

Error::Error(std::string message)
    : std::runtime_error(message), reason_(message), message_(std::move(message)) {}

void Error::add_context(std::string_view context) {
  message_ += "\n  ";
  message_ += context;
}

void Error::set_message(std::string message) { message_ = std::move(message); }

namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// Moves `i` back to the first byte of the UTF-8 code point it is inside.
std::size_t code_point_start(std::string_view text, std::size_t i) {
  while (i > 0 && i < text.size() && is_continuation(text[i])) --i;
  return i;
}

}  // namespace

std::string caret_line(std::string_view pattern, std::size_t position) {
  // A long pattern shows only a window around the fault, "..." marking what is cut.
  std::size_t begin = 0, end = pattern.size();
  if (pattern.size() > caret_window) {
    const std::size_t at = std::min(position, pattern.size());
    const std::size_t first = std::min(at > caret_window / 2 ? at - caret_window / 2 : 0, pattern.size() - caret_window);
    begin = code_point_start(pattern, first);
    end = code_point_start(pattern, std::min(pattern.size(), begin + caret_window));
  }
  const std::string_view shown = pattern.substr(begin, end - begin);
  const std::string prefix = begin > 0 ? "..." : "";
  std::string out = "  " + prefix;
  // Control characters (NUL, newline, tab...) would break the caret's column: show them
  // as '?' so the caret still sits under the byte it blames.
  for (char c : shown) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (end < pattern.size()) out += "...";
  out += "\n  ";
  // Count columns in code points, so the caret stays under the fault after UTF-8 text.
  std::size_t column = prefix.size();
  for (std::size_t i = begin; i < position && i < end; ++i)
    if (!is_continuation(pattern[i])) ++column;
  if (position > end) column += position - end;
  out.append(column, ' ');
  out += '^';
  return out;
}

std::string abbreviate(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  const std::size_t cut = code_point_start(text, max_bytes);
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

PatternError::PatternError(std::string reason, std::string pattern, std::size_t position)
    : Error(reason), pattern_(std::move(pattern)), position_(position) {
  set_message(reason + " at position " + std::to_string(position) + "\n" +
              caret_line(pattern_, position_));
}

AllocationError::AllocationError(std::size_t bytes, std::string_view where)
    : Error("could not allocate " + std::to_string(bytes) + " bytes on " + std::string(where)),
      bytes_(bytes) {}

InternalError::InternalError(std::string_view what, const char* file, int line)
    : Error("internal error (please report it): " + std::string(what) + " [" + file + ":" +
            std::to_string(line) + "]") {}

}  // namespace einexpr
