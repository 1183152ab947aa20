#pragma once
// The number of CPU threads einexpr's kernels use (the caller and einexpr's own pool,
// parallel.hpp). Starts at OpenMP's default (which honours OMP_NUM_THREADS);
// set_num_threads() changes it for every thread of the process.
namespace einexpr {

int num_threads() noexcept;
/// n >= 1; throws Error otherwise.
void set_num_threads(int n);
/// On one of einexpr's pool threads: its index (1, 2, ...); 0 on any other thread.
int thread_index() noexcept;

}  // namespace einexpr
