# fp32 / fp16 / int8 forward timings (Google Benchmark, Debian libbenchmark-dev);
# skipped with a message when the package is missing.
find_package(benchmark QUIET)
if(benchmark_FOUND)
  add_executable(quant_bench ${CMAKE_CURRENT_LIST_DIR}/quant_bench.cc)
  target_link_libraries(quant_bench PRIVATE tinyattn::tinyattn tinyattn::contract benchmark::benchmark)
  tinyattn_warnings(quant_bench)
else()
  message(STATUS "tinyattn: Google Benchmark not found, quant_bench skipped (apt install libbenchmark-dev)")
endif()
