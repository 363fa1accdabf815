// Bad arguments to the run-time API: each returns its Status and writes
// nothing. Every tensor of a call is carved from one pool of canary bytes; after
// a rejected call the whole pool (inputs, outputs, workspace, masks) must be
// byte-identical to its copy taken before the call.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "canary_pool.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"

using tinyattn::Dims;
using tinyattn::ForwardIo;
using tinyattn::Mask;
using tinyattn::Options;
using tinyattn::Port;
using tinyattn::Status;
using tinyattn::Workspace;
using namespace tatest;

namespace {

constexpr size_t kPoolBytes = 8 * 1024;  // the fixture needs ~3.5 KiB; small enough for boards

// One valid call (GQA: 4 query heads over 2 KV heads, every optional output
// and both kinds of element mask present), laid out in a canary pool.
struct Call {
  CanaryPool pool{kPoolBytes};
  Dims d{3, 5, 4, 2, 4, 2};
  ForwardIo io;
  Workspace ws;
  Mask mask;
  Options opt;
  uint8_t* keep;
  float* bias;
  bool ok;

  Call() {
    float* q = pool.carve<float>(d.q_elems());
    float* k = pool.carve<float>(d.k_elems());
    float* v = pool.carve<float>(d.v_elems());
    io.y = pool.carve<float>(d.y_elems());
    io.weights = pool.carve<float>(d.weight_elems());
    io.lse = pool.carve<float>(d.lse_elems());
    ws.bytes = tinyattn::forward_workspace_bytes(d);
    ws.data = pool.carve<unsigned char>(ws.bytes);
    keep = pool.carve<uint8_t>(d.n * d.m);
    bias = pool.carve<float>(d.n * d.m);
    ok = pool.ok();
    if (!ok) return;
    Rng rng(1);
    rng.fill_normal(q, d.q_elems());
    rng.fill_normal(k, d.k_elems());
    rng.fill_normal(v, d.v_elems());
    io.q = q;
    io.k = k;
    io.v = v;
    for (size_t x = 0; x < d.n * d.m; ++x) {
      keep[x] = static_cast<uint8_t>(x % 4 != 1);
      bias[x] = rng.uniform(-1.0f, 1.0f);
    }
    mask.causal = tinyattn::Causal::kBottomRight;
    mask.keep = keep;
    mask.bias = bias;
  }

  Status run() { return tinyattn::forward(d, io, ws, mask, opt); }
};

// Runs the call as `edit` changed it; requires `want` and, unless kOk, an untouched pool.
template <class Edit>
void expect(Status want, const char* what, Edit edit) {
  expect_status<Call>("", want, what, edit);
}

// The same, as the plain call -- Mask{}, no weights or lse, forward()'s
// quick check -- and as the same call fully checked (Options::scale set to
// the default scale): both must get `want`, and leave a rejected call's pool
// untouched.
template <class Edit>
void expect_plain(Status want, const char* what, Edit edit) {
  for (int pass = 0; pass < 2; ++pass) {
    const bool checked = pass == 1;
    Arena::Scope scope;
    Call c;
    TA_CHECK_MSG(c.ok, "%s: arena too small", what);
    if (!c.ok) return;
    c.mask = Mask{};
    c.io.weights = nullptr;
    c.io.lse = nullptr;
    if (checked) c.opt.scale = tinyattn::effective_scale(c.d, Options{});
    edit(c);
    c.pool.snapshot();
    const Status got = c.run();
    TA_CHECK_MSG(got == want, "%s, %s call: got %s, want %s", what, checked ? "checked" : "plain",
                 tinyattn::to_string(got), tinyattn::to_string(want));
    if (want != Status::kOk)
      TA_CHECK_MSG(c.pool.untouched(), "%s, %s call: rejected but wrote to its buffers", what,
                   checked ? "checked" : "plain");
  }
}

}  // namespace

