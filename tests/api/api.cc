// The public API's promises: the compile-time Attention<Shape<...>> object
// (its RAM cost is sizeof, it computes exactly what forward() computes), the
// workspace-size function, status names, and untouched outputs on error.
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "support.h"
#include "tatest.h"
#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"

using tinyattn::Attention;
using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Port;
using tinyattn::Shape;
using tinyattn::Status;
using namespace tatest;

namespace {

using GqaShape = Shape<7, 9, 5, 3, 4, 2>;
using Gqa = Attention<GqaShape>;

// workspace_bytes is a constant expression, and the object is nothing but its workspace.
static_assert(Gqa::workspace_bytes == tinyattn::forward_workspace_bytes(GqaShape::dims), "workspace_bytes");
static_assert(sizeof(Gqa) == Gqa::workspace_bytes, "an Attention object's RAM cost is its workspace");
static_assert(sizeof(Attention<Shape<1, 1, 1, 1>>) == Attention<Shape<1, 1, 1, 1>>::workspace_bytes, "1x1");
static_assert(sizeof(Attention<Shape<16, 100, 64, 64, 8, 1>>) ==
                  Attention<Shape<16, 100, 64, 64, 8, 1>>::workspace_bytes,
              "MQA");
static_assert(alignof(Gqa) == tinyattn::kWorkspaceAlign, "the workspace is aligned");

// Scratch::kTransposedKeys adds Dk * min(M, kKeyTile) floats (rows aligned)
// where forward() can use them, and nothing where it cannot (M-profile
// builds: kTransposedKeysBuilt is false).
constexpr size_t kBuilt = tinyattn::kTransposedKeysBuilt ? 1 : 0;
using Wide = Shape<tinyattn::kTransposedKeysMinRows, 100, 64, 32>;
static_assert(sizeof(Attention<Wide, tinyattn::Scratch::kTransposedKeys>) ==
                  sizeof(Attention<Wide, tinyattn::Scratch::kMinimal>) +
                      kBuilt * 64 * tinyattn::align_up(100 * sizeof(float), tinyattn::kWorkspaceAlign),
              "plain path: Dk rows of M keys");
static_assert(tinyattn::forward_workspace_bytes(Dims{64, 1000, 16, 8}, false, tinyattn::Scratch::kTransposedKeys) ==
                  tinyattn::forward_workspace_bytes(Dims{64, 1000, 16, 8}, false, tinyattn::Scratch::kMinimal) +
                      kBuilt * 16 * tinyattn::kKeyTile * sizeof(float),
              "tiled path: Dk rows of one key tile, independent of M");
static_assert(tinyattn::forward_workspace_bytes(Dims{64, 1000, 16, 8}, true, tinyattn::Scratch::kTransposedKeys) >=
                  tinyattn::forward_workspace_bytes(Dims{64, 1000, 16, 8}, false, tinyattn::Scratch::kTransposedKeys),
              "with weights, room for the call without weights and its transposed key tile");
static_assert(sizeof(Attention<GqaShape, tinyattn::Scratch::kMinimal>) == sizeof(Gqa),
              "N < kTransposedKeysMinRows: no transposed keys");
// The default is the fast workspace: with the transposed keys where they apply.
static_assert(tinyattn::kDefaultScratch == tinyattn::Scratch::kTransposedKeys, "default scratch");
static_assert(sizeof(Attention<Wide>) == sizeof(Attention<Wide, tinyattn::Scratch::kTransposedKeys>) &&
                  tinyattn::forward_workspace_bytes(Wide::dims) ==
                      tinyattn::forward_workspace_bytes(Wide::dims, true, tinyattn::Scratch::kTransposedKeys),
              "Attention<S> and forward_workspace_bytes(dims) default to the transposed keys");
static_assert(Gqa::dims.hq == 4 && Gqa::dims.hkv == 2 && Gqa::dims.n == 7 && Gqa::dims.m == 9, "dims");
static_assert(std::tuple_size<Gqa::Q>::value == 4 * 7 * 5 && std::tuple_size<Gqa::K>::value == 2 * 9 * 5 &&
                  std::tuple_size<Gqa::V>::value == 2 * 9 * 3 && std::tuple_size<Gqa::Y>::value == 4 * 7 * 3 &&
                  std::tuple_size<Gqa::Weights>::value == 4 * 7 * 9 && std::tuple_size<Gqa::Lse>::value == 4 * 7,
              "tensor types follow the layouts of shape.h");

// A static instance, as firmware would declare it, with static tensors.
Gqa g_attention;
Gqa::Q g_q;
Gqa::K g_k;
Gqa::V g_v;
Gqa::Y g_y;
Gqa::Weights g_w;
Gqa::Lse g_lse;

void fill_inputs(uint64_t seed) {
  Rng rng(seed);
  rng.fill_normal(g_q.data(), g_q.size());
  rng.fill_normal(g_k.data(), g_k.size());
  rng.fill_normal(g_v.data(), g_v.size());
}

bool same_bits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

TA_CASE("api: a static Attention<> gives bit-identical results to forward() for every mask kind, softcap and port") {
  fill_inputs(42);
  const Dims d = GqaShape::dims;
  Arena::Scope scope;
  float* y = alloc<float>(d.y_elems());
  float* w = alloc<float>(d.weight_elems());
  float* lse = alloc<float>(d.lse_elems());
  unsigned char* ws = alloc<unsigned char>(tinyattn::forward_workspace_bytes(d));
  uint8_t* keep = alloc<uint8_t>(d.n * d.m);
  float* bias = alloc<float>(d.n * d.m);
  TA_CHECK((y && w && lse && ws && keep && bias));
  if (!(y && w && lse && ws && keep && bias)) return;
  Rng rng(7);
  for (size_t x = 0; x < d.n * d.m; ++x) {
    keep[x] = rng.uniform(0.0f, 1.0f) < 0.7f;
    bias[x] = rng.uniform(-1.0f, 1.0f);
  }
  const Mask masks[] = {Mask::none(),
                        Mask::causal_top_left(),
                        Mask::causal_bottom_right(),
                        Mask::sliding_window(2, 1, tinyattn::Align::kBottomRight),
                        Mask::key_padding(5),
                        Mask::keep_bytes(keep),
                        Mask::additive(bias)};
  Port ports[tatest::kMaxPorts];
  const size_t np = ports_under_test(ports);
  for (size_t pi = 0; pi < np; ++pi) {
    for (size_t mx = 0; mx < 2 * (sizeof masks / sizeof masks[0]); ++mx) {
      const size_t mi = mx / 2;
      tinyattn::Options o;
      o.port = ports[pi];
      o.scale = 0.37f;
      if (mx % 2) o.softcap = 0.8f;  // every option reaches the compile-time path
      const Status s1 = g_attention(g_q, g_k, g_v, g_y, masks[mi], &g_w, o);
      const Status s2 =
          tinyattn::forward(d, {g_q.data(), g_k.data(), g_v.data(), y, w, nullptr},
                            {ws, tinyattn::forward_workspace_bytes(d)}, masks[mi], o);
      TA_CHECK_MSG(s1 == Status::kOk && s2 == Status::kOk, "%s mask %zu: %s / %s", tinyattn::port_name(ports[pi]),
                   mi, tinyattn::to_string(s1), tinyattn::to_string(s2));
      TA_CHECK_MSG(same_bits(g_y.data(), y, d.y_elems()) && same_bits(g_w.data(), w, d.weight_elems()),
                   "%s mask %zu: Attention<> and forward() differ", tinyattn::port_name(ports[pi]), mi);
    }
  }
  // The pointer form, with the log-sum-exp.
  const Status s1 = g_attention.run({g_q.data(), g_k.data(), g_v.data(), g_y.data(), nullptr, g_lse.data()});
  const Status s2 = tinyattn::forward(d, {g_q.data(), g_k.data(), g_v.data(), y, nullptr, lse},
                                      {ws, tinyattn::forward_workspace_bytes(d)});
  TA_CHECK((s1 == Status::kOk && s2 == Status::kOk));
  TA_CHECK(same_bits(g_y.data(), y, d.y_elems()));
  TA_CHECK(same_bits(g_lse.data(), lse, d.lse_elems()));
}

TA_CASE("api: Attention<> matches the reference (default scale 1/sqrt(Dk))") {
  fill_inputs(43);
  const Dims d = GqaShape::dims;
  TA_CHECK(g_attention(g_q, g_k, g_v, g_y, Mask::causal_bottom_right(), &g_w) == Status::kOk);
  Arena::Scope scope;
  double* y_ref = alloc<double>(d.y_elems());
  TA_CHECK(y_ref != nullptr);
  if (!y_ref) return;
  tinyattn::ref::forward(d, g_q.data(), g_k.data(), g_v.data(), Mask::causal_bottom_right(),
                         1.0f / std::sqrt(5.0f), y_ref);
  const Result r = close(g_y.data(), y_ref, d.y_elems(), kOutAtol * max_abs(g_v.data(), g_v.size()), 2e-5);
  TA_CHECK_MSG(r.ok, "Y off by %g at %zu", r.worst, r.index);
}

// Attention<S>'s plain call takes its scale from the shape at compile time
// (detail::default_scale_of); it must be the float effective_scale() gives
// at run time for every Dk, or the plain call would differ from forward().
static_assert(tinyattn::detail::default_scale_of(16) == 0.25f, "1/sqrt(16)");
static_assert(tinyattn::detail::default_scale_of(1) == 1.0f, "1/sqrt(1)");
TA_CASE("api: the compile-time default scale is effective_scale() for every Dk") {
  // Every Dk up to kMaxDim on hosted targets; on the boards' soft-double
  // cores those up to 4096 and every power of two (a second each under QEMU).
#if (defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M') || (defined(__riscv) && !defined(__linux__))
  constexpr size_t kLast = 4096;
#else
  constexpr size_t kLast = tinyattn::kMaxDim;
#endif
  size_t wrong = 0, first_wrong = 0;
  for (size_t dk = 1; dk <= tinyattn::kMaxDim; dk = dk < kLast ? dk + 1 : dk * 2) {
    const float want = tinyattn::effective_scale(Dims{1, 1, dk, 1, 1, 1}, {});
    const float got = tinyattn::detail::default_scale_of(dk);
    if (std::memcmp(&want, &got, sizeof want) != 0 && wrong++ == 0) first_wrong = dk;
  }
  TA_CHECK_MSG(wrong == 0, "%zu Dk differ, the first %zu", wrong, first_wrong);
  constexpr float kAtCompileTime = tinyattn::detail::default_scale_of(32);
  TA_CHECK(kAtCompileTime == tinyattn::effective_scale(Dims{1, 1, 32, 1, 1, 1}, {}));
}

TA_CASE("api: the minimal forward workspace grows with M and N up to kBlockRows only, and without weights stops growing past the key tile") {
  using tinyattn::kBlockRows;
  using tinyattn::kKeyTile;
  const auto forward_workspace_bytes = [](const Dims& d, bool with_weights = true) {
    return tinyattn::forward_workspace_bytes(d, with_weights, tinyattn::Scratch::kMinimal);
  };
  const size_t base = forward_workspace_bytes(Dims{1, 9, 1, 1});
  TA_CHECK(base >= 9 * sizeof(float) + tinyattn::kWorkspaceAlign - 1);
  TA_CHECK(forward_workspace_bytes(Dims{1, 9, 64, 33, 8, 2}) == base);  // not Dk, Dv, heads
  // One row of scores per query row of a block, and no more past kBlockRows rows.
  const size_t block = forward_workspace_bytes(Dims{kBlockRows, 9, 1, 1});
  TA_CHECK((block > base && block < kBlockRows * base));
  TA_CHECK(forward_workspace_bytes(Dims{2, 9, 1, 1}) > base);
  TA_CHECK(forward_workspace_bytes(Dims{100, 9, 64, 33, 8, 2}) == block);
  TA_CHECK(forward_workspace_bytes(Dims{1, 100, 1, 1}) > base);
  // Without the weights, long rows run in tiles: the size is the same for any M > kKeyTile.
  const size_t tiled = forward_workspace_bytes(Dims{4, kKeyTile + 1, 16, 8}, false);
  TA_CHECK(forward_workspace_bytes(Dims{4, 60000, 16, 8}, false) == tiled);
  TA_CHECK(forward_workspace_bytes(Dims{4, 60000, 16, 8}, true) > tiled);
  TA_CHECK(forward_workspace_bytes(Dims{4, 60000, 16, 8}, false) <= forward_workspace_bytes(Dims{4, 60000, 16, 8}));
  // Exactly that many bytes at any offset work (the slack covers the alignment);
  // one byte fewer is refused.
  const Dims d{3, 17, 4, 2};
  const size_t need = forward_workspace_bytes(d);
  Arena::Scope scope;
  Problem p = make_problem(d, 5);
  unsigned char* raw = alloc<unsigned char>(need + 64);
  TA_CHECK((p.ok && raw));
  if (!(p.ok && raw)) return;
  run_reference(p, Mask::none());
  const tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, nullptr, nullptr};
  for (size_t off = 0; off < 64; off += 4) {
    const Status s = tinyattn::forward(d, io, {raw + off, need});
    TA_CHECK_MSG(s == Status::kOk, "offset %zu: %s", off, tinyattn::to_string(s));
    const Result r = close(p.y, p.y_ref, d.y_elems(), kOutAtol * max_abs(p.v, d.v_elems()), kOutRtol);
    TA_CHECK_MSG(r.ok, "offset %zu: Y off by %g", off, r.worst);
  }
  TA_CHECK(tinyattn::forward(d, io, {raw, need - 1}) == Status::kWorkspaceTooSmall);
}

