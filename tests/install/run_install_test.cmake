# Installs the build in BUILD_DIR to a fresh prefix, then configures, builds and runs the
# downstream project in SOURCE_DIR against it with find_package(einexpr).
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
if(NOT CONFIG)
  set(CONFIG Release)
endif()
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix --config ${CONFIG})
# The downstream project uses einexpr's compiler: a clang build's static libraries call
# LLVM's OpenMP runtime, which g++'s -fopenmp (libgomp) does not provide.
# It may find only what the README lists for downstream projects (OpenMP, BLAS, the CUDA
# toolkit): every other package einexpr's own build uses is hidden from find_package, so
# einexpr-config.cmake cannot come to depend on one unnoticed.
set(hidden)
foreach(package fmt pegtl Eigen3 nlohmann_json CLI11 Catch2 benchmark dlpack pybind11 Python3)
  list(APPEND hidden -DCMAKE_DISABLE_FIND_PACKAGE_${package}=ON)
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR} ${hidden}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=${CONFIG} -DCMAKE_CXX_COMPILER=${COMPILER})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/downstream)