TA_CASE("status: the plain call (no mask, scale, weights or lse) gets every status the checked call gets") {
  const size_t minimal = tinyattn::forward_workspace_bytes(Dims{3, 5, 4, 2, 4, 2}, false, tinyattn::Scratch::kMinimal);
  expect_plain(Status::kOk, "valid", [](Call&) {});
  expect_plain(Status::kOk, "k == q", [](Call& c) { c.io.k = c.io.q; });
  expect_plain(Status::kOk, "the workspace at an odd address", [](Call& c) {
    c.ws.data = static_cast<unsigned char*>(c.ws.data) + 1;
  });
  expect_plain(Status::kOk, "the minimal workspace", [&](Call& c) { c.ws.bytes = minimal; });
  expect_plain(Status::kWorkspaceTooSmall, "one byte short", [&](Call& c) { c.ws.bytes = minimal - 1; });
  expect_plain(Status::kBadDimension, "n = 0", [](Call& c) { c.d.n = 0; });
  expect_plain(Status::kBadDimension, "dk > kMaxDim", [](Call& c) { c.d.dk = tinyattn::kMaxDim + 1; });
  expect_plain(Status::kBadHeads, "hq 4 % hkv 3", [](Call& c) { c.d.hkv = 3; });
  expect_plain(Status::kPortUnavailable, "an unknown port", [](Call& c) { c.opt.port = static_cast<Port>(200); });
  expect_plain(Status::kNullPointer, "q", [](Call& c) { c.io.q = nullptr; });
  expect_plain(Status::kNullPointer, "k", [](Call& c) { c.io.k = nullptr; });
  expect_plain(Status::kNullPointer, "v", [](Call& c) { c.io.v = nullptr; });
  expect_plain(Status::kNullPointer, "y", [](Call& c) { c.io.y = nullptr; });
  expect_plain(Status::kNullPointer, "workspace", [](Call& c) { c.ws.data = nullptr; });
  expect_plain(Status::kMisaligned, "q", [](Call& c) { c.io.q = misalign(c.io.q); });
  expect_plain(Status::kMisaligned, "k", [](Call& c) { c.io.k = misalign(c.io.k); });
  expect_plain(Status::kMisaligned, "v", [](Call& c) { c.io.v = misalign(c.io.v); });
  expect_plain(Status::kMisaligned, "y", [](Call& c) { c.io.y = misalign(c.io.y); });
  expect_plain(Status::kAliasing, "y == q", [](Call& c) { c.io.y = const_cast<float*>(c.io.q); });
  expect_plain(Status::kAliasing, "y over the last float of k", [](Call& c) {
    c.io.y = const_cast<float*>(c.io.k) + c.d.k_elems() - 1;
  });
  expect_plain(Status::kAliasing, "v's last float under y", [](Call& c) {
    c.io.y = const_cast<float*>(c.io.v) + c.d.v_elems() - 1;
  });
  expect_plain(Status::kAliasing, "the workspace over y", [](Call& c) { c.ws.data = c.io.y; });
  expect_plain(Status::kAliasing, "the workspace over q", [](Call& c) { c.ws.data = const_cast<float*>(c.io.q); });
  expect_plain(Status::kAliasing, "the workspace ending on v's first float", [](Call& c) {
    c.ws.data = reinterpret_cast<unsigned char*>(const_cast<float*>(c.io.v)) - c.ws.bytes + 1;
  });
  expect_plain(Status::kAliasing, "a workspace size that wraps the address space", [](Call& c) {
    c.ws.data = c.io.y + 1;
    c.ws.bytes = SIZE_MAX;
  });
}

TA_CASE("status: the valid call succeeds and writes (the canary check can see writes)") {
  Arena::Scope scope;
  Call c;
  TA_CHECK(c.ok);
  if (!c.ok) return;
  c.pool.snapshot();
  TA_CHECK(c.run() == Status::kOk);
  TA_CHECK_MSG(!c.pool.untouched(), "a successful call left the pool unchanged");
  // And matches the reference (the fixture is a meaningful call).
  double* y = alloc<double>(c.d.y_elems());
  tinyattn::ref::forward(c.d, c.io.q, c.io.k, c.io.v, c.mask, tinyattn::effective_scale(c.d, c.opt), y);
  const Result r = close(c.io.y, y, c.d.y_elems(), 1e-5, 1e-5);
  TA_CHECK_MSG(r.ok, "fixture output off by %g", r.worst);
}

