# The port contract (tinyattn/kernels.h), primitive by primitive, lengths 1..70.
tinyattn_add_suite(kernels
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kernel_contract.cc
  LABELS kernels)

# The int8 port contract (tinyattn/kernels_i8.h): exact integers on every port.
tinyattn_add_suite(int8_kernels
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/int8_kernels.cc
  LABELS kernels quant)
