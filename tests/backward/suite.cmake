# The backward property suite: analytic gradients against central differences
# and the reference, every port, every mask kind, both modes.
tinyattn_add_suite(backward_properties
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/backward_properties.cc
  LABELS property backward)

# Allocation freedom of backward() (hosted only: it replaces the C library's
# allocator, with tests/support/counting_allocator.cc).
if(NOT TINYATTN_BAREMETAL)
  tinyattn_add_suite(backward_alloc_free
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/backward_alloc_free.cc ${CMAKE_CURRENT_LIST_DIR}/../support/counting_allocator.cc
    LABELS alloc backward)
endif()
