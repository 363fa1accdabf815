# Included by the toolchain files once they have set CMAKE_<LANG>_FLAGS_INIT
# (the core, its float ABI, the firmware subset) and
# CMAKE_EXE_LINKER_FLAGS_INIT. CMake uses an _INIT value only while the
# variable is not in the cache, so a -DCMAKE_C_FLAGS=... on the command line
# would replace the toolchain's flags instead of adding to them: the objects
# would be built for the default core and the link would fail ("uses VFP
# register arguments"). Here the toolchain's flags go in front of the user's
# (once: a reconfigure or a try_compile finds them already there).
foreach(_tc_var C_FLAGS CXX_FLAGS ASM_FLAGS EXE_LINKER_FLAGS)
  set(_tc_init "${CMAKE_${_tc_var}_INIT}")
  string(STRIP "${_tc_init}" _tc_init)
  if(_tc_init AND DEFINED CACHE{CMAKE_${_tc_var}})
    set(_tc_user "$CACHE{CMAKE_${_tc_var}}")
    string(FIND " ${_tc_user} " " ${_tc_init} " _tc_at)
    if(_tc_at EQUAL -1)
      string(STRIP "${_tc_init} ${_tc_user}" _tc_user)
      get_property(_tc_help CACHE CMAKE_${_tc_var} PROPERTY HELPSTRING)
      set(CMAKE_${_tc_var} "${_tc_user}" CACHE STRING "${_tc_help}" FORCE)
    endif()
  endif()
endforeach()
