# The host tool (tools/): `tinyattn run` and `decode` against a NumPy reference on
# generated cases, clean one-line errors on malformed .npy files and bad
# arguments, and the selftest / demo commands. Host builds with the tools only.
include(TinyattnPython)
if(TINYATTN_BUILD_TOOLS AND NOT TINYATTN_BAREMETAL AND NOT CMAKE_CROSSCOMPILING)
  if(TINYATTN_NUMPY_PYTHON)
    foreach(mode run decode malformed)
      add_test(NAME tool_${mode}
               COMMAND ${TINYATTN_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/tool_cases.py $<TARGET_FILE:tinyattn_tool>
                       ${CMAKE_CURRENT_BINARY_DIR}/tool_cases ${mode})
      set_tests_properties(tool_${mode} PROPERTIES LABELS "tool")
    endforeach()
  endif()
  # `tinyattn plan` prints an offline int8 plan as a C initializer: compiled
  # into a C99 program that compares it with tinyattn_plan_int8 (and the C++
  # form compiled as C++17); the int16 one with tinyattn_plan_int16.
  # The same scheme in the TFLite mode (with the score tensor's s=) too, and
  # int16 plans (--dtype i16, symmetric scales) in both modes.
  set(_plan_args plan --dk 16 --heads 2,1 --qparams "q=0.05:3/0.06,k=0.04,v=0.02,y=0.03:-1" --name offline_plan)
  set(_plan_tflite_args plan --dk 16 --heads 2,1 --qparams "q=0.05:3/0.06,k=0.04,v=0.02,y=0.03:-1,s=0.3:9/0.25"
                        --int8-mode tflite --name offline_plan_tflite)
  set(_plan_i16_args plan --dtype i16 --dk 16 --heads 2,1 --qparams "q=6e-5/8e-5,k=7e-5,v=1.2e-4,y=1.5e-4"
                     --name offline_plan_i16)
  set(_plan_i16_tflite_args plan --dtype i16 --dk 16 --heads 2,1
                            --qparams "q=6e-5/8e-5,k=7e-5,v=1.2e-4,y=1.5e-4,s=1.5e-3/2e-3" --int16-mode tflite
                            --name offline_plan_i16_tflite)
  set(_plan_dir ${CMAKE_CURRENT_BINARY_DIR}/plan_offline)
  add_custom_command(OUTPUT ${_plan_dir}/plan_offline.h ${_plan_dir}/plan_offline_cpp.h
                     ${_plan_dir}/plan_offline_tflite.h ${_plan_dir}/plan_offline_tflite_cpp.h
                     ${_plan_dir}/plan_offline_i16.h ${_plan_dir}/plan_offline_i16_cpp.h
                     ${_plan_dir}/plan_offline_i16_tflite.h ${_plan_dir}/plan_offline_i16_tflite_cpp.h
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${_plan_dir}
                     COMMAND tinyattn_tool ${_plan_args} --out ${_plan_dir}/plan_offline.h
                     COMMAND tinyattn_tool ${_plan_args} --lang cpp --out ${_plan_dir}/plan_offline_cpp.h
                     COMMAND tinyattn_tool ${_plan_tflite_args} --out ${_plan_dir}/plan_offline_tflite.h
                     COMMAND tinyattn_tool ${_plan_tflite_args} --lang cpp --out ${_plan_dir}/plan_offline_tflite_cpp.h
                     COMMAND tinyattn_tool ${_plan_i16_args} --out ${_plan_dir}/plan_offline_i16.h
                     COMMAND tinyattn_tool ${_plan_i16_args} --lang cpp --out ${_plan_dir}/plan_offline_i16_cpp.h
                     COMMAND tinyattn_tool ${_plan_i16_tflite_args} --out ${_plan_dir}/plan_offline_i16_tflite.h
                     COMMAND tinyattn_tool ${_plan_i16_tflite_args} --lang cpp
                             --out ${_plan_dir}/plan_offline_i16_tflite_cpp.h
                     DEPENDS tinyattn_tool VERBATIM)
  add_executable(tool_plan_offline ${CMAKE_CURRENT_LIST_DIR}/plan_offline_test.c ${_plan_dir}/plan_offline.h
                                   ${_plan_dir}/plan_offline_tflite.h ${_plan_dir}/plan_offline_i16.h
                                   ${_plan_dir}/plan_offline_i16_tflite.h)
  set_target_properties(tool_plan_offline PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF LINKER_LANGUAGE CXX)
  target_compile_options(tool_plan_offline PRIVATE -pedantic -Wall -Wextra -Werror)
  target_include_directories(tool_plan_offline PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/plan_offline)
  target_link_libraries(tool_plan_offline PRIVATE tinyattn::tinyattn)
  add_test(NAME tool_plan_offline COMMAND tool_plan_offline)
  add_test(NAME tool_plan_offline_cpp
           COMMAND ${CMAKE_CXX_COMPILER} -std=c++17 -pedantic -Wall -Wextra -Werror -fsyntax-only
                   -I${PROJECT_SOURCE_DIR}/lib/include -x c++ ${_plan_dir}/plan_offline_cpp.h)
  add_test(NAME tool_plan_offline_tflite_cpp
           COMMAND ${CMAKE_CXX_COMPILER} -std=c++17 -pedantic -Wall -Wextra -Werror -fsyntax-only
                   -I${PROJECT_SOURCE_DIR}/lib/include -x c++ ${_plan_dir}/plan_offline_tflite_cpp.h)
  foreach(_cpp i16 i16_tflite)
    add_test(NAME tool_plan_offline_${_cpp}_cpp
             COMMAND ${CMAKE_CXX_COMPILER} -std=c++17 -pedantic -Wall -Wextra -Werror -fsyntax-only
                     -I${PROJECT_SOURCE_DIR}/lib/include -x c++ ${_plan_dir}/plan_offline_${_cpp}_cpp.h)
  endforeach()
  set_tests_properties(tool_plan_offline tool_plan_offline_cpp tool_plan_offline_tflite_cpp tool_plan_offline_i16_cpp
                       tool_plan_offline_i16_tflite_cpp PROPERTIES LABELS "tool;quant")
  # `tinyattn explain` names each route of the call plan's table
  # (tests/kernels/plan_table.cc) for a shape that takes it.
  get_property(_ports_built GLOBAL PROPERTY TINYATTN_PORTS_BUILT)
  set(_explain_cases
      "fused_blocks|--dims 16,16,26|fused-blocks|highway"
      "fixed_extent|--dims 8,8,16|fixed-extent|highway"
      "blocks|--dims 16,16,32 --weights|blocks|scalar"
      "tiled_blocks|--dims 8,600,32|tiled-blocks|scalar"
      "rows|--dims 1,64,16 --weights|rows|scalar"
      "tiled_rows|--dims 1,300,64|tiled-rows|scalar")
  foreach(_case IN LISTS _explain_cases)
    string(REPLACE "|" ";" _case "${_case}")
    list(GET _case 0 _name)
    list(GET _case 1 _args)
    list(GET _case 2 _route)
    list(GET _case 3 _port)
    if(_port IN_LIST _ports_built)
      separate_arguments(_args UNIX_COMMAND "${_args}")
      add_test(NAME tool_explain_${_name} COMMAND tinyattn_tool explain ${_args} --port ${_port})
      set_tests_properties(tool_explain_${_name} PROPERTIES LABELS "tool" PASS_REGULAR_EXPRESSION "route: ${_route}\n")
    endif()
  endforeach()
  add_test(NAME tool_selftest COMMAND tinyattn_tool selftest --format both)
  set_tests_properties(tool_selftest PROPERTIES LABELS "tool;selftest"
                       PASS_REGULAR_EXPRESSION "[0-9]+ Tests 0 Failures 0 Ignored"
                       FAIL_REGULAR_EXPRESSION "FAIL")
  add_test(NAME tool_selftest_doc_count
           COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:tinyattn_tool> -DROOT=${PROJECT_SOURCE_DIR}
                   -P ${CMAKE_CURRENT_LIST_DIR}/check_selftest_doc_count.cmake)
  set_tests_properties(tool_selftest_doc_count PROPERTIES LABELS "tool;selftest;docs")
  add_test(NAME tool_demo COMMAND tinyattn_tool demo --no-color --svg ${CMAKE_CURRENT_BINARY_DIR}/attention_map.svg)
  set_tests_properties(tool_demo PROPERTIES LABELS "tool;demo"
                       PASS_REGULAR_EXPRESSION "written to .*Within Convex Hull.*Severe Softmax Saturation.*0\\.7136")
endif()
