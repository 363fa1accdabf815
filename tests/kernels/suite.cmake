# The port contract (tinyattn/kernels.h), primitive by primitive, lengths 1..70.
tinyattn_add_suite(kernels
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kernel_contract.cc
  LABELS kernels)

# The int8 port contract (tinyattn/kernels_i8.h): exact integers on every port.
tinyattn_add_suite(int8_kernels
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/int8_kernels.cc
  LABELS kernels quant)

# The int16 port contract (tinyattn/kernels_i16.h): every port's table gives
# the scalar table's integers; ports/port.h says which ports have their own.
tinyattn_add_suite(int16_kernels
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/int16_kernels.cc
  LABELS kernels quant)
# lib/src: the TFLite-16 tables against tflite16_ops.h.
target_include_directories(int16_kernels PRIVATE ${PROJECT_SOURCE_DIR}/ports ${PROJECT_SOURCE_DIR}/lib/src)

# aarch64: the Highway NEON int8 scores use SDOT where the CPU has it (QEMU's
# max) and the widening int16 path where it does not (cortex-a57, ARMv8.0);
# both must pass the whole contract. The log line names the table in use.
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$" AND TATEST_DOCTEST
   AND TARGET tinyattn_hwy_test_hook)
  tinyattn_add_suite_run(int8_kernels_armv8_0 int8_kernels ENVIRONMENT QEMU_CPU=cortex-a57 TINYATTN_HWY_TARGET=NEON
                         LABELS kernels quant)
  set_tests_properties(int8_kernels_armv8_0 PROPERTIES PASS_REGULAR_EXPRESSION "int8 kernels: highway/NEON end")
  tinyattn_add_suite_run(int8_kernels_sdot int8_kernels ENVIRONMENT QEMU_CPU=max TINYATTN_HWY_TARGET=NEON
                         LABELS kernels quant)
  set_tests_properties(int8_kernels_sdot PROPERTIES PASS_REGULAR_EXPRESSION "int8 kernels: highway/NEON\\+SDOT end")
endif()

# Which blocks forward() gives to the optional fused block and transposed-key
# scores: through the driver's entry point on an explicit table
# (lib/src/detail.h), white box.
tinyattn_add_suite(fused_dispatch
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/fused_dispatch.cc
  LABELS kernels)
target_include_directories(fused_dispatch PRIVATE ${PROJECT_SOURCE_DIR}/lib/src)

# The call plan (lib/src/plan.h) as a table: shape, mask, outputs and
# workspace -> route, for every port and every kind of table, white box.
tinyattn_add_suite(plan_table
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/plan_table.cc
  LABELS kernels)
target_include_directories(plan_table PRIVATE ${PROJECT_SOURCE_DIR}/lib/src)