TA_CASE("status: every Status has a distinct, stable name") {
  const char* names[tinyattn::kStatusCount];
  for (int s = 0; s < tinyattn::kStatusCount; ++s) {
    names[s] = tinyattn::to_string(static_cast<Status>(s));
    TA_CHECK_MSG(names[s] != nullptr && std::strcmp(names[s], "unknown_status") != 0, "status %d has no name", s);
    for (int t = 0; t < s; ++t) TA_CHECK_MSG(std::strcmp(names[s], names[t]) != 0, "statuses %d and %d share a name", s, t);
  }
  TA_CHECK(std::strcmp(tinyattn::to_string(static_cast<Status>(tinyattn::kStatusCount)), "unknown_status") == 0);
  TA_CHECK(std::strcmp(tinyattn::to_string(Status::kOk), "ok") == 0);
}

TA_CASE("status: kBadDimension for zero or oversized dimensions") {
  const size_t big = tinyattn::kMaxDim + 1;
  expect(Status::kBadDimension, "n = 0", [](Call& c) { c.d.n = 0; });
  expect(Status::kBadDimension, "m = 0", [](Call& c) { c.d.m = 0; });
  expect(Status::kBadDimension, "dk = 0", [](Call& c) { c.d.dk = 0; });
  expect(Status::kBadDimension, "dv = 0", [](Call& c) { c.d.dv = 0; });
  expect(Status::kBadDimension, "n > kMaxDim", [&](Call& c) { c.d.n = big; });
  expect(Status::kBadDimension, "m > kMaxDim", [&](Call& c) { c.d.m = big; });
  expect(Status::kBadDimension, "dk = SIZE_MAX", [](Call& c) { c.d.dk = SIZE_MAX; });
  expect(Status::kBadDimension, "dv = SIZE_MAX", [](Call& c) { c.d.dv = SIZE_MAX; });
  // Shapes within kMaxDim whose tensors cannot be addressed on a 32-bit target.
  const Dims huge{tinyattn::kMaxDim, tinyattn::kMaxDim, tinyattn::kMaxDim, 1};
  const bool wide = sizeof(void*) >= 8;
  TA_CHECK_MSG(tinyattn::validate(huge) == (wide ? Status::kOk : Status::kBadDimension), "2^48-element Q: %s",
               tinyattn::to_string(tinyattn::validate(huge)));
  TA_CHECK(tinyattn::validate(Dims{tinyattn::kMaxDim, 1, 1, 1}) == Status::kOk);
  // Hq*N*M weights beyond a 32-bit address space: rejected there when the
  // weights are requested; a 64-bit target reaches the workspace check.
  expect(wide ? Status::kWorkspaceTooSmall : Status::kBadDimension, "2^32 weights",
         [](Call& c) {
           c.d = Dims{tinyattn::kMaxDim, tinyattn::kMaxDim, 1, 1};
           c.mask = Mask::causal_bottom_right();  // element masks of that size fail earlier (kBadMask)
         });
}

TA_CASE("status: kBadHeads for zero heads, Hq % Hkv != 0, too many heads") {
  expect(Status::kBadHeads, "hq = 0", [](Call& c) { c.d.hq = 0; });
  expect(Status::kBadHeads, "hkv = 0", [](Call& c) { c.d.hkv = 0; });
  expect(Status::kBadHeads, "hq 4 % hkv 3", [](Call& c) { c.d.hkv = 3; });
  expect(Status::kBadHeads, "hkv > hq", [](Call& c) { c.d.hkv = 8; });
  expect(Status::kBadHeads, "hq > kMaxDim", [](Call& c) { c.d.hq = tinyattn::kMaxDim + 2; });
}

