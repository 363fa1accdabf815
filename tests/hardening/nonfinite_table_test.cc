// The "Non-finite input" table of docs/hardening.md as one table of cases,
// each with one expected outcome, run on every dtype: fp32, fp16 in each
// compute mode this build runs, and int8 where the case can be written in
// int8 (no NaN or inf there: the masked-key and fully-masked-row cases). Each
// float case runs on every port and on both algorithms: with the weights
// (whole rows) and without (key tiles: fp16 tiles beyond 8 keys, fp32 beyond
// kKeyTile, so M = 9 and M = 300), the special keys in the first and in the
// last tile.
//
// An outcome is one string per query row: a class per column of Y, a space,
// the class of lse. 'f' finite, '0' exactly zero, 'n' NaN, '+' +inf, '-' -inf.
// Finite values must also match the reference on the same inputs (rounded to
// fp16 first, so every dtype reads the same numbers).
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "float_paths.h"
#include "support.h"
#include "tatest.h"
#include "tinyattn/quant.h"
#include "tinyattn/reference.h"

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Status;
using namespace tatest;

namespace {

constexpr size_t kRows = 4, kDk = 4, kDv = 3;

// One case's tensors: Q, K, V in the problem, the keep bytes and bias of the
// mask, and `drop`: keys the reference leaves out because their fp32 weight is
// exactly 0 (docs/hardening.md: such keys contribute nothing).
struct Setup {
  Problem& p;
  uint8_t* keep;
  float* bias;
  uint8_t* drop;
  size_t early, late;  // a key in the first tile, the last key
  float& q(size_t i, size_t c) { return p.q[i * kDk + c]; }
  float& k(size_t j, size_t c) { return p.k[j * kDk + c]; }
  float& v(size_t j, size_t c) { return p.v[j * kDv + c]; }
  uint8_t& keep_at(size_t i, size_t j) { return keep[i * p.d.m + j]; }
  float& bias_at(size_t i, size_t j) { return bias[i * p.d.m + j]; }
};

struct TableCase {
  const char* name;
  void (*setup)(Setup&);
  const char* rows[kRows];
  bool int8;  // representable in int8 (finite values, keep masks only)
};

const TableCase kCases[] = {
    {"NaN logit (bias) at a visible key; masked keys of that row stay 0",
     [](Setup& s) {
       s.bias_at(1, s.late) = kNaN;
       s.keep_at(1, 0) = 0;
     },
     {"fff f", "nnn n", "fff f", "fff f"}, false},
    {"+inf logits share the weight, in different tiles",
     [](Setup& s) { s.bias_at(0, s.early) = s.bias_at(0, s.late) = kInf; },
     {"fff +", "fff f", "fff f", "fff f"}, false},
    {"-inf bias masks its key, whose value row is +inf",
     [](Setup& s) {
       for (size_t i = 0; i < kRows; ++i) s.bias_at(i, s.early) = -kInf;
       for (size_t c = 0; c < kDv; ++c) s.v(s.early, c) = kInf;
     },
     {"fff f", "fff f", "fff f", "fff f"}, false},
    {"a row with no visible key is 0, lse -inf",
     [](Setup& s) {
       for (size_t j = 0; j < s.p.d.m; ++j) s.keep_at(3, j) = 0;
     },
     {"fff f", "fff f", "fff f", "000 -"}, true},
    {"keep-masked keys never reach Y, whatever their values",
     [](Setup& s) {
       for (size_t i = 0; i < kRows; ++i) s.keep_at(i, s.early) = s.keep_at(i, s.late) = 0;
       for (size_t c = 0; c < kDv; ++c) s.v(s.early, c) = kNaN, s.v(s.late, c) = -kInf;
     },
     {"fff f", "fff f", "fff f", "fff f"}, true},
    {"NaN in Q: its row only; a row without visible keys stays 0",
     [](Setup& s) {
       s.q(2, 0) = kNaN;
       s.q(3, 1) = kNaN;
       for (size_t j = 0; j < s.p.d.m; ++j) s.keep_at(3, j) = 0;
     },
     {"fff f", "fff f", "nnn n", "000 -"}, false},
    {"+inf in Q: +inf logits where K is positive share the weight",
     [](Setup& s) {
       for (size_t j = 0; j < s.p.d.m; ++j) s.k(j, 0) = j % 3 == 0 ? 0.5f : -0.5f;
       s.q(1, 0) = kInf;
     },
     {"fff f", "fff +", "fff f", "fff f"}, false},
    {"NaN in K: the rows that see that key",
     [](Setup& s) {
       s.k(s.late, 2) = kNaN;
       s.keep_at(0, s.late) = s.keep_at(1, s.late) = 0;
     },
     {"fff f", "fff f", "nnn n", "nnn n"}, false},
    {"+inf in K: +inf or -inf logits by the sign of Q",
     [](Setup& s) {
       s.k(s.late, 0) = kInf;
       s.q(2, 0) = 1.0f;
       s.q(3, 0) = -1.0f;
       s.keep_at(0, s.late) = s.keep_at(1, s.late) = 0;
     },
     {"fff f", "fff f", "fff +", "fff f"}, false},
    {"NaN or inf in V[j][c]: column c of the rows that weight key j",
     [](Setup& s) {
       s.v(s.early, 1) = kInf;
       s.keep_at(0, s.early) = 0;
       s.v(s.late, 2) = kNaN;
       for (size_t i = 0; i < 3; ++i) s.keep_at(i, s.late) = 0;
     },
     {"fff f", "f+f f", "f+f f", "f+n f"}, false},
    {"a later +inf logit drops earlier keys with infinite values",
     [](Setup& s) {
       s.bias_at(0, s.late) = kInf;
       for (size_t c = 0; c < kDv; ++c) s.v(s.early, c) = c == 1 ? -kInf : kInf;
       for (size_t i = 1; i < kRows; ++i) s.keep_at(i, s.early) = 0;
     },
     {"fff +", "fff f", "fff f", "fff f"}, false},
    {"an infinite value at a key whose fp32 weight underflows to 0",
     [](Setup& s) {
       s.bias_at(0, s.early) = -50.0f;
       s.bias_at(0, s.late) = 60.0f;
       s.v(s.early, 0) = kInf;
       s.drop[0 * s.p.d.m + s.early] = 1;
       for (size_t i = 1; i < kRows; ++i) s.keep_at(i, s.early) = 0;
     },
     {"fff f", "fff f", "fff f", "fff f"}, false},
    {"NaN or +inf bias at a key the keep mask drops: ignored",
     [](Setup& s) {
       s.keep_at(2, s.early) = 0;
       s.bias_at(2, s.early) = kNaN;
       s.keep_at(1, s.late) = 0;
       s.bias_at(1, s.late) = kInf;
     },
     {"fff f", "fff f", "fff f", "fff f"}, false},
};

bool has_class(float x, char want) {
  switch (want) {
    case 'f': return std::isfinite(x);
    case '0': return x == 0.0f;
    case 'n': return std::isnan(x);
    case '+': return x == kInf;
    case '-': return x == -kInf;
  }
  return false;
}

// The case's problem for M keys, in the arena (the caller's scope), and its reference.
struct Built {
  Problem p;
  Mask mask;
  uint8_t* keep;
  bool ok;
};

Built build(const TableCase& c, size_t m) {
  const Dims d{kRows, m, kDk, kDv};
  Built b{make_problem(d, 2200 + m), {}, alloc<uint8_t>(kRows * m), false};
  float* bias = alloc<float>(kRows * m);
  uint8_t* drop = alloc<uint8_t>(kRows * m);
  uint8_t* ref_keep = alloc<uint8_t>(kRows * m);
  b.ok = b.p.ok && b.keep && bias && drop && ref_keep;
  if (!b.ok) return b;
  round_inputs_to_half(b.p);
  for (size_t x = 0; x < kRows * m; ++x) b.keep[x] = 1, bias[x] = 0.0f, drop[x] = 0;
  Setup s{b.p, b.keep, bias, drop, 1, m - 1};
  c.setup(s);
  b.mask = Mask::keep_bytes(b.keep);
  b.mask.bias = bias;
  for (size_t x = 0; x < kRows * m; ++x) ref_keep[x] = b.keep[x] && !drop[x];
  Mask ref_mask = Mask::keep_bytes(ref_keep);
  ref_mask.bias = bias;
  run_reference(b.p, ref_mask);
  return b;
}

const size_t kKeys[] = {9, 300};

}  // namespace

