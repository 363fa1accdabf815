// A firmware built without CMake (Makefile beside this file, docs/firmware.md
// "Without CMake"): the build's default port, its fp32 and int8 power-on
// self-tests, then an fp32 forward() and a forward_i8() of one causal
// problem (2 query heads on 1 key/value head, N = M = 8, Dk = Dv = 16) on
// the default port. The fp32 output is checked against attention computed
// here in double, the int8 output against fp32 and against its known bytes
// (every port gives the same integers). Exit status 0 when all hold.
// -DMAKE_FIRMWARE_SELFTEST=0 leaves the self-tests out (the image size
// figures of docs/firmware.md).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "board.h"  // tinyattn_board_write: the board runtime's output
#include "tinyattn/quant.h"
#include "tinyattn/selftest.h"
#include "tinyattn/tinyattn.h"

#ifndef MAKE_FIRMWARE_SELFTEST
#define MAKE_FIRMWARE_SELFTEST 1
#endif

namespace {

constexpr tinyattn::Dims kDims = [] {
  tinyattn::Dims d;
  d.n = 8;
  d.m = 8;
  d.dk = 16;
  d.dv = 16;
  d.hq = 2;
  d.hkv = 1;
  return d;
}();

// FNV-1a of the int8 output: the same on every board and every port (the
// int8 path's bytes are specified, docs/quant.md).
constexpr uint32_t kExpectedInt8Hash = 0xd543d4aau;

float q[kDims.q_elems()], k[kDims.k_elems()], v[kDims.v_elems()], y[kDims.y_elems()];
int8_t q8[kDims.q_elems()], k8[kDims.k_elems()], v8[kDims.v_elems()], y8[kDims.y_elems()];
alignas(tinyattn::kWorkspaceAlign) unsigned char ws[tinyattn::forward_workspace_bytes(kDims, false)];
alignas(tinyattn::kWorkspaceAlign) unsigned char ws8[tinyattn::forward_i8_workspace_bytes(kDims)];
tinyattn::Int8HeadPlan plans[kDims.hq];
#if MAKE_FIRMWARE_SELFTEST
// Static: the reports are larger than a small stack wants.
tinyattn::SelftestReport report;
tinyattn::SelftestI8Report report8;
#endif

int failures = 0;

void write(const char* text) { tinyattn_board_write(text); }

void write_unsigned(uint32_t value, unsigned base = 10) {
  char buf[12];
  size_t i = sizeof buf - 1;
  buf[i] = '\0';
  do {
    const uint32_t digit = value % base;
    buf[--i] = static_cast<char>(digit < 10 ? '0' + digit : 'a' + digit - 10);
    value /= base;
  } while (value != 0 && i > 0);
  write(buf + i);
}

// value rounded to `decimals` (at most 9) decimals, without printf
// (newlib-nano's needs the heap).
void write_fixed(double value, int decimals) {
  if (value < 0) {
    write("-");
    value = -value;
  }
  uint32_t unit = 1;
  for (int i = 0; i < decimals; ++i) unit *= 10;
  const uint64_t scaled = static_cast<uint64_t>(value * unit + 0.5);
  write_unsigned(static_cast<uint32_t>(scaled / unit));
  write(".");
  char frac[10];
  uint32_t f = static_cast<uint32_t>(scaled % unit);
  for (int i = decimals - 1; i >= 0; --i, f /= 10) frac[i] = static_cast<char>('0' + f % 10);
  frac[decimals] = '\0';
  write(frac);
}

void check(bool ok, const char* what) {
  if (ok) return;
  write("make_firmware: FAILED: ");
  write(what);
  write("\n");
  ++failures;
}

// Inputs on the int8 grid (multiples of 1/16 in [-1, 1)): both paths see the same values.
void fill(float* x, int8_t* x8, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x8[i] = static_cast<int8_t>(static_cast<int>(seed >> 27) - 16);
    x[i] = static_cast<float>(x8[i]) / 16.0f;
  }
}

