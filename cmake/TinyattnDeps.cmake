# Third-party packages, through find_package and the packages' own CMake
# configs. Debian 12 ships one with each: libhwy-dev (hwy::hwy), libxsimd-dev
# (xsimd), doctest-dev (doctest::doctest), libbenchmark-dev and
# libeigen3-dev (looked up by bench/). libdnnl-dev's config cannot be used
# (it requires OpenCL, bench/peers/CMakeLists.txt finds the library by path).
#
# Highway, xsimd and doctest are used header-only (the Highway port links
# libhwy only for its dynamic-dispatch runtime, ports/backends/highway). Their
# header folder is exposed through a folder of links, so that a cross build
# sees these three folders and never the host's whole /usr/include.
#
# Fallback by path where no config is found: cross builds, whose find root
# excludes the host's multiarch folder where Debian installs the configs
# (/usr/lib/<host triple>/cmake; the headers are architecture-independent),
# and installs without a config (e.g. a copied doctest.h).
set(TINYATTN_THIRD_PARTY_INCLUDE "${CMAKE_BINARY_DIR}/third_party_include")
file(MAKE_DIRECTORY "${TINYATTN_THIRD_PARTY_INCLUDE}")

# _tinyattn_find_headers(<package> <imported target> <folder>/<header>):
# sets TINYATTN_<FOLDER>_FOUND and links the folder into
# TINYATTN_THIRD_PARTY_INCLUDE.
macro(_tinyattn_find_headers pkg target header)
  get_filename_component(dir ${header} DIRECTORY)
  string(TOUPPER ${dir} _DIR)
  set(_inc "")
  find_package(${pkg} CONFIG QUIET)
  if(TARGET ${target})
    get_target_property(_dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    foreach(_d IN LISTS _dirs)
      if(NOT _inc AND EXISTS "${_d}/${header}")
        set(_inc "${_d}")
      endif()
    endforeach()
  endif()
  if(NOT _inc)
    find_path(TINYATTN_${_DIR}_INCLUDE_DIR ${header} PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH)
    if(TINYATTN_${_DIR}_INCLUDE_DIR)
      set(_inc "${TINYATTN_${_DIR}_INCLUDE_DIR}")
    endif()
  endif()
  if(_inc)
    file(CREATE_LINK "${_inc}/${dir}" "${TINYATTN_THIRD_PARTY_INCLUDE}/${dir}" SYMBOLIC)
    set(TINYATTN_${_DIR}_FOUND ON)
  else()
    set(TINYATTN_${_DIR}_FOUND OFF)
  endif()
endmacro()
_tinyattn_find_headers(hwy hwy::hwy hwy/highway.h)
_tinyattn_find_headers(xsimd xsimd xsimd/xsimd.hpp)
_tinyattn_find_headers(doctest doctest::doctest doctest/doctest.h)

# xsimd has SIMD backends for x86 and Arm A-profile only; elsewhere it offers
# scalar functions and no batch type, so the port is not built there.
set(TINYATTN_XSIMD_USABLE OFF)
if(TINYATTN_XSIMD_FOUND AND NOT CMAKE_SYSTEM_NAME STREQUAL "Generic"
   AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|aarch64|arm.*)$")
  set(TINYATTN_XSIMD_USABLE ON)
endif()

add_library(tinyattn_third_party INTERFACE)
target_include_directories(tinyattn_third_party SYSTEM INTERFACE "$<BUILD_INTERFACE:${TINYATTN_THIRD_PARTY_INCLUDE}>")
