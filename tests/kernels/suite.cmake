# The port contract (tinyattn/kernels.h), primitive by primitive, lengths 1..70.
tinyattn_add_suite(kernels
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kernel_contract.cc
  LABELS kernels)
