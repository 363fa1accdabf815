# The host demo (tools/demo): the seed notebook's numbers, reproduced with
# tinyattn and NumPy's legacy RandomState, against tools/gen/demo_expected.py.
# Host only: it uses the heap and the C library's printf.
include(TinyattnPython)
if(NOT TINYATTN_BAREMETAL)
  tinyattn_add_suite(demo_suite
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/demo_test.cc
            ${PROJECT_SOURCE_DIR}/tools/demo/random_state.cc
            ${PROJECT_SOURCE_DIR}/tools/demo/notebook.cc
            ${PROJECT_SOURCE_DIR}/tools/demo/heatmap.cc
    LABELS demo)
  target_include_directories(demo_suite PRIVATE ${PROJECT_SOURCE_DIR}/tools)
  tinyattn_add_generator_check(demo_expected_check tools/gen/demo_expected.py LABELS demo)
endif()
