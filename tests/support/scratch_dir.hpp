#pragma once
// A fresh directory under the system temp dir (mkdtemp), removed with everything in it at
// the end of the scope. Shared by the tests that write files: .npy, device files, SVGs.
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>

#include <stdlib.h>  // mkdtemp

namespace testing_support {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "einexpr-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// The path of `name` inside the directory.
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  /// Writes `text` to `name` in the directory and returns the file's path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = *this / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  /// The names of the entries in the directory now.
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.insert(e.path().filename().string());
    return names;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace testing_support
