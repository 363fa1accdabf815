# ctest driver (cmake -P): a folder ports/backends/<name>/ with a
# CMakeLists.txt but no line in tinyattn/port_list.h must stop the configure
# with one message (ports/CMakeLists.txt), not be left out silently.
# Configures a tree of links to SOURCE_DIR twice: as it is, which must succeed
# (so the failure after it is the folder's), then with an extra folder
# ports/backends/unlisted/, which must fail with that message. Only the
# library is configured (no tests, bench, tools or install): a few seconds.
# Inputs: SOURCE_DIR WORK GENERATOR C_COMPILER CXX_COMPILER.
foreach(v SOURCE_DIR WORK GENERATOR C_COMPILER CXX_COMPILER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_unlisted_port.cmake: ${v} not set")
  endif()
endforeach()

# link_tree(<from> <to> <descend>): <to> holds a link to each entry of <from>,
# except <descend> (a relative path), made of real folders whose other entries
# are links, so a file can be added below it without writing to <from>.
function(link_tree from to descend)
  file(MAKE_DIRECTORY "${to}")
  set(first "${descend}")
  set(rest "")
  string(FIND "${descend}" "/" slash)
  if(slash GREATER -1)
    string(SUBSTRING "${descend}" 0 ${slash} first)
    math(EXPR slash "${slash} + 1")
    string(SUBSTRING "${descend}" ${slash} -1 rest)
  endif()
  file(GLOB entries RELATIVE "${from}" LIST_DIRECTORIES true "${from}/*")
  foreach(e IN LISTS entries)
    if(e STREQUAL first)
      link_tree("${from}/${e}" "${to}/${e}" "${rest}")
    else()
      file(CREATE_LINK "${from}/${e}" "${to}/${e}" SYMBOLIC)
    endif()
  endforeach()
endfunction()

function(run_configure expect_ok)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S "${WORK}/src" -B "${WORK}/build" -G "${GENERATOR}"
            -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
            -DTINYATTN_BUILD_TESTS=OFF -DTINYATTN_BUILD_BENCH=OFF -DTINYATTN_BUILD_TOOLS=OFF
            -DTINYATTN_INSTALL=OFF
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "the tree as it is did not configure (${rc}):\n${out}\n${err}")
  endif()
  if(NOT expect_ok AND rc EQUAL 0)
    message(FATAL_ERROR "ports/backends/unlisted/ was not rejected: the configure succeeded:\n${out}")
  endif()
  set(configure_err "${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK}")
link_tree("${SOURCE_DIR}" "${WORK}/src" "ports/backends")
run_configure(TRUE)

file(WRITE "${WORK}/src/ports/backends/unlisted/CMakeLists.txt" "tinyattn_add_port(unlisted.cc)\n")
run_configure(FALSE)
set(want "ports/backends/unlisted/ has a CMakeLists.txt but no line in tinyattn/port_list.h")
# CMake wraps a message's lines: compare with the white space folded.
string(REGEX REPLACE "[ \t\r\n]+" " " folded "${configure_err}")
string(FIND "${folded}" "${want}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the configure failed, but without \"${want}\":\n${configure_err}")
endif()
file(REMOVE_RECURSE "${WORK}")
message(STATUS "ports/backends/unlisted/ stopped the configure: ${want}")