TA_CASE("api: to_string names every status, distinctly and stably") {
  const char* const expected[tinyattn::kStatusCount] = {
      "ok",       "null_pointer", "bad_dimension",       "bad_heads",  "bad_scale",        "bad_mask",
      "workspace_too_small", "misaligned", "aliasing", "port_unavailable", "bad_quantization", "unsupported",
      "cache_full"};
  for (int i = 0; i < tinyattn::kStatusCount; ++i) {
    const char* name = tinyattn::to_string(static_cast<Status>(i));
    TA_CHECK_MSG(name != nullptr && std::strcmp(name, expected[i]) == 0, "status %d: \"%s\", want \"%s\"", i,
                 name ? name : "(null)", expected[i]);
    for (int j = 0; j < i; ++j)
      TA_CHECK_MSG(std::strcmp(name, tinyattn::to_string(static_cast<Status>(j))) != 0, "statuses %d and %d share a name",
                   i, j);
  }
  // A value outside the enum (corrupted memory) still gets a string, never null.
  const char* unknown = tinyattn::to_string(static_cast<Status>(tinyattn::kStatusCount));
  TA_CHECK(unknown != nullptr);
  TA_CHECK(std::strcmp(unknown, "ok") != 0);
  TA_CHECK(tinyattn::ok(Status::kOk));
  TA_CHECK(!tinyattn::ok(Status::kBadMask));
}

