// Allocation freedom of the backward pass: backward() in both modes,
// AttentionBackward<> and the softmax row functions never touch the heap, for every
// port and mask kind. Counts every heap allocation in the process through
// tests/alloc/counting_allocator.cc (see tests/alloc/alloc_free.cc, which also
// proves the counter sees each kind of allocation). Hosted targets only.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/tinyattn.h"

// From counting_allocator.cc.
unsigned long tinyattn_test_allocations();

using tinyattn::BackwardMode;
using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Port;
using tinyattn::Status;
using namespace tatest;

namespace {

using S = tinyattn::Shape<9, 13, 7, 5, 4, 2>;
tinyattn::Attention<S> g_attention;
tinyattn::AttentionBackward<S> g_recompute;
tinyattn::AttentionBackward<S, BackwardMode::kSavedWeights> g_saved;
tinyattn::Attention<S>::Q g_q, g_dq;
tinyattn::Attention<S>::K g_k, g_dk;
tinyattn::Attention<S>::V g_v, g_dv;
tinyattn::Attention<S>::Y g_y, g_dy;
tinyattn::Attention<S>::Weights g_a;
tinyattn::Attention<S>::Lse g_lse;

}  // namespace

TA_CASE("alloc: backward() and the softmax row functions allocate nothing, every port, mode and mask kind") {
  constexpr Dims d = S::dims;
  Arena::Scope scope;
  uint8_t* keep = alloc<uint8_t>(d.n * d.m);
  uint8_t* bits = alloc<uint8_t>(d.n * tinyattn::keep_bits_row_bytes(d.m));
  float* bias = alloc<float>(d.n * d.m);
  float* ds = alloc<float>(d.weight_elems());
  const size_t ws_bytes = tinyattn::backward_workspace_bytes(d, BackwardMode::kRecompute);
  unsigned char* ws = alloc<unsigned char>(ws_bytes);
  TA_CHECK((keep && bits && bias && ds && ws));
  if (!(keep && bits && bias && ds && ws)) return;
  Rng rng(5);
  for (size_t x = 0; x < d.n * d.m; ++x) {
    keep[x] = rng.uniform(0.0f, 1.0f) < 0.6f;
    bias[x] = x % 7 == 0 ? -std::numeric_limits<float>::infinity() : rng.uniform(-1.0f, 1.0f);
  }
  for (size_t x = 0; x < d.n * tinyattn::keep_bits_row_bytes(d.m); ++x) bits[x] = static_cast<uint8_t>(rng.next_u64());
  rng.fill_normal(g_q.data(), g_q.size());
  rng.fill_normal(g_k.data(), g_k.size());
  rng.fill_normal(g_v.data(), g_v.size());
  rng.fill_normal(g_dy.data(), g_dy.size());
  Mask combined = Mask::causal_bottom_right();
  combined.window = {3, tinyattn::kUnbounded, tinyattn::Align::kBottomRight};
  combined.kv_len = 11;
  combined.keep_bits = bits;
  combined.bias = bias;
  const Mask masks[] = {Mask::none(),         Mask::causal_top_left(),
                        Mask::causal_bottom_right(), Mask::sliding_window(2, 2, tinyattn::Align::kTopLeft),
                        Mask::key_padding(0), Mask::keep_bytes(keep),
                        Mask::keep_bitmask(bits), Mask::additive(bias),
                        combined};
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t pi = 0; pi < np; ++pi)
    for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; ++mi) {
      tinyattn::Options o;
      o.port = ports[pi];
      const char* pn = tinyattn::port_name(ports[pi]);
      TA_CHECK(g_attention.run({g_q.data(), g_k.data(), g_v.data(), g_y.data(), g_a.data(), g_lse.data()},
                               masks[mi], o) == Status::kOk);
      for (BackwardMode mode : {BackwardMode::kSavedWeights, BackwardMode::kRecompute})
        for (int with_y = 0; with_y < 2; ++with_y) {
          tinyattn::BackwardIo io;
          io.q = g_q.data();
          io.k = g_k.data();
          io.v = g_v.data();
          io.dy = g_dy.data();
          io.weights = g_a.data();
          io.lse = g_lse.data();
          io.y = with_y ? g_y.data() : nullptr;
          io.dq = g_dq.data();
          io.dk = g_dk.data();
          io.dv = g_dv.data();
          io.ds = ds;
          const unsigned long before = tinyattn_test_allocations();
          const Status s = tinyattn::backward(d, mode, io, {ws, ws_bytes}, masks[mi], o);
          const unsigned long used = tinyattn_test_allocations() - before;
          TA_CHECK_MSG(s == Status::kOk, "%s mask %zu: %s", pn, mi, tinyattn::to_string(s));
          TA_CHECK_MSG(used == 0, "%s mask %zu mode %d y %d: %lu heap allocations", pn, mi, static_cast<int>(mode),
                       with_y, used);
        }
      const unsigned long before = tinyattn_test_allocations();
      const Status r = g_recompute(g_q, g_k, g_v, g_dy, g_lse, g_dq, g_dk, g_dv, masks[mi], o);
      const Status a = g_saved(g_q, g_k, g_v, g_dy, g_a, g_dq, g_dk, g_dv, masks[mi], o);
      const Status sm = tinyattn::softmax(g_q.data(), g_dq.data(), d.dk, ports[pi]);
      const Status vjp = tinyattn::softmax_vjp(g_dq.data(), g_q.data(), g_dk.data(), d.dk, ports[pi]);
      const unsigned long used = tinyattn_test_allocations() - before;
      TA_CHECK_MSG(r == Status::kOk && a == Status::kOk && sm == Status::kOk && vjp == Status::kOk, "%s: %s %s %s %s",
                   pn, tinyattn::to_string(r), tinyattn::to_string(a), tinyattn::to_string(sm), tinyattn::to_string(vjp));
      TA_CHECK_MSG(used == 0, "%s mask %zu: AttentionBackward<> or softmax made %lu heap allocations", pn, mi, used);
    }
}
