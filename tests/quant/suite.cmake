# The fp16 and int8 paths: conversions, properties, golden int8 vectors.
tinyattn_add_suite(quant_half
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/half_conversions.cc
  LABELS quant)
tinyattn_add_suite(quant_int8_golden
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/int8_golden.cc
  LABELS quant)
# The int16 path: golden outputs on every port, properties and error statuses.
tinyattn_add_suite(quant_int16_golden
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/int16_golden.cc
  LABELS quant)
tinyattn_add_suite(quant_int16_properties
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/int16_properties.cc
  LABELS quant)
# Int8Mode::kTflite: golden bytes of the TFLite int8 graph, and its properties.
tinyattn_add_suite(quant_tflite_golden
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tflite_golden.cc
  LABELS quant)
tinyattn_add_suite(quant_tflite_properties
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tflite_properties.cc
  LABELS quant)
# Int16Mode::kTflite: golden outputs of the TFLite Micro 16x8 graph, and its properties.
tinyattn_add_suite(quant_tflite16_golden
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tflite16_golden.cc
  LABELS quant)
tinyattn_add_suite(quant_tflite16_properties
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tflite16_properties.cc
  LABELS quant)

# The committed golden vectors must be what the generator produces.
if(NOT TINYATTN_BAREMETAL AND NOT CMAKE_CROSSCOMPILING)
  find_program(TINYATTN_NUMPY_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(TINYATTN_NUMPY_PYTHON)
    execute_process(COMMAND ${TINYATTN_NUMPY_PYTHON} -c "import numpy"
                    RESULT_VARIABLE _tinyattn_numpy_missing OUTPUT_QUIET ERROR_QUIET)
    if(_tinyattn_numpy_missing EQUAL 0)
      add_test(NAME quant_golden_check
               COMMAND ${TINYATTN_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/gen_quant_vectors.py --check)
      add_test(NAME quant_tflite_golden_check
               COMMAND ${TINYATTN_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/gen_tflite_vectors.py --check)
      add_test(NAME quant_int16_golden_check
               COMMAND ${TINYATTN_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/gen_int16_vectors.py --check)
      add_test(NAME quant_tflite16_golden_check
               COMMAND ${TINYATTN_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/gen_tflite16_vectors.py --check)
      set_tests_properties(quant_golden_check quant_tflite_golden_check quant_int16_golden_check
                           quant_tflite16_golden_check PROPERTIES LABELS quant)
    endif()
  endif()
endif()
tinyattn_add_suite(quant_int8_properties
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/int8_properties.cc
  LABELS quant)
tinyattn_add_suite(quant_int8_api
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/int8_api.cc
  LABELS quant)
tinyattn_add_suite(quant_f16_properties
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/f16_properties.cc
  LABELS quant)

# No heap in the fp16, int8 and int16 paths (hosted: replaces the C library's allocator).
if(NOT TINYATTN_BAREMETAL)
  tinyattn_add_suite(quant_alloc_free
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/alloc_free_quant.cc ${CMAKE_CURRENT_LIST_DIR}/../support/counting_allocator.cc
    LABELS quant alloc)
endif()

# aarch64: F16Compute::kNativeF16Products on a CPU without FP16 arithmetic
# (ARMv8.0, cortex-a57) must report kUnsupported rather than trap, and on one
# with it (QEMU's max) must run. The log line names the kernels in use.
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$" AND TATEST_DOCTEST)
  tinyattn_add_suite_run(quant_f16_properties_armv8_0 quant_f16_properties ENVIRONMENT QEMU_CPU=cortex-a57 LABELS quant)
  set_tests_properties(quant_f16_properties_armv8_0 PROPERTIES PASS_REGULAR_EXPRESSION "fp16 native products: none")
  tinyattn_add_suite_run(quant_f16_properties_fp16 quant_f16_properties ENVIRONMENT QEMU_CPU=max LABELS quant)
  set_tests_properties(quant_f16_properties_fp16 PROPERTIES
                       PASS_REGULAR_EXPRESSION "fp16 native products: armv8.2-a-fp16")
endif()
