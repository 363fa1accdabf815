# The power-on self-tests (fp32, int8 and int16): pass on every compiled port, fail on corrupted
# kernels and corrupted constants. Runs on every target (boards included).
tinyattn_add_suite(selftest_suite
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/selftest_test.cc ${CMAKE_CURRENT_LIST_DIR}/selftest_int8_test.cc
          ${CMAKE_CURRENT_LIST_DIR}/selftest_int16_test.cc
  LABELS selftest)
include(TinyattnPython)
tinyattn_add_generator_check(selftest_vectors_check tools/gen/selftest_vectors.py LABELS selftest)
tinyattn_add_generator_check(selftest_i8_vectors_check tools/gen/selftest_i8_vectors.py LABELS selftest)
tinyattn_add_generator_check(selftest_i16_vectors_check tools/gen/selftest_i16_vectors.py LABELS selftest)
