#pragma once
// The model files of examples/models (EINEXPR_MODELS_DIR, from the test target's CMake).
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace test {

inline std::string model_path(const std::string& name) { return std::string(EINEXPR_MODELS_DIR) + "/" + name; }

inline std::string read_model(const std::string& name) {
  std::ifstream in(model_path(name), std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + model_path(name));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace test
