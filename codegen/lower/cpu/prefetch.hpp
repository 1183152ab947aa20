#pragma once
// prefetch_line(p): fetches the 64-byte line at p into every cache level (prefetcht0), where a
// loop that does nothing else cannot lose it. Not __builtin_prefetch in such a loop: GCC 12
// (-O2 and up) deletes a loop whose only effect is that builtin (it has no side effects, and the
// loop provably ends), which is how get_at's row prefetch went missing from its kernel for a
// while (no prefetch instruction in the object; GPT-2's lookup on one thread, Zen 5: 1.52 ms
// without, 1.29 ms with). A volatile asm cannot be deleted. A prefetch never faults, so p may
// lie past an array's end.
#include <cstddef>
#include <cstdint>

namespace einexpr::cpu {

inline void prefetch_line(const void* p) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace einexpr::cpu
