# Fuzz targets (tests/fuzz/<name>_fuzz.cc, each an LLVMFuzzerTestOneInput):
#  * every hosted build: <name>_fuzz_replay runs the committed corpus
#    (corpus/<name>/) and the regression inputs (regressions/<name>/, one file
#    per crash ever found) under ctest, with any compiler;
#  * TINYATTN_FUZZ=ON (clang): <name>_fuzz, the libFuzzer binary that
#    scripts/stages/65-fuzz.sh runs for a bounded time.
if(NOT TINYATTN_BAREMETAL)
  set(_fuzz_dir ${CMAKE_CURRENT_LIST_DIR})
  # name -> libraries; a target joins once the code it fuzzes is in the tree.
  set(_fuzz_names forward)
  set(_fuzz_libs_forward tinyattn::tinyattn tinyattn::reference)
  if(EXISTS ${PROJECT_SOURCE_DIR}/lib/include/tinyattn/backward.h)
    list(APPEND _fuzz_names backward)
    set(_fuzz_libs_backward tinyattn::tinyattn tinyattn::reference)
  endif()
  if(EXISTS ${PROJECT_SOURCE_DIR}/lib/include/tinyattn/quant.h)  # int8 quantization parameters
    list(APPEND _fuzz_names quant)
    set(_fuzz_libs_quant tinyattn::tinyattn tinyattn::reference)
  endif()
  # Every port, both algorithms and both float dtypes against each other and
  # the non-finite contract (float_paths in the test support runs them).
  if(EXISTS ${PROJECT_SOURCE_DIR}/lib/include/tinyattn/forward_f16.h)
    list(APPEND _fuzz_names differential)
    set(_fuzz_libs_differential tinyattn::tinyattn tinyattn::reference tatest_common)
  endif()
  # The host tool's .npy reader (tools/tool/npy.cc, in tinyattn_demo, defined
  # after tests/ is added: the name resolves at generate time).
  if(EXISTS ${_fuzz_dir}/npy_fuzz.cc AND EXISTS ${PROJECT_SOURCE_DIR}/tools/tool/npy.cc
     AND TINYATTN_BUILD_TOOLS AND NOT CMAKE_CROSSCOMPILING)
    list(APPEND _fuzz_names npy)
    set(_fuzz_libs_npy tinyattn_demo)
  endif()
  foreach(name ${_fuzz_names})
    set(_inputs ${_fuzz_dir}/corpus/${name})
    if(EXISTS ${_fuzz_dir}/regressions/${name})
      list(APPEND _inputs ${_fuzz_dir}/regressions/${name})
    endif()
    add_executable(${name}_fuzz_replay ${_fuzz_dir}/${name}_fuzz.cc ${_fuzz_dir}/replay_main.cc)
    target_link_libraries(${name}_fuzz_replay PRIVATE ${_fuzz_libs_${name}})
    tinyattn_warnings(${name}_fuzz_replay)
    add_test(NAME fuzz_replay_${name} COMMAND ${name}_fuzz_replay ${_inputs})
    set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS "fuzz")
    if(TINYATTN_FUZZ)
      add_executable(${name}_fuzz ${_fuzz_dir}/${name}_fuzz.cc)
      target_link_libraries(${name}_fuzz PRIVATE ${_fuzz_libs_${name}})
      target_link_options(${name}_fuzz PRIVATE -fsanitize=fuzzer)
      tinyattn_warnings(${name}_fuzz)
    endif()
  endforeach()
endif()
