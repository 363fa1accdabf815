# Any Cortex-M core with arm-none-eabi GCC and newlib, for a board of your
# own (no folder in ports/targets/): give the core's flags, e.g.
#   cmake -S . -B build-m7 --toolchain toolchains/cortex-m-generic.cmake \
#     "-DTINYATTN_CPU_FLAGS=-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard"
#   cmake --build build-m7 && cmake --install build-m7 --prefix /opt/tinyattn-m7
# A configure without a board builds and installs the library and the board
# runtime (tests and benches need a board: toolchains/cortex-m4.cmake, ...).
# Your firmware project uses this same file and find_package(tinyattn)
# (docs/firmware.md). -mfp16-format=ieee is added for the fp16 path's __fp16
# where the core has floating point.
# CMake's compiler checks re-read this file in a project of their own: pass the flags on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TINYATTN_CPU_FLAGS)
if(NOT TINYATTN_CPU_FLAGS)
  message(FATAL_ERROR "toolchains/cortex-m-generic.cmake: pass -DTINYATTN_CPU_FLAGS=\"-mcpu=cortex-m<N> -mthumb ...\"")
endif()
set(TINYATTN_CPU_FLAGS "${TINYATTN_CPU_FLAGS}" CACHE STRING "Compiler flags that select the core, its FPU and float ABI")
if(NOT TINYATTN_CPU_FLAGS MATCHES "mfp16-format")
  set(TINYATTN_CPU_FLAGS "${TINYATTN_CPU_FLAGS} -mfp16-format=ieee")
endif()
set(TINYATTN_BOARD "")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
