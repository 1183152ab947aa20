# EINEXPR_BLAS: the GEMM library of the CPU lowering, as a cache STRING.
#   openblas  OpenBLAS's sgemm/dgemm (Debian libopenblas-dev), called single-threaded from
#             einexpr's own threads (codegen/lower/cpu/gemm_blas.cpp); the default where
#             OpenBLAS is found, being the faster here (bench/RESULTS.md)
#   eigen     Eigen's own kernels (codegen/lower/cpu/gemm_eigen.cpp); the default elsewhere
set(BLA_VENDOR OpenBLAS)
if(NOT DEFINED CACHE{EINEXPR_BLAS})
  find_package(BLAS QUIET)
  if(BLAS_FOUND)
    set(einexpr_blas_default openblas)
  else()
    set(einexpr_blas_default eigen)
    message(STATUS "einexpr: OpenBLAS not found; GEMMs through Eigen (install libopenblas-dev for OpenBLAS)")
  endif()
  set(EINEXPR_BLAS ${einexpr_blas_default} CACHE STRING "GEMM library of the CPU lowering: openblas or eigen")
endif()
set_property(CACHE EINEXPR_BLAS PROPERTY STRINGS openblas eigen)
if(EINEXPR_BLAS STREQUAL "openblas")
  find_package(BLAS REQUIRED)
elseif(NOT EINEXPR_BLAS STREQUAL "eigen")
  message(FATAL_ERROR "EINEXPR_BLAS must be openblas or eigen, not '${EINEXPR_BLAS}'")
endif()
message(STATUS "einexpr: CPU GEMMs through ${EINEXPR_BLAS}")
