// Fuzz target: pattern + shapes + strides + lengths + dtype -> plan -> cost (and, when tiny,
// -> run). The bytes decode to a Case (plan_case.hpp); every kind of op but einsums of more
// than 10 operands, which go to fuzz_order (their order search is most of the time a case
// takes). The checks are check_case's (plan_check.cpp, plan_run.cpp).
#include <cstdint>
#include <optional>

#include "einexpr/ops.hpp"
#include "einexpr/runtime/threads.hpp"
#include "plan_case.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  einexpr::set_num_threads(1);  // fast and deterministic; the kernels' parallel paths have their own tests
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int init = LLVMFuzzerInitialize(nullptr, nullptr);
  (void)init;
  // The engine's caches are emptied after every input: an input then frees what it
  // allocated, and libFuzzer re-runs only an input that really leaks to look for the leak.
  struct ClearCaches {
    ~ClearCaches() { einexpr::clear_caches(); }
  } clear_after;
  const std::optional<fuzz::Case> c = fuzz::decode(data, size);
  if (!c) return 0;
  if (c->kind == fuzz::Kind::einsum && c->pattern.operands.size() > fuzz::max_plan_einsum_operands) return 0;
  (void)fuzz::check_case(*c);
  return 0;
}
