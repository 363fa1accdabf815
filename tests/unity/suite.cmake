# The Unity reporter's transcript: a fixture with a passing, a failing and an
# ignored case (not a suite: it fails on purpose), checked line by line, and
# scripts/unity_summary.py counting it. Hosted targets (doctest's reporter).
if(TATEST_DOCTEST)
  add_executable(unity_demo ${CMAKE_CURRENT_LIST_DIR}/unity_demo.cc)
  target_link_libraries(unity_demo PRIVATE tatest_runner)
  tinyattn_warnings(unity_demo)

  # Debian's python3 first (a pyenv shim on PATH is slow to start).
  find_program(TINYATTN_SCRIPT_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH DOC "Python 3 for the test scripts")
  find_program(TINYATTN_SCRIPT_PYTHON python3)
  if(TINYATTN_SCRIPT_PYTHON)
    add_test(NAME unity_transcript
             COMMAND ${TINYATTN_SCRIPT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_transcript.py
                     $<TARGET_FILE:unity_demo> ${CMAKE_CURRENT_LIST_DIR}/expected_transcript.txt
                     ${PROJECT_SOURCE_DIR}/scripts/unity_summary.py ${CMAKE_CROSSCOMPILING_EMULATOR})
    set_tests_properties(unity_transcript PROPERTIES LABELS "unity")
  else()
    message(STATUS "tinyattn: python3 not found; unity_transcript not registered")
  endif()
endif()
