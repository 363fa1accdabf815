# KvCache: decode and chunked prefill against one full causal (or
# sliding-window, or sinks-and-window) forward, fp32 on every port, fp16,
# int8 byte for byte, int8 storage against its bound; sinks, RoPE and the
# int8 storage against NumPy's decode (golden_decode.h); the
# header's and docs/core.md's decode loop compiled and run (on boards too).
tinyattn_add_suite(kv_cache
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kv_cache_test.cc ${CMAKE_CURRENT_LIST_DIR}/kv_cache_example.cc
          ${CMAKE_CURRENT_LIST_DIR}/kv_decode_test.cc
  LABELS kv_cache)
foreach(_doc "lib/include/tinyattn/kv_cache.h|// A decode loop over a KvCache:"
             "docs/core.md|A decode loop over a KvCache:"
             "docs/decode.md|A streaming decode loop:|kv_decode_test.cc")
  string(REPLACE "|" ";" _doc "${_doc}")
  list(GET _doc 0 _file)
  list(GET _doc 1 _marker)
  set(_source kv_cache_example.cc)
  list(LENGTH _doc _fields)
  if(_fields GREATER 2)
    list(GET _doc 2 _source)
  endif()
  string(MAKE_C_IDENTIFIER "${_file}" _id)
  add_test(NAME kv_cache_example_in_${_id}
           COMMAND ${CMAKE_COMMAND} -DHEADER=${PROJECT_SOURCE_DIR}/${_file} "-DMARKER=${_marker}"
                   -DSOURCE=${CMAKE_CURRENT_LIST_DIR}/${_source}
                   -P ${PROJECT_SOURCE_DIR}/tests/api/check_header_example.cmake)
  set_tests_properties(kv_cache_example_in_${_id} PROPERTIES LABELS "kv_cache;docs")
endforeach()

# docs/decode.md's KV cache RAM table, from the classes' kStorageBytes (host).
if(NOT CMAKE_CROSSCOMPILING)
  add_executable(kv_ram_table ${CMAKE_CURRENT_LIST_DIR}/kv_ram_table.cc)
  target_link_libraries(kv_ram_table PRIVATE tinyattn::tinyattn)
  tinyattn_warnings(kv_ram_table)
  add_test(NAME kv_ram_table_in_docs_decode_md COMMAND kv_ram_table ${PROJECT_SOURCE_DIR}/docs/decode.md)
  set_tests_properties(kv_ram_table_in_docs_decode_md PROPERTIES LABELS "kv_cache;docs")
endif()

# The decode golden vectors (NumPy) must be what the generator produces.
include(TinyattnPython)
tinyattn_add_generator_check(kv_cache_golden_check tests/kv_cache/gen_decode_vectors.py LABELS kv_cache)
