# Rotary position embedding (tinyattn/rope.h): Hugging Face's formula in
# float64 (golden_rope.h), the exact rotation, the table's bits, the
# rotation's properties and argument checks, on every target.
tinyattn_add_suite(rope
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rope_test.cc
  LABELS rope)

# The committed golden vectors must be what the generator produces.
if(NOT TINYATTN_BAREMETAL AND NOT CMAKE_CROSSCOMPILING)
  find_program(TINYATTN_NUMPY_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(TINYATTN_NUMPY_PYTHON)
    execute_process(COMMAND ${TINYATTN_NUMPY_PYTHON} -c "import numpy"
                    RESULT_VARIABLE _tinyattn_numpy_missing OUTPUT_QUIET ERROR_QUIET)
    if(_tinyattn_numpy_missing EQUAL 0)
      add_test(NAME rope_golden_check
               COMMAND ${TINYATTN_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/gen_rope_vectors.py --check)
      set_tests_properties(rope_golden_check PROPERTIES LABELS rope)
    endif()
  endif()
endif()