TA_CASE("api: on an error status Attention<> leaves every output untouched") {
  fill_inputs(44);
  const float sentinel = -12345.5f;
  struct Bad {
    const char* what;
    Mask mask;
    tinyattn::Options options;
    Status want;
  };
  tinyattn::Options nan_scale;
  nan_scale.scale = std::numeric_limits<float>::quiet_NaN();
  tinyattn::Options missing_port;
  missing_port.port = static_cast<Port>(tinyattn::kPortCount);  // never compiled in
  Mask both_keeps;
  static const uint8_t keep[GqaShape::dims.n * GqaShape::dims.m] = {};
  static const uint8_t bits[GqaShape::dims.n * 2] = {};
  both_keeps.keep = keep;
  both_keeps.keep_bits = bits;
  const Bad cases[] = {
      {"kv_len > M", Mask::key_padding(10), {}, Status::kBadMask},
      {"empty window", Mask::sliding_window(-3, 1, tinyattn::Align::kTopLeft), {}, Status::kBadMask},
      {"both keep forms", both_keeps, {}, Status::kBadMask},
      {"NaN scale", Mask::none(), nan_scale, Status::kBadScale},
      {"unknown port", Mask::none(), missing_port, Status::kPortUnavailable},
  };
  for (const Bad& b : cases) {
    g_y.fill(sentinel);
    g_w.fill(sentinel);
    const Status s = g_attention(g_q, g_k, g_v, g_y, b.mask, &g_w, b.options);
    TA_CHECK_MSG(s == b.want, "%s: got %s, want %s", b.what, tinyattn::to_string(s), tinyattn::to_string(b.want));
    size_t touched = 0;
    for (float x : g_y) touched += x != sentinel;
    for (float x : g_w) touched += x != sentinel;
    TA_CHECK_MSG(touched == 0, "%s: %zu output elements written", b.what, touched);
  }
  // A null output through the pointer form.
  g_lse.fill(sentinel);
  const Status s = g_attention.run({g_q.data(), g_k.data(), g_v.data(), nullptr, nullptr, g_lse.data()});
  TA_CHECK(s == Status::kNullPointer);
  size_t touched = 0;
  for (float x : g_lse) touched += x != sentinel;
  TA_CHECK_MSG(touched == 0, "null y: %zu lse elements written", touched);
}

