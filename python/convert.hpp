#pragma once
// Python objects <-> einexpr tensors, without copying: the buffer protocol (numpy arrays,
// memoryviews) and DLPack capsules (torch tensors, anything with __dlpack__) in; the buffer
// protocol and DLPack capsules out. A tensor over Python memory holds that memory's owner
// until its last view lets go, and takes the GIL to let go of it.
#include <pybind11/pybind11.h>

#include <optional>

#include "einexpr/einexpr.hpp"

namespace einexpr::python {

namespace py = pybind11;

/// A tensor viewing the buffer of `obj` (read-only when the buffer is), or nullopt when
/// einexpr cannot view it as it is: a negative stride or one that is not a multiple of
/// the item size, a pointer not aligned to it, or a non-native byte order. The caller
/// then copies. Throws DTypeError for a format einexpr has no dtype for.
std::optional<Tensor> from_buffer(py::handle obj);

/// Takes the DLPack capsule "dltensor" (renamed "used_dltensor", as the protocol asks);
/// the producer's deleter runs, with the GIL, when the last view lets go.
Tensor from_capsule(py::handle capsule);

/// A DLPack capsule "dltensor" viewing `t` (a consumer that never takes it frees it).
py::capsule to_capsule(const Tensor& t);

/// The buffer protocol's view of a CPU tensor: numpy.asarray(t) shares its memory
/// (read-only when t is). DTypeError for bf16 and the fp8 formats, which numpy lacks.
py::buffer_info buffer_of(const Tensor& t);

}  // namespace einexpr::python
