# find_package(tinyattn) from an install prefix, and add_subdirectory of the
# source tree, each proven by building and running tests/consumer. Native
# builds only (the consumer runs on the build machine).
if(NOT CMAKE_CROSSCOMPILING AND NOT TINYATTN_BAREMETAL AND TINYATTN_INSTALL)
  set(_consumer_flags "")
  if(TINYATTN_SANITIZE)  # the installed library is instrumented: so must the consumer be
    set(_consumer_flags "-fsanitize=address,undefined")
  endif()
  foreach(_mode install subdirectory)
    add_test(NAME consumer_${_mode}
             COMMAND ${CMAKE_COMMAND} -DMODE=${_mode} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                     -DBUILD_DIR=${PROJECT_BINARY_DIR} -DWORK=${PROJECT_BINARY_DIR}/consumer-${_mode}
                     "-DGENERATOR=${CMAKE_GENERATOR}" -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                     "-DCXX_FLAGS=${_consumer_flags}"
                     -P ${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake)
    set_tests_properties(consumer_${_mode} PROPERTIES LABELS "consumer" TIMEOUT 600)
  endforeach()
endif()

# docs/core.md and the README show tests/consumer/main.cc verbatim: keep them equal.
foreach(_doc docs/core.md README.md)
  string(MAKE_C_IDENTIFIER "${_doc}" _name)
  add_test(NAME usage_example_${_name}
           COMMAND ${CMAKE_COMMAND} -DDOC=${PROJECT_SOURCE_DIR}/${_doc}
                   -DMAIN=${CMAKE_CURRENT_LIST_DIR}/main.cc -P ${CMAKE_CURRENT_LIST_DIR}/check_doc_example.cmake)
  set_tests_properties(usage_example_${_name} PROPERTIES LABELS "consumer;docs")
endforeach()