TA_CASE("nonfinite table: fp32 and fp16 (each compute mode), every port, both algorithms") {
  PathRun runs[kMaxPathRuns];
  const size_t nr = path_runs_under_test(runs, kMaxPathRuns);
  for (const TableCase& c : kCases)
    for (size_t m : kKeys) {
      Arena::Scope scope;
      Built b = build(c, m);
      TA_CHECK_MSG(b.ok, "%s: arena too small", c.name);
      if (!b.ok) continue;
      Problem& p = b.p;
      for (size_t r = 0; r < nr; ++r)
        for (bool ww : {true, false}) {
          Arena::Scope run_scope;
          const FloatPath path = runs[r].path;
          const Status s = run_path(path, p, runs[r].port, b.mask, {}, ww);
          const char* pn = tinyattn::port_name(runs[r].port);
          const char* alg = path_uses_tiles(path, p.d, ww) ? "tiled" : "plain";
          TA_CHECK_MSG(s == Status::kOk, "%s: %s/%s %s M=%zu: status %s", c.name, pn, path_name(path), alg, m,
                       tinyattn::to_string(s));
          if (s != Status::kOk) continue;
          for (size_t i = 0; i < kRows; ++i) {
            bool ok = has_class(p.lse[i], c.rows[i][kDv + 1]);
            for (size_t col = 0; col < kDv; ++col) ok &= has_class(p.y[i * kDv + col], c.rows[i][col]);
            TA_CHECK_MSG(ok, "%s: %s/%s %s M=%zu row %zu: y = [%g %g %g], lse %g, want \"%s\"", c.name, pn,
                         path_name(path), alg, m, i, static_cast<double>(p.y[i * kDv]),
                         static_cast<double>(p.y[i * kDv + 1]), static_cast<double>(p.y[i * kDv + 2]),
                         static_cast<double>(p.lse[i]), c.rows[i]);
            for (size_t j = 0; ww && j < m; ++j) {
              const float w = p.weights[i * m + j];
              const bool masked = !b.keep[i * m + j] || b.mask.bias[i * m + j] == -kInf;
              TA_CHECK_MSG(masked ? w == 0.0f : !(c.rows[i][0] == 'n') || std::isnan(w),
                           "%s: %s/%s M=%zu row %zu key %zu: weight %g", c.name, pn, path_name(path), m, i, j,
                           static_cast<double>(w));
            }
          }
          const Agreement a = against_reference(p, path, ww);
          TA_CHECK_MSG(a.ok(), "%s: %s/%s %s M=%zu: y/lse/weights off the reference (%d %d %d) at %zu %zu %zu",
                       c.name, pn, path_name(path), alg, m, a.y.ok, a.lse.ok, a.weights.ok, a.y.index, a.lse.index,
                       a.weights.index);
        }
    }
}

