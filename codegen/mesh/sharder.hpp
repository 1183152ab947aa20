#pragma once
// shard() on a backward plan made once (search.cpp costs one plan on many meshes).
#include "einexpr/codegen/mesh.hpp"
#include "program/backward_plan.hpp"

namespace einexpr::mesh_detail {

MeshCost shard(const ProgramPlan& plan, const ProgramCost& cost, const Mesh& mesh,
               const program_detail::BackwardPlan& bwd);

}  // namespace einexpr::mesh_detail
