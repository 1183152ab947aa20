// Placeholder: the .npy reader and writer are written in issue 5's work.
#include "einexpr/runtime/npy.hpp"

namespace einexpr {

Tensor read_npy(const std::string& path, const NpyReadOptions&) {
  throw Error("read_npy(" + path + "): .npy support is not built yet");
}
Tensor parse_npy(std::span<const std::byte>, const std::string& name, const NpyReadOptions&) {
  throw Error("parse_npy(" + name + "): .npy support is not built yet");
}
std::vector<std::byte> npy_bytes(const Tensor&, const NpyWriteOptions&) {
  throw Error("npy_bytes: .npy support is not built yet");
}
void write_npy(const std::string& path, const Tensor&, const NpyWriteOptions&) {
  throw Error("write_npy(" + path + "): .npy support is not built yet");
}

}  // namespace einexpr
