# The fp16 and int8 paths: conversions, properties, golden int8 vectors.
tinyattn_add_suite(quant_half
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/half_conversions.cc
  LABELS quant)