TA_CASE("status: kBadScale for NaN and infinite scales; finite extremes are accepted") {
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (float s : bad) expect(Status::kBadScale, "non-finite scale", [&](Call& c) { c.opt.scale = s; });
  const float good[] = {0.0f, -1.0f, FLT_MAX, -FLT_MAX, 1e-40f, FLT_MIN};
  for (float s : good) expect(Status::kOk, "finite scale", [&](Call& c) { c.opt.scale = s; });
  // The compile-time API goes through the same checks.
  Arena::Scope scope;
  using A = tinyattn::Attention<tinyattn::Shape<2, 3, 4, 2>>;
  static A attn;
  static A::Q q;
  static A::K k;
  static A::V v;
  static A::Y y;
  q.fill(1.0f);
  k.fill(1.0f);
  v.fill(1.0f);
  y.fill(-7.0f);
  Options o;
  o.scale = std::numeric_limits<float>::quiet_NaN();
  TA_CHECK(attn(q, k, v, y, Mask{}, nullptr, o) == Status::kBadScale);
  bool untouched = true;
  for (float x : y) untouched &= x == -7.0f;
  TA_CHECK_MSG(untouched, "Attention<> wrote after kBadScale");
}

TA_CASE("status: kBadScale for a softcap that is not > 0 and finite; any positive finite one is accepted") {
  const float bad[] = {0.0f, -0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  for (float c : bad) expect(Status::kBadScale, "bad softcap", [&](Call& call) { call.opt.softcap = c; });
  const float good[] = {1e-40f, FLT_MIN, 0.5f, 50.0f, FLT_MAX};
  for (float c : good) expect(Status::kOk, "positive finite softcap", [&](Call& call) { call.opt.softcap = c; });
}

TA_CASE("status: kBadMask for an offset nothing reads, out of range, or past the valid keys") {
  // Call's dims: N = 3, M = 5.
  expect(Status::kBadMask, "offset without a kOffset mask", [](Call& c) { c.mask.offset = 1; });
  expect(Status::kBadMask, "offset with top-left causal", [](Call& c) {
    c.mask = Mask::causal_top_left();
    c.mask.offset = 2;
  });
  expect(Status::kBadMask, "offset with an inactive kOffset window", [](Call& c) {
    c.mask.window.align = tinyattn::Align::kOffset;
    c.mask.offset = 2;
  });
  expect(Status::kBadMask, "offset > kMaxDim",
         [](Call& c) { c.mask = Mask::causal_offset(static_cast<int32_t>(tinyattn::kMaxDim) + 1); });
  expect(Status::kBadMask, "offset < -kMaxDim",
         [](Call& c) { c.mask = Mask::causal_offset(-static_cast<int32_t>(tinyattn::kMaxDim) - 1); });
  expect(Status::kBadMask, "offset + N > kv_len", [](Call& c) {
    c.mask = Mask::causal_offset(3);
    c.mask.kv_len = 5;
  });
  expect(Status::kBadMask, "window offset + N > kv_len", [](Call& c) {
    c.mask = Mask::sliding_window(1, 0, tinyattn::Align::kOffset);
    c.mask.offset = 2;
    c.mask.kv_len = 4;
  });
  expect(Status::kOk, "causal_cache(5, 3)", [](Call& c) { c.mask = Mask::causal_cache(5, 3); });
  expect(Status::kOk, "causal_cache(2, 3)", [](Call& c) { c.mask = Mask::causal_cache(2, 3); });
  expect(Status::kOk, "offset past M without kv_len", [](Call& c) { c.mask = Mask::causal_offset(100); });
  expect(Status::kOk, "offset kMaxDim", [](Call& c) { c.mask = Mask::causal_offset(static_cast<int32_t>(tinyattn::kMaxDim)); });
}

TA_CASE("status: score outputs are checked like the weights (aliasing, alignment, stage)") {
  expect(Status::kUnsupported, "score stage out of range", [](Call& c) {
    c.io.scores = c.io.weights;
    c.io.weights = nullptr;
    c.io.score_stage = static_cast<tinyattn::ScoreStage>(3);
  });
  expect(Status::kAliasing, "scores over the weights", [](Call& c) { c.io.scores = c.io.weights; });
  expect(Status::kAliasing, "scores over Q", [](Call& c) {
    c.io.scores = const_cast<float*>(c.io.q);
    c.io.weights = nullptr;
  });
  expect(Status::kMisaligned, "scores misaligned", [](Call& c) {
    c.io.scores = reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(c.io.weights) + 1);
    c.io.weights = nullptr;
  });
}

