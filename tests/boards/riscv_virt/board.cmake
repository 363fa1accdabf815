# Board facts the build needs beyond the linker script.
# Test tensors: the static arena (tests/support) takes 3 MiB, as on the
# Cortex-M boards, so every suite checks the same cases here.
set(TINYATTN_BOARD_TEST_ARENA_BYTES 3145728)
