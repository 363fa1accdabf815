# Shared part of the bare-metal Cortex-M toolchain files (arm-none-eabi GCC +
# newlib). The including file sets TINYATTN_CPU_FLAGS and, for a board of
# ports/targets/, TINYATTN_BOARD (its folder) and TINYATTN_QEMU_MACHINE.
#
# Startup code, vector table, linker script and the semihosting glue come
# from ports/targets/ (tinyattn_board_executable); this file only picks the
# compiler, the flags and the emulator.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# Nothing links before the project supplies startup code and a linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(TINYATTN_BOARD ${TINYATTN_BOARD} CACHE STRING "Board folder under ports/targets/")
set(TINYATTN_QEMU_MACHINE ${TINYATTN_QEMU_MACHINE} CACHE STRING "qemu-system-arm -M machine")

# The firmware subset everywhere: no exceptions, no RTTI, and no thread-safe
# statics (libsupc++'s guard functions can throw, which would pull in the
# exception runtime). Sections per function/object so --gc-sections keeps
# only what is used.
set(_cm_common "${TINYATTN_CPU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${_cm_common}")
set(CMAKE_CXX_FLAGS_INIT "${_cm_common} -fno-exceptions -fno-rtti -fno-threadsafe-statics -Wno-psabi")
set(CMAKE_ASM_FLAGS_INIT "${TINYATTN_CPU_FLAGS}")
# newlib-nano without any syscall library (no rdimon, no nosys): the board
# glue supplies what is needed, so anything that wants the heap or stdio
# fails to link instead of working by accident.
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs -nostartfiles -Wl,--gc-sections")
# -DCMAKE_C_FLAGS=... and the like add to these flags rather than replace them.
include(${CMAKE_CURRENT_LIST_DIR}/append-user-flags.cmake)
# -O2 rather than CMake's -O3 for Release: smaller images, same as the
# Linux cross targets (see linux-cross.cmake).
set(CMAKE_C_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "C flags for Release builds")
set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "C++ flags for Release builds")
set(CMAKE_EXECUTABLE_SUFFIX_C .elf)
set(CMAKE_EXECUTABLE_SUFFIX_CXX .elf)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

if(TINYATTN_QEMU_MACHINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/qemu-board.sh" ${TINYATTN_QEMU_MACHINE})
endif()
