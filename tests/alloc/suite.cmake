# Allocation freedom: counts every heap allocation in the process (replaced
# malloc family and operator new/delete, or ASan's malloc hook) and expects none
# during forward() and Attention<>. Hosted targets only: it replaces the C
# library's allocator.
if(NOT TINYATTN_BAREMETAL)
  tinyattn_add_suite(alloc_free
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/alloc_free.cc ${CMAKE_CURRENT_LIST_DIR}/../support/counting_allocator.cc
    LABELS alloc)
endif()
