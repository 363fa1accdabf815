# port_ratio: fp32 forward GFLOP/s per port and the ratio to the scalar port
# (plain executable, no benchmark library, so every hosted preset builds it;
# bench/run.sh runs the Arm builds under qemu-user). Not a test: it times.
add_executable(port_ratio ${CMAKE_CURRENT_LIST_DIR}/port_ratio.cc)
target_link_libraries(port_ratio PRIVATE tinyattn::tinyattn tinyattn::contract)
tinyattn_warnings(port_ratio)
