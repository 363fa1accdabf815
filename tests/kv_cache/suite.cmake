# KvCache: decode and chunked prefill against one full causal (or
# sliding-window) forward, fp32 on every port, fp16, int8 byte for byte; the
# header's and docs/core.md's decode loop compiled and run (on boards too).
tinyattn_add_suite(kv_cache
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kv_cache_test.cc ${CMAKE_CURRENT_LIST_DIR}/kv_cache_example.cc
  LABELS kv_cache)
foreach(_doc "lib/include/tinyattn/kv_cache.h|// A decode loop over a KvCache:"
             "docs/core.md|A decode loop over a KvCache:")
  string(REPLACE "|" ";" _doc "${_doc}")
  list(GET _doc 0 _file)
  list(GET _doc 1 _marker)
  string(MAKE_C_IDENTIFIER "${_file}" _id)
  add_test(NAME kv_cache_example_in_${_id}
           COMMAND ${CMAKE_COMMAND} -DHEADER=${PROJECT_SOURCE_DIR}/${_file} "-DMARKER=${_marker}"
                   -DSOURCE=${CMAKE_CURRENT_LIST_DIR}/kv_cache_example.cc
                   -P ${PROJECT_SOURCE_DIR}/tests/api/check_header_example.cmake)
  set_tests_properties(kv_cache_example_in_${_id} PROPERTIES LABELS "kv_cache;docs")
endforeach()
