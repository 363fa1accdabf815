# Interrupts: forwards in a SysTick handler preempting main()'s forwards, on
# the Cortex-M boards (docs/firmware.md, Interrupts and threads). The threads
# suite is its hosted counterpart.
if(TINYATTN_BAREMETAL AND CMAKE_SYSTEM_PROCESSOR MATCHES "^arm")
  tinyattn_add_suite(interrupts
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/systick_preemption_test.cc
    LABELS "board;interrupts")
endif()
