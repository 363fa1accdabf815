# RoPE timings (Google Benchmark, Debian libbenchmark-dev): computed against
# the table, per row of a 64-wide head; skipped when the package is missing.
find_package(benchmark QUIET)
if(benchmark_FOUND)
  add_executable(rope_bench ${CMAKE_CURRENT_LIST_DIR}/rope_bench.cc)
  target_link_libraries(rope_bench PRIVATE tinyattn::tinyattn benchmark::benchmark)
  tinyattn_warnings(rope_bench)
endif()
