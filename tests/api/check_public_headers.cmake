# cmake -P: the public headers in DIR (lib/include/tinyattn) against the rules
# of the public API: tinyattn.h includes every one of them but the C API's
# tinyattn_c.h (a separate front for C, which C++ users do not need), and none includes
# <cmath>/<math.h> (its compile time) or calls a compiler builtin (portable
# headers; such code belongs in a .cc or in the port contract).
file(GLOB headers "${DIR}/*.h")
file(READ "${DIR}/tinyattn.h" umbrella)
set(errors "")
foreach(h IN LISTS headers)
  get_filename_component(name "${h}" NAME)
  if(NOT name STREQUAL "tinyattn.h" AND NOT name STREQUAL "tinyattn_c.h")
    string(FIND "${umbrella}" "#include \"tinyattn/${name}\"" at)
    if(at LESS 0)
      string(APPEND errors "tinyattn.h does not include tinyattn/${name}\n")
    endif()
  endif()
  file(STRINGS "${h}" bad REGEX "#include <(cmath|math\\.h)>|__builtin")
  foreach(line IN LISTS bad)
    string(APPEND errors "${name}: ${line}\n")
  endforeach()
endforeach()
if(errors)
  message(FATAL_ERROR "public headers:\n${errors}")
endif()
list(LENGTH headers count)
message(STATUS "${count} public headers: all in tinyattn.h, no <cmath>, no builtins")
