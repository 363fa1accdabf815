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
    # Each input forces one Highway target and one xsimd architecture (the
    # test hooks), so the corpus reaches every SIMD target this CPU runs.
    if(TARGET tinyattn_hwy_test_hook)
      list(APPEND _fuzz_libs_differential tinyattn_hwy_test_hook)
      get_property(_fuzz_hwy_targets GLOBAL PROPERTY TINYATTN_HWY_TEST_TARGETS)
      list(JOIN _fuzz_hwy_targets "," _fuzz_hwy_targets)
      list(APPEND _fuzz_defs_differential "TATEST_HWY_TARGETS=\"${_fuzz_hwy_targets}\"")
    endif()
    if(TARGET tinyattn_xsimd_test_hook)
      list(APPEND _fuzz_libs_differential tinyattn_xsimd_test_hook)
      get_property(_fuzz_xsimd_archs GLOBAL PROPERTY TINYATTN_XSIMD_TEST_LABELS)
      list(JOIN _fuzz_xsimd_archs "," _fuzz_xsimd_archs)
      list(APPEND _fuzz_defs_differential "TATEST_XSIMD_ARCHS=\"${_fuzz_xsimd_archs}\"")
    endif()
  endif()
  # The host tool's .npy reader (tools/tool/npy.cc, in tinyattn_demo, defined
  # after tests/ is added: the name resolves at generate time).
  if(EXISTS ${_fuzz_dir}/npy_fuzz.cc AND EXISTS ${PROJECT_SOURCE_DIR}/tools/tool/npy.cc
     AND TINYATTN_BUILD_TOOLS AND NOT CMAKE_CROSSCOMPILING)
    list(APPEND _fuzz_names npy)
    set(_fuzz_libs_npy tinyattn_demo)
  endif()
  # The host tool's whole command line (tinyattn_tool::tool_main, also in
  # tinyattn_demo): options, values, input files and output paths.
  if(EXISTS ${_fuzz_dir}/tool_fuzz.cc AND EXISTS ${PROJECT_SOURCE_DIR}/tools/tool/tool.cc
     AND TINYATTN_BUILD_TOOLS AND NOT CMAKE_CROSSCOMPILING)
    list(APPEND _fuzz_names tool)
    set(_fuzz_libs_tool tinyattn_demo)
  endif()
  # The C API (tinyattn_c.h) with arbitrary struct fields, against the C++
  # API and the reference; KvCache sequences against one causal forward.
  foreach(name capi kv_cache)
    if(EXISTS ${_fuzz_dir}/${name}_fuzz.cc)
      list(APPEND _fuzz_names ${name})
      set(_fuzz_libs_${name} tinyattn::tinyattn tinyattn::reference)
    endif()
  endforeach()
  foreach(name ${_fuzz_names})
    set(_inputs ${_fuzz_dir}/corpus/${name})
    if(EXISTS ${_fuzz_dir}/regressions/${name})
      list(APPEND _inputs ${_fuzz_dir}/regressions/${name})
    endif()
    add_executable(${name}_fuzz_replay ${_fuzz_dir}/${name}_fuzz.cc ${_fuzz_dir}/replay_main.cc)
    target_link_libraries(${name}_fuzz_replay PRIVATE ${_fuzz_libs_${name}})
    target_compile_definitions(${name}_fuzz_replay PRIVATE ${_fuzz_defs_${name}})
    tinyattn_warnings(${name}_fuzz_replay)
    add_test(NAME fuzz_replay_${name} COMMAND ${name}_fuzz_replay ${_inputs})
    set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS "fuzz")
    if(TINYATTN_FUZZ)
      add_executable(${name}_fuzz ${_fuzz_dir}/${name}_fuzz.cc)
      target_link_libraries(${name}_fuzz PRIVATE ${_fuzz_libs_${name}})
      target_compile_definitions(${name}_fuzz PRIVATE ${_fuzz_defs_${name}})
      target_link_options(${name}_fuzz PRIVATE -fsanitize=fuzzer)
      tinyattn_warnings(${name}_fuzz)
    endif()
  endforeach()
endif()
