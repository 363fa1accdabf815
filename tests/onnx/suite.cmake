# ONNX Attention through the host tool: the committed cases of
# tests/onnx/gen_onnx_attention.py (current, --check) and every case run
# through `tinyattn run` against the operator's expected outputs. Host builds
# with the tools only, like tests/tool.
include(TinyattnPython)
if(TINYATTN_BUILD_TOOLS AND NOT TINYATTN_BAREMETAL AND NOT CMAKE_CROSSCOMPILING AND TINYATTN_NUMPY_PYTHON)
  tinyattn_add_generator_check(onnx_cases_current tests/onnx/gen_onnx_attention.py LABELS "tool;onnx")
  add_test(NAME onnx_attention_tool
           COMMAND ${TINYATTN_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/onnx_cases.py $<TARGET_FILE:tinyattn_tool>
                   ${CMAKE_CURRENT_BINARY_DIR}/onnx_cases)
  set_tests_properties(onnx_attention_tool PROPERTIES LABELS "tool;onnx")
endif()

# The same cases through the library on every target (boards included):
# tests/onnx/cases/onnx_cases.h, which the generator writes beside the .npy files.
tinyattn_add_suite(onnx_library SOURCES ${CMAKE_CURRENT_LIST_DIR}/onnx_library.cc LABELS onnx)
