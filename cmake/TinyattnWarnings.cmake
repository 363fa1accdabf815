# Warning and language-subset flags, applied per target through
# tinyattn_strict(<target>): lib/ and ports/ build with -fno-exceptions -fno-rtti
# -fno-math-errno.
set(TINYATTN_WARNINGS -Wall -Wextra -Wshadow)
if(TINYATTN_WERROR)
  list(APPEND TINYATTN_WARNINGS -Werror)
endif()

function(tinyattn_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:${TINYATTN_WARNINGS}>)
endfunction()

# lib/ and ports/ also build with -Wconversion: no silent narrowing of sizes
# or precision in the library itself (tests and tools are exempt).
function(tinyattn_strict target)
  tinyattn_warnings(${target})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:-Wconversion>)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
  # The library never reads errno, so sqrt needs no libm call to set it: one
  # instruction where the target has it (vsqrt.f32 on a Cortex-M4F).
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:-fno-math-errno>)
endfunction()

if(TINYATTN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# Fuzzing (tests/fuzz): the whole build gets libFuzzer coverage and ASan+UBSan,
# so the library code the fuzzers reach is instrumented; the fuzz executables
# link -fsanitize=fuzzer themselves.
if(TINYATTN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TINYATTN_FUZZ needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
