#pragma once
// einexpr's errors as Python exceptions with the same messages: einexpr.Error (a
// RuntimeError, as einops' EinopsError) and below it PatternError (with .position and
// .pattern), ShapeError, DTypeError, DeviceError, AllocationError, InternalError, and
// ArgumentError (also a TypeError: an argument that is not an array, a string, ...).
#include <pybind11/pybind11.h>

namespace einexpr::python {

/// Creates the exception classes in `m` and translates einexpr's C++ errors to them.
void register_errors(pybind11::module_& m);

}  // namespace einexpr::python
