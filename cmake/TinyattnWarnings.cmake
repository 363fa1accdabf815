# Warning and language-subset flags, applied per target through
# tinyattn_strict(<target>): lib/ and ports/ build with -fno-exceptions -fno-rtti.
set(TINYATTN_WARNINGS -Wall -Wextra -Wshadow)
if(TINYATTN_WERROR)
  list(APPEND TINYATTN_WARNINGS -Werror)
endif()

function(tinyattn_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:${TINYATTN_WARNINGS}>)
endfunction()

function(tinyattn_strict target)
  tinyattn_warnings(${target})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
endfunction()

if(TINYATTN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