TA_CASE("status: kBadMask for kv_len > M, empty windows, both keep forms, bad enums, huge head stride") {
  expect(Status::kBadMask, "kv_len = M + 1", [](Call& c) { c.mask.kv_len = static_cast<uint32_t>(c.d.m + 1); });
  expect(Status::kOk, "kv_len = M", [](Call& c) { c.mask.kv_len = static_cast<uint32_t>(c.d.m); });
  expect(Status::kOk, "kv_len = 0", [](Call& c) { c.mask.kv_len = 0; });
  expect(Status::kBadMask, "window left + right < 0",
         [](Call& c) { c.mask.window = {-3, 2, tinyattn::Align::kTopLeft}; });
  expect(Status::kBadMask, "window INT32_MIN", [](Call& c) {
    c.mask.window = {INT32_MIN, tinyattn::kUnbounded, tinyattn::Align::kTopLeft};
  });
  expect(Status::kOk, "window left + right = 0", [](Call& c) { c.mask.window = {-3, 3, tinyattn::Align::kTopLeft}; });
  expect(Status::kBadMask, "keep and keep_bits", [](Call& c) { c.mask.keep_bits = c.keep; });
  expect(Status::kBadMask, "causal enum out of range", [](Call& c) { c.mask.causal = static_cast<tinyattn::Causal>(7); });
  expect(Status::kBadMask, "align enum out of range",
         [](Call& c) { c.mask.window = {1, 1, static_cast<tinyattn::Align>(9)}; });
  expect(Status::kBadMask, "head_stride > kMaxDim^2",
         [](Call& c) { c.mask.head_stride = static_cast<size_t>(-1); });
}

TA_CASE("status: per-head masks are accepted on every target (32-bit head_stride check)") {
  // head_stride = N*M with 4 heads: valid everywhere. (kMaxDim^2 wrapped to 0
  // in a 32-bit size_t, which once rejected every per-head mask on boards.)
  Arena::Scope scope;
  const Dims d{3, 5, 4, 2, 4, 2};
  Problem p = make_problem(d, 5);
  float* bias = alloc<float>(d.hq * d.n * d.m);
  Rng rng(3);
  rng.fill_uniform(bias, d.hq * d.n * d.m, -2.0f, 2.0f);
  Mask m = Mask::additive(bias);
  m.head_stride = d.n * d.m;
  TA_CHECK(tinyattn::validate(m, d) == Status::kOk);
  run_reference(p, m);
  TA_CHECK(run_port(p, Port::kDefault, m) == Status::kOk);
  TA_CHECK(close(p.y, p.y_ref, d.y_elems(), 1e-5, 1e-5).ok);
}

TA_CASE("status: kWorkspaceTooSmall below forward_workspace_bytes") {
  expect(Status::kWorkspaceTooSmall, "one byte short", [](Call& c) { c.ws.bytes -= 1; });
  expect(Status::kWorkspaceTooSmall, "zero bytes", [](Call& c) { c.ws.bytes = 0; });
  expect(Status::kOk, "exact size at an odd address", [](Call& c) {
    // still inside its carve (the canary gap follows it)
    c.ws.data = static_cast<unsigned char*>(c.ws.data) + 1;
  });
}

TA_CASE("status: kNullPointer for each required pointer; optional outputs may be null") {
  expect(Status::kNullPointer, "q", [](Call& c) { c.io.q = nullptr; });
  expect(Status::kNullPointer, "k", [](Call& c) { c.io.k = nullptr; });
  expect(Status::kNullPointer, "v", [](Call& c) { c.io.v = nullptr; });
  expect(Status::kNullPointer, "y", [](Call& c) { c.io.y = nullptr; });
  expect(Status::kNullPointer, "workspace", [](Call& c) { c.ws.data = nullptr; });
  expect(Status::kOk, "no weights", [](Call& c) { c.io.weights = nullptr; });
  expect(Status::kOk, "no lse", [](Call& c) { c.io.lse = nullptr; });
}

