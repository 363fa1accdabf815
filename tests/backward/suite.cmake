# The backward property suite: analytic gradients against central differences
# and the reference, every port, every mask kind, both modes.
tinyattn_add_suite(backward_properties
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/backward_properties.cc
  LABELS property backward)
