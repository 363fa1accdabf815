# The C API (tinyattn/tinyattn_c.h) from C: a C99 program, built with
# -std=c99 -pedantic -Werror, calls every function and checks it against the
# reference and the C++ API (a small C++ helper links them). Hosted targets
# only (cross ones run under their emulator): its helper uses the heap and
# stdio. The KV cache's C test below needs neither and runs on the boards too.
set(_capi_c_flags -std=c99 -pedantic -Wall -Wextra -Werror)
if(NOT TINYATTN_BAREMETAL)
  add_executable(capi_test ${CMAKE_CURRENT_LIST_DIR}/capi_test.c ${CMAKE_CURRENT_LIST_DIR}/capi_cxx.cc)
  set_target_properties(capi_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_compile_options(capi_test PRIVATE $<$<COMPILE_LANGUAGE:C>:${_capi_c_flags}>)
  target_link_libraries(capi_test PRIVATE tinyattn::tinyattn tinyattn::reference m)
  tinyattn_warnings(capi_test)
  add_test(NAME capi COMMAND capi_test)
  set_tests_properties(capi PROPERTIES LABELS "api;capi" FAIL_REGULAR_EXPRESSION "[0-9]+ Tests [1-9][0-9]* Failures")

  # The usage example of docs/c_api.md, verbatim, built as C and run.
  add_executable(capi_example ${CMAKE_CURRENT_LIST_DIR}/example.c)
  set_target_properties(capi_example PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
                                                LINKER_LANGUAGE CXX)
  target_compile_options(capi_example PRIVATE ${_capi_c_flags})
  target_link_libraries(capi_example PRIVATE tinyattn::tinyattn)
  add_test(NAME capi_example COMMAND capi_example)
  set_tests_properties(capi_example PROPERTIES LABELS "api;capi")

  # docs/c_api.md's KV cache example, verbatim, the same way.
  add_executable(capi_kv_cache_example ${CMAKE_CURRENT_LIST_DIR}/kv_cache_example.c)
  set_target_properties(capi_kv_cache_example PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
                                                         LINKER_LANGUAGE CXX)
  target_compile_options(capi_kv_cache_example PRIVATE ${_capi_c_flags})
  target_link_libraries(capi_kv_cache_example PRIVATE tinyattn::tinyattn)
  add_test(NAME capi_kv_cache_example COMMAND capi_kv_cache_example)
  set_tests_properties(capi_kv_cache_example PROPERTIES LABELS "api;capi;kv_cache")
endif()

# The KV cache from C (tinyattn_kv_cache_*) in lock step with the C++
# KvCache, bit for bit, and its statuses: on every target, the boards
# included (an image of its own: the board runtime's output and exit, no
# heap, no stdio).
add_executable(capi_kv_test ${CMAKE_CURRENT_LIST_DIR}/capi_kv_test.c ${CMAKE_CURRENT_LIST_DIR}/capi_kv_cxx.cc)
set_target_properties(capi_kv_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(capi_kv_test PRIVATE $<$<COMPILE_LANGUAGE:C>:${_capi_c_flags}>
                                            $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
target_link_libraries(capi_kv_test PRIVATE tinyattn::tinyattn)
tinyattn_warnings(capi_kv_test)
if(TINYATTN_BAREMETAL)
  target_compile_definitions(capi_kv_test PRIVATE CAPI_KV_BOARD=1)
  tinyattn_board_executable(capi_kv_test)
endif()
add_test(NAME capi_kv COMMAND capi_kv_test)
set_tests_properties(capi_kv PROPERTIES LABELS "api;capi;kv_cache" FAIL_REGULAR_EXPRESSION "[0-9]+ Tests [1-9][0-9]* Failures")

# int8 from C in both modes (tinyattn_int8_scheme::mode) against the C++
# plan_int8 and forward_i8 on every compiled port: on every target, the
# boards included, like the KV cache's test.
add_executable(capi_int8_test ${CMAKE_CURRENT_LIST_DIR}/capi_int8_test.c ${CMAKE_CURRENT_LIST_DIR}/capi_int8_cxx.cc)
set_target_properties(capi_int8_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(capi_int8_test PRIVATE $<$<COMPILE_LANGUAGE:C>:${_capi_c_flags}>
                                              $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
target_link_libraries(capi_int8_test PRIVATE tinyattn::tinyattn)
tinyattn_warnings(capi_int8_test)
if(TINYATTN_BAREMETAL)
  target_compile_definitions(capi_int8_test PRIVATE CAPI_INT8_BOARD=1)
  tinyattn_board_executable(capi_int8_test)
endif()
add_test(NAME capi_int8 COMMAND capi_int8_test)
set_tests_properties(capi_int8 PROPERTIES LABELS "api;capi;quant"
                     FAIL_REGULAR_EXPRESSION "[0-9]+ Tests [1-9][0-9]* Failures")

# int16 from C against the C++ plan_int16 and forward_i16 on every compiled
# port, its statuses, its workspace macro and its self-test's C wrapper: on
# every target, the boards included.
add_executable(capi_int16_test ${CMAKE_CURRENT_LIST_DIR}/capi_int16_test.c ${CMAKE_CURRENT_LIST_DIR}/capi_int16_cxx.cc)
set_target_properties(capi_int16_test PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(capi_int16_test PRIVATE $<$<COMPILE_LANGUAGE:C>:${_capi_c_flags}>
                                               $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
target_link_libraries(capi_int16_test PRIVATE tinyattn::tinyattn)
tinyattn_warnings(capi_int16_test)
if(TINYATTN_BAREMETAL)
  target_compile_definitions(capi_int16_test PRIVATE CAPI_INT16_BOARD=1)
  tinyattn_board_executable(capi_int16_test)
endif()
add_test(NAME capi_int16 COMMAND capi_int16_test)
set_tests_properties(capi_int16 PROPERTIES LABELS "api;capi;quant"
                     FAIL_REGULAR_EXPRESSION "[0-9]+ Tests [1-9][0-9]* Failures")

add_test(NAME usage_example_docs_c_api_md
         COMMAND ${CMAKE_COMMAND} -DDOC=${PROJECT_SOURCE_DIR}/docs/c_api.md -DLANG=c
                 -DMAIN=${CMAKE_CURRENT_LIST_DIR}/example.c
                 -P ${PROJECT_SOURCE_DIR}/tests/consumer/check_doc_example.cmake)
set_tests_properties(usage_example_docs_c_api_md PROPERTIES LABELS "capi;docs")
add_test(NAME usage_example_docs_c_api_md_kv_cache
         COMMAND ${CMAKE_COMMAND} -DDOC=${PROJECT_SOURCE_DIR}/docs/c_api.md -DLANG=c -DNTH=2
                 -DMAIN=${CMAKE_CURRENT_LIST_DIR}/kv_cache_example.c
                 -P ${PROJECT_SOURCE_DIR}/tests/consumer/check_doc_example.cmake)
set_tests_properties(usage_example_docs_c_api_md_kv_cache PROPERTIES LABELS "capi;docs;kv_cache")

# The header alone, as C99 and as C++17, with every warning an error.
set(_capi_header ${PROJECT_SOURCE_DIR}/lib/include/tinyattn/tinyattn_c.h)
add_test(NAME capi_header_c99
         COMMAND ${CMAKE_C_COMPILER} ${TINYATTN_CHECK_C_FLAGS} -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -x c ${_capi_header})
add_test(NAME capi_header_cxx17
         COMMAND ${CMAKE_CXX_COMPILER} ${TINYATTN_CHECK_CXX_FLAGS} -std=c++17 -pedantic -Wall -Wextra -Werror -fsyntax-only -x c++ ${_capi_header})
set_tests_properties(capi_header_c99 capi_header_cxx17 PROPERTIES LABELS "capi;compile")
