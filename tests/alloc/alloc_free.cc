// Allocation freedom: forward() and Attention<> never touch the heap, for every
// port and every mask kind. This binary counts every heap allocation in the
// process (tests/support/alloc_fixture.h says how); the first case proves the
// counter moves for each kind of allocation.
#include <cstddef>

#include "alloc_fixture.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Port;
using tinyattn::Status;
using namespace tatest;

namespace {

using Gqa = tinyattn::Attention<tinyattn::Shape<9, 13, 7, 5, 4, 2>>;
Gqa g_attention;
Gqa::Q g_q;
Gqa::K g_k;
Gqa::V g_v;
Gqa::Y g_y;
Gqa::Weights g_w;

}  // namespace

TA_CASE("alloc: the counter sees malloc, calloc, realloc and every operator new") { check_allocation_counter(); }

TA_CASE("alloc: forward() allocates nothing, for every port, mask kind and output combination") {
  const Dims d{9, 13, 7, 5, 4, 2};
  Arena::Scope scope;
  Problem p = make_problem(d, 17);
  const EveryMask masks(d, 3);
  TA_CHECK((p.ok && masks.ok()));
  if (!(p.ok && masks.ok())) return;
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t pi = 0; pi < np; ++pi)
    for (size_t mi = 0; mi < masks.size(); ++mi)
      for (int outputs = 0; outputs < 3; ++outputs) {  // Y only; Y + A; Y + A + lse
        tinyattn::Options o;
        o.port = ports[pi];
        const tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, outputs >= 1 ? p.weights : nullptr,
                                     outputs >= 2 ? p.lse : nullptr};
        const unsigned long before = heap_allocations();
        const Status s = tinyattn::forward(d, io, {p.workspace, tinyattn::forward_workspace_bytes(d)}, masks[mi], o);
        const unsigned long used = heap_allocations() - before;
        TA_CHECK_MSG(s == Status::kOk, "%s mask %zu: %s", tinyattn::port_name(ports[pi]), mi, tinyattn::to_string(s));
        TA_CHECK_MSG(used == 0, "%s mask %zu outputs %d: %lu heap allocations", tinyattn::port_name(ports[pi]), mi,
                     outputs, used);
      }
}

TA_CASE("alloc: the tiled path (M > kKeyTile, no weights) allocates nothing") {
  const Dims d{3, tinyattn::kKeyTile + 45, 8, 4, 2, 1};
  Arena::Scope scope;
  Problem p = make_problem(d, 23);
  TA_CHECK(p.ok);
  if (!p.ok) return;
  TA_CHECK(tinyattn::forward_uses_tiles(d, false));
  const Mask masks[] = {Mask::none(), Mask::causal_bottom_right(), Mask::key_padding(270),
                        Mask::sliding_window(100, 0, tinyattn::Align::kBottomRight)};
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t pi = 0; pi < np; ++pi)
    for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; ++mi) {
      tinyattn::Options o;
      o.port = ports[pi];
      const tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, nullptr, p.lse};
      const unsigned long before = heap_allocations();
      const Status s =
          tinyattn::forward(d, io, {p.workspace, tinyattn::forward_workspace_bytes(d, false)}, masks[mi], o);
      const unsigned long used = heap_allocations() - before;
      TA_CHECK_MSG(s == Status::kOk, "%s mask %zu: %s", tinyattn::port_name(ports[pi]), mi, tinyattn::to_string(s));
      TA_CHECK_MSG(used == 0, "%s mask %zu: %lu heap allocations", tinyattn::port_name(ports[pi]), mi, used);
    }
}

TA_CASE("alloc: Attention<> and the error paths allocate nothing") {
  Rng rng(5);
  rng.fill_normal(g_q.data(), g_q.size());
  rng.fill_normal(g_k.data(), g_k.size());
  rng.fill_normal(g_v.data(), g_v.size());
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t pi = 0; pi < np; ++pi) {
    tinyattn::Options o;
    o.port = ports[pi];
    unsigned long before = heap_allocations();
    const Status s1 = g_attention(g_q, g_k, g_v, g_y, Mask::causal_top_left(), &g_w, o);
    const Status s2 = g_attention(g_q, g_k, g_v, g_y, Mask::sliding_window(1, 1, tinyattn::Align::kTopLeft), nullptr, o);
    unsigned long used = heap_allocations() - before;
    TA_CHECK((s1 == Status::kOk && s2 == Status::kOk));
    TA_CHECK_MSG(used == 0, "%s: Attention<> made %lu heap allocations", tinyattn::port_name(ports[pi]), used);
    before = heap_allocations();
    const Status bad = g_attention(g_q, g_k, g_v, g_y, Mask::key_padding(99), nullptr, o);
    used = heap_allocations() - before;
    TA_CHECK(bad == Status::kBadMask);
    TA_CHECK_MSG(used == 0, "%s: an error return made %lu heap allocations", tinyattn::port_name(ports[pi]), used);
  }
}

TA_CASE("alloc: the reference allocates nothing either") {
  const Dims d{5, 7, 3, 4, 2, 1};
  Arena::Scope scope;
  Problem p = make_problem(d, 9);
  TA_CHECK(p.ok);
  if (!p.ok) return;
  const unsigned long before = heap_allocations();
  tinyattn::ref::forward(d, p.q, p.k, p.v, Mask::causal_bottom_right(), 0.5, p.y_ref, p.weights_ref, p.lse_ref);
  const unsigned long used = heap_allocations() - before;
  TA_CHECK_MSG(used == 0, "ref::forward made %lu heap allocations", used);
}
