#pragma once
// The error classes of einexpr, each saying who is to blame:
//   PatternError  the pattern text is malformed (position + caret under the fault)
//   ShapeError    shapes, strides or axis lengths do not fit (names the axis and sizes)
//   DTypeError    a dtype is wrong for the operation
//   DeviceError   a device is missing, or a CUDA / cuBLAS call failed (names the call)
//   IndexError    an integer index outside its axis (names the operand, position and value)
//   InternalError a bug in einexpr ("please report")
// Public ops add context (pattern, shapes, lengths) with add_context() and rethrow.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace einexpr {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message);
  const char* what() const noexcept override { return message_.c_str(); }
  /// The message without the context that public ops append.
  const std::string& reason() const noexcept { return reason_; }
  /// Appends a line of context ("  while: ...") to the message.
  void add_context(std::string_view context);

 protected:
  void set_message(std::string message);

 private:
  std::string reason_;
  std::string message_;
};

/// A malformed pattern. what() quotes the pattern and puts a caret under position().
class PatternError : public Error {
 public:
  PatternError(std::string reason, std::string pattern, std::size_t position);
  std::size_t position() const noexcept { return position_; }
  const std::string& pattern() const noexcept { return pattern_; }

 private:
  std::string pattern_;
  std::size_t position_;
};

class ShapeError : public Error {
 public:
  using Error::Error;
};

class DTypeError : public Error {
 public:
  using Error::Error;
};

class DeviceError : public Error {
 public:
  using Error::Error;
};

/// An index tensor holds a value outside the axis it indexes (get_at, add_at, cross_entropy's
/// targets): the message names the operand, the position and the value. Raised before
/// anything is written.
class IndexError : public Error {
 public:
  using Error::Error;
};

/// An allocation that could not be satisfied; names the bytes asked for.
class AllocationError : public Error {
 public:
  explicit AllocationError(std::size_t bytes, std::string_view where);
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::size_t bytes_;
};

/// A broken invariant inside einexpr: a bug to report, never the user's fault.
class InternalError : public Error {
 public:
  explicit InternalError(std::string_view what, const char* file, int line);
};

/// Patterns longer than this many bytes are shown as a window of it around the caret.
inline constexpr std::size_t caret_window = 200;

/// The caret line for `pattern`: the pattern, a newline, spaces and '^' under `position`.
/// A pattern longer than caret_window bytes shows only the caret_window bytes around
/// `position`, with "..." where it is cut.
std::string caret_line(std::string_view pattern, std::size_t position);

/// `text` itself when it has at most `max_bytes` bytes, else its first `max_bytes` bytes
/// (whole UTF-8 code points) then "... (N bytes)": how messages quote long patterns.
std::string abbreviate(std::string_view text, std::size_t max_bytes = caret_window);

}  // namespace einexpr

/// Checks an internal invariant; on failure throws InternalError naming the file and line.
#define EINEXPR_ASSERT(cond, msg)                                 \
  do {                                                            \
    if (!(cond)) throw ::einexpr::InternalError((msg), __FILE__, __LINE__); \
  } while (false)
