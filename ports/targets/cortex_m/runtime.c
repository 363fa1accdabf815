// The C/C++ runtime pieces a program needs without crt files and without a
// syscall library (the boards link newlib-nano with -nostartfiles and
// neither librdimon nor libnosys).
//
// No heap: _sbrk refers to a symbol that exists nowhere, so any program that
// pulls in malloc (newlib's printf, operator new, std::vector, ...) fails to
// link with an error naming that symbol. --gc-sections drops _sbrk when
// nothing calls it, so heap-free programs link.
#include <stddef.h>
#include <stdint.h>

#include "board.h"

extern char tinyattn_error_the_heap_is_disabled_on_this_board[];  // never defined

// Its own section even without -ffunction-sections, so --gc-sections can drop it.
__attribute__((section(".text._sbrk"))) void* _sbrk(ptrdiff_t increment) {
  (void)increment;
  return tinyattn_error_the_heap_is_disabled_on_this_board;
}

// crti.o/crtn.o and crtbegin.o are not linked (-nostartfiles).
__attribute__((weak)) void _init(void) {}
__attribute__((weak)) void _fini(void) {}
__attribute__((weak)) void* __dso_handle = &__dso_handle;

// Static destructors are never run (firmware does not return to anything),
// so registering them is a no-op; newlib's version may allocate.
__attribute__((weak)) int __cxa_atexit(void (*fn)(void*), void* arg, void* dso) {
  (void)fn;
  (void)arg;
  (void)dso;
  return 0;
}

enum { kStatusAbort = 128 + 6 };

__attribute__((weak, noreturn)) void abort(void) {
  tinyattn_board_write("tinyattn board: abort\n");
  tinyattn_board_exit(kStatusAbort);
}

__attribute__((weak, noreturn)) void _exit(int status) { tinyattn_board_exit(status); }

// assert() without stdio (newlib's version prints through fiprintf).
__attribute__((weak, noreturn)) void __assert_func(const char* file, int line, const char* func,
                                                   const char* expr) {
  (void)line;
  (void)func;
  tinyattn_board_write("tinyattn board: assertion failed: ");
  tinyattn_board_write(expr);
  tinyattn_board_write(" in ");
  tinyattn_board_write(file);
  tinyattn_board_write("\n");
  tinyattn_board_exit(kStatusAbort);
}

__attribute__((weak, noreturn)) void __cxa_pure_virtual(void) {
  tinyattn_board_write("tinyattn board: pure virtual call\n");
  tinyattn_board_exit(kStatusAbort);
}

// 64-bit atomics (e.g. a std::atomic<int64_t> dispatch cache) are not
// lock-free on Armv7-M/Armv8-M and arm-none-eabi has no libatomic. These
// run with interrupts masked, which makes them atomic on a single core.
static inline uint32_t irq_save(void) {
  uint32_t primask;
  __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
  return primask;
}
static inline void irq_restore(uint32_t primask) { __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory"); }

__attribute__((weak)) uint64_t __atomic_load_8(const volatile void* p, int order) {
  (void)order;
  const uint32_t s = irq_save();
  const uint64_t v = *(const volatile uint64_t*)p;
  irq_restore(s);
  return v;
}

__attribute__((weak)) void __atomic_store_8(volatile void* p, uint64_t v, int order) {
  (void)order;
  const uint32_t s = irq_save();
  *(volatile uint64_t*)p = v;
  irq_restore(s);
}

__attribute__((weak)) uint64_t __atomic_exchange_8(volatile void* p, uint64_t v, int order) {
  (void)order;
  const uint32_t s = irq_save();
  const uint64_t old = *(volatile uint64_t*)p;
  *(volatile uint64_t*)p = v;
  irq_restore(s);
  return old;
}

// The library form has no `weak` argument (GCC passes the success and
// failure orders only), unlike the builtin GCC compares the definition with.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wbuiltin-declaration-mismatch"
__attribute__((weak)) _Bool __atomic_compare_exchange_8(volatile void* p, void* expected, uint64_t desired,
                                                        int success, int failure) {
  (void)success;
  (void)failure;
  const uint32_t s = irq_save();
  const uint64_t cur = *(volatile uint64_t*)p;
  const _Bool equal = cur == *(uint64_t*)expected;
  if (equal) *(volatile uint64_t*)p = desired;
  else *(uint64_t*)expected = cur;
  irq_restore(s);
  return equal;
}
#pragma GCC diagnostic pop

__attribute__((weak)) uint64_t __atomic_fetch_add_8(volatile void* p, uint64_t v, int order) {
  (void)order;
  const uint32_t s = irq_save();
  const uint64_t old = *(volatile uint64_t*)p;
  *(volatile uint64_t*)p = old + v;
  irq_restore(s);
  return old;
}
