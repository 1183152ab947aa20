#include "einexpr/runtime/threads.hpp"

#include <omp.h>

#include <atomic>
#include <string>

#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {
std::atomic<int>& threads_setting() {
  static std::atomic<int> n{omp_get_max_threads()};
  return n;
}
}  // namespace

int num_threads() noexcept { return threads_setting().load(std::memory_order_relaxed); }

void set_num_threads(int n) {
  if (n < 1) throw Error("the number of threads must be at least 1 (got " + std::to_string(n) + ")");
  threads_setting().store(n);
}

}  // namespace einexpr
