# Install rules and the package config, so that
#   find_package(tinyattn) + target_link_libraries(app tinyattn::tinyattn)
# works from an install prefix (add_subdirectory works through the ALIAS targets).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TINYATTN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tinyattn"
    CACHE STRING "Where tinyattnConfig.cmake is installed, relative to the prefix")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/lib/include/tinyattn" "${PROJECT_SOURCE_DIR}/lib/ref/include/tinyattn"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" FILES_MATCHING PATTERN "*.h")
set_target_properties(tinyattn_reference PROPERTIES EXPORT_NAME reference)
get_target_property(_tinyattn_links tinyattn LINK_LIBRARIES)
set(_tinyattn_exported tinyattn tinyattn_reference)
# Ports may link the build-only interface target for third-party headers; it
# exports as an empty interface (its include path is BUILD_INTERFACE only).
if(TARGET tinyattn_third_party AND "tinyattn_third_party" IN_LIST _tinyattn_links)
  list(APPEND _tinyattn_exported tinyattn_third_party)
endif()
# Bare-metal Cortex-M: the board runtime (objects built for this build's
# CPU) and its opt-in pieces (tinyattn::semihosting, tinyattn::stack_check),
# its headers, the shared section layout, the vector table's source (compiled
# into each image, which gives the interrupt count) and tinyattnFirmware.cmake
# (tinyattn_firmware_executable), so a firmware project brings only its
# memory map.
if(TARGET tinyattn_cortex_m_runtime)
  list(APPEND _tinyattn_exported tinyattn_cortex_m_runtime tinyattn_cortex_m_semihosting tinyattn_cortex_m_stack_check)
  install(FILES "${TINYATTN_CORTEX_M_DIR}/board.h" "${TINYATTN_CORTEX_M_DIR}/semihosting.h"
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tinyattn_cortex_m")
  install(FILES "${TINYATTN_CORTEX_M_DIR}/sections.ld" "${TINYATTN_CORTEX_M_DIR}/vectors.c"
                "${PROJECT_SOURCE_DIR}/cmake/tinyattnFirmware.cmake"
          DESTINATION "${TINYATTN_INSTALL_CMAKEDIR}")
endif()
# Bare-metal RISC-V: picolibc's crt0 is the startup; the runtime is board.h's
# output and exit and a trap handler, with the same opt-in pieces.
if(TARGET tinyattn_riscv_runtime)
  list(APPEND _tinyattn_exported tinyattn_riscv_runtime tinyattn_riscv_semihosting tinyattn_riscv_stack_check)
  install(FILES "${TINYATTN_RISCV_DIR}/board.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tinyattn_riscv")
  install(FILES "${PROJECT_SOURCE_DIR}/cmake/tinyattnFirmware.cmake" DESTINATION "${TINYATTN_INSTALL_CMAKEDIR}")
endif()
install(TARGETS ${_tinyattn_exported} EXPORT tinyattnTargets
        OBJECTS DESTINATION "${CMAKE_INSTALL_LIBDIR}/tinyattn_objects"
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT tinyattnTargets NAMESPACE tinyattn:: DESTINATION "${TINYATTN_INSTALL_CMAKEDIR}")

# A static libtinyattn carries its link dependencies into the consumer. Only the
# ones this build really links are looked up again (Highway's runtime when the
# Highway port uses dynamic dispatch); a header-only build needs none.
set(TINYATTN_CONFIG_DEPENDENCIES "")
if(_tinyattn_links)
  foreach(_lib IN LISTS _tinyattn_links)
    if(_lib MATCHES "^(hwy::.*|hwy|hwy_contrib)$" AND NOT TINYATTN_CONFIG_DEPENDENCIES MATCHES "hwy")
      string(APPEND TINYATTN_CONFIG_DEPENDENCIES "find_dependency(hwy)\n")
    elseif(_lib MATCHES "^Threads::" AND NOT TINYATTN_CONFIG_DEPENDENCIES MATCHES "Threads")
      string(APPEND TINYATTN_CONFIG_DEPENDENCIES "find_dependency(Threads)\n")
    endif()
  endforeach()
endif()

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/tinyattnConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/tinyattnConfig.cmake" INSTALL_DESTINATION "${TINYATTN_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tinyattnConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/tinyattnConfig.cmake" "${PROJECT_BINARY_DIR}/tinyattnConfigVersion.cmake"
        DESTINATION "${TINYATTN_INSTALL_CMAKEDIR}")
