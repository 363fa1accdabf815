# Re-entrancy: forward() from several threads at once (hosted targets only;
# scripts/stages/55-sanitizers.sh also runs it under ThreadSanitizer).
if(NOT TINYATTN_BAREMETAL)
  find_package(Threads REQUIRED)
  tinyattn_add_suite(threads
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/threads_test.cc
    LABELS threads)
  target_link_libraries(threads PRIVATE Threads::Threads)
endif()
