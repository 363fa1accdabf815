# Known-answer vectors from the committed NumPy generator, for every port and lib/ref.
tinyattn_add_suite(forward_vectors
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/vectors.cc
  LABELS vectors)

# A Python 3 with NumPy for the generators' --check mode. Debian's
# /usr/bin/python3 (python3-numpy) first: a python3 earlier on PATH may lack NumPy.
if(NOT TINYATTN_NUMPY_PYTHON)
  find_program(_tinyattn_sys_python python3 PATHS /usr/bin NO_DEFAULT_PATH)
  find_program(_tinyattn_path_python python3)
  foreach(_py IN ITEMS ${_tinyattn_sys_python} ${_tinyattn_path_python})
    execute_process(COMMAND ${_py} -c "import numpy" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(TINYATTN_NUMPY_PYTHON "${_py}" CACHE FILEPATH "Python 3 with NumPy, for the test-data generators" FORCE)
      break()
    endif()
  endforeach()
endif()
if(TINYATTN_NUMPY_PYTHON)
  add_test(NAME forward_vectors_current
           COMMAND ${TINYATTN_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/gen_vectors.py --check)
  set_tests_properties(forward_vectors_current PROPERTIES LABELS "vectors;generator")
else()
  message(STATUS "tinyattn: no python3 with NumPy found; forward_vectors_current not registered (apt install python3-numpy)")
endif()
