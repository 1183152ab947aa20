# FindSleef: the SLEEF vectorized math library (Debian libsleef-dev), which ships a
# pkg-config file but no CMake package. Defines Sleef_FOUND, Sleef_VERSION and the imported
# target Sleef::sleef (sleef.h and libsleef).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_Sleef QUIET sleef)
endif()
find_path(Sleef_INCLUDE_DIR sleef.h HINTS ${PC_Sleef_INCLUDE_DIRS})
find_library(Sleef_LIBRARY NAMES sleef HINTS ${PC_Sleef_LIBRARY_DIRS})
set(Sleef_VERSION "${PC_Sleef_VERSION}")
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Sleef REQUIRED_VARS Sleef_LIBRARY Sleef_INCLUDE_DIR VERSION_VAR Sleef_VERSION)
if(Sleef_FOUND AND NOT TARGET Sleef::sleef)
  add_library(Sleef::sleef UNKNOWN IMPORTED)
  set_target_properties(Sleef::sleef PROPERTIES
    IMPORTED_LOCATION "${Sleef_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Sleef_INCLUDE_DIR}")
endif()
mark_as_advanced(Sleef_INCLUDE_DIR Sleef_LIBRARY)
