# One extra run of the property, kernel-contract (fp32 and int8), int8 golden (native and TFLite mode) and exp suites per SIMD target compiled into
# this build: every Highway target (TINYATTN_HWY_TARGET=<T>) and every xsimd
# architecture (TINYATTN_XSIMD_ARCH=<name>). A target that is compiled but
# that this CPU cannot run (AVX3 on an AVX2 machine) is reported as Skipped by
# ctest with the reason, never dropped; the lists are global properties
# (TINYATTN_HWY_TEST_TARGETS, TINYATTN_XSIMD_TEST_ARCHS/_LABELS) so presets and
# scripts can reuse them. Hosted targets only: boards run the static target.
if(TATEST_DOCTEST)
  set(_simd_suites)
  foreach(suite properties kernels exp int8_kernels quant_int8_golden quant_tflite_golden)
    if(TARGET ${suite})
      list(APPEND _simd_suites ${suite})
    endif()
  endforeach()

  if(TARGET tinyattn_hwy_test_hook)
    target_link_libraries(tatest_runner PRIVATE tinyattn_hwy_test_hook)
    get_property(_hwy_targets GLOBAL PROPERTY TINYATTN_HWY_TEST_TARGETS)
    foreach(suite ${_simd_suites})
      foreach(t ${_hwy_targets})
        tinyattn_add_suite_run(${suite}_hwy_${t} ${suite} ENVIRONMENT TINYATTN_HWY_TARGET=${t}
                               LABELS "${suite};simd;highway")
        set_tests_properties(${suite}_hwy_${t} PROPERTIES SKIP_REGULAR_EXPRESSION "compiled but this CPU cannot run it")
      endforeach()
    endforeach()
  endif()

  if(TARGET tinyattn_xsimd_test_hook)
    target_link_libraries(tatest_runner PRIVATE tinyattn_xsimd_test_hook)
    get_property(_xs_archs GLOBAL PROPERTY TINYATTN_XSIMD_TEST_ARCHS)
    get_property(_xs_labels GLOBAL PROPERTY TINYATTN_XSIMD_TEST_LABELS)
    foreach(suite ${_simd_suites})
      foreach(arch label IN ZIP_LISTS _xs_archs _xs_labels)
        tinyattn_add_suite_run(${suite}_xsimd_${arch} ${suite} ENVIRONMENT TINYATTN_XSIMD_ARCH=${label}
                               LABELS "${suite};simd;xsimd")
        set_tests_properties(${suite}_xsimd_${arch} PROPERTIES SKIP_REGULAR_EXPRESSION "this CPU cannot run it")
      endforeach()
    endforeach()
  endif()
endif()