TA_CASE("nonfinite table: int8, every port, where the case is representable") {
  using namespace tinyattn;
  tinyattn::Port ports[kMaxPorts];
  const size_t np = ports_under_test(ports);
  // Symmetric per-tensor scales of 1/16: the fp16-exact inputs of a few units
  // quantize to int8 without saturating; garbage values (NaN, inf) at masked
  // keys become the int8 extremes.
  const float sixteenth = 1.0f / 16;
  Int8Scheme scheme;
  scheme.q.scale = scheme.k.scale = scheme.v.scale = scheme.y.scale = &sixteenth;
  auto quantize = [](const float* x, int8_t* out, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const float r = std::isnan(x[i]) ? 127.0f : std::fmax(-128.0f, std::fmin(127.0f, std::round(x[i] * 16)));
      out[i] = static_cast<int8_t>(r);
    }
  };
  for (const TableCase& c : kCases) {
    if (!c.int8) continue;
    for (size_t m : kKeys) {
      Arena::Scope scope;
      Built b = build(c, m);
      const Dims& d = b.p.d;
      int8_t* q = alloc<int8_t>(d.q_elems());
      int8_t* k = alloc<int8_t>(d.k_elems());
      int8_t* v = alloc<int8_t>(d.v_elems());
      int8_t* y = alloc<int8_t>(d.y_elems());
      uint16_t* w = alloc<uint16_t>(d.weight_elems());
      const size_t ws_bytes = forward_i8_workspace_bytes(d);
      void* ws = Arena::allocate(ws_bytes);
      Int8HeadPlan plan;
      const bool ok = b.ok && q && k && v && y && w && ws && plan_int8(d, scheme, &plan, 1) == Status::kOk;
      TA_CHECK_MSG(ok, "%s: setup failed", c.name);
      if (!ok) continue;
      quantize(b.p.q, q, d.q_elems());
      quantize(b.p.k, k, d.k_elems());
      quantize(b.p.v, v, d.v_elems());
      Mask mask = b.mask;
      mask.bias = nullptr;  // int8 cases use keep masks only (the float bias is all zero here)
      for (size_t pi = 0; pi < np; ++pi) {
        const Status s = forward_i8(d, ForwardIoI8{q, k, v, y, w}, Int8Plan{&plan, 1}, {ws, ws_bytes}, mask, Options{{}, ports[pi]});
        const char* pn = port_name(ports[pi]);
        TA_CHECK_MSG(s == Status::kOk, "%s: int8/%s M=%zu: status %s", c.name, pn, m, to_string(s));
        if (s != Status::kOk) continue;
        for (size_t i = 0; i < kRows; ++i) {
          const bool empty = c.rows[i][0] == '0';
          uint32_t sum = 0;
          bool masked_zero = true, y_zero = true;
          for (size_t j = 0; j < m; ++j) {
            sum += w[i * m + j];
            masked_zero &= b.keep[i * m + j] || w[i * m + j] == 0;
          }
          for (size_t col = 0; col < kDv; ++col) y_zero &= y[i * kDv + col] == 0;
          // Visible rows: weights summing to 1 in Q0.15 up to one rounding per key.
          const bool sum_ok = empty ? sum == 0 && y_zero : sum + m >= kProbOne && sum <= kProbOne + m;
          TA_CHECK_MSG(masked_zero && sum_ok, "%s: int8/%s M=%zu row %zu: weight sum %u, masked keys 0 %d, y 0 %d",
                       c.name, pn, m, i, static_cast<unsigned>(sum), masked_zero ? 1 : 0, y_zero ? 1 : 0);
        }
      }
    }
  }
}
