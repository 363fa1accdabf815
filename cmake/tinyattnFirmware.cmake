# tinyattn_firmware_executable(<target> MEMORY_MAP <file.ld>
#                              [SEMIHOSTING] [STACK_CHECK] [IRQ_COUNT <n>])
#
# Makes <target> a Cortex-M or RISC-V firmware image with tinyattn's board runtime
# (tinyattn::cortex_m_runtime: reset handler, vector table, fault handlers,
# board output on the UART, heap-free libc stubs; tinyattn::riscv_runtime:
# UART output and exit, a trap handler, over picolibc's crt0) and your
# board's memory map. Every handler and hook of the runtime is weak: your own
# HardFault_Handler, tinyattn_board_write, ... replace its defaults.
#   SEMIHOSTING  output, exit status (and on Cortex-M main's command line) go
#                through semihosting (tinyattn::semihosting): for images run
#                under a debugger or QEMU's -semihosting. Without it the image
#                needs no debugger: text goes to the UART the memory map
#                names (tinyattn_board_uart_base) and exit prints
#                "tinyattn board: exit <status>" and stops the core.
#   STACK_CHECK  the stack is painted at reset (tinyattn::stack_check):
#                tinyattn_board_stack_high_water() reports the most used, and
#                the figure is printed when main returns.
#   IRQ_COUNT    Cortex-M: the device's interrupts, the vector table's
#                entries after the 16 system ones (default 16); interrupt n
#                runs IRQ<n>_Handler when you define one.
# The memory map defines the MEMORY regions, the region aliases VECTORS
# (where VTOR points at reset), CODE and RAM, STACK_SIZE and, for the
# default output, tinyattn_board_uart_base, then says
#   INCLUDE sections.ld
# (installed next to this file: the section layout, no heap; vectors.c
# beside it is the vector table, compiled into the image, so the project
# must enable C). The image gets the .elf suffix, --gc-sections and a map
# file beside it.
# On RISC-V (picolibc) the memory map instead assigns __flash, __flash_size,
# __ram, __ram_size, __stack_size and tinyattn_board_uart_base (an NS16550A),
# then INCLUDEs picolibc.ld (picolibc's section layout; no heap is used, an
# image check proves it).
# Installed with a bare-metal tinyattn; found by find_package(tinyattn).
function(tinyattn_firmware_executable target)
  cmake_parse_arguments(PARSE_ARGV 1 fw "SEMIHOSTING;STACK_CHECK" "MEMORY_MAP;IRQ_COUNT" "")
  if(NOT fw_MEMORY_MAP)
    message(FATAL_ERROR "tinyattn_firmware_executable(${target}): MEMORY_MAP <file.ld> is required")
  endif()
  get_filename_component(_map "${fw_MEMORY_MAP}" ABSOLUTE)
  if(fw_STACK_CHECK)
    target_link_libraries(${target} PRIVATE tinyattn::stack_check)
  endif()
  if(fw_SEMIHOSTING)
    target_link_libraries(${target} PRIVATE tinyattn::semihosting)
  endif()
  if(TARGET tinyattn::riscv_runtime)
    # RISC-V with picolibc: crt0 is the startup, exit() ends in the runtime's
    # _exit; the memory map sets picolibc's memory symbols and includes
    # picolibc.ld, the section layout. picolibc's OS layer: its semihosting
    # one for SEMIHOSTING, else the stubs (nothing of it is called).
    if(fw_SEMIHOSTING)
      set(_oslib "--oslib=semihost")
    else()
      set(_oslib "--oslib=dummyhost")
    endif()
    target_link_libraries(${target} PRIVATE tinyattn::riscv_runtime tinyattn::tinyattn)
    set_target_properties(${target} PROPERTIES SUFFIX ".elf" LINK_DEPENDS "${_map}")
    target_link_options(${target} PRIVATE "${_oslib}" "--crt0=hosted" "-T${_map}"
                        "-Wl,--gc-sections" "-Wl,-Map=$<TARGET_FILE:${target}>.map")
    return()
  endif()
  get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "C" IN_LIST _languages)
    message(FATAL_ERROR "tinyattn_firmware_executable(${target}): the vector table is C: enable C in project()")
  endif()
  target_link_libraries(${target} PRIVATE tinyattn::cortex_m_runtime tinyattn::tinyattn)
  # sections.ld and vectors.c sit beside this file (CMAKE_CURRENT_FUNCTION_LIST_DIR, 3.17+).
  target_sources(${target} PRIVATE "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/vectors.c")
  if(DEFINED fw_IRQ_COUNT)
    target_compile_definitions(${target} PRIVATE TINYATTN_IRQ_COUNT=${fw_IRQ_COUNT})
  endif()
  set_target_properties(${target} PROPERTIES SUFFIX ".elf" LINK_DEPENDS "${_map}")
  target_link_options(${target} PRIVATE "-L${CMAKE_CURRENT_FUNCTION_LIST_DIR}" "-T${_map}" "-nostartfiles"
                      "-Wl,--gc-sections" "-Wl,-Map=$<TARGET_FILE:${target}>.map")
endfunction()
