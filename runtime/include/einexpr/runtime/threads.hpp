#pragma once
// The number of CPU threads einexpr's kernels use. Starts at OpenMP's default (which
// honours OMP_NUM_THREADS); set_num_threads() changes it for every thread of the process.
namespace einexpr {

int num_threads() noexcept;
/// n >= 1; throws Error otherwise.
void set_num_threads(int n);
/// Inside a parallel region: this thread's index (0 outside one).
int thread_index() noexcept;

}  // namespace einexpr
