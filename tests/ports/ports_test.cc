// The port list (tinyattn/port_list.h) is the one place ports are named; these
// checks keep everything derived from it honest: a port that is compiled in
// but not under test, or not reachable through the registry, fails here.
#include <cstring>

#include "support.h"
#include "tatest.h"
#include "tinyattn/kernels_i8.h"

using tinyattn::Port;

namespace {

struct ListEntry {
  Port port;
  const char* name;
  bool fused;
  bool int8;
};

constexpr ListEntry kList[] = {
#define TATEST_PORT_ENTRY(e, name, fused, int8) {Port::e, name, (fused) != 0, (int8) != 0},
    TINYATTN_PORT_LIST(TATEST_PORT_ENTRY)
#undef TATEST_PORT_ENTRY
};

// Whether `name` is an entry of the comma-separated `list`.
bool listed(const char* list, const char* name) {
  const size_t len = std::strlen(name);
  for (const char* p = list; *p;) {
    const char* end = std::strchr(p, ',');
    const size_t n = end ? static_cast<size_t>(end - p) : std::strlen(p);
    if (n == len && std::strncmp(p, name, len) == 0) return true;
    if (!end) break;
    p = end + 1;
  }
  return false;
}

bool under_test(Port port) {
  Port ports[tatest::kMaxPorts];
  const size_t n = tatest::ports_under_test(ports);
  for (size_t i = 0; i < n; ++i)
    if (ports[i] == port) return true;
  return false;
}

}  // namespace

TA_CASE("ports: the registry reports the ports the build compiled, and every one of them is under test") {
  // TATEST_PORTS_BUILT: the ports CMake compiled (ports/CMakeLists.txt).
  size_t compiled = 0;
  for (const ListEntry& e : kList) {
    const bool built = listed(TATEST_PORTS_BUILT, e.name);
    compiled += built ? 1 : 0;
    TA_CHECK_MSG(tinyattn::port_compiled(e.port) == built, "%s: the build says %s, the registry says %s", e.name,
                 built ? "compiled" : "not compiled", tinyattn::port_compiled(e.port) ? "compiled" : "not compiled");
    TA_CHECK_MSG(under_test(e.port) == built, "%s: compiled %d but under test %d (a compiled port this CPU "
                 "cannot run is not tested)", e.name, built ? 1 : 0, under_test(e.port) ? 1 : 0);
  }
  TA_CHECK_MSG(compiled >= 1 && std::strlen(TATEST_PORTS_BUILT) > 0, "built: '%s'", TATEST_PORTS_BUILT);
  TA_CHECK(tinyattn::port_compiled(Port::kDefault));
  TA_CHECK(tinyattn::port_compiled(tinyattn::default_port()));
  TA_CHECK(!tinyattn::port_compiled(static_cast<Port>(tinyattn::kPortCount)));
}

TA_CASE("ports: the list's names and values") {
  TA_CHECK(tinyattn::kPortCount == static_cast<int>(tatest::kMaxPorts) + 1);
  TA_CHECK(std::strcmp(tinyattn::port_name(Port::kDefault), "default") == 0);
  for (size_t i = 0; i < tatest::kMaxPorts; ++i) {
    const ListEntry& e = kList[i];
    TA_CHECK(tinyattn::kAllPorts[i] == e.port);
    TA_CHECK_MSG(static_cast<size_t>(e.port) == i + 1, "%s: Port values follow the list after kDefault", e.name);
    TA_CHECK_MSG(std::strcmp(tinyattn::port_name(e.port), e.name) == 0, "%s: port_name gives %s", e.name,
                 tinyattn::port_name(e.port));
    for (size_t j = 0; j < i; ++j) TA_CHECK_MSG(std::strcmp(kList[j].name, e.name) != 0, "%s twice", e.name);
  }
  // The values existing code names keep their numbers.
  TA_CHECK(static_cast<int>(Port::kScalar) == 1);
  TA_CHECK(static_cast<int>(Port::kHighway) == 2);
  TA_CHECK(static_cast<int>(Port::kXsimd) == 3);
  TA_CHECK(static_cast<int>(Port::kMve) == 4);
}

TA_CASE("ports: each compiled port's tables match its line in the list") {
  const tinyattn::KernelsI8* scalar_i8 = tinyattn::kernels_i8(Port::kScalar);
  for (const ListEntry& e : kList) {
    const tinyattn::KernelsF32* k = tinyattn::kernels_f32(e.port);
    if (!k) continue;
    TA_CHECK_MSG(std::strcmp(k->port, e.name) == 0, "%s: its fp32 table says %s", e.name, k->port);
    // The driver builds its fused-block path only where a compiled port's
    // fused column is 1: a table with those kernels must say so.
    TA_CHECK_MSG(e.fused || (!k->attend_block && !k->scores_block_transposed && !k->attend_fixed),
                 "%s/%s: has fused block kernels but its fused column is 0", e.name, k->simd_target());
    const tinyattn::KernelsI8* k8 = tinyattn::kernels_i8(e.port);
    TA_CHECK_MSG(k8 != nullptr, "%s: no int8 table", e.name);
    if (!k8) continue;
    // A port with int8 kernels may still run the scalar ones on a target
    // without vectors (Highway's SCALAR); one without them always does.
    TA_CHECK_MSG(k8 == scalar_i8 || (e.int8 && std::strcmp(k8->port, e.name) == 0),
                 "%s: its int8 table says %s (int8 column %d)", e.name, k8->port, e.int8 ? 1 : 0);
  }
}

TA_CASE("ports: port_simd_target names the target each compiled port's kernels run, \"none\" elsewhere") {
  // The public form of the tables' simd_target (what firmware reports at boot
  // without the port contract).
  for (const ListEntry& e : kList) {
    const tinyattn::KernelsF32* k = tinyattn::kernels_f32(e.port);
    const char* got = tinyattn::port_simd_target(e.port);
    TA_CHECK_MSG(got != nullptr && std::strcmp(got, k ? k->simd_target() : "none") == 0, "%s: %s", e.name,
                 got ? got : "(null)");
  }
  TA_CHECK(std::strcmp(tinyattn::port_simd_target(Port::kDefault),
                       tinyattn::port_simd_target(tinyattn::default_port())) == 0);
  TA_CHECK(std::strcmp(tinyattn::port_simd_target(static_cast<Port>(tinyattn::kPortCount)), "none") == 0);
}

TA_CASE("ports: the default port's tables bound at compile time are the registry's for kDefault") {
  // Attention<S> without Options and AttentionI8 reach the tables through
  // these, so that an image links only the default port's kernels.
  TA_CHECK(tinyattn::default_kernels_f32() == tinyattn::kernels_f32(Port::kDefault));
  TA_CHECK(tinyattn::default_kernels_f32() == tinyattn::kernels_f32(tinyattn::default_port()));
  TA_CHECK(tinyattn::default_kernels_i8() == tinyattn::kernels_i8(Port::kDefault));
  TA_CHECK(tinyattn::default_kernels_i8() == tinyattn::kernels_i8(tinyattn::default_port()));
  TA_CHECK(tinyattn::default_kernels_i8() != nullptr);
}
