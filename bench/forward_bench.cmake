# forward_bench: Google Benchmark (Debian libbenchmark-dev), optional: skipped
# with a message when the package is missing.
find_package(benchmark QUIET)
if(NOT benchmark_FOUND)
  message(STATUS "tinyattn: Google Benchmark not found, forward_bench skipped (apt install libbenchmark-dev)")
  return()
endif()
find_package(Eigen3 3.4 QUIET NO_MODULE)

add_executable(forward_bench ${CMAKE_CURRENT_LIST_DIR}/forward_bench.cc)
target_link_libraries(forward_bench PRIVATE tinyattn::tinyattn tinyattn::contract benchmark::benchmark)
if(Eigen3_FOUND)
  target_link_libraries(forward_bench PRIVATE Eigen3::Eigen)
  target_compile_definitions(forward_bench PRIVATE TINYATTN_BENCH_EIGEN=1)
else()
  message(STATUS "tinyattn: Eigen 3.4 not found, forward_bench runs without the Eigen peer")
endif()
tinyattn_warnings(forward_bench)