TA_CASE("status: kMisaligned for each float tensor off its alignment") {
  expect(Status::kMisaligned, "q", [](Call& c) { c.io.q = misalign(c.io.q); });
  expect(Status::kMisaligned, "k", [](Call& c) { c.io.k = misalign(c.io.k); });
  expect(Status::kMisaligned, "v", [](Call& c) { c.io.v = misalign(c.io.v); });
  expect(Status::kMisaligned, "y", [](Call& c) { c.io.y = misalign(c.io.y); });
  expect(Status::kMisaligned, "weights", [](Call& c) { c.io.weights = misalign(c.io.weights); });
  expect(Status::kMisaligned, "lse", [](Call& c) { c.io.lse = misalign(c.io.lse); });
  expect(Status::kMisaligned, "bias", [](Call& c) { c.mask.bias = misalign(c.mask.bias); });
  // Byte masks have no alignment to keep.
  expect(Status::kOk, "keep at an odd address", [](Call& c) {
    c.keep[c.d.n * c.d.m] = 1;  // inside the gap after keep
    c.mask.keep = c.keep + 1;
  });
}

TA_CASE("status: kAliasing when an output overlaps an input or another output") {
  expect(Status::kAliasing, "y == q", [](Call& c) { c.io.y = const_cast<float*>(c.io.q); });
  expect(Status::kAliasing, "y over the last float of k", [](Call& c) {
    c.io.y = const_cast<float*>(c.io.k) + c.d.k_elems() - 1;
  });
  expect(Status::kAliasing, "y == v", [](Call& c) { c.io.y = const_cast<float*>(c.io.v); });
  expect(Status::kAliasing, "weights over y", [](Call& c) { c.io.weights = c.io.y + 1; });
  expect(Status::kAliasing, "lse inside weights", [](Call& c) { c.io.lse = c.io.weights + 3; });
  expect(Status::kAliasing, "lse over q", [](Call& c) { c.io.lse = const_cast<float*>(c.io.q); });
  expect(Status::kAliasing, "workspace over y", [](Call& c) { c.ws.data = c.io.y; });
  expect(Status::kAliasing, "workspace over k", [](Call& c) { c.ws.data = const_cast<float*>(c.io.k); });
  expect(Status::kAliasing, "y over keep", [](Call& c) { c.io.y = reinterpret_cast<float*>(c.keep); });
  expect(Status::kAliasing, "weights over bias", [](Call& c) { c.io.weights = c.bias + 2; });
  // Inputs may share memory (self-attention with K = Q), outputs may touch without overlapping.
  expect(Status::kOk, "k == q", [](Call& c) {
    c.io.k = c.io.q;  // 4x3x4 Q floats cover the 2x5x4 K floats read
  });
  expect(Status::kOk, "lse right after y", [](Call& c) { c.io.lse = c.io.y + c.d.y_elems(); });
}

TA_CASE("status: a workspace larger than needed may hold other data past the part forward() uses") {
  // The aliasing check covers only the bytes forward() writes.
  expect(Status::kOk, "lse in the unused tail of a big workspace", [](Call& c) {
    c.io.lse = static_cast<float*>(c.ws.data) + tinyattn::forward_workspace_bytes(c.d) / sizeof(float);
    c.ws.bytes = tinyattn::forward_workspace_bytes(c.d) + c.d.lse_elems() * sizeof(float);
  });
  expect(Status::kAliasing, "a workspace size that wraps the address space", [](Call& c) {
    c.ws.data = c.io.y + 1;
    c.ws.bytes = SIZE_MAX;
  });
}

