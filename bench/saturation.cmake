# The seed notebook's softmax saturation study (plain executable, no
# benchmark library). Its ctest entry checks the printed table's columns and
# the study's result: scaled p(1-p) stays roughly constant across dk while the
# unscaled one falls.
add_executable(saturation ${CMAKE_CURRENT_LIST_DIR}/saturation.cc)
target_link_libraries(saturation PRIVATE tinyattn::tinyattn tinyattn::contract)
tinyattn_warnings(saturation)

if(TINYATTN_BUILD_TESTS)
  add_test(NAME saturation_study
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:saturation>
                   "-DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/check_saturation.cmake)
  set_tests_properties(saturation_study PROPERTIES LABELS "bench;backward")
endif()
