# Stand-in for the part of Zephyr's build system a module's CMakeLists.txt
# uses (cmake/modules/extensions.cmake), with Zephyr's documented semantics:
#   zephyr_library_named(<name>)       a static library, the current one, linked
#                                      into the image, with zephyr_interface
#   zephyr_library()                   the same, named after the folder
#   zephyr_library_sources(...)        sources of the current library
#   zephyr_library_sources_ifdef(<CONFIG> ...)
#   zephyr_library_include_directories / _compile_definitions / _compile_options
#                                      the current library's own (PRIVATE)
#   zephyr_include_directories(...)    every target's (zephyr_interface), the
#                                      application's included
#   zephyr_compile_definitions / zephyr_compile_options   the same, for all
# and what Zephyr does around a module: the CONFIG_ values of its Kconfig
# (configure.py wrote them, and autoconf.h, which every file gets through
# -imacros), then add_subdirectory of the folder module.yml's build.cmake names.
# Zephyr's own compile settings for C++ code are on zephyr_interface:
# CONFIG_STD_CPP17, no exceptions, no RTTI (Zephyr's defaults), sections per
# function.

add_library(zephyr_interface INTERFACE)

macro(zephyr_library_named name)
  set(ZEPHYR_CURRENT_LIBRARY ${name})
  add_library(${name} STATIC "")
  set_property(GLOBAL APPEND PROPERTY ZEPHYR_LIBS ${name})
  target_link_libraries(${name} PUBLIC zephyr_interface)
endmacro()

macro(zephyr_library)
  string(REPLACE "/" "__" _zephyr_lib_name "${CMAKE_CURRENT_SOURCE_DIR}")
  string(REGEX REPLACE "[^A-Za-z0-9_]" "_" _zephyr_lib_name "lib${_zephyr_lib_name}")
  zephyr_library_named(${_zephyr_lib_name})
endmacro()

function(zephyr_library_sources)
  target_sources(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()

function(zephyr_library_sources_ifdef feature)
  if(${feature})
    target_sources(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
  endif()
endfunction()

function(zephyr_library_include_directories)
  target_include_directories(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()

function(zephyr_library_compile_definitions)
  target_compile_definitions(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()

function(zephyr_library_compile_options)
  target_compile_options(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()

function(zephyr_include_directories)
  foreach(dir ${ARGN})
    get_filename_component(dir "${dir}" ABSOLUTE)
    target_include_directories(zephyr_interface INTERFACE ${dir})
  endforeach()
endfunction()

function(zephyr_compile_definitions)
  target_compile_definitions(zephyr_interface INTERFACE ${ARGN})
endfunction()

function(zephyr_compile_options)
  target_compile_options(zephyr_interface INTERFACE ${ARGN})
endfunction()

# zephyr_standin_module(<config dir>): the module configure.py resolved and
# configured, added as Zephyr adds it. The libraries it makes are in the
# global property ZEPHYR_LIBS.
function(zephyr_standin_module config_dir)
  include(${config_dir}/config.cmake)
  target_compile_options(zephyr_interface INTERFACE
    -imacros ${config_dir}/autoconf.h
    $<$<COMPILE_LANGUAGE:CXX>:-std=c++17 -fno-exceptions -fno-rtti>
    -ffunction-sections -fdata-sections)
  string(TOUPPER "${ZEPHYR_STANDIN_MODULE_NAME}" _name)
  set(ZEPHYR_CURRENT_MODULE_DIR ${ZEPHYR_${_name}_MODULE_DIR})
  add_subdirectory(${ZEPHYR_${_name}_CMAKE_DIR} ${CMAKE_BINARY_DIR}/modules/${ZEPHYR_STANDIN_MODULE_NAME})
endfunction()
