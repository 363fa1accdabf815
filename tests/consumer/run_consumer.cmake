# ctest driver for the consumer project (cmake -P).
#   MODE=install:      install tinyattn from BUILD_DIR into WORK/prefix, then
#                      configure the consumer with find_package(tinyattn)
#   MODE=subdirectory: configure the consumer with add_subdirectory(SOURCE_DIR)
# then build it and run it. Inputs: MODE SOURCE_DIR BUILD_DIR WORK GENERATOR
# CXX_COMPILER [CXX_FLAGS].
foreach(v MODE SOURCE_DIR BUILD_DIR WORK GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_consumer.cmake: ${v} not set")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK}")
set(args -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
if(MODE STREQUAL "install")
  run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK}/prefix")
  # The package must not depend on the build or source tree.
  file(GLOB_RECURSE config "${WORK}/prefix/*/tinyattnConfig.cmake")
  if(NOT config)
    message(FATAL_ERROR "no tinyattnConfig.cmake under ${WORK}/prefix")
  endif()
  list(APPEND args "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
elseif(MODE STREQUAL "subdirectory")
  list(APPEND args "-DTINYATTN_SOURCE_DIR=${SOURCE_DIR}")
else()
  message(FATAL_ERROR "MODE must be install or subdirectory")
endif()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer" -B "${WORK}/build" ${args})
run(${CMAKE_COMMAND} --build "${WORK}/build")
run("${WORK}/build/consumer")
message(STATUS "consumer (${MODE}) built and ran")