// With room for the transposed keys (Scratch::kTransposedKeys), the part
// forward() uses, and so checks, includes them exactly where it transposes:
// an lse just past the minimal workspace overlaps them on a port with
// scores_block_transposed, and is fine on one without.
TA_CASE("status: the aliasing check covers the transposed keys where forward() uses them") {
  const Dims d{tinyattn::kTransposedKeysMinRows, 8, 4, 4};
  Arena::Scope scope;
  float* q = alloc<float>(d.q_elems());
  float* k = alloc<float>(d.k_elems());
  float* v = alloc<float>(d.v_elems());
  float* y = alloc<float>(d.y_elems());
  const size_t minimal = tinyattn::forward_workspace_bytes(d, false, tinyattn::Scratch::kMinimal);
  const size_t wide = tinyattn::forward_workspace_bytes(d, false, tinyattn::Scratch::kTransposedKeys);
  unsigned char* ws = alloc<unsigned char>(wide + d.lse_elems() * sizeof(float));
  if (!q || !k || !v || !y || !ws) TA_IGNORE("arena too small");
  Rng rng(5);
  rng.fill_normal(q, d.q_elems());
  rng.fill_normal(k, d.k_elems());
  rng.fill_normal(v, d.v_elems());
  TA_CHECK((wide > minimal || !tinyattn::kTransposedKeysBuilt));
  Port ports[tatest::kMaxPorts];
  const size_t n = ports_under_test(ports);
  for (size_t pi = 0; pi < n; ++pi) {
    const bool transposes = tinyattn::kTransposedKeysBuilt && tinyattn::kernels_f32(ports[pi])->scores_block_transposed;
    Options o;
    o.port = ports[pi];
    float* lse = reinterpret_cast<float*>(ws + minimal);  // inside the transposed keys' bytes
    const Status got = tinyattn::forward(d, ForwardIo{q, k, v, y, nullptr, lse}, {ws, wide}, {}, o);
    TA_CHECK_MSG(got == (transposes ? Status::kAliasing : Status::kOk), "%s: lse past the minimal workspace: %s",
                 tinyattn::port_name(ports[pi]), tinyattn::to_string(got));
    // A workspace too small for them: they are not used, so the same lse is fine.
    if (wide > minimal)
      TA_CHECK(tinyattn::forward(d, ForwardIo{q, k, v, y, nullptr, lse}, {ws, wide - 1}, {}, o) == Status::kOk);
  }
}

TA_CASE("status: kPortUnavailable for ports not compiled in and unknown port values") {
  Port all[tatest::kMaxPorts + 2];
  size_t count = 0;
  for (Port port : tinyattn::kAllPorts) all[count++] = port;
  all[count++] = static_cast<Port>(tinyattn::kPortCount);
  all[count++] = static_cast<Port>(200);
  size_t missing = 0;
  for (Port port : all) {
    const bool present = tinyattn::kernels_f32(port) != nullptr;
    missing += present ? 0 : 1;
    expect(present ? Status::kOk : Status::kPortUnavailable, tinyattn::port_name(port),
           [&](Call& c) { c.opt.port = port; });
  }
  TA_CHECK_MSG(missing >= 2, "unknown port values must be unavailable (%zu missing)", missing);
  TA_CHECK(tinyattn::kernels_f32(Port::kScalar) != nullptr);
  TA_CHECK(tinyattn::kernels_f32(Port::kDefault) != nullptr);
}

TA_CASE("status: validation order: the first fault in the documented order wins, nothing written") {
  // dims before mask before scale before port before pointers before workspace before aliasing.
  expect(Status::kBadDimension, "dims + null q", [](Call& c) {
    c.d.n = 0;
    c.io.q = nullptr;
  });
  expect(Status::kNullPointer, "null q + aliasing", [](Call& c) {
    c.io.q = nullptr;
    c.io.weights = c.io.y;
  });
}

TA_CASE("status: forward() never returns the statuses of other entry points") {
  // kBadQuantization belongs to the int8 API and kUnsupported to builds
  // without a dtype; the fp32 forward path must not produce them (the
  // fuzzer checks the same over random calls).
  expect(Status::kOk, "valid", [](Call&) {});
  TA_CHECK(std::strcmp(tinyattn::to_string(Status::kBadQuantization), "bad_quantization") == 0);
  TA_CHECK(std::strcmp(tinyattn::to_string(Status::kUnsupported), "unsupported") == 0);
}
