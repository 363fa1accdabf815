# The forward property suite: every port, every mask kind, odd shapes.
tinyattn_add_suite(properties
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/forward_properties.cc
  LABELS property)