TA_CASE("api: Attention<> gives forward()'s status for aliased arrays and masks") {
  // Square: Q, K, V and Y are one type, so one array can be passed as two.
  using Sq = Attention<Shape<4, 4, 8, 8>>;
  static Sq attn;
  static Sq::Q q, y;
  static Sq::K k;
  static Sq::V v;
  static Sq::Weights w;
  static Sq::Lse lse;
  static unsigned char ws[Sq::workspace_bytes];
  for (size_t i = 0; i < q.size(); ++i) q[i] = k[i] = v[i] = 0.01f * static_cast<float>(i);
  const Dims d = Sq::dims;
  auto runtime = [&](const float* yq, float* out, const Mask& mask, float* weights, float* l) {
    return tinyattn::forward(d, {yq, k.data(), v.data(), out, weights, l}, {ws, sizeof ws}, mask);
  };
  struct Case {
    const char* what;
    Status fixed, runtime;
  };
  Mask bias_on_w, keep_on_y;
  bias_on_w.bias = w.data();  // Hq*N*M floats, as the weights
  keep_on_y.keep = reinterpret_cast<const uint8_t*>(y.data());
  const Case cases[] = {
      {"distinct", attn(q, k, v, y), runtime(q.data(), y.data(), {}, nullptr, nullptr)},
      {"y is q", attn(q, k, v, q), runtime(q.data(), q.data(), {}, nullptr, nullptr)},
      {"y is v", attn(q, k, v, v), runtime(q.data(), v.data(), {}, nullptr, nullptr)},
      {"bias is the weights", attn(q, k, v, y, lse, bias_on_w, &w),
       runtime(q.data(), y.data(), bias_on_w, w.data(), lse.data())},
      {"keep mask in y", attn(q, k, v, y, keep_on_y), runtime(q.data(), y.data(), keep_on_y, nullptr, nullptr)},
  };
  const Status want[] = {Status::kOk, Status::kAliasing, Status::kAliasing, Status::kAliasing, Status::kAliasing};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    TA_CHECK_MSG(cases[i].fixed == want[i] && cases[i].runtime == want[i], "%s: Attention<> %s, forward() %s",
                 cases[i].what, tinyattn::to_string(cases[i].fixed), tinyattn::to_string(cases[i].runtime));
  }
}
