// Bad arguments to backward() and to the row softmax functions: each returns
// its Status and writes nothing (the same canary-pool check as status_test.cc).
#include <cstdint>
#include <cstring>
#include <limits>

#include "canary_pool.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/backward.h"
#include "tinyattn/selftest_kernels.h"
#include "tinyattn/softmax.h"

using tinyattn::BackwardIo;
using tinyattn::BackwardMode;
using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Options;
using tinyattn::Port;
using tinyattn::Status;
using tinyattn::Workspace;
using namespace tatest;

namespace {

constexpr size_t kPoolBytes = 12 * 1024;

// A valid backward call (GQA, causal + bias, every optional input and output),
// its tensors carved from one canary pool, its weights and lse from forward().
struct Call {
  CanaryPool pool{kPoolBytes};
  Dims d{3, 5, 4, 2, 4, 2};
  BackwardMode mode = BackwardMode::kSavedWeights;
  BackwardIo io;
  Workspace ws;
  Mask mask;
  Options opt;
  float* bias;
  bool ok;

  Call() {
    auto carve = [&](size_t floats) { return pool.carve<float>(floats); };
    Rng rng(2);
    float* q = carve(d.q_elems());
    float* k = carve(d.k_elems());
    float* v = carve(d.v_elems());
    float* dy = carve(d.y_elems());
    float* y = carve(d.y_elems());
    float* weights = carve(d.weight_elems());
    float* lse = carve(d.lse_elems());
    bias = carve(d.n * d.m);
    rng.fill_normal(q, d.q_elems());
    rng.fill_normal(k, d.k_elems());
    rng.fill_normal(v, d.v_elems());
    rng.fill_normal(dy, d.y_elems());
    rng.fill_uniform(bias, d.n * d.m, -1.0f, 1.0f);
    mask = Mask::causal_bottom_right();
    mask.bias = bias;
    float* fws = carve(tinyattn::forward_workspace_bytes(d) / sizeof(float));
    ok = tinyattn::forward(d, {q, k, v, y, weights, lse}, {fws, tinyattn::forward_workspace_bytes(d)}, mask) ==
         Status::kOk;
    io = BackwardIo{q, k, v, dy, weights, lse, y, carve(d.q_elems()), carve(d.k_elems()), carve(d.v_elems()),
                    carve(d.weight_elems())};
    ws.bytes = tinyattn::backward_workspace_bytes(d, BackwardMode::kRecompute);  // enough for both modes
    ws.data = carve(ws.bytes / sizeof(float) + 1);
    ok = ok && pool.ok();
  }

  Status run() { return tinyattn::backward(d, mode, io, ws, mask, opt); }
};

template <class Edit>
void expect(Status want, const char* what, Edit edit) {
  expect_status<Call>("backward ", want, what, edit);
}

}  // namespace

TA_CASE("status backward: the valid call succeeds in both modes and writes") {
  expect(Status::kOk, "saved weights", [](Call&) {});
  expect(Status::kOk, "recompute", [](Call& c) { c.mode = BackwardMode::kRecompute; });
  Arena::Scope scope;
  Call c;
  TA_CHECK(c.ok);
  c.pool.snapshot();
  TA_CHECK(c.run() == Status::kOk);
  TA_CHECK_MSG(!c.pool.untouched(), "a successful backward left the pool unchanged");
}

TA_CASE("status backward: kUnsupported for a mode value that is not a BackwardMode") {
  expect(Status::kUnsupported, "mode 7", [](Call& c) { c.mode = static_cast<BackwardMode>(7); });
}

TA_CASE("status backward: dims, heads, mask, scale and port are checked as in forward()") {
  expect(Status::kBadDimension, "m = 0", [](Call& c) { c.d.m = 0; });
  expect(Status::kBadHeads, "hq 4 % hkv 3", [](Call& c) { c.d.hkv = 3; });
  expect(Status::kBadMask, "kv_len > M", [](Call& c) { c.mask.kv_len = 6; });
  expect(Status::kBadScale, "NaN scale", [](Call& c) { c.opt.scale = std::numeric_limits<float>::quiet_NaN(); });
  expect(Status::kBadScale, "softcap 0", [](Call& c) { c.opt.softcap = 0.0f; });
  expect(Status::kBadScale, "softcap -inf", [](Call& c) { c.opt.softcap = -std::numeric_limits<float>::infinity(); });
  expect(Status::kPortUnavailable, "port 200", [](Call& c) { c.opt.port = static_cast<Port>(200); });
  expect(Status::kMisaligned, "bias", [](Call& c) { c.mask.bias = misalign(c.mask.bias); });
}

