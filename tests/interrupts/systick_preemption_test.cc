// A SysTick handler runs forward passes (fp32 with weights, fp16, int8) on
// its own tensors and workspace while main() runs them on others, on the
// Cortex-M boards. Every result, in the handler and in main(), must be the
// bytes the same call gave before SysTick was started: a forward keeps no
// state outside its arguments, so one preempted by another, of any type, is
// unaffected (docs/firmware.md, Interrupts and threads). The run lasts until
// the handler has interrupted each of main()'s three kinds of forward, inside
// the call, with each of its own.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "support.h"
#include "tatest.h"
#include "tinyattn/tinyattn.h"

using namespace tinyattn;

namespace {

// SysTick and the interrupt control register, at the same addresses on
// Armv6-M, Armv7-M and Armv8-M.
volatile uint32_t& reg(uintptr_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }
constexpr uintptr_t kSystCsr = 0xE000E010u, kSystRvr = 0xE000E014u, kSystCvr = 0xE000E018u, kScbIcsr = 0xE000ED04u;
constexpr uint32_t kCsrEnable = 1u << 0, kCsrTickInt = 1u << 1, kCsrCoreClock = 1u << 2;
constexpr uint32_t kIcsrPendStClr = 1u << 25;
// Core cycles from the end of one handler to the next tick (about 1 ms on
// QEMU's boards): main() runs a few forwards in between. Each period adds a
// different part of kJitter, so the ticks cannot fall into step with main()'s
// calls (with QEMU's -icount, time is a count of instructions).
constexpr uint32_t kReload = 20000, kJitter = 8192;

enum Kind : uint32_t { kF32, kF16, kI8, kKinds };

constexpr size_t max3(size_t a, size_t b, size_t c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

// One caller's tensors, workspace and the outputs of its unpreempted calls.
template <size_t N, size_t M, size_t Dk, size_t Dv, size_t Hq, size_t Hkv>
struct Context {
  static constexpr Dims d{N, M, Dk, Dv, Hq, Hkv};
  static constexpr size_t kWorkspace =
      max3(forward_workspace_bytes(d, true), forward_f16_workspace_bytes(d, true), forward_i8_workspace_bytes(d));

  Mask mask;
  float q[Hq * N * Dk], k[Hkv * M * Dk], v[Hkv * M * Dv];
  float y[Hq * N * Dv], w[Hq * N * M], y_expect[Hq * N * Dv], w_expect[Hq * N * M];
  half qh[Hq * N * Dk], kh[Hkv * M * Dk], vh[Hkv * M * Dv], yh[Hq * N * Dv], yh_expect[Hq * N * Dv];
  int8_t qi[Hq * N * Dk], ki[Hkv * M * Dk], vi[Hkv * M * Dv], yi[Hq * N * Dv], yi_expect[Hq * N * Dv];
  Int8HeadPlan plans[Hq];
  alignas(kWorkspaceAlign) unsigned char ws[kWorkspace];

  Status setup(uint64_t seed, const Mask& m) {
    mask = m;
    tatest::Rng rng(seed);
    rng.fill_normal(q, sizeof q / sizeof q[0], 1.5f);
    rng.fill_normal(k, sizeof k / sizeof k[0], 1.5f);
    rng.fill_normal(v, sizeof v / sizeof v[0]);
    for (size_t i = 0; i < sizeof q / sizeof q[0]; ++i) qh[i] = to_half(q[i]);
    for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i) kh[i] = to_half(k[i]);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) vh[i] = to_half(v[i]);
    for (int8_t* x : {qi, ki, vi}) {
      const size_t count = x == qi ? sizeof qi : x == ki ? sizeof ki : sizeof vi;
      for (size_t i = 0; i < count; ++i) x[i] = static_cast<int8_t>(rng.next_u64() % 256 - 128);
    }
    static const float s[1] = {0.03f}, sy[1] = {0.02f};
    static const int32_t zq[1] = {3}, zk[1] = {-5}, zv[1] = {7}, zy[1] = {-1};
    Int8Scheme scheme;
    scheme.q = QuantParams{s, zq, 1};
    scheme.k = QuantParams{s, zk, 1};
    scheme.v = QuantParams{s, zv, 1};
    scheme.y = QuantParams{sy, zy, 1};
    return plan_int8(d, scheme, plans, Hq);
  }

  // One call of `kind`, into the outputs or (expected) the reference copies.
  Status run(Kind kind, bool expected) {
    const Workspace workspace{ws, sizeof ws};
    switch (kind) {
      case kF32:
        return forward(d, ForwardIo{q, k, v, expected ? y_expect : y, expected ? w_expect : w}, workspace, mask);
      case kF16:
        return forward_f16(d, ForwardIoF16{qh, kh, vh, expected ? yh_expect : yh}, workspace, mask);
      case kI8:
        return forward_i8(d, ForwardIoI8{qi, ki, vi, expected ? yi_expect : yi}, Int8Plan{plans, Hq}, workspace, mask);
      default:
        return Status::kUnsupported;
    }
  }

