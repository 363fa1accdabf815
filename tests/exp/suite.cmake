# Accuracy of tinyattn's exp in every port (tests/simd adds one run per SIMD
# target). TINYATTN_EXP_STRIDE: every how many floats of [-87.3, 0] the CI
# sample takes; raise it for slow emulated targets. TINYATTN_EXP_FULL_SWEEP=1
# in the environment checks every float (hosted targets).
# Defaults: 11.5 million floats natively (about 0.5 s per port), 577 thousand
# under qemu-user, 23 thousand on the emulated boards (software double exp).
if(TINYATTN_BAREMETAL)
  set(_exp_stride 48611)
elseif(CMAKE_CROSSCOMPILING)
  set(_exp_stride 1931)
else()
  set(_exp_stride 97)
endif()
set(TINYATTN_EXP_STRIDE ${_exp_stride} CACHE STRING "exp accuracy test: check every Nth float of [-87.3, 0]")
tinyattn_add_suite(exp
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/exp_accuracy.cc
  LABELS exp)
target_compile_definitions(exp PRIVATE TINYATTN_EXP_STRIDE=${TINYATTN_EXP_STRIDE}u)

# The drivers' own tanh (softcap) and log (lse), lib/src/float_math.h: white
# box, on the same stride.
tinyattn_add_suite(float_math
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/float_math_test.cc
  LABELS exp)
target_include_directories(float_math PRIVATE ${PROJECT_SOURCE_DIR}/lib/src)
target_compile_definitions(float_math PRIVATE TINYATTN_EXP_STRIDE=${TINYATTN_EXP_STRIDE}u)
