# The board plumbing can fail: an exit status, a fault and a hang each reach
# ctest as what they are (included from ports/targets/CMakeLists.txt).
foreach(_check exit_status:7 fault:131 hang:124)
  string(REPLACE ":" ";" _check "${_check}")
  list(GET _check 0 _name)
  list(GET _check 1 _expect)
  add_executable(board_${_name} ${CMAKE_CURRENT_LIST_DIR}/${_name}.c)
  tinyattn_warnings(board_${_name})
  tinyattn_board_executable(board_${_name})
  add_test(NAME board_${_name}
           COMMAND ${CMAKE_COMMAND} "-DRUNNER=${CMAKE_CROSSCOMPILING_EMULATOR}" -DIMAGE=$<TARGET_FILE:board_${_name}>
                   -DEXPECT=${_expect} -DNAME=board_${_name} -DTIMEOUT=3
                   -P ${CMAKE_CURRENT_LIST_DIR}/check_exit.cmake)
  set_tests_properties(board_${_name} PROPERTIES LABELS "board")
endforeach()
