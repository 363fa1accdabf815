/* The vector table, compiled into each image (tinyattn_firmware_executable
 * and tinyattn_board_executable add it) so that the image says how many
 * interrupts its device has: TINYATTN_IRQ_COUNT (default 16; up to 480 on
 * Armv8-M, 496 on Armv7-M). Section .vectors, which the memory map places
 * where VTOR points at reset (sections.ld).
 *
 * Entries: the initial stack pointer, Reset_Handler, the system exception
 * handlers (NMI_Handler, HardFault_Handler, MemManage_Handler,
 * BusFault_Handler, UsageFault_Handler, SecureFault_Handler, SVC_Handler,
 * DebugMon_Handler, PendSV_Handler, SysTick_Handler: weak defaults in
 * startup.c), then one entry per interrupt n, IRQ<n>_Handler: a weak alias
 * of tinyattn_unhandled_irq, which calls Default_Handler. Define
 * `void IRQ5_Handler(void)` to handle interrupt 5, Default_Handler to catch
 * all the others.
 *
 * Written in assembly because C has no way to name n handlers for an n
 * chosen at compile time; .altmacro's %expr turns the counter into the
 * number in each name. */
#ifndef TINYATTN_IRQ_COUNT
#define TINYATTN_IRQ_COUNT 16
#endif
#if TINYATTN_IRQ_COUNT < 0 || TINYATTN_IRQ_COUNT > 496
#error "TINYATTN_IRQ_COUNT: 0 to 496 interrupts (Armv7-M allows 496, Armv8-M 480, Armv6-M 32)"
#endif

#define TINYATTN_VECTORS_STR2(x) #x
#define TINYATTN_VECTORS_STR(x) TINYATTN_VECTORS_STR2(x)

void Default_Handler(void);

/* Its own function rather than an alias of Default_Handler: an alias would
 * bind to the runtime's default even when the firmware defines its own. */
__attribute__((used)) void tinyattn_unhandled_irq(void) { Default_Handler(); }

__asm__(
    "  .section .vectors,\"a\",%progbits\n"
    "  .p2align 2\n"
    "  .global tinyattn_vector_table\n"
    "  .type tinyattn_vector_table, %object\n"
    "tinyattn_vector_table:\n"
    "  .word __stack_top__\n"
    "  .word Reset_Handler\n"
    "  .word NMI_Handler\n"
    "  .word HardFault_Handler\n"
    "  .word MemManage_Handler\n"
    "  .word BusFault_Handler\n"
    "  .word UsageFault_Handler\n"
    "  .word SecureFault_Handler\n" /* Armv8-M; reserved on Armv7-M */
    "  .word 0, 0, 0\n"
    "  .word SVC_Handler\n"
    "  .word DebugMon_Handler\n"
    "  .word 0\n"
    "  .word PendSV_Handler\n"
    "  .word SysTick_Handler\n"
    "  .altmacro\n"
    "  .macro tinyattn_irq_vector n\n"
    "    .weak IRQ\\n\\()_Handler\n"
    "    .thumb_set IRQ\\n\\()_Handler, tinyattn_unhandled_irq\n"
    "    .word IRQ\\n\\()_Handler\n"
    "  .endm\n"
    "  .set .Ltinyattn_irq, 0\n"
    "  .rept " TINYATTN_VECTORS_STR(TINYATTN_IRQ_COUNT) "\n"
    "    tinyattn_irq_vector %.Ltinyattn_irq\n"
    "    .set .Ltinyattn_irq, .Ltinyattn_irq + 1\n"
    "  .endr\n"
    "  .purgem tinyattn_irq_vector\n"
    "  .noaltmacro\n"
    "  .size tinyattn_vector_table, . - tinyattn_vector_table\n"
    "  .text\n");
