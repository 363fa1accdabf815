# Stand-in for ESP-IDF's component build (tools/cmake/component.cmake), with
# its documented semantics:
#   idf_component_register(SRCS ... SRC_DIRS ... EXCLUDE_SRCS ... INCLUDE_DIRS ...
#                          PRIV_INCLUDE_DIRS ... REQUIRES ... PRIV_REQUIRES ... ...)
#     paths relative to COMPONENT_DIR; SRC_DIRS adds the .c, .cpp and .S files
#     of each folder (not recursive), less EXCLUDE_SRCS; a component with
#     sources is a static library named COMPONENT_LIB (__idf_<name>), its
#     INCLUDE_DIRS public and PRIV_INCLUDE_DIRS its own; one without sources
#     is an INTERFACE library.
# COMPONENT_NAME, COMPONENT_DIR and COMPONENT_LIB are set before the
# component's CMakeLists.txt runs, and its Kconfig's CONFIG_ values
# (configure.py wrote them: sdkconfig). ESP-IDF 5's compile settings for C++
# are on idf_interface: -std=gnu++2b, no exceptions, no RTTI, sections per
# function.

add_library(idf_interface INTERFACE)
target_compile_options(idf_interface INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-std=gnu++2b -fno-exceptions -fno-rtti>
  -ffunction-sections -fdata-sections)

function(idf_component_register)
  cmake_parse_arguments(_ "WHOLE_ARCHIVE" "KCONFIG;KCONFIG_PROJBUILD"
    "SRCS;SRC_DIRS;EXCLUDE_SRCS;INCLUDE_DIRS;PRIV_INCLUDE_DIRS;REQUIRES;PRIV_REQUIRES;LDFRAGMENTS;EMBED_FILES;EMBED_TXTFILES"
    ${ARGN})
  if(__UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "idf_component_register: unknown arguments ${__UNPARSED_ARGUMENTS}")
  endif()
  set(srcs)
  foreach(src ${__SRCS})
    get_filename_component(src "${src}" ABSOLUTE BASE_DIR "${COMPONENT_DIR}")
    if(NOT EXISTS "${src}")
      message(FATAL_ERROR "idf_component_register: ${src} does not exist")
    endif()
    list(APPEND srcs "${src}")
  endforeach()
  foreach(dir ${__SRC_DIRS})
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${COMPONENT_DIR}")
    file(GLOB found "${dir}/*.c" "${dir}/*.cpp" "${dir}/*.S")
    list(APPEND srcs ${found})
  endforeach()
  foreach(src ${__EXCLUDE_SRCS})
    get_filename_component(src "${src}" ABSOLUTE BASE_DIR "${COMPONENT_DIR}")
    list(REMOVE_ITEM srcs "${src}")
  endforeach()
  set(pub)
  foreach(dir ${__INCLUDE_DIRS})
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${COMPONENT_DIR}")
    if(NOT IS_DIRECTORY "${dir}")
      message(FATAL_ERROR "idf_component_register: include directory ${dir} does not exist")
    endif()
    list(APPEND pub "${dir}")
  endforeach()
  set(priv)
  foreach(dir ${__PRIV_INCLUDE_DIRS})
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${COMPONENT_DIR}")
    if(NOT IS_DIRECTORY "${dir}")
      message(FATAL_ERROR "idf_component_register: include directory ${dir} does not exist")
    endif()
    list(APPEND priv "${dir}")
  endforeach()
  if(srcs)
    add_library(${COMPONENT_LIB} STATIC ${srcs})
    target_include_directories(${COMPONENT_LIB} PUBLIC ${pub} PRIVATE ${priv})
    target_link_libraries(${COMPONENT_LIB} PUBLIC idf_interface)
  else()
    add_library(${COMPONENT_LIB} INTERFACE)
    target_include_directories(${COMPONENT_LIB} INTERFACE ${pub})
  endif()
  add_library(idf::${COMPONENT_NAME} ALIAS ${COMPONENT_LIB})
endfunction()

# idf_standin_component(<component dir> <config dir>): the component
# configured (configure.py idf) and added as ESP-IDF adds it.
function(idf_standin_component dir config_dir)
  include(${config_dir}/config.cmake)
  get_filename_component(COMPONENT_NAME "${dir}" NAME)
  set(COMPONENT_DIR "${dir}")
  set(COMPONENT_LIB "__idf_${COMPONENT_NAME}")
  add_subdirectory("${dir}" "${CMAKE_BINARY_DIR}/esp-idf/${COMPONENT_NAME}")
endfunction()