// Causal (top-left) attention in double, grouped heads: the worst |y - ref|.
double reference_error() {
  const double scale = 1.0 / std::sqrt(static_cast<double>(kDims.dk));
  double worst = 0.0;
  for (size_t h = 0; h < kDims.hq; ++h) {
    const size_t kv = h / kDims.group();
    for (size_t i = 0; i < kDims.n; ++i) {
      double s[kDims.m], top = -1e300, sum = 0.0;
      for (size_t j = 0; j <= i; ++j) {
        double dot = 0.0;
        for (size_t c = 0; c < kDims.dk; ++c)
          dot += static_cast<double>(q[(h * kDims.n + i) * kDims.dk + c]) * k[(kv * kDims.m + j) * kDims.dk + c];
        s[j] = dot * scale;
        top = s[j] > top ? s[j] : top;
      }
      for (size_t j = 0; j <= i; ++j) sum += (s[j] = std::exp(s[j] - top));
      for (size_t c = 0; c < kDims.dv; ++c) {
        double ref = 0.0;
        for (size_t j = 0; j <= i; ++j) ref += s[j] / sum * v[(kv * kDims.m + j) * kDims.dv + c];
        const double err = std::fabs(ref - static_cast<double>(y[(h * kDims.n + i) * kDims.dv + c]));
        worst = err > worst ? err : worst;
      }
    }
  }
  return worst;
}

}  // namespace

int main() {
  using tinyattn::Port;
  using tinyattn::Status;
  // Which ports the build has and which one Port::kDefault is: the defines
  // TINYATTN_PORTS_BUILT and TINYATTN_DEFAULT_PORT (scripts/sources.py).
  write("make_firmware: ports");
  for (Port p : tinyattn::kAllPorts) {
    if (!tinyattn::port_compiled(p)) continue;
    write(" ");
    write(tinyattn::port_name(p));
  }
  write("\nmake_firmware: default port ");
  write(tinyattn::port_name(tinyattn::default_port()));
  write("\n");

#if MAKE_FIRMWARE_SELFTEST
  // Power-on self-tests of the default port: known answers and properties.
  check(tinyattn::selftest(&report, Port::kDefault, write) == Status::kOk && report.passed(), "fp32 self-test");
  check(tinyattn::selftest_int8(&report8, Port::kDefault, write) == Status::kOk && report8.passed(), "int8 self-test");
#endif

  fill(q, q8, kDims.q_elems(), 1u);
  fill(k, k8, kDims.k_elems(), 2u);
  fill(v, v8, kDims.v_elems(), 3u);
  const tinyattn::Mask causal = tinyattn::Mask::causal_top_left();

  tinyattn::ForwardIo io;
  io.q = q;
  io.k = k;
  io.v = v;
  io.y = y;
  check(tinyattn::forward(kDims, io, tinyattn::Workspace{ws, sizeof ws}, causal) == Status::kOk, "fp32 forward");
  const double error = reference_error();
  double sum = 0.0;
  for (float x : y) sum += x;
  write("make_firmware: fp32 forward: sum(y) ");
  write_fixed(sum, 6);
  write(", max |y - reference| ");
  write_fixed(error, 9);
  write("\n");
  check(error <= 1e-5, "fp32 forward against the reference");

  // The same problem in int8: scales 1/16 in, 1/64 out, zero points 0.
  const float in_scale = 1.0f / 16.0f, out_scale = 1.0f / 64.0f;
  tinyattn::Int8Scheme scheme;
  scheme.q.scale = scheme.k.scale = scheme.v.scale = &in_scale;
  scheme.y.scale = &out_scale;
  check(tinyattn::plan_int8(kDims, scheme, plans, kDims.hq) == Status::kOk, "int8 plan");
  tinyattn::ForwardIoI8 io8;
  io8.q = q8;
  io8.k = k8;
  io8.v = v8;
  io8.y = y8;
  check(tinyattn::forward_i8(kDims, io8, tinyattn::Int8Plan{plans, kDims.hq}, tinyattn::Workspace{ws8, sizeof ws8},
                             causal) == Status::kOk,
        "int8 forward");
  uint32_t hash = 2166136261u;
  for (int8_t x : y8) hash = (hash ^ static_cast<uint8_t>(x)) * 16777619u;
  bool near = true;  // within two output steps of fp32 (docs/quant.md's bound is tighter)
  for (size_t i = 0; i < kDims.y_elems(); ++i)
    near = near && std::fabs(static_cast<float>(y8[i]) * out_scale - y[i]) <= 2.0f * out_scale;
  write("make_firmware: int8 forward: FNV-1a of y 0x");
  write_unsigned(hash, 16);
  write("\n");
  check(near, "int8 y near fp32 y");
  check(hash == kExpectedInt8Hash, "int8 y equals its known bytes");

  write(failures ? "make_firmware: FAIL\n" : "make_firmware: OK\n");
  return failures ? 1 : 0;
}
