# tests/firmware is an outside project (scripts/stages/52-firmware.sh builds
# it from an install and runs it on QEMU's mps2-an500); docs/firmware.md
# shows its CMakeLists.txt and memory map verbatim: keep them equal.
foreach(_block "cmake;CMakeLists.txt" "ld;mps2_an500.ld")
  list(GET _block 0 _lang)
  list(GET _block 1 _file)
  add_test(NAME usage_example_docs_firmware_md_${_lang}
           COMMAND ${CMAKE_COMMAND} -DDOC=${PROJECT_SOURCE_DIR}/docs/firmware.md -DLANG=${_lang}
                   -DMAIN=${CMAKE_CURRENT_LIST_DIR}/${_file}
                   -P ${PROJECT_SOURCE_DIR}/tests/consumer/check_doc_example.cmake)
  set_tests_properties(usage_example_docs_firmware_md_${_lang} PROPERTIES LABELS "docs")
endforeach()
