#include "einexpr/runtime/error.hpp"

#include <string>

namespace einexpr {

Error::Error(std::string message)
    : std::runtime_error(message), reason_(message), message_(std::move(message)) {}

void Error::add_context(std::string_view context) {
  message_ += "\n  ";
  message_ += context;
}

void Error::set_message(std::string message) { message_ = std::move(message); }

std::string caret_line(std::string_view pattern, std::size_t position) {
  std::string out = "  ";
  // Control characters (NUL, newline, tab...) would break the caret's column: show them
  // as '?' so the caret still sits under the byte it blames.
  for (char c : pattern) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  out += "\n  ";
  // Count columns in code points, so the caret stays under the fault after UTF-8 text.
  std::size_t column = 0;
  for (std::size_t i = 0; i < position && i < pattern.size(); ++i)
    if ((static_cast<unsigned char>(pattern[i]) & 0xC0) != 0x80) ++column;
  if (position > pattern.size()) column += position - pattern.size();
  out.append(column, ' ');
  out += '^';
  return out;
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
