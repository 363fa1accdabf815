// Firmware example: what a device does with tinyattn at boot and at run time.
//
//   1. power-on self-test of the kernels on this silicon (tinyattn::selftest)
//   2. a small attention workload with a compile-time shape: 2 query heads
//      sharing one key/value head (grouped-query), causal mask
//   3. results on the board's output (ending in a Unity summary line, like
//      the tests); the exit status says pass (0) or fail (1)
//
// No heap, no exceptions, no RTTI, no printf: everything is static and text
// goes out through tinyattn_board_write (the runtime's UART output by
// default; define your own to write elsewhere).
// Copy this file and the board's example/CMakeLists.txt to start a firmware.
#include <cstddef>
#include <cstdint>

#include "board.h"
#include "tinyattn/tinyattn.h"

#ifndef TINYATTN_EXAMPLE_SELFTEST
#define TINYATTN_EXAMPLE_SELFTEST 0
#endif
#if TINYATTN_EXAMPLE_SELFTEST
#include "tinyattn/selftest.h"
#endif

namespace {

using Shape = tinyattn::Shape</*N=*/8, /*M=*/8, /*Dk=*/16, /*Dv=*/16, /*Hq=*/2, /*Hkv=*/1>;
using Attn = tinyattn::Attention<Shape>;

// Static: the whole RAM cost is visible in .bss (the size report).
Attn g_attention;
Attn::Q g_q;
Attn::K g_k;
Attn::V g_v;
Attn::Y g_y;
Attn::Weights g_weights;

void write(const char* text) { tinyattn_board_write(text); }

// Decimal text without printf: sign, integer part, `decimals` digits.
void write_fixed(float value, int decimals) {
  char buf[32];
  size_t n = 0;
  if (value != value) {
    write("nan");
    return;
  }
  if (value < 0) {
    buf[n++] = '-';
    value = -value;
  }
  uint32_t scale = 1;
  for (int d = 0; d < decimals; ++d) scale *= 10;
  const uint64_t fixed = static_cast<uint64_t>(static_cast<double>(value) * scale + 0.5);
  uint64_t whole = fixed / scale;
  uint32_t frac = static_cast<uint32_t>(fixed % scale);
  char digits[24];
  size_t k = 0;
  do {
    digits[k++] = static_cast<char>('0' + whole % 10);
    whole /= 10;
  } while (whole != 0 && k < sizeof digits);
  while (k) buf[n++] = digits[--k];
  if (decimals > 0) {
    buf[n++] = '.';
    for (int d = decimals - 1; d >= 0; --d) {
      buf[n + static_cast<size_t>(d)] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    n += static_cast<size_t>(decimals);
  }
  buf[n] = '\0';
  write(buf);
}

void write_unsigned(uint32_t value) {
  char buf[12];
  size_t k = sizeof buf - 1;
  buf[k] = '\0';
  do {
    buf[--k] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && k > 0);
  write(buf + k);
}

// Deterministic inputs in [-1, 1) (a 32-bit LCG: same numbers on every target).
void fill(float* x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
}

float abs_value(float x) { return x < 0 ? -x : x; }

// Helium when the build has it (Cortex-M55), else the build's default port.
tinyattn::Port pick_port() {
  return tinyattn::port_compiled(tinyattn::Port::kMve) ? tinyattn::Port::kMve : tinyattn::Port::kDefault;
}

bool run_workload(tinyattn::Port port) {
  fill(g_q.data(), g_q.size(), 1u);
  fill(g_k.data(), g_k.size(), 2u);
  fill(g_v.data(), g_v.size(), 3u);

  tinyattn::Options options;
  options.port = port;
  const tinyattn::Status status =
      g_attention(g_q, g_k, g_v, g_y, tinyattn::Mask::causal_top_left(), &g_weights, options);
  write("workload: Attention<Shape<8,8,16,16,2,1>> causal: ");
  write(tinyattn::to_string(status));
  write("\n");
  if (status != tinyattn::Status::kOk) return false;

  constexpr tinyattn::Dims d = Attn::dims;
  // The seed's properties: every row of weights sums to 1, causal rows put
  // no weight on future keys, and each output lies within the range of V.
  float worst_row_sum = 0.0f;
  float future_weight = 0.0f;
  float hull_excess = 0.0f;
  for (size_t h = 0; h < d.hq; ++h) {
    for (size_t i = 0; i < d.n; ++i) {
      const float* a = &g_weights[(h * d.n + i) * d.m];
      float sum = 0.0f;
      for (size_t j = 0; j < d.m; ++j) {
        sum += a[j];
        if (j > i) future_weight += abs_value(a[j]);
      }
      if (abs_value(sum - 1.0f) > worst_row_sum) worst_row_sum = abs_value(sum - 1.0f);
      for (size_t c = 0; c < d.dv; ++c) {
        float lo = g_v[c], hi = g_v[c];
        for (size_t j = 1; j <= i; ++j) {
          const float v = g_v[j * d.dv + c];
          lo = v < lo ? v : lo;
          hi = v > hi ? v : hi;
        }
        const float y = g_y[(h * d.n + i) * d.dv + c];
        const float excess = y < lo ? lo - y : (y > hi ? y - hi : 0.0f);
        hull_excess = excess > hull_excess ? excess : hull_excess;
      }
    }
  }
  float checksum = 0.0f;
  for (float y : g_y) checksum += y;

  write("  y[0][0][0..3] =");
  for (size_t c = 0; c < 4; ++c) {
    write(" ");
    write_fixed(g_y[c], 6);
  }
  write("\n  sum(y) = ");
  write_fixed(checksum, 6);
  write("\n  max |row sum - 1| = ");
  write_fixed(worst_row_sum, 8);
  write("\n  weight on masked keys = ");
  write_fixed(future_weight, 8);
  write("\n  max distance outside the value hull = ");
  write_fixed(hull_excess, 8);
  write("\n  RAM of the attention object: ");
  write_unsigned(static_cast<uint32_t>(sizeof g_attention));
  write(" bytes\n");
  return worst_row_sum <= 1e-5f && future_weight == 0.0f && hull_excess <= 1e-5f;
}

}  // namespace

int main() {
  const tinyattn::Port port = pick_port();
  const bool compiled = tinyattn::port_compiled(port);
  write("tinyattn firmware example\n  port: ");
  write(compiled ? tinyattn::port_name(port == tinyattn::Port::kDefault ? tinyattn::default_port() : port) : "none");
  write("/");
  write(tinyattn::port_simd_target(port));
  write("\n");

  bool ok = compiled;
#if TINYATTN_EXAMPLE_SELFTEST
  static tinyattn::SelftestReport report;  // static: keeps the stack small
  const tinyattn::Status st =
      tinyattn::selftest(&report, port, &write, tinyattn::SelftestFormat::kBoth);
  write("self-test: ");
  write(st == tinyattn::Status::kOk ? (report.passed() ? "PASS" : "FAIL") : tinyattn::to_string(st));
  write("\n");
  ok = ok && st == tinyattn::Status::kOk && report.passed();
#else
  write("self-test: not built into this library version\n");
#endif

  const bool workload_ok = run_workload(port);
  ok = ok && workload_ok;
  // The same Unity transcript as the test suites, so one parser counts it.
  write(workload_ok ? "firmware.cc:1:example_workload:PASS\n" : "firmware.cc:1:example_workload:FAIL: properties\n");
  write(workload_ok ? "\n-----------------------\n1 Tests 0 Failures 0 Ignored\nOK\n"
                    : "\n-----------------------\n1 Tests 1 Failures 0 Ignored\nFAIL\n");
  write(ok ? "example: PASS\n" : "example: FAIL\n");
  return ok ? 0 : 1;
}
