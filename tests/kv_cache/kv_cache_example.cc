// The decode loop of tinyattn/kv_cache.h and docs/core.md, compiled and run:
// 70 steps into a 64-token cache stop at kCacheFull, and each of the 64
// outputs is the reference's causal forward row over the whole sequence.
// check_header_example.cmake holds both texts to these lines.
#include <cmath>

#include "support.h"
#include "tatest.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/reference.h"

namespace {

constexpr size_t kSeq = 64, kHq = 2, kD = 16;
// The loop runs past the cache's 64 tokens: the model has data for every step.
constexpr size_t kSteps = kSeq + 6;

// The whole sequence: what a model would produce token by token.
float seq_q[kHq][kSteps][kD], seq_k[kSteps][kD], seq_v[kSteps][kD];
float decoded[kHq][kSteps][kD];  // kSteps rows: the loop body is in bounds for every t

// The model's step t: this token's query (both heads), key and value.
void model_step(size_t t, float* q, float* k, float* v) {
  for (size_t c = 0; c < kD; ++c) {
    for (size_t h = 0; h < kHq; ++h) q[h * kD + c] = seq_q[h][t][c];
    k[c] = seq_k[t][c];
    v[c] = seq_v[t][c];
  }
}

}  // namespace

TA_CASE("kv_cache: the documented decode loop runs and matches a causal forward") {
  tatest::Rng rng(64);
  for (size_t h = 0; h < kHq; ++h) rng.fill_normal(seq_q[h][0], kSteps * kD, 1.5f);
  rng.fill_normal(seq_k[0], kSteps * kD, 1.5f);
  rng.fill_normal(seq_v[0], kSteps * kD);
  float q[kHq * kD], k[kD], v[kD], y[kHq * kD];
  const size_t steps = kSteps;
  size_t decoded_steps = 0;
  tinyattn::Status last = tinyattn::Status::kOk;

  // The example, verbatim.
  static tinyattn::KvCache<float, 2, 1, 16, 16, 64> cache;  // Hq 2, Hkv 1, Dk = Dv = 16, 64 tokens
  for (size_t t = 0; t < steps; ++t) {
    model_step(t, q, k, v);  // this token's Q[2][1][16], K[1][1][16], V[1][1][16]
    tinyattn::Status s = cache.append(k, v, 1);  // kCacheFull after 64 tokens
    if (s == tinyattn::Status::kOk) s = cache.attend(q, y, 1);  // Y[2][1][16]
    if (s != tinyattn::Status::kOk) break;
    for (size_t h = 0; h < kHq; ++h)
      for (size_t c = 0; c < kD; ++c) decoded[h][t][c] = y[h * kD + c];
    decoded_steps = t + 1;
    last = s;
  }

  TA_CHECK_MSG(decoded_steps == kSeq, "decoded %zu steps, want %zu", decoded_steps, kSeq);
  TA_CHECK(last == tinyattn::Status::kOk);
  TA_CHECK(cache.append(k, v, 1) == tinyattn::Status::kCacheFull);
  tatest::Arena::Scope scope;
  const tinyattn::Dims d{kSeq, kSeq, kD, kD, kHq, 1};
  double* y_ref = tatest::alloc<double>(d.y_elems());
  TA_CHECK(y_ref != nullptr);
  if (y_ref == nullptr) return;
  // The reference over the first 64 tokens: Q per head, K and V as stored.
  static float q64[kHq][kSeq][kD];
  for (size_t h = 0; h < kHq; ++h)
    for (size_t t = 0; t < kSeq; ++t)
      for (size_t c = 0; c < kD; ++c) q64[h][t][c] = seq_q[h][t][c];
  tinyattn::ref::forward(d, q64[0][0], seq_k[0], seq_v[0], tinyattn::Mask::causal_top_left(),
                         1.0 / std::sqrt(double{kD}), y_ref);
  static float y64[kHq][kSeq][kD];
  for (size_t h = 0; h < kHq; ++h)
    for (size_t t = 0; t < kSeq; ++t)
      for (size_t c = 0; c < kD; ++c) y64[h][t][c] = decoded[h][t][c];
  const tatest::Result r = tatest::close(y64[0][0], y_ref, d.y_elems(),
                                         tatest::kOutAtol * tatest::max_abs(seq_v[0], kSeq * kD), tatest::kOutRtol);
  TA_CHECK_MSG(r.ok, "worst deviation %.3g at %zu, bound %.3g", r.worst, r.index, r.bound);
}
