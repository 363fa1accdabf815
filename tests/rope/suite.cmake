# Rotary position embedding (tinyattn/rope.h): Hugging Face's formula in
# float64 (golden_rope.h), the exact rotation, the table's bits, the
# rotation's properties and argument checks, on every target.
tinyattn_add_suite(rope
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rope_test.cc
  LABELS rope)

# The committed golden vectors must be what the generator produces.
include(TinyattnPython)
tinyattn_add_generator_check(rope_golden_check tests/rope/gen_rope_vectors.py LABELS rope)
