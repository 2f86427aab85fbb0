# DMASIM_SANITIZE=ON with gcc: links tests/sanitizer/asan_support.cpp into every executable of
# the build, so that AddressSanitizer knows which stack SystemC's coroutines run on
# (docs/testing.md#addresssanitizer-and-systemc) and every binary has the sanitizer options. Included by the top-level CMakeLists.txt after
# every subdirectory has been added.
add_library(dmasim_asan_systemc OBJECT ${PROJECT_SOURCE_DIR}/tests/sanitizer/asan_support.cpp)

# Every executable target defined in `dir` and below.
function(_dmasim_executables dir out)
  set(found "")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(d ${subdirs})
    _dmasim_executables(${d} more)
    list(APPEND found ${more})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

_dmasim_executables(${PROJECT_SOURCE_DIR} _dmasim_exes)
foreach(exe ${_dmasim_exes})
  target_link_libraries(${exe} PRIVATE dmasim_asan_systemc ${CMAKE_DL_LIBS})
  # Interposed on libasan's definitions: libsystemc.so and libasan.so must find them here.
  target_link_options(${exe} PRIVATE
    $<$<LINK_LANGUAGE:CXX>:LINKER:--export-dynamic-symbol=__sanitizer_start_switch_fiber>
    $<$<LINK_LANGUAGE:CXX>:LINKER:--export-dynamic-symbol=__asan_handle_no_return>
    $<$<LINK_LANGUAGE:CXX>:LINKER:--export-dynamic-symbol=__asan_default_options>
    $<$<LINK_LANGUAGE:CXX>:LINKER:--export-dynamic-symbol=__ubsan_default_options>)
endforeach()
