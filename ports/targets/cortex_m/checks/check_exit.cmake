# Runs a board image and checks its exact exit status, printing a one-case
# Unity transcript:
#   cmake -DRUNNER=<emulator;args> -DIMAGE=<elf> -DEXPECT=<status> -DNAME=<case>
#         [-DTIMEOUT=<s>] -P check_exit.cmake
if(DEFINED TIMEOUT)
  set(ENV{QEMU_TIMEOUT} ${TIMEOUT})
endif()
execute_process(COMMAND ${RUNNER} ${IMAGE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if("${rc}" STREQUAL "${EXPECT}")
  message("check_exit.cmake:1:${NAME}:PASS")
  message("\n-----------------------\n1 Tests 0 Failures 0 Ignored\nOK")
else()
  message("check_exit.cmake:1:${NAME}:FAIL: exit status ${rc}, expected ${EXPECT}")
  message("\n-----------------------\n1 Tests 1 Failures 0 Ignored\nFAIL")
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT}")
endif()
