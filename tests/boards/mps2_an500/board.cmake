# Board facts the build needs beyond the linker script.
# Test tensors: the static arena (tests/support) takes 3 MiB of the 4 MiB
# SSRAM2/3 data RAM; checks whose tensors do not fit report IGNORE.
set(TINYATTN_BOARD_TEST_ARENA_BYTES 3145728)
