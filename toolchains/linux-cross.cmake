# Shared part of the Linux cross toolchain files. The including file sets
# TINYATTN_CROSS_TRIPLE, TINYATTN_CROSS_PROCESSOR, TINYATTN_CROSS_FLAGS and
# TINYATTN_QEMU (the qemu-user binary).
#
# Binaries link statically, so qemu-user needs no target libraries; -L still
# points it at the cross sysroot for anything that asks for the loader.
# binfmt_misc is not assumed: ctest always goes through the emulator.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${TINYATTN_CROSS_PROCESSOR})
set(CMAKE_C_COMPILER ${TINYATTN_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TINYATTN_CROSS_TRIPLE}-g++)

set(CMAKE_C_FLAGS_INIT "${TINYATTN_CROSS_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${TINYATTN_CROSS_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# -DCMAKE_C_FLAGS=... and the like add to these flags rather than replace them.
include(${CMAKE_CURRENT_LIST_DIR}/append-user-flags.cmake)
# Release at -O2, not CMake's -O3: GCC 12.2's aarch64 vectorizer crashes
# (internal compiler error in vect_transform_reduction) on the property
# tests at -O3. The SIMD kernels are explicit, so -O3 adds little. Set as
# a cache default so -DCMAKE_CXX_FLAGS_RELEASE=... still overrides it.
set(CMAKE_C_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "C flags for Release builds")
set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "C++ flags for Release builds")

# Only the cross sysroot is searched for libraries and headers; the host's
# /usr/include never reaches a cross compiler (third-party headers come
# through build/third_party_include, see cmake/TinyattnDeps.cmake).
set(CMAKE_FIND_ROOT_PATH /usr/${TINYATTN_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# qemu-user reads QEMU_CPU from the environment (test presets set it, e.g.
# max,sve-default-vector-length=32); it must be unset rather than empty.
set(CMAKE_CROSSCOMPILING_EMULATOR ${TINYATTN_QEMU} -L /usr/${TINYATTN_CROSS_TRIPLE})
