// The counting side of alloc_fixture.h: every heap allocation in the process
// increments one counter (see there for why and how). Kept in its own
// translation unit, without that header, so the compiler never sees a test's
// malloc/free calls and these definitions together (inlined, a free() of
// memory from a static buffer is undefined behaviour that Clang exploits).
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define TINYATTN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TINYATTN_ASAN 1
#endif
#endif

namespace {
std::atomic<unsigned long> g_allocations{0};
}  // namespace

// Declared in alloc_fixture.h.
namespace tatest {
unsigned long heap_allocations() { return g_allocations.load(std::memory_order_relaxed); }
bool allocation_counter_installed();
}  // namespace tatest

#if TINYATTN_ASAN
// From the sanitizer runtime (declared here: GCC does not install
// <sanitizer/allocator_interface.h>).
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, size_t),
                                                          void (*free_hook)(const volatile void*));

namespace {
void on_malloc(const volatile void*, size_t) { g_allocations.fetch_add(1, std::memory_order_relaxed); }
void on_free(const volatile void*) {}
// Installed before main() so the hooks see the whole run.
const int g_hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}  // namespace

bool tatest::allocation_counter_installed() { return g_hooks_installed != 0; }

#else  // counting allocator

namespace {
// Bump allocation over a static buffer; free() returns nothing (a test
// process is short). Each block starts with its size for realloc.
alignas(64) unsigned char g_heap[64u << 20];
std::atomic<size_t> g_heap_used{0};
constexpr size_t kHeader = 64;  // keeps every block 64-byte aligned

void* bump(size_t bytes, size_t align) {
  if (align < kHeader) align = kHeader;
  if (align & (align - 1)) return nullptr;
  const size_t need = bytes + align + kHeader;
  const size_t start = g_heap_used.fetch_add(need, std::memory_order_relaxed);
  if (start + need > sizeof g_heap || need < bytes) return nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(g_heap + start + kHeader);
  p = (p + align - 1) & ~(uintptr_t{align} - 1);
  std::memcpy(reinterpret_cast<void*>(p - sizeof(size_t)), &bytes, sizeof bytes);
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return reinterpret_cast<void*>(p);
}

size_t block_size(void* p) {
  size_t n;
  std::memcpy(&n, static_cast<unsigned char*>(p) - sizeof(size_t), sizeof n);
  return n;
}
}  // namespace

bool tatest::allocation_counter_installed() { return true; }

extern "C" {
void* malloc(size_t n) noexcept { return bump(n, 16); }
void free(void*) noexcept {}
void* calloc(size_t count, size_t size) noexcept {
  if (size && count > SIZE_MAX / size) return nullptr;
  return bump(count * size, 16);  // the buffer is static and never reused: already zero
}
void* realloc(void* p, size_t n) noexcept {
  void* q = bump(n, 16);
  if (p && q) std::memcpy(q, p, block_size(p) < n ? block_size(p) : n);
  return q;
}
void* aligned_alloc(size_t align, size_t n) noexcept { return bump(n, align); }
void* memalign(size_t align, size_t n) noexcept { return bump(n, align); }
void* valloc(size_t n) noexcept { return bump(n, 4096); }
void* pvalloc(size_t n) noexcept { return bump((n + 4095) & ~size_t{4095}, 4096); }
int posix_memalign(void** out, size_t align, size_t n) noexcept {
  void* p = bump(n, align);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
size_t malloc_usable_size(void* p) noexcept { return p ? block_size(p) : 0; }
}  // extern "C"

void* operator new(size_t n) {
  void* p = bump(n, 16);
  if (!p) std::abort();  // tests build without exceptions
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return bump(n, 16); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return bump(n, 16); }
void* operator new(size_t n, std::align_val_t a) {
  void* p = bump(n, static_cast<size_t>(a));
  if (!p) std::abort();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void*) noexcept {}
void operator delete[](void*) noexcept {}
void operator delete(void*, size_t) noexcept {}
void operator delete[](void*, size_t) noexcept {}
void operator delete(void*, std::align_val_t) noexcept {}
void operator delete[](void*, std::align_val_t) noexcept {}
void operator delete(void*, size_t, std::align_val_t) noexcept {}
void operator delete[](void*, size_t, std::align_val_t) noexcept {}
#endif
