# Runs a board image and checks its exact exit status, printing a one-case
# Unity transcript:
#   cmake -DRUNNER=<emulator;args> -DIMAGE=<elf> -DEXPECT=<status> -DNAME=<case>
#         [-DTIMEOUT=<s>] [-DEXPECT_TEXT=<text>[;<text>...]] -P check_exit.cmake
# EXPECT_TEXT: strings the image's output must contain.
if(DEFINED TIMEOUT)
  set(ENV{QEMU_TIMEOUT} ${TIMEOUT})
endif()
execute_process(COMMAND ${RUNNER} ${IMAGE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
set(why "")
if(NOT "${rc}" STREQUAL "${EXPECT}")
  set(why "exit status ${rc}, expected ${EXPECT}")
endif()
foreach(text IN LISTS EXPECT_TEXT)
  string(FIND "${out}" "${text}" at)
  if(at EQUAL -1 AND NOT why)
    set(why "no '${text}' in the output")
  endif()
endforeach()
if(NOT why)
  message("check_exit.cmake:1:${NAME}:PASS")
  message("\n-----------------------\n1 Tests 0 Failures 0 Ignored\nOK")
else()
  message("check_exit.cmake:1:${NAME}:FAIL: ${why}")
  message("\n-----------------------\n1 Tests 1 Failures 0 Ignored\nFAIL")
  message(FATAL_ERROR "${why}")
endif()
