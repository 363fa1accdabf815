# models_bench: the attention of tiny transformers' layers (prefill and
# decode per model) on one pinned core, with bench/peers' timing helpers.
# bench/run.sh builds it in the peers bench's tree (bench/peers/CMakeLists.txt
# includes this file there); a build with TINYATTN_BUILD_BENCH builds it too.
if(TARGET models_bench OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")  # sched_setaffinity
  return()
endif()
add_executable(models_bench ${CMAKE_CURRENT_LIST_DIR}/models_bench.cc ${CMAKE_CURRENT_LIST_DIR}/peers/timing.cc)
target_include_directories(models_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(models_bench PRIVATE tinyattn::tinyattn)
tinyattn_warnings(models_bench)
