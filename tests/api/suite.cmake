# The public API: Attention<Shape<...>>, workspace sizes, status names.
tinyattn_add_suite(api
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/api.cc ${CMAKE_CURRENT_LIST_DIR}/backward_example.cc
          ${CMAKE_CURRENT_LIST_DIR}/umbrella.cc
  LABELS api)

# Every public header compiles on its own (twice in one translation unit: its
# include guard), with only lib/include on the include path, so none leans on
# an include of its users or on the port contract. The list is the directory,
# so a new header is tested without editing this file.
file(GLOB _tinyattn_public_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/lib/include/tinyattn/*.h)
foreach(_header IN LISTS _tinyattn_public_headers)
  get_filename_component(_name "${_header}" NAME_WE)
  set(_tu ${CMAKE_CURRENT_BINARY_DIR}/header_alone/${_name}.cc)
  file(CONFIGURE OUTPUT ${_tu} CONTENT "#include \"tinyattn/${_name}.h\"\n#include \"tinyattn/${_name}.h\"\n")
  add_test(NAME api_header_alone_${_name}
           COMMAND ${CMAKE_CXX_COMPILER} ${TINYATTN_CHECK_CXX_FLAGS} -std=c++17 -fsyntax-only -Wall -Wextra -Wshadow
                   -Wconversion -Werror -I${PROJECT_SOURCE_DIR}/lib/include ${_tu})
  set_tests_properties(api_header_alone_${_name} PROPERTIES LABELS "api;compile")
endforeach()

# The standard library's part that tinyattn uses means what the code relies
# on: against the real library on hosted targets and the Cortex-M boards, and
# against lib/freestanding/include where the toolchain has none (RISC-V).
add_test(NAME api_freestanding_subset
         COMMAND ${CMAKE_CXX_COMPILER} ${TINYATTN_CHECK_CXX_FLAGS} -std=c++17 -fsyntax-only -Wall -Wextra -Wshadow
                 -Wconversion -Werror ${CMAKE_CURRENT_LIST_DIR}/freestanding.cc)
set_tests_properties(api_freestanding_subset PROPERTIES LABELS "api;compile")

# The umbrella header includes every public header, and public headers use no
# <cmath> and no compiler builtins; backward.h's example is the code
# backward_example.cc runs.
add_test(NAME api_public_headers
         COMMAND ${CMAKE_COMMAND} -DDIR=${PROJECT_SOURCE_DIR}/lib/include/tinyattn
                 -P ${CMAKE_CURRENT_LIST_DIR}/check_public_headers.cmake)
add_test(NAME api_backward_example
         COMMAND ${CMAKE_COMMAND} -DHEADER=${PROJECT_SOURCE_DIR}/lib/include/tinyattn/backward.h
                 -DSOURCE=${CMAKE_CURRENT_LIST_DIR}/backward_example.cc
                 -P ${CMAKE_CURRENT_LIST_DIR}/check_header_example.cmake)
set_tests_properties(api_public_headers api_backward_example PROPERTIES LABELS "api;docs")

# Invalid compile-time shapes must fail static_assert with a readable message.
# Each test compiles tests/api/compile_fail.cc (syntax only) with one case
# selected; PASS_REGULAR_EXPRESSION needs the message, which the compiler only
# prints when the assertion fires. The valid control must compile cleanly.
set(_tinyattn_shape_cases
  "1|Hq must be a multiple of Hkv"
  "2|N \\(query rows\\) must be in \\[1, kMaxDim\\]"
  "3|Dk must be in \\[1, kMaxDim\\]")
set(_tinyattn_shape_compile ${CMAKE_CXX_COMPILER} ${TINYATTN_CHECK_CXX_FLAGS} -std=c++17 -fsyntax-only
    -I${PROJECT_SOURCE_DIR}/lib/include ${CMAKE_CURRENT_LIST_DIR}/compile_fail.cc)
foreach(_case IN LISTS _tinyattn_shape_cases)
  string(REPLACE "|" ";" _parts "${_case}")
  list(GET _parts 0 _n)
  list(GET _parts 1 _msg)
  add_test(NAME api_shape_rejected_${_n} COMMAND ${_tinyattn_shape_compile} -DTINYATTN_CASE=${_n})
  set_tests_properties(api_shape_rejected_${_n} PROPERTIES LABELS "api;compile"
                       PASS_REGULAR_EXPRESSION "static.assert.*tinyattn::Shape: ${_msg}")
endforeach()
add_test(NAME api_shape_valid_compiles COMMAND ${_tinyattn_shape_compile} -DTINYATTN_CASE=0)
set_tests_properties(api_shape_valid_compiles PROPERTIES LABELS "api;compile")
