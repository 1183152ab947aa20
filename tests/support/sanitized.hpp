// test::sanitized: true in the AddressSanitizer and ThreadSanitizer builds (scripts/test.sh's
// build-asan/, build-tsan/: Debug, 10-50x slower). A test whose work is many repetitions of the
// same code (random seeds, sizes, every dtype through one template) runs a subset there: the
// sanitizers see every code path of it, the optimized builds run all of it.
#pragma once

namespace test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#else
inline constexpr bool sanitized = false;
#endif

}  // namespace test
