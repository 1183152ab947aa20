# Warning and sanitizer flags shared by every einexpr target, as an INTERFACE
# target that each library links PRIVATE (so nothing leaks to downstream users).
add_library(einexpr_warnings INTERFACE)
target_compile_options(einexpr_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-psabi>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

if(EINEXPR_NATIVE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()

if(EINEXPR_SANITIZE)
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    message(STATUS "einexpr: EINEXPR_SANITIZE=ON builds are meant as Debug builds (CMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE})")
  endif()
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>)
  add_link_options(-fsanitize=address,undefined)
endif()
