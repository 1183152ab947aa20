# Installs the four static libraries, their public headers, the CLI and a CMake
# package: a downstream project does find_package(einexpr) and links einexpr::einexpr.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(EINEXPR_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/einexpr)

set(einexpr_installed einexpr_runtime einexpr_parser einexpr_codegen einexpr einexpr_cli)
if(EINEXPR_WITH_MPI)
  list(APPEND einexpr_installed einexpr_mpi)  # einexpr::mpi, mesh_run.hpp
endif()
install(TARGETS ${einexpr_installed}
  EXPORT einexpr-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

foreach(dir runtime parser codegen lib)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/generated/einexpr/config.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/einexpr)
install(FILES ${PROJECT_SOURCE_DIR}/codegen/cost/devices.json
  DESTINATION ${CMAKE_INSTALL_DATADIR}/einexpr OPTIONAL)

install(EXPORT einexpr-targets NAMESPACE einexpr:: DESTINATION ${EINEXPR_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/einexpr-config.cmake.in
  ${PROJECT_BINARY_DIR}/einexpr-config.cmake
  INSTALL_DESTINATION ${EINEXPR_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/einexpr-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/einexpr-config.cmake ${PROJECT_BINARY_DIR}/einexpr-config-version.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindSleef.cmake DESTINATION ${EINEXPR_INSTALL_CMAKEDIR})
