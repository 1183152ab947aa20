#pragma once
// NumPy .npy files (format versions 1.0, 2.0, 3.0), read and written by our own code.
// Read: little and big endian, C and Fortran order, <f8 <f4 <f2 <i8 <i4 |b1 (and their
// big-endian forms, '=' and '|' orders, '?' for bool), bf16 as ml_dtypes writes it (descr
// '<V2' or 'bfloat16'), or '<u2' when NpyReadOptions::u2_as_bf16 is set; fp8 only under
// ml_dtypes' unambiguous names 'float8_e4m3fn' / 'float8_e5m2' (np.save's '|V1' cannot tell
// them apart). Fortran-order data comes back as the column-major view numpy returns (a
// permuted view of one contiguous storage). The header is parsed by our own small parser
// of Python literals, never evaluated. Hostile files (bad magic or version, truncated,
// lying headers, shapes whose size overflows or disagrees with the bytes there, data past
// max_bytes) throw einexpr::Error (ShapeError for lengths, DTypeError for descrs) whose
// message starts with the file's name; nothing is allocated before the data size is checked
// against the file's size.
// Write: exactly numpy's bytes: version 1.0 (2.0 when the header needs more than 65535
// bytes), the dict "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", numpy's
// spare spaces, padding to a multiple of 64 and '\n'; little endian; C order by default.
// bf16 is written with descr '<V2', as np.save writes ml_dtypes.bfloat16; fp8 is refused
// with a DTypeError. write_npy writes to a temporary name in the same directory and renames
// it, so a failed write leaves no file (and no temporary) behind.
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
/// What a .npy file holds, from its header alone (checked against the file's size, as
/// read_npy checks it; no data is read): numpy's dtype and shape (the shape read_npy's
/// tensor has, in Fortran order too).
struct NpyInfo {
  DType dtype;
  Shape shape;
  bool fortran_order = false;
};
NpyInfo read_npy_info(const std::string& path, const NpyReadOptions& options = {});
/// Parses a whole .npy file held in memory; `name` is used in error messages.
Tensor parse_npy(std::span<const std::byte> bytes, const std::string& name = "<memory>",
                 const NpyReadOptions& options = {});

std::vector<std::byte> npy_bytes(const Tensor& tensor, const NpyWriteOptions& options = {});
void write_npy(const std::string& path, const Tensor& tensor, const NpyWriteOptions& options = {});

}  // namespace einexpr
