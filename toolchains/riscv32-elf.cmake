# RISC-V rv32imac bare metal: Debian's riscv64-unknown-elf GCC with picolibc
# (packages gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf). That
# toolchain has no C++ standard library headers at all: the library then uses
# its own freestanding subset (lib/freestanding/include, see lib/CMakeLists.txt
# and docs/targets.md). picolibc's crt0 is the startup and its semihosting
# library the exit path; a firmware gives its memory map to
# tinyattn_firmware_executable() (docs/firmware.md).
#   cmake -S . -B build-rv32 --toolchain toolchains/riscv32-elf.cmake
# Other cores: -DTINYATTN_CPU_FLAGS="-march=rv32imafc -mabi=ilp32f".
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TINYATTN_CPU_FLAGS)
if(NOT TINYATTN_CPU_FLAGS)
  set(TINYATTN_CPU_FLAGS "-march=rv32imac -mabi=ilp32")
endif()
set(TINYATTN_CPU_FLAGS "${TINYATTN_CPU_FLAGS}" CACHE STRING "Compiler flags that select the core and ABI")
# No board: the library and the runtime only (toolchains/riscv32-virt.cmake
# names the suites' board).
if(NOT DEFINED TINYATTN_BOARD)
  set(TINYATTN_BOARD "")
endif()
set(TINYATTN_BOARD ${TINYATTN_BOARD} CACHE STRING "Board folder (ports/targets/<name> or an absolute path)")

# Same firmware subset as the Cortex-M files: no exceptions, RTTI or
# thread-safe statics; sections per function for --gc-sections.
set(_rv_common "${TINYATTN_CPU_FLAGS} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${_rv_common}")
set(CMAKE_CXX_FLAGS_INIT "${_rv_common} -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${_rv_common}")
# --specs=picolibc.specs reaches the link through the compile flags (twice fails).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")
# -DCMAKE_C_FLAGS=... and the like add to these flags rather than replace them.
include(${CMAKE_CURRENT_LIST_DIR}/append-user-flags.cmake)
set(CMAKE_C_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "C flags for Release builds")
set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "C++ flags for Release builds")
set(CMAKE_EXECUTABLE_SUFFIX_C .elf)
set(CMAKE_EXECUTABLE_SUFFIX_CXX .elf)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# There is no libstdc++ to link: C++ programs link through the C driver (g++
# would add -lstdc++). The library needs nothing from a C++ runtime.
set(CMAKE_CXX_LINK_EXECUTABLE
    "riscv64-unknown-elf-gcc <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
