# The port list (tinyattn/port_list.h) against the build: every port CMake
# compiled is one the registry reports, and every one of them is under test.
tinyattn_add_suite(ports
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/ports_test.cc
  LABELS api kernels)
get_property(_ports_built GLOBAL PROPERTY TINYATTN_PORTS_BUILT)
string(REPLACE ";" "," _ports_built "${_ports_built}")
target_compile_definitions(ports PRIVATE "TATEST_PORTS_BUILT=\"${_ports_built}\"")
