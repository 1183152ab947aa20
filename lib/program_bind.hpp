#pragma once
// Tensors given by name to a compiled program or a trainer (private to lib), checked
// against the plan.
#include <initializer_list>
#include <map>
#include <string>

#include "einexpr/codegen/program_plan.hpp"
#include "einexpr/runtime/tensor.hpp"

namespace einexpr::program_detail {

using NamedTensors = std::map<std::string, Tensor, std::less<>>;

/// Each tensor by name: a tensor of the program with one of `roles` ("'w' names no input of
/// the program" otherwise, saying what it is where it is another tensor), defined, of the
/// planned shape, dtype and device (ShapeError / DTypeError / DeviceError naming the plan's),
/// made contiguous; every tensor of those roles must be there ("missing input 'x'").
NamedTensors bind_tensors(const ProgramPlan& plan, const NamedTensors& given, Device device,
                          std::initializer_list<TensorRole> roles);

}  // namespace einexpr::program_detail
