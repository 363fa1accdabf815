# tinyattn_firmware_executable(<target> MEMORY_MAP <file.ld> [STACK_CHECK])
#
# Makes <target> a Cortex-M or RISC-V firmware image with tinyattn's board runtime
# (tinyattn::cortex_m_runtime: reset handler, vector table, fault handlers,
# semihosting output, heap-free libc stubs; tinyattn::riscv_runtime:
# semihosting output and exit, a trap handler, over picolibc's crt0) and
# your board's memory map.
# The memory map defines the MEMORY regions, the region aliases VECTORS
# (where VTOR points at reset), CODE and RAM, and STACK_SIZE, then says
#   INCLUDE sections.ld
# (installed next to this file: the section layout, no heap). The image gets
# the .elf suffix, --gc-sections and a map file beside it.
# On RISC-V (picolibc) the memory map instead assigns __flash, __flash_size,
# __ram, __ram_size and __stack_size, then INCLUDEs picolibc.ld (picolibc's
# section layout; no heap is used, an image check proves it).
# Installed with a bare-metal tinyattn; found by find_package(tinyattn).
function(tinyattn_firmware_executable target)
  cmake_parse_arguments(PARSE_ARGV 1 fw "" "MEMORY_MAP" "")
  if(NOT fw_MEMORY_MAP)
    message(FATAL_ERROR "tinyattn_firmware_executable(${target}): MEMORY_MAP <file.ld> is required")
  endif()
  get_filename_component(_map "${fw_MEMORY_MAP}" ABSOLUTE)
  if(TARGET tinyattn::riscv_runtime)
    # RISC-V with picolibc: crt0 is the startup (and exits through
    # semihosting); the memory map sets picolibc's memory symbols and
    # includes picolibc.ld, the section layout.
    target_link_libraries(${target} PRIVATE tinyattn::riscv_runtime tinyattn::tinyattn)
    set_target_properties(${target} PROPERTIES SUFFIX ".elf" LINK_DEPENDS "${_map}")
    target_link_options(${target} PRIVATE "--oslib=semihost" "--crt0=hosted" "-T${_map}"
                        "-Wl,--gc-sections" "-Wl,-Map=$<TARGET_FILE:${target}>.map")
    return()
  endif()
  target_link_libraries(${target} PRIVATE tinyattn::cortex_m_runtime tinyattn::tinyattn)
  set_target_properties(${target} PROPERTIES SUFFIX ".elf" LINK_DEPENDS "${_map}")
  # sections.ld sits beside this file (CMAKE_CURRENT_FUNCTION_LIST_DIR, 3.17+).
  target_link_options(${target} PRIVATE "-L${CMAKE_CURRENT_FUNCTION_LIST_DIR}" "-T${_map}" "-nostartfiles"
                      "-Wl,--gc-sections" "-Wl,-Map=$<TARGET_FILE:${target}>.map")
endfunction()
