#pragma once
// einexpr.Program and its trainer, the C++ halves (einexpr/__init__.py wraps them): a model
// program parsed from a file or text, checked, costed as `program cost --json` prints it,
// run on named tensors (planned for their shapes, the plan kept for the next run) and
// trained (train.hpp's Trainer). A run, a step, planning and lowering release the GIL.
#include <pybind11/pybind11.h>

namespace einexpr::python {

namespace py = pybind11;

void bind_program(py::module_& m);

}  // namespace einexpr::python
