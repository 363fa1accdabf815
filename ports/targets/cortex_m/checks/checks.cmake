# The board plumbing can fail: an exit status, a fault and a hang each reach
# ctest as what they are, over semihosting (the suites' way: board_<name>)
# and over the board's UART alone, with QEMU started without semihosting as
# a shipped firmware runs (board_serial_<name>). Then the runtime's promises,
# on the UART: the image's own handlers and hooks win over the weak defaults
# (board_user_hooks), the vector table takes the image's interrupt count
# (board_irq_count, Cortex-M) and the stack check reports a plausible
# high-water mark (board_stack_check). Included from
# ports/targets/CMakeLists.txt.

# _tinyattn_board_check(<test> <source> <exit status> [SERIAL] [STACK_CHECK]
#                       [IRQ_COUNT <n>] [TIMEOUT <s>] [TEXT <output>...])
function(_tinyattn_board_check name source expect)
  cmake_parse_arguments(PARSE_ARGV 3 _check "SERIAL;STACK_CHECK" "IRQ_COUNT;TIMEOUT" "TEXT")
  add_executable(${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${source})
  tinyattn_warnings(${name})
  set(_image_args "")
  foreach(_flag SERIAL STACK_CHECK)
    if(_check_${_flag})
      list(APPEND _image_args ${_flag})
    endif()
  endforeach()
  if(DEFINED _check_IRQ_COUNT)
    list(APPEND _image_args IRQ_COUNT ${_check_IRQ_COUNT})
  endif()
  tinyattn_board_executable(${name} ${_image_args})
  if(_check_SERIAL)
    set(_runner "${TINYATTN_BOARD_SERIAL_RUNNER}")
  else()
    set(_runner "${CMAKE_CROSSCOMPILING_EMULATOR}")
  endif()
  if(NOT _check_TIMEOUT)
    set(_check_TIMEOUT 30)
  endif()
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} "-DRUNNER=${_runner}" -DIMAGE=$<TARGET_FILE:${name}>
                   -DEXPECT=${expect} -DNAME=${name} -DTIMEOUT=${_check_TIMEOUT} "-DEXPECT_TEXT=${_check_TEXT}"
                   -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_exit.cmake)
  set_tests_properties(${name} PROPERTIES LABELS "board")
endfunction()

foreach(_check exit_status:7 fault:131 hang:124)
  string(REPLACE ":" ";" _check "${_check}")
  list(GET _check 0 _name)
  list(GET _check 1 _expect)
  set(_timeout "")
  if(_name STREQUAL "hang")
    set(_timeout TIMEOUT 3)
  endif()
  _tinyattn_board_check(board_${_name} ${_name}.c ${_expect} ${_timeout})
  _tinyattn_board_check(board_serial_${_name} ${_name}.c ${_expect} SERIAL ${_timeout})
endforeach()

if(TINYATTN_BOARD_RUNTIME STREQUAL "tinyattn_riscv_runtime")
  set(_handler "user trap handler ran")
else()
  set(_handler "user HardFault_Handler ran")
endif()
_tinyattn_board_check(board_user_hooks user_hooks.c 42 SERIAL
                      TEXT "user-hook> ${_handler}" "user-hook> tinyattn board: exit 42")
_tinyattn_board_check(board_stack_check stack.c 0 SERIAL STACK_CHECK
                      TEXT "stack: plausible" "tinyattn board: stack high water ")
if(NOT TINYATTN_BOARD_RUNTIME STREQUAL "tinyattn_riscv_runtime")
  _tinyattn_board_check(board_irq_count irq.c 0 SERIAL IRQ_COUNT 31 TEXT "irq: IRQ30_Handler ran")
  add_test(NAME board_irq_count_vector_table
           COMMAND ${CMAKE_COMMAND} -DNM=${TINYATTN_NM} -DIMAGE=$<TARGET_FILE:board_irq_count> -DIRQ_COUNT=31
                   -DNAME=board_irq_count_vector_table -P ${CMAKE_CURRENT_LIST_DIR}/check_vectors.cmake)
  set_tests_properties(board_irq_count_vector_table PROPERTIES LABELS "board;image")
endif()
