// The int8 storage of a KvCache that computes in fp32 (KvInt8<Scale>,
// tinyattn/kv_cache.h): each token's key and value row of each KV head
// quantized on append with a symmetric scale of its own, and attend run on
// the port's int8 kernels over the stored bytes, never expanding the cache:
//   logit_j = (scale * s_q) * (s_kj * <q8, k8_j>)     (q8: the query row quantized)
//   y       = sum_j p_j s_vj v8_j / sum_j p_j,  with p_j = exp(logit_j - max)
// where the value scales fold into the weights: w_j = p_j s_vj, carried as
// integers w_j * kProbOne / sum_j w_j through the port's weighted_sum.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "detail.h"
#include "row_core.h"
#include "tinyattn/kernels_i8.h"
#include "tinyattn/kv_cache.h"

namespace tinyattn {
namespace detail {
namespace {

inline float scale_value(float s) { return s; }
inline float scale_value(half s) { return to_float(s); }

// The scale of a row whose largest |x| is amax: amax / 127, as stored (fp16
// rounded up, so no element quantizes past 127). 0 for a row of zeros.
// False when it cannot be stored (a non-finite row; past fp16's range).
bool row_scale(float amax, bool half_scales, float* scale, half* stored) {
  if (!(amax <= FLT_MAX)) return false;  // inf or NaN
  float s = amax / 127.0f;
  if (half_scales) {
    half h = to_half(s);
    if (to_float(h) < s) h.bits = static_cast<uint16_t>(h.bits + 1);  // positive: the next half up
    s = to_float(h);
    if (!(s <= 65504.0f)) return false;
    *stored = h;
  }
  *scale = s;
  return true;
}

// The largest |x[c]|, or the first inf or NaN (which fails row_scale): a NaN
// must not be lost to a later finite element, or it would reach the
// conversion to int in quantize_row.
float max_abs(const float* x, size_t n) {
  float m = 0.0f;
  for (size_t c = 0; c < n; ++c) {
    const float a = std::fabs(x[c]);
    if (!(a <= FLT_MAX)) return a;
    m = a > m ? a : m;
  }
  return m;
}

// x[c] / scale rounded to nearest, ties away from zero, in [-127, 127]
// (scale from row_scale). Divides: a subnormal scale has no finite inverse
// (append and the query row only). The rounding is exact integer work, no
// libm call and no dependence on the FPU's rounding mode: the truncation
// and the remainder r - t are exact for |r| < 2^23.
void quantize_row(const float* x, size_t n, float scale, int8_t* out) {
  for (size_t c = 0; c < n; ++c) {
    float r = scale > 0.0f ? x[c] / scale : 0.0f;
    r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
    auto t = static_cast<int32_t>(r);  // toward zero
    const float rest = r - static_cast<float>(t);
    t += rest >= 0.5f ? 1 : rest <= -0.5f ? -1 : 0;
    out[c] = static_cast<int8_t>(t);
  }
}

// Whether every row of width n at x has a scale that can be stored.
bool rows_storable(const float* x, size_t rows, size_t n, bool half_scales) {
  for (size_t r = 0; r < rows; ++r) {
    float s;
    half h;
    if (!row_scale(max_abs(x + r * n, n), half_scales, &s, &h)) return false;
  }
  return true;
}

void store_row(const float* x, size_t n, bool half_scales, int8_t* out, void* scales, size_t slot) {
  float s = 0.0f;
  half h{};
  row_scale(max_abs(x, n), half_scales, &s, &h);
  if (half_scales)
    static_cast<half*>(scales)[slot] = h;
  else
    static_cast<float*>(scales)[slot] = s;
  quantize_row(x, n, s, out + slot * n);
}

// The contiguous slot ranges that token p's query sees: the sinks, then the
// window, which may wrap around the ring once. Returns the range count (at
// most 3). Order does not matter to a softmax.
size_t visible_slots(const KvCacheShape& s, size_t p, KeyRange* out) {
  const size_t lo = s.window != 0 && p + 1 > s.window ? p + 1 - s.window : 0;
  if (lo <= s.sinks) {  // linear, or no token dropped yet: every token in its own slot
    out[0] = KeyRange{0, p + 1};
    return 1;
  }
  size_t count = 0;
  if (s.sinks > 0) out[count++] = KeyRange{0, s.sinks};
  const size_t first = kv_cache_slot(s, lo), tokens = p + 1 - lo;
  if (first + tokens <= s.capacity) {
    out[count++] = KeyRange{first, first + tokens};
  } else {
    out[count++] = KeyRange{first, s.capacity};
    out[count++] = KeyRange{s.sinks, s.sinks + tokens - (s.capacity - first)};
  }
  return count;
}

// The scratch from its first aligned byte.
unsigned char* aligned_base(Workspace ws) {
  auto* base = static_cast<unsigned char*>(ws.data);
  return base + (kWorkspaceAlign - reinterpret_cast<uintptr_t>(base) % kWorkspaceAlign) % kWorkspaceAlign;
}

}  // namespace

namespace {

inline float to_f32(float x) { return x; }
inline float to_f32(half x) { return to_float(x); }
inline void from_f32(float x, float* out) { *out = x; }
inline void from_f32(float x, half* out) { *out = to_half(x); }

// Row `row` of n values as fp32 in buf (converted, and with `rope` rotated
// to `position`); buf holds max(dk, dv) floats.
template <class In>
const float* row_f32(const In* row, size_t n, float* buf, const KvRope* rope, size_t position) {
  for (size_t c = 0; c < n; ++c) buf[c] = to_f32(row[c]);
  if (rope && rope->on) rope_row(rope->row, buf, rope->origin + position);
  return buf;
}

template <class In>
Status int8_append(const KvCacheShape& s, const KvInt8Slots& slots, size_t& position, const In* k, const In* v,
                   size_t n, const KvRope& rope, Workspace ws) {
  if (k == nullptr || v == nullptr) return Status::kNullPointer;
  if (n == 0 || n > s.max_new) return Status::kBadDimension;
  if (s.window == 0 && position + n > s.capacity) return Status::kCacheFull;
  if (ws.data == nullptr || ws.bytes < kv_int8_workspace_bytes(s)) return Status::kWorkspaceTooSmall;
  // k and v are read twice (checked, then stored): nothing this call writes
  // (the scratch, the cache's rows and scales) may overlap them.
  const size_t scale_bytes = slots.half_scales ? sizeof(half) : sizeof(float);
  const Extent ins[] = {{k, s.hkv * n * s.dk * sizeof(In)}, {v, s.hkv * n * s.dv * sizeof(In)}};
  const Extent outs[] = {{ws.data, kv_int8_workspace_bytes(s)},
                         {slots.k, s.hkv * s.capacity * s.dk},
                         {slots.v, s.hkv * s.capacity * s.dv},
                         {slots.k_scale, s.hkv * s.capacity * scale_bytes},
                         {slots.v_scale, s.hkv * s.capacity * scale_bytes}};
  for (const Extent& out : outs)
    for (const Extent& in : ins)
      if (check_aliasing(&in, 1, &out, 1) != Status::kOk) return Status::kAliasing;
  auto* buf = reinterpret_cast<float*>(aligned_base(ws));
  // A token that int8 cannot hold (inf, NaN, or past an fp16 scale's range,
  // as rotated) is refused before anything is written.
  for (size_t r = 0; r < s.hkv * n; ++r) {
    const float* key = row_f32(k + r * s.dk, s.dk, buf, &rope, position + r % n);
    if (!rows_storable(key, 1, s.dk, slots.half_scales)) return Status::kBadQuantization;
    if (!rows_storable(row_f32(v + r * s.dv, s.dv, buf, nullptr, 0), 1, s.dv, slots.half_scales))
      return Status::kBadQuantization;
  }
  for (size_t h = 0; h < s.hkv; ++h)
    for (size_t t = 0; t < n; ++t) {
      const size_t slot = h * s.capacity + kv_cache_slot(s, position + t);
      store_row(row_f32(k + (h * n + t) * s.dk, s.dk, buf, &rope, position + t), s.dk, slots.half_scales, slots.k,
                slots.k_scale, slot);
      store_row(row_f32(v + (h * n + t) * s.dv, s.dv, buf, nullptr, 0), s.dv, slots.half_scales, slots.v,
                slots.v_scale, slot);
    }
  position += n;
  return Status::kOk;
}

}  // namespace

Status kv_int8_append(const KvCacheShape& s, const KvInt8Slots& slots, size_t& position, const float* k,
                      const float* v, size_t n, const KvRope& rope, Workspace ws) {
  return int8_append(s, slots, position, k, v, n, rope, ws);
}
Status kv_int8_append(const KvCacheShape& s, const KvInt8Slots& slots, size_t& position, const half* k,
                      const half* v, size_t n, const KvRope& rope, Workspace ws) {
  return int8_append(s, slots, position, k, v, n, rope, ws);
}

namespace {

// The rows of attend with the scales' type known, so the per-key loops over
// float scales are plain vectorizable loops.
template <class Scale, class IO>
void int8_rows(const KvCacheShape& s, const KvInt8View& cache, const KvRope& rope, size_t position,
               unsigned char* base, const IO* q, IO* y, size_t n, float scale, const Options& options,
               const KernelsF32& kf, const KernelsI8& ki) {
  const auto* k_scales = static_cast<const Scale*>(cache.k_scale);
  const auto* v_scales = static_cast<const Scale*>(cache.v_scale);
  // The scratch: int32 scores (then integer weights), fp32 logits (then
  // exponentials), two int32 accumulators, the rotated and quantized query.
  auto* ints = reinterpret_cast<int32_t*>(base);
  auto* logits = reinterpret_cast<float*>(base + s.capacity * 4);
  auto* acc = reinterpret_cast<int32_t*>(base + s.capacity * 8);
  int32_t* acc_part = acc + s.dv;
  auto* rotated = reinterpret_cast<float*>(acc_part + s.dv);
  auto* q8 = reinterpret_cast<int8_t*>(rotated + s.dk);

  const size_t group = s.hq / s.hkv;
  for (size_t h = 0; h < s.hq; ++h) {
    const size_t kvh = h / group;
    const int8_t* keys = cache.k + kvh * s.capacity * s.dk;
    const int8_t* values = cache.v + kvh * s.capacity * s.dv;
    const Scale* ks = k_scales + kvh * s.capacity;
    const Scale* vs = v_scales + kvh * s.capacity;
    for (size_t i = 0; i < n; ++i) {
      IO* yi = y + (h * n + i) * s.dv;
      const size_t p = position - n + i;
      const float* qi = std::is_same<IO, float>::value && !rope.on
                            ? reinterpret_cast<const float*>(q + (h * n + i) * s.dk)
                            : row_f32(q + (h * n + i) * s.dk, s.dk, rotated, &rope, p);
      KeyRange ranges[3];
      const size_t range_count = visible_slots(s, p, ranges);
      // A query int8 cannot hold (inf or NaN) gives a NaN row.
      float sq = 0.0f;
      half unused;
      if (!row_scale(max_abs(qi, s.dk), false, &sq, &unused)) {
        for (size_t c = 0; c < s.dv; ++c) from_f32(kNaN, yi + c);
        continue;
      }
      quantize_row(qi, s.dk, sq, q8);
      const float qs = scale * sq;
      size_t count = 0;
      for (size_t r = 0; r < range_count; ++r) {
        const size_t len = ranges[r].size(), lo = ranges[r].lo;
        ki.scores(q8, keys + lo * s.dk, s.dk, len, s.dk, 0, 0, ints + count);
        // A key's scale once on its dot product.
        for (size_t j = 0; j < len; ++j)
          logits[count + j] = static_cast<float>(ints[count + j]) * scale_value(ks[lo + j]) * qs;
        count += len;
      }
      if (options.softcap) cap_logits(*options.softcap, logits, count);
      const float mx = kf.row_max(logits, count);
      if (mx != mx) {  // a logit past fp32 times 0
        for (size_t c = 0; c < s.dv; ++c) from_f32(kNaN, yi + c);
        continue;
      }
      const float sum_e = exponentiate(kf, logits, count, mx);
      // w_j = e_j s_vj; the integer weights split kProbOne in their proportions.
      float total = 0.0f;
      for (size_t r = 0, at = 0; r < range_count; ++r) {
        const size_t len = ranges[r].size();
        const Scale* v_row = vs + ranges[r].lo;
        float* w = logits + at;
        for (size_t j = 0; j < len; ++j) {
          w[j] *= scale_value(v_row[j]);
          total += w[j];
        }
        at += len;
      }
      if (!(total > 0.0f)) {  // every visible value row is 0
        for (size_t c = 0; c < s.dv; ++c) from_f32(0.0f, yi + c);
        continue;
      }
      float unscale = 1.0f;
      while (total < 0x1p-60f) {  // tiny value scales: kProbOne / total stays finite
        for (size_t j = 0; j < count; ++j) logits[j] *= 0x1p64f;
        total *= 0x1p64f;
        unscale *= 0x1p-64f;
      }
      const float to_int = static_cast<float>(kProbOne) / total;
      for (size_t j = 0; j < count; ++j) {
        const float w = logits[j] * to_int + 0.5f;
        ints[j] = w < static_cast<float>(kProbOne) ? static_cast<int32_t>(w) : static_cast<int32_t>(kProbOne);
      }
      for (size_t r = 0, at = 0; r < range_count; ++r) {
        const size_t len = ranges[r].size();
        ki.weighted_sum(ints + at, values + ranges[r].lo * s.dv, s.dv, len, s.dv, 0, r == 0 ? acc : acc_part);
        if (r > 0)
          for (size_t c = 0; c < s.dv; ++c) acc[c] += acc_part[c];
        at += len;
      }
      const float to_y = total * unscale / (sum_e * static_cast<float>(kProbOne));
      for (size_t c = 0; c < s.dv; ++c) from_f32(static_cast<float>(acc[c]) * to_y, yi + c);
    }
  }
}

}  // namespace

namespace {

template <class IO>
Status int8_attend(const KvCacheShape& s, const KvInt8View& cache, const KvRope& rope, size_t position,
                   Workspace ws, const IO* q, IO* y, size_t n, const Options& options) {
  if (q == nullptr || y == nullptr || ws.data == nullptr) return Status::kNullPointer;
  // From C the pointers may be off their type's alignment: refused, as the forwards do.
  if (reinterpret_cast<uintptr_t>(q) % alignof(IO) != 0 || reinterpret_cast<uintptr_t>(y) % alignof(IO) != 0)
    return Status::kMisaligned;
  if (n == 0 || n > s.max_new || n > position) return Status::kBadDimension;
  if (options.scale && !std::isfinite(*options.scale)) return Status::kBadScale;
  if (options.softcap && !(*options.softcap > 0.0f && std::isfinite(*options.softcap))) return Status::kBadScale;
  const KernelsF32* kf = kernels_f32(options.port);
  const KernelsI8* ki = kernels_i8(options.port);
  if (kf == nullptr || ki == nullptr) return Status::kPortUnavailable;
  if (ws.bytes < kv_int8_workspace_bytes(s)) return Status::kWorkspaceTooSmall;
  const Dims d = kv_cache_dims(s, n);
  // y and the scratch may not overlap what attend reads (q, the cache) or
  // each other: the query rows are read after the scratch is written.
  const Extent ins[] = {{q, d.q_elems() * sizeof(IO)},
                        {cache.k, s.hkv * s.capacity * s.dk},
                        {cache.v, s.hkv * s.capacity * s.dv}};
  const Extent outs[] = {{y, d.y_elems() * sizeof(IO)}, {ws.data, kv_int8_workspace_bytes(s)}};
  if (check_aliasing(ins, 3, outs, 2) != Status::kOk) return Status::kAliasing;

  const float scale = effective_scale(d, options);
  if (cache.half_scales)
    int8_rows<half>(s, cache, rope, position, aligned_base(ws), q, y, n, scale, options, *kf, *ki);
  else
    int8_rows<float>(s, cache, rope, position, aligned_base(ws), q, y, n, scale, options, *kf, *ki);
  return Status::kOk;
}

}  // namespace

Status kv_int8_attend(const KvCacheShape& s, const KvInt8View& cache, const KvRope& rope, size_t position,
                      Workspace ws, const float* q, float* y, size_t n, const Options& options) {
  return int8_attend(s, cache, rope, position, ws, q, y, n, options);
}
Status kv_int8_attend(const KvCacheShape& s, const KvInt8View& cache, const KvRope& rope, size_t position,
                      Workspace ws, const half* q, half* y, size_t n, const Options& options) {
  return int8_attend(s, cache, rope, position, ws, q, y, n, options);
}

}  // namespace detail
}  // namespace tinyattn
