// Allocation freedom of the backward pass: backward() in both modes,
// AttentionBackward<> and the softmax row functions never touch the heap, for every
// port and mask kind. Counts every heap allocation in the process through
// tests/support/alloc_fixture.h. Hosted targets only.
#include <cstddef>

#include "alloc_fixture.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/tinyattn.h"

using tinyattn::BackwardMode;
using tinyattn::Dims;
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

TA_CASE("backward alloc: the counter sees malloc, calloc, realloc and every operator new") {
  check_allocation_counter();
}

TA_CASE("alloc: backward() and the softmax row functions allocate nothing, every port, mode and mask kind") {
  constexpr Dims d = S::dims;
  Arena::Scope scope;
  const EveryMask masks(d, 5);
  float* ds = alloc<float>(d.weight_elems());
  const size_t ws_bytes = tinyattn::backward_workspace_bytes(d, BackwardMode::kRecompute);
  unsigned char* ws = alloc<unsigned char>(ws_bytes);
  TA_CHECK((masks.ok() && ds && ws));
  if (!(masks.ok() && ds && ws)) return;
  Rng rng(5);
  rng.fill_normal(g_q.data(), g_q.size());
  rng.fill_normal(g_k.data(), g_k.size());
  rng.fill_normal(g_v.data(), g_v.size());
  rng.fill_normal(g_dy.data(), g_dy.size());
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t pi = 0; pi < np; ++pi)
    for (size_t mi = 0; mi < masks.size(); ++mi) {
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
          const unsigned long before = heap_allocations();
          const Status s = tinyattn::backward(d, mode, io, {ws, ws_bytes}, masks[mi], o);
          const unsigned long used = heap_allocations() - before;
          TA_CHECK_MSG(s == Status::kOk, "%s mask %zu: %s", pn, mi, tinyattn::to_string(s));
          TA_CHECK_MSG(used == 0, "%s mask %zu mode %d y %d: %lu heap allocations", pn, mi, static_cast<int>(mode),
                       with_y, used);
        }
      const unsigned long before = heap_allocations();
      const Status r = g_recompute(g_q, g_k, g_v, g_dy, g_lse, g_dq, g_dk, g_dv, masks[mi], o);
      const Status a = g_saved(g_q, g_k, g_v, g_dy, g_a, g_dq, g_dk, g_dv, masks[mi], o);
      const Status sm = tinyattn::softmax(g_q.data(), g_dq.data(), d.dk, ports[pi]);
      const Status vjp = tinyattn::softmax_vjp(g_dq.data(), g_q.data(), g_dk.data(), d.dk, ports[pi]);
      const unsigned long used = heap_allocations() - before;
      TA_CHECK_MSG(r == Status::kOk && a == Status::kOk && sm == Status::kOk && vjp == Status::kOk, "%s: %s %s %s %s",
                   pn, tinyattn::to_string(r), tinyattn::to_string(a), tinyattn::to_string(sm), tinyattn::to_string(vjp));
      TA_CHECK_MSG(used == 0, "%s mask %zu: AttentionBackward<> or softmax made %lu heap allocations", pn, mi, used);
    }
}
