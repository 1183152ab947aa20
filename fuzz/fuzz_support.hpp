#pragma once
// Shared by the fuzz targets: FUZZ_CHECK (an invariant; on violation, print and abort, which
// libFuzzer and the replay driver both report as a crash) and ByteReader (draws numbers
// from the fuzzer's bytes, 0 once they run out, so every input decodes to something).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace fuzz {

[[noreturn]] inline void fail(const char* condition, const std::string& detail, const char* file, int line) {
  std::fprintf(stderr, "\n==== fuzz invariant broken: %s\n     %s\n     at %s:%d\n", condition, detail.c_str(),
               file, line);
  std::fflush(stderr);
  std::abort();
}

/// Bytes as a printable C string literal ("a\x00b"), for messages.
inline std::string escaped(std::string_view bytes, std::size_t limit = 400) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (bytes.size() > limit) out += "...";
  return out;
}

/// Reads the fuzzer's bytes front to back; past the end every read is 0.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  /// A number in [0, n) (n > 0), from one byte.
  unsigned below(unsigned n) { return n == 0 ? 0 : byte() % n; }
  /// One bit of a fresh byte.
  bool flag() { return (byte() & 1) != 0; }
  /// Eight bytes, little endian.
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{byte()} << (8 * i);
    return v;
  }
  /// The bytes up to (not including) `stop`, or to the end; the stop byte is consumed.
  std::string_view until(char stop) {
    const std::size_t begin = pos_;
    while (pos_ < size_ && data_[pos_] != static_cast<std::uint8_t>(stop)) ++pos_;
    const std::string_view s(reinterpret_cast<const char*>(data_) + begin, pos_ - begin);
    if (pos_ < size_) ++pos_;
    return s;
  }
  bool done() const { return pos_ >= size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace fuzz

/// An invariant of the code under test: on violation print `detail` and abort.
#define FUZZ_CHECK(cond, detail)                                 \
  do {                                                           \
    if (!(cond)) ::fuzz::fail(#cond, (detail), __FILE__, __LINE__); \
  } while (false)
