# Warning and sanitizer flags shared by every einexpr target, as an INTERFACE
# target that each library links PRIVATE (so nothing leaks to downstream users).
add_library(einexpr_warnings INTERFACE)
target_compile_options(einexpr_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-psabi -Werror=switch>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Werror=switch>)
# GCC 12's -Wrestrict is wrong about libstdc++'s own std::string concatenation once it is
# inlined ("accessing 9223372036854775810 or more bytes ... may overlap", from
# operator+(const char*, std::string&&) -> insert -> _M_replace): GCC bugs 105651 and 105329,
# reported against GCC 12. Off for GCC 12 only (Debian 12's 12.2 printed 30 such warnings in
# a Release build, every one inside libstdc++'s string code, none of them real).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(einexpr_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()

if(EINEXPR_NATIVE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()

# EINEXPR_SANITIZE: OFF, ON (= address,undefined), address, undefined, thread, or a
# comma-separated list. EINEXPR_BUILD_FUZZ adds libFuzzer's coverage instrumentation to every
# target (and ASan + UBSan unless another sanitizer is named, or "none": coverage alone, for
# a campaign's throughput; fuzz/README.md); it needs clang.
string(TOLOWER "${EINEXPR_SANITIZE}" _einexpr_san)
set(_einexpr_san_none OFF)
if(_einexpr_san MATCHES "^(on|yes|true|1)$")
  set(_einexpr_san address,undefined)
elseif(_einexpr_san STREQUAL "none")
  if(NOT EINEXPR_BUILD_FUZZ)
    message(FATAL_ERROR "EINEXPR_SANITIZE=none is for fuzz builds (EINEXPR_BUILD_FUZZ=ON); elsewhere say OFF")
  endif()
  set(_einexpr_san "")
  set(_einexpr_san_none ON)
elseif(_einexpr_san MATCHES "^(off|no|false|0|)$")
  set(_einexpr_san "")
elseif(NOT _einexpr_san MATCHES "^(address|undefined|thread)(,(address|undefined))*$")
  message(FATAL_ERROR "EINEXPR_SANITIZE must be OFF, ON, address, undefined, thread or (fuzz builds) none (got '${EINEXPR_SANITIZE}')")
endif()
if(EINEXPR_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "EINEXPR_BUILD_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(_einexpr_san STREQUAL "" AND NOT _einexpr_san_none)
    set(_einexpr_san address,undefined)
  endif()
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
  # EINEXPR_FUZZ_TRACE_CMP=OFF: edge coverage without libFuzzer's comparison tracing anywhere
  # (codegen/order/ never has it). fuzz_order spent 35% of its time in __sanitizer_cov_trace_*
  # even so (perf, 2026-11-29): for a long fuzz_order campaign, not for finding magic bytes.
  if(NOT EINEXPR_FUZZ_TRACE_CMP)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-coverage=trace-cmp>)
  endif()
endif()
if(_einexpr_san)
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    message(STATUS "einexpr: sanitizer builds are meant as Debug builds (CMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE})")
  endif()
  message(STATUS "einexpr: sanitizers ${_einexpr_san}")
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${_einexpr_san}>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  if(_einexpr_san MATCHES "undefined")
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>)
  endif()
  add_link_options(-fsanitize=${_einexpr_san})
endif()
