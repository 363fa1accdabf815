# tests/firmware is an outside project (scripts/stages/52-firmware.sh builds
# it from an install and runs it on QEMU's mps2-an500 and RISC-V virt);
# docs/firmware.md shows its CMakeLists.txt and memory maps verbatim (the
# first ```cmake block, the first and second ```ld blocks): keep them equal.
foreach(_block "cmake;1;CMakeLists.txt;cmake" "ld;1;mps2_an500.ld;ld" "ld;2;riscv_virt.ld;ld_riscv_virt")
  list(GET _block 0 _lang)
  list(GET _block 1 _nth)
  list(GET _block 2 _file)
  list(GET _block 3 _name)
  add_test(NAME usage_example_docs_firmware_md_${_name}
           COMMAND ${CMAKE_COMMAND} -DDOC=${PROJECT_SOURCE_DIR}/docs/firmware.md -DLANG=${_lang} -DNTH=${_nth}
                   -DMAIN=${CMAKE_CURRENT_LIST_DIR}/${_file}
                   -P ${PROJECT_SOURCE_DIR}/tests/consumer/check_doc_example.cmake)
  set_tests_properties(usage_example_docs_firmware_md_${_name} PROPERTIES LABELS "docs")
endforeach()
