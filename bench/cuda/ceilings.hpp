#pragma once
// The two ceilings of METHOD.md, measured on the machine before any workload: a large
// device-to-device copy (bytes read + bytes written over time) and large cuBLAS GEMMs
// (bf16 with CUBLAS_COMPUTE_32F, raw and with einexpr's handle settings; f32 with
// einexpr's f32 compute type). The workloads' "of D2D" and "of cuBLAS" columns use them.
#include "direct.hpp"
#include "report.hpp"
#include "workload.hpp"

namespace einexpr::bench {

/// Copy of 2 GiB (16 MiB with --quick); GEMMs of 8192^3 (256^3 with --quick).
Ceilings measure_ceilings(Env& env, const DirectBlas& raw, const DirectBlas& einexpr_settings);

}  // namespace einexpr::bench