TA_CASE("status backward: kNullPointer for each required pointer, per mode") {
  expect(Status::kNullPointer, "q", [](Call& c) { c.io.q = nullptr; });
  expect(Status::kNullPointer, "k", [](Call& c) { c.io.k = nullptr; });
  expect(Status::kNullPointer, "v", [](Call& c) { c.io.v = nullptr; });
  expect(Status::kNullPointer, "dy", [](Call& c) { c.io.dy = nullptr; });
  expect(Status::kNullPointer, "dq", [](Call& c) { c.io.dq = nullptr; });
  expect(Status::kNullPointer, "dk", [](Call& c) { c.io.dk = nullptr; });
  expect(Status::kNullPointer, "dv", [](Call& c) { c.io.dv = nullptr; });
  expect(Status::kNullPointer, "workspace", [](Call& c) { c.ws.data = nullptr; });
  expect(Status::kNullPointer, "weights (saved mode)", [](Call& c) { c.io.weights = nullptr; });
  expect(Status::kNullPointer, "lse (recompute mode)", [](Call& c) {
    c.mode = BackwardMode::kRecompute;
    c.io.lse = nullptr;
  });
  expect(Status::kOk, "no lse in saved mode", [](Call& c) { c.io.lse = nullptr; });
  expect(Status::kOk, "no y, no ds", [](Call& c) {
    c.io.y = nullptr;
    c.io.ds = nullptr;
  });
}

TA_CASE("status backward: kMisaligned, kWorkspaceTooSmall, kAliasing") {
  expect(Status::kMisaligned, "dy", [](Call& c) { c.io.dy = misalign(c.io.dy); });
  expect(Status::kMisaligned, "dk", [](Call& c) { c.io.dk = misalign(c.io.dk); });
  expect(Status::kMisaligned, "ds", [](Call& c) { c.io.ds = misalign(c.io.ds); });
  expect(Status::kWorkspaceTooSmall, "recompute with the saved-mode size", [](Call& c) {
    c.mode = BackwardMode::kRecompute;
    c.ws.bytes = tinyattn::backward_workspace_bytes(c.d, BackwardMode::kSavedWeights);
  });
  expect(Status::kWorkspaceTooSmall, "zero bytes", [](Call& c) { c.ws.bytes = 0; });
  expect(Status::kAliasing, "dq == q", [](Call& c) { c.io.dq = const_cast<float*>(c.io.q); });
  expect(Status::kAliasing, "dv over dk", [](Call& c) { c.io.dv = c.io.dk + 1; });
  expect(Status::kAliasing, "ds over the weights", [](Call& c) { c.io.ds = const_cast<float*>(c.io.weights); });
  expect(Status::kAliasing, "workspace over dy", [](Call& c) { c.ws.data = const_cast<float*>(c.io.dy); });
  expect(Status::kAliasing, "dk over the bias", [](Call& c) { c.io.dk = c.bias; });
}

TA_CASE("status softmax: every rejection leaves the output untouched") {
  Arena::Scope scope;
  const size_t n = 9;
  float* x = alloc<float>(2 * n + 16);
  float* p = alloc<float>(n + 16);
  for (size_t j = 0; j < 2 * n + 16; ++j) x[j] = static_cast<float>(j % 5) - 2.0f;
  struct Case {
    const char* what;
    Status want;
    const float* in;
    float* out;
    size_t n;
    Port port;
  };
  const Case cases[] = {
      {"null input", Status::kNullPointer, nullptr, p, n, Port::kDefault},
      {"null output", Status::kNullPointer, x, nullptr, n, Port::kDefault},
      {"n = 0", Status::kBadDimension, x, p, 0, Port::kDefault},
      {"n > kMaxDim", Status::kBadDimension, x, p, tinyattn::kMaxDim + 1, Port::kDefault},
      {"misaligned output", Status::kMisaligned, x, misalign(p), n, Port::kDefault},
      {"shifted overlap", Status::kAliasing, x, x + 1, n, Port::kDefault},
      {"port 200", Status::kPortUnavailable, x, p, n, static_cast<Port>(200)},
  };
  for (const Case& k : cases) {
    for (size_t j = 0; j < n + 16; ++j) p[j] = -7.0f;
    float snapshot[2 * 9 + 16];
    std::memcpy(snapshot, x, sizeof snapshot);
    const Status got = tinyattn::softmax(k.in, k.out, k.n, k.port);
    TA_CHECK_MSG(got == k.want, "softmax %s: got %s", k.what, tinyattn::to_string(got));
    bool untouched = std::memcmp(snapshot, x, sizeof snapshot) == 0;
    for (size_t j = 0; j < n + 16; ++j) untouched &= p[j] == -7.0f;
    TA_CHECK_MSG(untouched, "softmax %s wrote after %s", k.what, tinyattn::to_string(got));
    const Status vjp = tinyattn::softmax_vjp(k.in, x + n, k.out, k.n, k.port);
    if (k.want != Status::kAliasing) TA_CHECK_MSG(vjp == k.want, "softmax_vjp %s: got %s", k.what, tinyattn::to_string(vjp));
  }
  TA_CHECK(tinyattn::softmax(x, x, n) == Status::kOk);  // in place is allowed
}

