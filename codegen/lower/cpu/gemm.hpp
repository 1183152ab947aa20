#pragma once
// The GEMM under ContractStep: c = a * b on strided matrices mapped in place, one call on
// one thread (contract_cpu.cpp shares batches and parts of a GEMM among threads itself, so
// the libraries' own thread pools never run beside einexpr's). Two implementations, and
// CMake compiles one (EINEXPR_BLAS): gemm_eigen.cpp (Eigen's own kernels) and
// gemm_blas.cpp (OpenBLAS's sgemm/dgemm; Eigen for int64). No Eigen in this header.
#include <cstdint>

#include "plan/matrix_map.hpp"

namespace einexpr::cpu {

/// How a strided matrix is read in place: the planner's and the CUDA GEMM's answer too
/// (plan/matrix_map.hpp).
using detail::fit_matrix;
using detail::MatrixMap;

/// c = a * b (a: [m, k], b: [k, n], c: [m, n]), on the calling thread.
void gemm(const float* a, const MatrixMap& am, const float* b, const MatrixMap& bm, float* c, const MatrixMap& cm);
void gemm(const double* a, const MatrixMap& am, const double* b, const MatrixMap& bm, double* c, const MatrixMap& cm);
void gemm(const std::int64_t* a, const MatrixMap& am, const std::int64_t* b, const MatrixMap& bm, std::int64_t* c,
          const MatrixMap& cm);

/// Keeps the library's own threads out (Eigen's and OpenBLAS's thread counts are process
/// settings): call before gemm() calls, outside any parallel region.
void gemm_single_threaded();

/// "eigen" or "openblas".
const char* gemm_library() noexcept;

}  // namespace einexpr::cpu
