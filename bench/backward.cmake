# Backward-pass timings (Google Benchmark, Debian libbenchmark-dev); skipped
# with a message when the package is missing.
find_package(benchmark QUIET)
if(benchmark_FOUND)
  add_executable(backward_bench ${CMAKE_CURRENT_LIST_DIR}/backward_bench.cc)
  target_link_libraries(backward_bench PRIVATE tinyattn::tinyattn tinyattn::contract benchmark::benchmark)
  tinyattn_warnings(backward_bench)
else()
  message(STATUS "tinyattn: Google Benchmark not found, backward_bench skipped (apt install libbenchmark-dev)")
endif()
