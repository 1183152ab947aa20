// vec_math.hpp's tables on x86-64: AVX-512F where the CPU (and the OS) has it, else AVX2
// with FMA, else scalar; __builtin_cpu_supports asks the CPU once (libgcc checks that the
// OS saves the vector registers too).
#include "vec_math.hpp"

namespace einexpr::cpu::vec {

namespace {

// A table is made only where the CPU has its instructions: the code that fills it is
// compiled for them too (a compiler may use wide stores to fill a struct).
struct Known {
  Table scalar = detail::scalar_table();
  Table avx2, avx512;
  bool has_avx2 = false, has_avx512 = false;
  Known() {
    __builtin_cpu_init();
    has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    has_avx512 = __builtin_cpu_supports("avx512f");
    if (has_avx2) avx2 = detail::avx2_table();
    if (has_avx512) avx512 = detail::avx512_table();
  }
};

const Known& known() noexcept {
  static const Known k;
  return k;
}

}  // namespace

const Table& best_table() noexcept {
  const Known& k = known();
  return k.has_avx512 ? k.avx512 : k.has_avx2 ? k.avx2 : k.scalar;
}

Tables runnable_tables() noexcept {
  const Known& k = known();
  Tables t;
  t.list[t.count++] = &k.scalar;
  if (k.has_avx2) t.list[t.count++] = &k.avx2;
  if (k.has_avx512) t.list[t.count++] = &k.avx512;
  return t;
}

}  // namespace einexpr::cpu::vec
