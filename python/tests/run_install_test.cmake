# Installs the build in BUILD_DIR to a fresh prefix and imports the installed package from
# <prefix>/PACKAGE_DIR with PYTHON, in another directory, running one op.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix --config ${CONFIG}
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${err}")
endif()
set(site ${WORK_DIR}/prefix/${PACKAGE_DIR})
if(NOT EXISTS ${site}/einexpr/__init__.py)
  message(FATAL_ERROR "no ${site}/einexpr/__init__.py after cmake --install")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${site}
    ${PYTHON} -c "import einexpr, numpy as np; assert einexpr.__file__.startswith('${site}'), einexpr.__file__; print(einexpr.__version__, einexpr.einsum(np.ones((2, 3)), np.ones(3), 'a b, b -> a'))"
  WORKING_DIRECTORY ${WORK_DIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\\[3\\. 3\\.\\]")
  message(FATAL_ERROR "importing the installed package failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "installed in ${site}: ${out}")
