// Allocation freedom of the fp16, int8 and int16 paths: plan_int8, forward_i8,
// plan_int16, forward_i16, forward_f16, the conversions and the compile-time
// classes never touch the heap (counted by tests/support/alloc_fixture.h, as
// tests/alloc does).
#include <cstring>

#include "alloc_fixture.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/tinyattn.h"

using namespace tinyattn;
using tatest::alloc;
using tatest::Arena;
using tatest::heap_allocations;

namespace {

using S = Shape<9, 13, 8, 5, 4, 2>;
AttentionI8<S> g_i8;
AttentionI8<S>::Q g_q8;
AttentionI8<S>::K g_k8;
AttentionI8<S>::V g_v8;
AttentionI8<S>::Y g_y8;
AttentionI8<S>::Weights g_w8;
AttentionI16<S> g_i16;
AttentionI16<S>::Q g_q16;
AttentionI16<S>::K g_k16;
AttentionI16<S>::V g_v16;
AttentionI16<S>::Y g_y16;
AttentionI16<S>::Weights g_w16;
AttentionF16<S> g_f16;
AttentionF16<S>::Q g_qh;
AttentionF16<S>::K g_kh;
AttentionF16<S>::V g_vh;
AttentionF16<S>::Y g_yh;
AttentionF16<S>::Weights g_wh;

}  // namespace

TA_CASE("quant alloc: the counter sees malloc, calloc, realloc and every operator new") {
  tatest::check_allocation_counter();
}

TA_CASE("quant alloc: int8, int16 and fp16 paths allocate nothing") {
  const Dims d = S::dims;
  for (size_t i = 0; i < g_q8.size(); ++i) g_q8[i] = static_cast<int8_t>(i * 7);
  for (size_t i = 0; i < g_k8.size(); ++i) g_k8[i] = static_cast<int8_t>(i * 11);
  for (size_t i = 0; i < g_v8.size(); ++i) g_v8[i] = static_cast<int8_t>(i * 13);
  for (size_t i = 0; i < g_q16.size(); ++i) g_q16[i] = static_cast<int16_t>(i * 1777);
  for (size_t i = 0; i < g_k16.size(); ++i) g_k16[i] = static_cast<int16_t>(i * 2311);
  for (size_t i = 0; i < g_v16.size(); ++i) g_v16[i] = static_cast<int16_t>(i * 3001);
  for (size_t i = 0; i < g_qh.size(); ++i) g_qh[i] = to_half(0.01f * static_cast<float>(i % 17));
  for (size_t i = 0; i < g_kh.size(); ++i) g_kh[i] = to_half(0.02f * static_cast<float>(i % 13));
  for (size_t i = 0; i < g_vh.size(); ++i) g_vh[i] = to_half(0.03f * static_cast<float>(i % 11));
  const float sq = 0.02f, sk = 0.03f, sv = 0.05f, sy = 0.05f, sb = 0.1f;
  Int8Scheme scheme;
  scheme.q = {&sq, nullptr, 1};
  scheme.k = {&sk, nullptr, 1};
  scheme.v = {&sv, nullptr, 1};
  scheme.y = {&sy, nullptr, 1};
  scheme.bias = {&sb, nullptr, 1};
  const float sq16 = 5e-5f, sk16 = 1e-4f, sv16 = 3e-4f, sy16 = 2.5e-4f;
  Int16Scheme scheme16;
  scheme16.q = {&sq16, nullptr, 1};
  scheme16.k = {&sk16, nullptr, 1};
  scheme16.v = {&sv16, nullptr, 1};
  scheme16.y = {&sy16, nullptr, 1};
  Arena::Scope scope;
  int8_t* bias = alloc<int8_t>(d.n * d.m);
  uint8_t* bits = alloc<uint8_t>(d.n * keep_bits_row_bytes(d.m));
  unsigned char* ws16 = alloc<unsigned char>(forward_i16_workspace_bytes(d));
  TA_CHECK((bias != nullptr && bits != nullptr && ws16 != nullptr));
  if (!bias || !bits || !ws16) return;
  for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = static_cast<int8_t>(x * 3);
  for (size_t x = 0; x < d.n * keep_bits_row_bytes(d.m); ++x) bits[x] = static_cast<uint8_t>(x * 37 + 5);
  Mask masks[3] = {Mask::none(), Mask::causal_bottom_right(), Mask::keep_bitmask(bits)};
  masks[2].window = {2, 3, Align::kTopLeft};

  const unsigned long before = heap_allocations();
  Status s = g_i8.configure(scheme);
  Int8HeadPlan plans[S::kHq];
  s = s == Status::kOk ? plan_int8(d, scheme, plans, S::kHq) : s;
  s = s == Status::kOk ? g_i16.configure(scheme16) : s;
  Int16HeadPlan plans16[S::kHq];
  s = s == Status::kOk ? plan_int16(d, scheme16, plans16, S::kHq) : s;
  size_t bad = s != Status::kOk;
  for (const Mask& m : masks) {
    bad += g_i8(g_q8, g_k8, g_v8, g_y8, m, &g_w8) != Status::kOk;
    bad += g_i8.run(ForwardIoI8{g_q8.data(), g_k8.data(), g_v8.data(), g_y8.data(), nullptr, bias}, m) != Status::kOk;
    bad += g_i16(g_q16, g_k16, g_v16, g_y16, m, &g_w16) != Status::kOk;
    bad += forward_i16(d, ForwardIoI16{g_q16.data(), g_k16.data(), g_v16.data(), g_y16.data(), nullptr},
                       Int16Plan{plans16, S::kHq}, Workspace{ws16, forward_i16_workspace_bytes(d)}, m) != Status::kOk;
    bad += g_f16(g_qh, g_kh, g_vh, g_yh, m, &g_wh) != Status::kOk;
    bad += g_f16.run(ForwardIoF16{g_qh.data(), g_kh.data(), g_vh.data(), g_yh.data(), nullptr, nullptr}, m) !=
           Status::kOk;
  }
  float widened[8];
  to_float(g_qh.data(), widened, 8);
  to_half(widened, g_yh.data(), 8);
  const unsigned long after = heap_allocations();
  TA_CHECK_MSG(bad == 0, "%zu calls failed", bad);
  TA_CHECK_MSG(after == before, "%lu heap allocations", after - before);
}
