# The port list (tinyattn/port_list.h) against the build: every port CMake
# compiled is one the registry reports, and every one of them is under test.
tinyattn_add_suite(ports
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/ports_test.cc
  LABELS api kernels)
get_property(_ports_built GLOBAL PROPERTY TINYATTN_PORTS_BUILT)
string(REPLACE ";" "," _ports_built "${_ports_built}")
target_compile_definitions(ports PRIVATE "TATEST_PORTS_BUILT=\"${_ports_built}\"")

# A port folder with no line in the list stops the configure
# (ports/CMakeLists.txt) instead of being left out unseen. It configures the
# library alone, twice, on the build machine: native hosted builds only.
if(NOT CMAKE_CROSSCOMPILING AND NOT TINYATTN_BAREMETAL)
  add_test(NAME ports_unlisted_folder
           COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/unlisted_port
                   "-DGENERATOR=${CMAKE_GENERATOR}" -DC_COMPILER=${CMAKE_C_COMPILER}
                   -DCXX_COMPILER=${CMAKE_CXX_COMPILER} -P ${CMAKE_CURRENT_LIST_DIR}/check_unlisted_port.cmake)
  set_tests_properties(ports_unlisted_folder PROPERTIES LABELS "api;configure")
endif()
