// Built when CMake finds no OpenBLAS: the GEMM limit is Eigen's alone.
#include "bench.hpp"

namespace bench {

bool have_openblas() { return false; }
void set_openblas_threads(int) {}
bool gemm_openblas(const float*, std::int64_t, const float*, std::int64_t, float*, std::int64_t, std::int64_t,
                   std::int64_t, std::int64_t, bool) {
  return false;
}

}  // namespace bench
