# Hardening: bad arguments (every Status), non-finite and extreme inputs.
# Written with tatest, so every suite also runs on the boards.
#   hardening_status                 status_test.cc
#   hardening_nonfinite              nonfinite_test.cc
#   hardening_status_backward        status_backward_test.cc
#   hardening_nonfinite_regressions  nonfinite_regressions_test.cc
#   hardening_nonfinite_table        nonfinite_table_test.cc
foreach(_suite status nonfinite status_backward nonfinite_regressions nonfinite_table)
  tinyattn_add_suite(hardening_${_suite}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/${_suite}_test.cc
    LABELS hardening)
endforeach()
