# Builds the firmware example for the current board (included from the
# board's example/CMakeLists.txt) and runs it under QEMU as a test.
# It links the library with the board glue only: no test framework, and no
# semihosting (its text goes to the board's UART, as a shipped firmware's
# does; QEMU runs without semihosting and stops at the runtime's exit line).
add_executable(firmware_example ${CMAKE_CURRENT_LIST_DIR}/firmware.cc)
# The public API only, as from an install (stage 52-firmware builds it so).
target_link_libraries(firmware_example PRIVATE tinyattn::tinyattn)
tinyattn_strict(firmware_example)
tinyattn_board_executable(firmware_example SERIAL)

# The self-test is part of the example once the library implements it.
set(_selftest 0)
file(GLOB _core_sources "${PROJECT_SOURCE_DIR}/lib/src/*.cc")
foreach(_src IN LISTS _core_sources)
  file(STRINGS "${_src}" _hit REGEX "Status (tinyattn::)?selftest\\(")
  if(_hit)
    set(_selftest 1)
  endif()
endforeach()
target_compile_definitions(firmware_example PRIVATE TINYATTN_EXAMPLE_SELFTEST=${_selftest})

if(TINYATTN_BUILD_TESTS)
  add_test(NAME firmware_example COMMAND ${TINYATTN_BOARD_SERIAL_RUNNER} $<TARGET_FILE:firmware_example>)
  set_tests_properties(firmware_example PROPERTIES LABELS "board;example"
                       FAIL_REGULAR_EXPRESSION "[0-9]+ Tests [1-9][0-9]* Failures|example: FAIL")
endif()
