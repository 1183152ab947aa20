// program run / train on a mesh in a build without MPI (EINEXPR_MPI=OFF, or no libopenmpi-dev):
// an Error saying so, before anything is read or written.
#include "commands.hpp"

namespace einexpr::cli {

namespace {

[[noreturn]] void no_mpi(const char* command, const Mesh& mesh) {
  throw Error(std::string("program ") + command + " on the mesh " + mesh.str() +
              " needs MPI, and this einexpr was built without it (EINEXPR_MPI=OFF or no libopenmpi-dev); "
              "'einexpr program cost --mesh' costs it without running");
}

}  // namespace

int program_run_on_mesh(const ProgramRunArgs&, const ast::Program&, const Mesh& mesh) { no_mpi("run", mesh); }
int program_train_on_mesh(const ProgramTrainArgs&, const ast::Program&, const Mesh& mesh) { no_mpi("train", mesh); }

}  // namespace einexpr::cli
