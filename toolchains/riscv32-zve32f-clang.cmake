# RISC-V rv32imafc with Zve32f (the vector profile for microcontrollers:
# RVV with lanes of at most 32 bits, fp32) bare metal on QEMU's virt board,
# preset riscv32-zve32f: the rvv port on a 32-bit core. Compiled by clang 16
# (GCC 12 has no RVV intrinsics), linked by riscv64-unknown-elf-gcc with
# picolibc.specs, which takes picolibc's rv32imafc/ilp32f crt0 and libraries
# and libgcc from that GCC multilib, and the board's --crt0/--oslib options
# as in preset riscv32 (board tests/boards/riscv_virt, runtime
# ports/targets/riscv_semihost). clang has no specs: the compile names
# picolibc's headers itself. No C++ standard library either: the library's
# freestanding subset, as with riscv32-elf.cmake.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER clang-16)
set(CMAKE_CXX_COMPILER clang++-16)
set(CMAKE_ASM_COMPILER clang-16)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(TINYATTN_BOARD ${CMAKE_CURRENT_LIST_DIR}/../tests/boards/riscv_virt)
get_filename_component(TINYATTN_BOARD "${TINYATTN_BOARD}" ABSOLUTE)
set(TINYATTN_BOARD ${TINYATTN_BOARD} CACHE STRING "Board folder (ports/targets/<name> or an absolute path)")

# --target in the flags rather than CMAKE_<LANG>_COMPILER_TARGET: the tests
# that run the compiler by hand take CMAKE_<LANG>_FLAGS. local-exec TLS as
# picolibc.specs gives GCC.
set(_rv_picolibc /usr/lib/picolibc/riscv64-unknown-elf)
set(_rv_common "--target=riscv32-unknown-elf -march=rv32imafc_zve32f -mabi=ilp32f -isystem ${_rv_picolibc}/include -ftls-model=local-exec -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${_rv_common}")
set(CMAKE_CXX_FLAGS_INIT "${_rv_common} -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${_rv_common}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")
include(${CMAKE_CURRENT_LIST_DIR}/append-user-flags.cmake)
# No autovectorization, as in riscv64-rvv-clang.cmake: the rvv port's
# vectors are its intrinsics and the scalar port stays the baseline it is
# measured against. After -O2, which would turn it on again.
set(CMAKE_C_FLAGS_RELEASE "-O2 -DNDEBUG -fno-vectorize -fno-slp-vectorize" CACHE STRING "C flags for Release builds")
set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG -fno-vectorize -fno-slp-vectorize" CACHE STRING "C++ flags for Release builds")
set(CMAKE_EXECUTABLE_SUFFIX_C .elf)
set(CMAKE_EXECUTABLE_SUFFIX_CXX .elf)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The GCC driver links: the multilib of -march=rv32imafc -mabi=ilp32f (GNU ld
# merges the objects' Zve32f into the image's arch attribute). The compile
# flags stay out of the link (GCC knows neither --target nor these -march
# extensions); the board's options arrive as link options.
set(_rv_link "riscv64-unknown-elf-gcc -march=rv32imafc -mabi=ilp32f --specs=picolibc.specs")
set(CMAKE_C_LINK_EXECUTABLE "${_rv_link} <CMAKE_C_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
set(CMAKE_CXX_LINK_EXECUTABLE "${_rv_link} <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
# The image tools are GNU binutils' (ports/targets/CMakeLists.txt would look
# for them beside the compiler).
set(TINYATTN_SIZE riscv64-unknown-elf-size CACHE FILEPATH "size for the board images")
set(TINYATTN_NM riscv64-unknown-elf-nm CACHE FILEPATH "nm for the board images")

# QEMU's default rv32 CPU has no vector unit: the runners start a Zve32f one
# (QEMU_CPU, default VLEN 128), the serial one too.
set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/qemu-riscv32-zve32f.sh")
set(TINYATTN_QEMU_SERIAL_RUNNER "${CMAKE_CURRENT_LIST_DIR}/qemu-riscv32-zve32f.sh;--serial")
