# Finds SystemC 2.3 through pkg-config (Debian's libsystemc-dev ships systemc.pc but no CMake
# config) and provides the imported target SystemC::systemc.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SYSTEMC_PC QUIET IMPORTED_TARGET systemc)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SystemC
  REQUIRED_VARS SYSTEMC_PC_FOUND
  VERSION_VAR SYSTEMC_PC_VERSION)
if(SystemC_FOUND AND NOT TARGET SystemC::systemc)
  add_library(SystemC::systemc INTERFACE IMPORTED)
  target_link_libraries(SystemC::systemc INTERFACE PkgConfig::SYSTEMC_PC)
  # Debian's SystemC is built as C++17: pin the API version macro so C++20 users link too.
  target_compile_definitions(SystemC::systemc INTERFACE SC_CPLUSPLUS=201703L)
endif()
