#pragma once
// Helpers for the .npy tests: hand-made files (prefix + header text + data bytes), byte
// strings, and a scratch directory that lists what a write left behind.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "scratch_dir.hpp"

namespace einexpr::testnpy {

/// Magic, version major.0 and the header length (2 bytes for 1.0, 4 for 2.0 / 3.0), little-endian.
inline std::string prefix(int major, std::size_t header_len) {
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  const int field = major == 1 ? 2 : 4;
  for (int i = 0; i < field; ++i) s += static_cast<char>((header_len >> (8 * i)) & 0xFF);
  return s;
}

/// A whole file: prefix for `header` (the text after the length field) and then `data`.
inline std::string file(int major, const std::string& header, const std::string& data = "") {
  return prefix(major, header.size()) + header + data;
}

/// The header numpy writes for dict text `dict` followed by `spaces` spaces and '\n'.
inline std::string v1_header(const std::string& dict, std::size_t spaces) {
  const std::string text = dict + std::string(spaces, ' ') + "\n";
  return prefix(1, text.size()) + text;
}

inline std::vector<std::byte> bytes(const std::string& s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

inline std::string text(const std::vector<std::byte>& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

/// The little-endian (or, with big = true, big-endian) bytes of each value.
template <class T>
std::string raw(const std::vector<T>& values, bool big = false) {
  std::string out;
  for (const T& v : values) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if (big) std::reverse(b, b + sizeof(T));
    out.append(b, sizeof(T));
  }
  return out;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_file(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

using testing_support::ScratchDir;

}  // namespace einexpr::testnpy
