# Writes OUT, a C++ source that holds the text of every platforms/*.yaml file, so that shipped
# platforms are found by name wherever dmasim runs. Invoked at build time (cmake -P) so an
# edited platform file rebuilds the binary.
file(GLOB files "${SRC_DIR}/*.yaml")
list(SORT files)
set(body "")
foreach(f ${files})
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  string(APPEND body "        {\"${name}\", R\"dmasim_platform(${text})dmasim_platform\"},\n")
endforeach()
set(content "// Generated from platforms/*.yaml by cmake/EmbedPlatforms.cmake. Do not edit.\n#include \"dmasim/config/shipped_platforms.h\"\n\nnamespace dmasim::config {\n\nconst std::map<std::string, std::string>& shipped_platforms() {\n    static const std::map<std::string, std::string> platforms{\n${body}    };\n    return platforms;\n}\n\n}  // namespace dmasim::config\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
