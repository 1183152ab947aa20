#pragma once
// NumPy .npy files (format versions 1.0, 2.0, 3.0), read and written by our own code.
// Read: little and big endian, C and Fortran order, <f8 <f4 <f2 <i8 <i4 |b1 (and their
// big-endian forms), bf16 as ml_dtypes writes it (descr '<V2' or 'bfloat16'), or '<u2'
// when NpyReadOptions::u2_as_bf16 is set. Hostile files (truncated, lying headers, shapes
// whose size overflows or disagrees with the file) throw einexpr::Error, naming the file.
// Write: version 1.0 (2.0 when the header needs it), little endian, C order by default;
// bf16 is written with descr '<V2', as ml_dtypes does. write_npy writes to a temporary
// name in the same directory and renames it, so a failed write leaves no file behind.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "einexpr/runtime/tensor.hpp"

namespace einexpr {

struct NpyReadOptions {
  bool u2_as_bf16 = false;     // read '<u2' / '>u2' data as bf16 bit patterns
  std::size_t max_bytes = 0;   // 0: no limit beyond the file's own size
};

struct NpyWriteOptions {
  bool fortran_order = false;
  bool bf16_as_u2 = false;     // write bf16 as '<u2' instead of '<V2'
};

Tensor read_npy(const std::string& path, const NpyReadOptions& options = {});
/// Parses a whole .npy file held in memory; `name` is used in error messages.
Tensor parse_npy(std::span<const std::byte> bytes, const std::string& name = "<memory>",
                 const NpyReadOptions& options = {});

std::vector<std::byte> npy_bytes(const Tensor& tensor, const NpyWriteOptions& options = {});
void write_npy(const std::string& path, const Tensor& tensor, const NpyWriteOptions& options = {});

}  // namespace einexpr
