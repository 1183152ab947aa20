#pragma once
// Helpers for the hostile-input tables: where a caret should stand, bytes made printable
// for CAPTURE, and a scratch directory whose listing shows what a failed write left behind.
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>

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

/// A fresh directory, removed with its contents at the end of the scope.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "einexpr-hostile-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }
  /// The names of the entries in the directory now.
  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.insert(e.path().filename().string());
    return names;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace hostile
