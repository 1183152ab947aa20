# Compiles SOURCE (which must fail) with COMPILER and the include dirs in INCLUDES (a
# |-separated list) and checks that the diagnostics contain EXPECT and are at most
# MAX_LINES lines long: a wrong call gets a short message, not every overload's.
string(REPLACE "|" ";" include_dirs "${INCLUDES}")
set(flags -std=c++20 -fsyntax-only)
foreach(dir ${include_dirs})
  list(APPEND flags -I${dir})
endforeach()
execute_process(COMMAND ${COMPILER} ${flags} ${SOURCE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(text "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but must not")
endif()
string(FIND "${text}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the diagnostics lack \"${EXPECT}\":\n${text}")
endif()
string(REGEX MATCHALL "\n" newlines "${text}")
list(LENGTH newlines lines)
if(lines GREATER MAX_LINES)
  message(FATAL_ERROR "${lines} lines of diagnostics (at most ${MAX_LINES} wanted):\n${text}")
endif()
message(STATUS "rejected in ${lines} lines:\n${text}")
