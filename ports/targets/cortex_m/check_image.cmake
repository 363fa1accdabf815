# Proves a board image is heap-, exception- and RTTI-free by its symbols:
#   cmake -DNM=<nm> -DIMAGE=<elf> -DNAME=<test name> -P check_image.cmake
# Prints a one-case Unity transcript (like every other test) and fails when
# the image defines or references any of:
#   heap:        malloc/free/calloc/realloc (and newlib's _r forms), _sbrk,
#                operator new/delete (_Znw*, _Zna*, _ZdlPv*, _ZdaPv*)
#   exceptions:  __cxa_throw, __cxa_allocate_exception, __cxa_begin_catch,
#                __gxx_personality_v0, _Unwind_RaiseException
#   RTTI:        typeinfo objects and names (_ZTI*, _ZTS*)
execute_process(COMMAND ${NM} ${IMAGE} RESULT_VARIABLE rc OUTPUT_VARIABLE symbols ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${IMAGE} failed: ${err}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(forbidden "")
foreach(line IN LISTS lines)
  # "<address> <type> <name>" or "         U <name>"
  if(line MATCHES "^[0-9a-fA-F ]+ [A-Za-z] (.+)$")
    set(sym "${CMAKE_MATCH_1}")
    if(sym MATCHES "^(_?malloc|_malloc_r|_?free|_free_r|calloc|_calloc_r|realloc|_realloc_r|_sbrk|_sbrk_r|_Znw.*|_Zna.*|_ZdlPv.*|_ZdaPv.*|__cxa_throw|__cxa_allocate_exception|__cxa_begin_catch|__gxx_personality_v0|_Unwind_RaiseException|_ZTI.*|_ZTS.*)$")
      list(APPEND forbidden "${sym}")
    endif()
  endif()
endforeach()
get_filename_component(image_name "${IMAGE}" NAME)
list(LENGTH forbidden n)
if(n EQUAL 0)
  message("check_image.cmake:1:${NAME}:PASS")
  message("\n-----------------------\n1 Tests 0 Failures 0 Ignored\nOK")
else()
  list(JOIN forbidden " " names)
  message("check_image.cmake:1:${NAME}:FAIL: ${image_name} holds ${names}")
  message("\n-----------------------\n1 Tests 1 Failures 0 Ignored\nFAIL")
  message(FATAL_ERROR "forbidden symbols in ${image_name}")
endif()
