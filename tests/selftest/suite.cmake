# The power-on self-test: passes on every compiled port, fails on corrupted
# kernels and corrupted constants. Runs on every target (boards included).
tinyattn_add_suite(selftest_suite
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/selftest_test.cc
  LABELS selftest)
include(TinyattnPython)
tinyattn_add_generator_check(selftest_vectors_check tools/gen/selftest_vectors.py LABELS selftest)