  // The last call's outputs are the unpreempted call's bytes.
  bool same(Kind kind) const {
    switch (kind) {
      case kF32:
        return std::memcmp(y, y_expect, sizeof y) == 0 && std::memcmp(w, w_expect, sizeof w) == 0;
      case kF16:
        return std::memcmp(yh, yh_expect, sizeof yh) == 0;
      case kI8:
        return std::memcmp(yi, yi_expect, sizeof yi) == 0;
      default:
        return false;
    }
  }
};

// main()'s problem: causal, grouped heads. The handler's: another shape, a
// sliding window and a key padding.
Context<8, 24, 16, 16, 2, 1> g_main;
Context<4, 16, 8, 12, 2, 2> g_handler;

volatile uint32_t g_main_kind = kKinds;  // the forward main() is inside; kKinds: none
volatile uint32_t g_ticks = 0, g_handler_failures = 0;
volatile uint32_t g_inside[kKinds][kKinds];  // [main()'s kind][the handler's kind]: preemptions inside a call

bool every_pair_seen() {
  for (uint32_t m = 0; m < kKinds; ++m)
    for (uint32_t h = 0; h < kKinds; ++h)
      if (g_inside[m][h] < 2) return false;
  return true;
}

void stop_systick() {
  reg(kSystCsr) = 0;
  reg(kScbIcsr) = kIcsrPendStClr;
}

}  // namespace

// Replaces the runtime's weak SysTick_Handler for this image.
extern "C" void SysTick_Handler(void) {
  const uint32_t tick = g_ticks;
  const auto kind = static_cast<Kind>(tick % kKinds);
  const uint32_t preempted = g_main_kind;
  if (g_handler.run(kind, false) != Status::kOk || !g_handler.same(kind)) g_handler_failures = g_handler_failures + 1;
  if (preempted < kKinds) g_inside[preempted][kind] = g_inside[preempted][kind] + 1;
  g_ticks = tick + 1;
  // The next tick a whole period after this handler, however long it ran, so
  // main() always makes progress.
  reg(kSystRvr) = kReload + (tick * 2654435761u >> 19) % kJitter - 1;
  reg(kSystCvr) = 0;
  reg(kScbIcsr) = kIcsrPendStClr;
}

TA_CASE("interrupts: forwards in a SysTick handler preempting main()'s forwards give unpreempted bytes") {
  TA_CHECK(g_main.setup(0x15a, Mask::causal_top_left()) == Status::kOk);
  Mask window = Mask::sliding_window(5, 2, Align::kBottomRight);
  window.kv_len = 14;
  TA_CHECK(g_handler.setup(0x7e5, window) == Status::kOk);
  for (uint32_t kind = 0; kind < kKinds; ++kind) {
    TA_CHECK(g_main.run(static_cast<Kind>(kind), true) == Status::kOk);
    TA_CHECK(g_handler.run(static_cast<Kind>(kind), true) == Status::kOk);
  }

  reg(kSystRvr) = kReload - 1;
  reg(kSystCvr) = 0;
  reg(kSystCsr) = kCsrEnable | kCsrTickInt | kCsrCoreClock;
  constexpr size_t kMaxCalls = 200000;
  size_t calls = 0, main_failures = 0;
  for (; calls < kMaxCalls && !every_pair_seen(); ++calls) {
    if (calls == 20000 && g_ticks == 0) break;  // SysTick never fired: reported below
    const auto kind = static_cast<Kind>(calls % kKinds);
    g_main_kind = kind;
    __asm__ volatile("" ::: "memory");  // the flag brackets the call, not more
    const Status s = g_main.run(kind, false);
    __asm__ volatile("" ::: "memory");
    g_main_kind = kKinds;
    if (s != Status::kOk || !g_main.same(kind)) ++main_failures;
  }
  stop_systick();

  size_t inside = 0;
  for (uint32_t m = 0; m < kKinds; ++m)
    for (uint32_t h = 0; h < kKinds; ++h) inside += g_inside[m][h];
  TA_LOG("%zu forwards in main(), %zu in the handler, %zu of them inside one of main()'s", calls,
         static_cast<size_t>(g_ticks), inside);
  TA_CHECK_MSG(main_failures == 0, "%zu of main()'s %zu forwards differ from the unpreempted bytes", main_failures,
               calls);
  TA_CHECK_MSG(g_handler_failures == 0, "%zu of the handler's %zu forwards differ from the unpreempted bytes",
               static_cast<size_t>(g_handler_failures), static_cast<size_t>(g_ticks));
  TA_CHECK_MSG(every_pair_seen(),
               "the handler did not interrupt each kind of main()'s forwards with each of its own twice "
               "(%zu ticks, %zu inside a forward, %zu calls)",
               static_cast<size_t>(g_ticks), inside, calls);
}
