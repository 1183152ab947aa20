#pragma once
// Private to npy.cpp: the .npy header, a Python dict literal, parsed by a small parser of
// our own (keys 'descr', 'fortran_order', 'shape'), the table of descrs, and the header
// bytes numpy writes. Errors throw, naming `name` (the file) and the problem.
#include <cstddef>
#include <string>
#include <string_view>

#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"
#include "einexpr/runtime/npy.hpp"

namespace einexpr::npy {

/// The longest header read (numpy's default limit is 10000; the writer needs more only for
/// thousands of dims).
inline constexpr std::size_t max_header_bytes = std::size_t{1} << 20;

struct Header {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

/// Parses the header's text (after the length field, padding and newline included).
/// Throws Error for syntax and keys, ShapeError for bad lengths.
Header parse_header(std::string_view text, const std::string& name);

/// What a descr means: the dtype and whether the data's bytes are in the other byte order
/// than this machine's.
struct Descr {
  DType dtype;
  bool swap_bytes;
};
/// Throws DTypeError naming the descr when einexpr cannot read it.
Descr parse_descr(const std::string& descr, const NpyReadOptions& options, const std::string& name);

/// The descr written for `dtype`; DTypeError for the fp8 formats.
std::string descr_for(DType dtype, const NpyWriteOptions& options);

/// magic + version + length + "{'descr': ..., }" + numpy's spare and padding spaces + '\n':
/// the whole header exactly as numpy's _write_array_header writes it (version 1.0, or 2.0
/// when the header does not fit a 16-bit length).
std::string header_bytes(const std::string& descr, bool fortran_order, const Shape& shape);

/// `s` between `quote`s, with that quote, backslashes and control / non-ASCII bytes
/// escaped, cut after `limit` characters.
std::string quoted(std::string_view s, char quote = '\'', std::size_t limit = 80);

}  // namespace einexpr::npy
