# The host tool (tools/): `tinyattn run` against a NumPy reference on
# generated cases, clean one-line errors on malformed .npy files and bad
# arguments, and the selftest / demo commands. Host builds with the tools only.
include(TinyattnPython)
if(TINYATTN_BUILD_TOOLS AND NOT TINYATTN_BAREMETAL AND NOT CMAKE_CROSSCOMPILING)
  if(TINYATTN_NUMPY_PYTHON)
    foreach(mode run malformed)
      add_test(NAME tool_${mode}
               COMMAND ${TINYATTN_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/tool_cases.py $<TARGET_FILE:tinyattn_tool>
                       ${CMAKE_CURRENT_BINARY_DIR}/tool_cases ${mode})
      set_tests_properties(tool_${mode} PROPERTIES LABELS "tool")
    endforeach()
  endif()
  add_test(NAME tool_selftest COMMAND tinyattn_tool selftest --format both)
  set_tests_properties(tool_selftest PROPERTIES LABELS "tool;selftest"
                       PASS_REGULAR_EXPRESSION "[0-9]+ Tests 0 Failures 0 Ignored"
                       FAIL_REGULAR_EXPRESSION "FAIL")
  add_test(NAME tool_demo COMMAND tinyattn_tool demo --no-color --svg ${CMAKE_CURRENT_BINARY_DIR}/attention_map.svg)
  set_tests_properties(tool_demo PROPERTIES LABELS "tool;demo"
                       PASS_REGULAR_EXPRESSION "written to .*Within Convex Hull.*Severe Softmax Saturation.*0\\.7136")
endif()
