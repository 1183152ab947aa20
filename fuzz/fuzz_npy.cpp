// Fuzz target: the .npy reader. The input bytes are a whole .npy file. Invariants (a
// violation aborts):
//   - parse_npy throws nothing but einexpr::Error, whose message starts with the file's name
//     (it never allocates what a lying header asks for: ASan reports allocations over its
//     limit, and libFuzzer's -rss_limit_mb / -malloc_limit_mb catch the rest);
//   - a tensor it returns holds no more bytes than the file, and it round-trips: npy_bytes
//     (C and Fortran order) parses back to the same shape, dtype and bytes;
//   - the same bytes read with NpyReadOptions{u2_as_bf16, max_bytes} agree or are refused.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/npy.hpp"
#include "fuzz_support.hpp"

using namespace einexpr;

namespace {

const std::string file_name = "fuzz.npy";

/// The tensor's elements in logical order, as raw bytes.
std::vector<std::byte> raw(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const std::byte*>(c.data_ptr());
  return std::vector<std::byte>(p, p + c.nbytes());
}

void check_round_trip(const Tensor& t, bool fortran) {
  std::vector<std::byte> bytes;
  try {
    bytes = npy_bytes(t, NpyWriteOptions{fortran, false});
  } catch (const DTypeError&) {
    FUZZ_CHECK(t.dtype() == DType::f8_e4m3 || t.dtype() == DType::f8_e5m2,
               "npy_bytes refused " + std::string(name(t.dtype())));
    return;
  }
  Tensor back;
  try {
    back = parse_npy(bytes, "round-trip.npy");
  } catch (const Error& e) {
    FUZZ_CHECK(false, std::string("npy_bytes wrote a file parse_npy refuses: ") + e.what());
  }
  FUZZ_CHECK(back.shape() == t.shape(), "round trip changed the shape " + shape_str(t.shape()) + " to " +
                                            shape_str(back.shape()));
  FUZZ_CHECK(back.dtype() == t.dtype(), "round trip changed the dtype");
  FUZZ_CHECK(raw(back) == raw(t), "round trip changed the data");
}

/// parse_npy with `options`; the tensor, or an undefined one when refused.
Tensor read(std::span<const std::byte> bytes, const NpyReadOptions& options) {
  try {
    return parse_npy(bytes, file_name, options);
  } catch (const InternalError& e) {
    FUZZ_CHECK(false, std::string("internal error: ") + e.what());
  } catch (const Error& e) {
    FUZZ_CHECK(std::string(e.what()).rfind(file_name + ": ", 0) == 0,
               std::string("the message does not start with the file name: ") + e.what());
  }
  return Tensor();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const Tensor t = read(bytes, {});
  if (t.defined()) {
    FUZZ_CHECK(t.nbytes() <= size, "a tensor of " + std::to_string(t.nbytes()) + " bytes from a file of " +
                                       std::to_string(size));
    check_round_trip(t, false);
    check_round_trip(t, true);
  }
  NpyReadOptions other;
  other.u2_as_bf16 = true;
  other.max_bytes = 64;
  const Tensor u = read(bytes, other);
  if (t.defined() && u.defined()) {
    FUZZ_CHECK(u.shape() == t.shape() && u.dtype() == t.dtype() && raw(u) == raw(t),
               "u2_as_bf16 changed a file without '<u2' data");
  }
  if (u.defined()) FUZZ_CHECK(u.nbytes() <= 64, "max_bytes let a larger tensor through");
  return 0;
}
