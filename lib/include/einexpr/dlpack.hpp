#pragma once
// Zero-copy exchange with other frameworks (PyTorch, NumPy, CuPy, JAX, ...) through DLPack:
//
//   #include <dlpack/dlpack.h>      // only to read or build a DLManagedTensor's fields
//   #include <einexpr/dlpack.hpp>
//   DLManagedTensor* m = to_dlpack(x);   // hand x's memory to a consumer, which calls m->deleter
//   Tensor y = from_dlpack(m);           // take a producer's tensor; its deleter runs when y's
//                                        // last view lets go
//
// dtypes: f64, f32, f16 (kDLFloat), bf16 (kDLBfloat), i64, i32 (kDLInt), and bool where the
// DLPack header has kDLBool (0.8 and later). DLPack has no code for the fp8 formats, and
// einexpr has no unsigned, complex or vector (lanes > 1) types: those are DTypeErrors.
// Devices: kDLCPU and kDLCUDAHost (pinned host memory) are the CPU, kDLCUDA is cuda:N;
// anything else is a DeviceError.
#include "einexpr/runtime/tensor.hpp"

// From <dlpack/dlpack.h>, which this header does not need: include it to use the fields.
struct DLManagedTensor;

namespace einexpr {

/// A DLPack tensor viewing `t`'s memory (data points at element [0, ..., 0], byte_offset
/// is 0, strides are always given). It keeps t's storage alive until the consumer calls
/// its deleter, exactly once. Throws DTypeError for dtypes DLPack cannot express.
DLManagedTensor* to_dlpack(const Tensor& t);

/// Takes ownership of `managed`: the tensor views its memory (no copy), and
/// managed->deleter runs when the last tensor viewing it lets go. If it throws (an
/// unsupported dtype or device, negative strides, a null or misaligned pointer), the
/// deleter has already run, so nothing is left to free either way.
Tensor from_dlpack(DLManagedTensor* managed);

}  // namespace einexpr