TA_CASE("status softmax_rows, softmax_vjp_rows: every rejection leaves the outputs untouched") {
  Arena::Scope scope;
  constexpr size_t kPool = 96;
  float* x = alloc<float>(kPool);
  float* p = alloc<float>(kPool);
  if (!x || !p) TA_IGNORE("arena too small");
  const size_t n = 5, rows = 3;  // x: rows of ld 8; p: rows of ld 6
  const size_t huge = SIZE_MAX / 2;
  struct Case {
    const char* what;
    Status want;
    const float* in;
    float* out;
    size_t rows, n, ld_in, ld_out;
    Port port;
  };
  const Case cases[] = {
      {"null input", Status::kNullPointer, nullptr, p, rows, n, 8, 6, Port::kDefault},
      {"null output", Status::kNullPointer, x, nullptr, rows, n, 8, 6, Port::kDefault},
      {"rows = 0", Status::kBadDimension, x, p, 0, n, 8, 6, Port::kDefault},
      {"n = 0", Status::kBadDimension, x, p, rows, 0, 8, 6, Port::kDefault},
      {"n > kMaxDim", Status::kBadDimension, x, p, rows, tinyattn::kMaxDim + 1, SIZE_MAX, SIZE_MAX, Port::kDefault},
      {"ld_x < n", Status::kBadDimension, x, p, rows, n, n - 1, 6, Port::kDefault},
      {"ld_p < n", Status::kBadDimension, x, p, rows, n, 8, n - 1, Port::kDefault},
      {"rows * ld past the address space", Status::kBadDimension, x, p, huge, n, 8, 6, Port::kDefault},
      {"ld past the address space", Status::kBadDimension, x, p, 2, n, huge, 6, Port::kDefault},
      {"misaligned output", Status::kMisaligned, x, misalign(p), rows, n, 8, 6, Port::kDefault},
      {"misaligned input", Status::kMisaligned, misalign(x), p, rows, n, 8, 6, Port::kDefault},
      {"shifted overlap", Status::kAliasing, x, x + 1, rows, n, 8, 8, Port::kDefault},
      {"same start, other stride", Status::kAliasing, x, x, rows, n, 8, 6, Port::kDefault},
      {"output rows between the input rows", Status::kAliasing, x, x + 5, 2, n, 10, 10, Port::kDefault},
      {"port 200", Status::kPortUnavailable, x, p, rows, n, 8, 6, static_cast<Port>(200)},
  };
  for (const Case& k : cases) {
    for (size_t j = 0; j < kPool; ++j) x[j] = static_cast<float>(j % 7) - 3.0f, p[j] = -7.0f;
    const Status got = tinyattn::softmax_rows(k.in, k.out, k.rows, k.n, k.ld_in, k.ld_out, k.port);
    TA_CHECK_MSG(got == k.want, "softmax_rows %s: got %s", k.what, tinyattn::to_string(got));
    // dx over the same output, p and dp both the input matrix.
    const Status vjp = tinyattn::softmax_vjp_rows(k.in, k.in, k.out, k.rows, k.n, k.ld_in, k.ld_in, k.ld_out, k.port);
    TA_CHECK_MSG(vjp == k.want, "softmax_vjp_rows %s: got %s", k.what, tinyattn::to_string(vjp));
    bool untouched = true;
    for (size_t j = 0; j < kPool; ++j) untouched &= x[j] == static_cast<float>(j % 7) - 3.0f && p[j] == -7.0f;
    TA_CHECK_MSG(untouched, "softmax_rows/softmax_vjp_rows %s wrote after %s", k.what, tinyattn::to_string(got));
  }
  // In place: the same start and stride, or a single row whatever the strides.
  TA_CHECK(tinyattn::softmax_rows(x, x, rows, n, 8, 8) == Status::kOk);
  TA_CHECK(tinyattn::softmax_rows(x, x, 1, n, 8, 6) == Status::kOk);
  TA_CHECK(tinyattn::softmax_vjp_rows(x, p, x, rows, n, 8, 6, 8) == Status::kOk);
  TA_CHECK(tinyattn::softmax_vjp_rows(x, p, p, rows, n, 8, 6, 6) == Status::kOk);
  TA_CHECK(tinyattn::softmax_vjp_rows(x, p, p, rows, n, 8, 6, 8) == Status::kAliasing);
}

TA_CASE("status selftest: null report, unknown port and incomplete kernel tables are refused") {
  static tinyattn::SelftestReport report;
  report.count = 7;  // recognisable contents
  report.failures = 3;
  report.checks[0].name = "canary";
  const tinyattn::SelftestReport before = report;
  TA_CHECK(tinyattn::selftest(nullptr) == Status::kNullPointer);
  TA_CHECK(tinyattn::selftest(&report, static_cast<Port>(200)) == Status::kPortUnavailable);
  tinyattn::KernelsF32 broken = *tinyattn::kernels_f32(Port::kDefault);
  broken.weighted_sum = nullptr;  // a table with a hole must not be called through
  TA_CHECK(tinyattn::selftest_kernels(broken, &report) == Status::kNullPointer);
  TA_CHECK_MSG(report.count == before.count && report.failures == before.failures &&
                   report.checks[0].name == before.checks[0].name,
               "a refused self-test wrote its report");
}
