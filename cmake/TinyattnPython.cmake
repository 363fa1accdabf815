# A Python 3 with NumPy (TINYATTN_NUMPY_PYTHON, the same cache variable
# tests/vectors uses), for the committed generators' --check tests and the
# tool tests. Debian's /usr/bin/python3 first: a python3 earlier on PATH may
# lack NumPy. Without one, those tests are not registered.
include_guard(GLOBAL)

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

# tinyattn_add_generator_check(<test name> <generator, relative to the source root> [LABELS ...])
function(tinyattn_add_generator_check name script)
  cmake_parse_arguments(G "" "" "LABELS" ${ARGN})
  if(NOT TINYATTN_NUMPY_PYTHON)
    message(STATUS "tinyattn: no python3 with NumPy found; ${name} not registered (apt install python3-numpy)")
    return()
  endif()
  add_test(NAME ${name} COMMAND ${TINYATTN_NUMPY_PYTHON} ${PROJECT_SOURCE_DIR}/${script} --check)
  set_tests_properties(${name} PROPERTIES LABELS "generator;${G_LABELS}")
endfunction()
