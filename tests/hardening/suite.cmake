# Hardening: bad arguments (every Status), non-finite and extreme inputs.
# Written with tatest, so both suites also run on the boards.
tinyattn_add_suite(hardening_status
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/status_test.cc
  LABELS hardening)
tinyattn_add_suite(hardening_nonfinite
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/nonfinite_test.cc
  LABELS hardening)
tinyattn_add_suite(hardening_status_backward
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/status_backward_test.cc
  LABELS hardening)
tinyattn_add_suite(hardening_nonfinite_regressions
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/nonfinite_regressions_test.cc
  LABELS hardening)
tinyattn_add_suite(hardening_nonfinite_table
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/nonfinite_table_test.cc
  LABELS hardening)
