# Third-party headers from Debian's packages (libhwy-dev, libxsimd-dev,
# doctest-dev). They are header-only here; for cross builds only these three
# folders are exposed (through a folder of links), never the host /usr/include.
set(TINYATTN_THIRD_PARTY_INCLUDE "${CMAKE_BINARY_DIR}/third_party_include")
file(MAKE_DIRECTORY "${TINYATTN_THIRD_PARTY_INCLUDE}")
foreach(dep hwy xsimd doctest)
  string(TOUPPER ${dep} DEP)
  if(EXISTS "/usr/include/${dep}")
    file(CREATE_LINK "/usr/include/${dep}" "${TINYATTN_THIRD_PARTY_INCLUDE}/${dep}" SYMBOLIC)
    set(TINYATTN_${DEP}_FOUND ON)
  else()
    set(TINYATTN_${DEP}_FOUND OFF)
  endif()
endforeach()

# xsimd has SIMD backends for x86 and Arm A-profile only; elsewhere it offers
# scalar functions and no batch type, so the port is not built there.
set(TINYATTN_XSIMD_USABLE OFF)
if(TINYATTN_XSIMD_FOUND AND NOT CMAKE_SYSTEM_NAME STREQUAL "Generic"
   AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|aarch64|arm.*)$")
  set(TINYATTN_XSIMD_USABLE ON)
endif()

add_library(tinyattn_third_party INTERFACE)
target_include_directories(tinyattn_third_party SYSTEM INTERFACE "$<BUILD_INTERFACE:${TINYATTN_THIRD_PARTY_INCLUDE}>")
