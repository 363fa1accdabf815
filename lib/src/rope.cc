// Rotary position embedding (tinyattn/rope.h): the angles, their cos/sin and
// the rotation, shared by apply_rope, rope_row and RopeTable so that all of
// them give the same bits.
//
// Angles are kept in turns as 64-bit fixed point (2^-64 turn units): the
// frequency of pair k, F_k = theta^(-2k/r) / (2 pi) * 2^64, and a position p
// gives p * F_k mod 2^64, the angle modulo one turn, exactly (integer
// wrap-around) for every position. So the range reduction costs nothing and
// loses nothing, where a float angle p * inv_freq would carry an error of
// |angle| * 2^-24. F_0 is a constant; F_{k+1} = F_k * theta^(-2/r), the ratio
// computed once per call in double with the polynomials below (no libm).
#include "tinyattn/rope.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tinyattn {

namespace {

// 2^64 / (2 pi), rounded: the frequency of pair 0 (1 radian per position) in turns.
constexpr uint64_t kTurnsPerRadian = 0x28BE60DB9391054Aull;

// Pairs per chunk of rope_row: cos/sin on the stack (128 bytes) between the
// angle loop and the rotation, which is then rope_rotate's own loop.
constexpr size_t kChunk = 16;

// ln(x) in double for x >= 1 (a float): x = m 2^e, m in [sqrt(1/2), sqrt(2)),
// ln m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| <= 0.1716, by its series
// to s^21 (truncation below 2^-57 relative).
double log_double(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  int e = static_cast<int>(bits >> 23) - 127;
  double m = 1.0 + static_cast<double>(bits & 0x7FFFFFu) * 0x1p-23;
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++e;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  double series = 1.0 / 21.0;
  for (int k = 19; k >= 1; k -= 2) series = 1.0 / k + z * series;
  // ln 2 split so that e * ln2_hi is exact (|e| <= 128).
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double de = static_cast<double>(e);
  return de * ln2_hi + (2.0 * s * series + de * ln2_lo);
}

// exp(y) for y in [-89, 0] in double, as f * 2^n with f in [0.5, 1):
// y = j ln2 + t, |t| <= ln2 / 2, Taylor series of e^t to t^15.
void exp_double(double y, double* f, int* n) {
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  // -y / ln2 rounded to nearest (ties up; y <= 0): truncate, then the exact remainder against one half.
  const double r = -y * 1.4426950408889634;
  int ri = static_cast<int>(r);
  ri += r - ri >= 0.5 ? 1 : 0;
  const double jd = -static_cast<double>(ri);
  const double t = (y - jd * ln2_hi) - jd * ln2_lo;
  double p = 1.0;
  for (int k = 15; k >= 1; --k) p = 1.0 + p * t / k;
  int j = static_cast<int>(jd);
  // e^t is in [0.70, 1.42): move it into [0.5, 1).
  while (p >= 1.0) {
    p *= 0.5;
    ++j;
  }
  while (p < 0.5) {
    p *= 2.0;
    --j;
  }
  *f = p;
  *n = j;
}

// The high and low halves of a * b.
void mul_64x64(uint64_t a, uint64_t b, uint64_t* hi, uint64_t* lo) {
#if defined(__SIZEOF_INT128__)
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  *hi = static_cast<uint64_t>(p >> 64);
  *lo = static_cast<uint64_t>(p);
#else
  const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  *lo = (mid << 32) | (p00 & 0xFFFFFFFFu);
#endif
}

// The next pair's frequency: F * ratio * 2^-shift, truncated (shift >= 63).
uint64_t next_frequency(uint64_t f, const detail::RopeRow& r) {
  uint64_t hi, lo;
  mul_64x64(f, r.ratio, &hi, &lo);
  if (r.shift >= 128) return 0;
  if (r.shift >= 64) return hi >> (r.shift - 64);
  return (hi << (64 - r.shift)) | (lo >> r.shift);
}

// cos and sin of 2 pi u 2^-64. The angle is rounded to 2^-32 turn, reduced
// to the nearest quarter turn q and a rest x in [-1/8, 1/8] turn, held as an
// exact float pair x_hi + x_lo; sin(2 pi x) = 2 pi x + x^3 S(x^2) and
// cos(2 pi x) = 1 + x^2 C(x^2) with polynomials fitted in relative error
// (sin, 2^-27) and absolute error (cos, 2^-27) on that interval, 2 pi split
// into hi + lo. Each result is within about 1.5 ULP of 0.7 (2^-23.5).
void sincos_turns(uint64_t u, float* c, float* s) {
  const uint32_t top = static_cast<uint32_t>((u + 0x80000000u) >> 32);
  const uint32_t shifted = top + 0x20000000u;  // mod 2^32, as the angle
  const uint32_t q = shifted >> 30;
  const uint32_t w = shifted & 0x3FFFFFFFu;  // x = (w - 2^29) 2^-32 turn
  const float x_hi = static_cast<float>(static_cast<int32_t>(w & ~31u) - 0x20000000) * 0x1p-32f;
  const float x_lo = static_cast<float>(w & 31u) * 0x1p-32f;
  const float x = x_hi + x_lo;
  const float z = x * x;
  const float two_pi_hi = 0x1.921fb6p+2f, two_pi_lo = -0x1.777a5cp-23f;
  const float s3 = -0x1.4abbbep+5f, s5 = 0x1.466004p+6f, s7 = -0x1.2dc84cp+6f;
  const float c2 = -0x1.3bd3ccp+4f, c4 = 0x1.03c1dep+6f, c6 = -0x1.55c664p+6f, c8 = 0x1.d9f7bcp+5f;
  const float sin_tail = x * two_pi_lo + x * z * (s3 + z * (s5 + z * s7));
  const float sin_x = x_hi * two_pi_hi + (x_lo * two_pi_hi + sin_tail);
  const float cos_x = 1.0f + z * (c2 + z * (c4 + z * (c6 + z * c8)));
  // Quarter turn q: cos(q pi/2 + a), sin(q pi/2 + a) from cos a, sin a.
  const bool odd = (q & 1u) != 0;
  const float cos_q = odd ? -sin_x : cos_x, sin_q = odd ? cos_x : sin_x;
  const bool negate = (q & 2u) != 0;
  *c = negate ? -cos_q : cos_q;
  *s = negate ? -sin_q : sin_q;
}

// cos/sin of pairs [k0, k0 + count) at `position`; f is F_{k0} on entry and
// F_{k0 + count} on return.
void angles(const detail::RopeRow& r, uint64_t position, uint64_t& f, float* c, float* s, size_t count) {
  for (size_t k = 0; k < count; ++k) {
    sincos_turns(position * f, &c[k], &s[k]);
    f = next_frequency(f, r);
  }
}

// (a, b) -> (a cos - b sin, b cos + a sin) for `count` pairs a[k stride], b[k stride].
void rotate_pairs(float* a, float* b, size_t stride, const float* c, const float* s, size_t count) {
  for (size_t k = 0; k < count; ++k) {
    const float x = a[k * stride], y = b[k * stride];
    a[k * stride] = x * c[k] - y * s[k];
    b[k * stride] = y * c[k] + x * s[k];
  }
}

// Pairs [k0, k0 + count) of a row: where each pair's two features are.
template <class T>
struct PairSlice {
  T* a;
  T* b;
  size_t stride;
};

template <class T>
PairSlice<T> pair_slice(const detail::RopeRow& r, T* row, size_t k0) {
  if (r.style == RopeStyle::kInterleaved) return {row + 2 * k0, row + 2 * k0 + 1, 2};
  return {row + k0, row + r.rotary_dim / 2 + k0, 1};
}

void rotate_chunk(const detail::RopeRow& r, float* row, size_t k0, const float* c, const float* s, size_t count) {
  const PairSlice<float> p = pair_slice(r, row, k0);
  rotate_pairs(p.a, p.b, p.stride, c, s, count);
}

// fp16: the pairs widened to float, rotated by the same code, rounded back.
void rotate_chunk(const detail::RopeRow& r, half* row, size_t k0, const float* c, const float* s, size_t count) {
  const PairSlice<half> p = pair_slice(r, row, k0);
  float a[kChunk], b[kChunk];
  for (size_t k = 0; k < count; ++k) {
    a[k] = to_float(p.a[k * p.stride]);
    b[k] = to_float(p.b[k * p.stride]);
  }
  rotate_pairs(a, b, 1, c, s, count);
  for (size_t k = 0; k < count; ++k) {
    p.a[k * p.stride] = to_half(a[k]);
    p.b[k * p.stride] = to_half(b[k]);
  }
}

template <class T>
void row_at(const detail::RopeRow& r, T* row, size_t position) {
  const size_t pairs = r.rotary_dim / 2;
  uint64_t f = kTurnsPerRadian;
  float c[kChunk], s[kChunk];
  for (size_t k0 = 0; k0 < pairs; k0 += kChunk) {
    const size_t count = pairs - k0 < kChunk ? pairs - k0 : kChunk;
    angles(r, position, f, c, s, count);
    rotate_chunk(r, row, k0, c, s, count);
  }
}

template <class T>
void rotate_table_row(const detail::RopeRow& r, T* row, const float* c, const float* s) {
  const size_t pairs = r.rotary_dim / 2;
  for (size_t k0 = 0; k0 < pairs; k0 += kChunk) {
    const size_t count = pairs - k0 < kChunk ? pairs - k0 : kChunk;
    rotate_chunk(r, row, k0, c + k0, s + k0, count);
  }
}

template <class T>
Status apply_rows(const Rope& rope, T* x, size_t heads, size_t n, size_t dim, size_t first_position) {
  if (Status s = detail::rope_check_tensor(x, sizeof(T), heads, n, dim, first_position); s != Status::kOk) return s;
  detail::RopeRow r;
  if (Status s = detail::rope_prepare(rope, dim, &r); s != Status::kOk) return s;
  for (size_t h = 0; h < heads; ++h)
    for (size_t i = 0; i < n; ++i) row_at(r, x + (h * n + i) * dim, first_position + i);
  return Status::kOk;
}

}  // namespace

Status validate(const Rope& rope, size_t head_dim) {
  if (head_dim == 0 || head_dim > kMaxDim) return Status::kBadDimension;
  const size_t r = rope.rotary_dim != 0 ? rope.rotary_dim : head_dim;
  if (r % 2 != 0 || r > head_dim) return Status::kBadDimension;
  if (!(rope.theta >= 1.0f) || !std::isfinite(rope.theta)) return Status::kBadScale;
  if (rope.style != RopeStyle::kHalfSplit && rope.style != RopeStyle::kInterleaved) return Status::kUnsupported;
  return Status::kOk;
}

Status apply_rope(const Rope& rope, float* x, size_t heads, size_t n, size_t dim, size_t first_position) {
  return apply_rows(rope, x, heads, n, dim, first_position);
}

Status apply_rope(const Rope& rope, half* x, size_t heads, size_t n, size_t dim, size_t first_position) {
  return apply_rows(rope, x, heads, n, dim, first_position);
}

namespace detail {

Status rope_prepare(const Rope& rope, size_t head_dim, RopeRow* out) {
  if (out == nullptr) return Status::kNullPointer;
  if (Status s = validate(rope, head_dim); s != Status::kOk) return s;
  const uint32_t r = rope.rotary_dim != 0 ? rope.rotary_dim : static_cast<uint32_t>(head_dim);
  // theta^(-2/r) = f 2^n, f in [0.5, 1), n <= 1: ratio = f 2^64 (exact:
  // f has 53 bits), shift = 64 - n, capped where every later F is 0.
  double f;
  int n;
  exp_double(-2.0 * log_double(rope.theta) / static_cast<double>(r), &f, &n);
  RopeRow row;
  row.ratio = static_cast<uint64_t>(f * 0x1p64);
  row.shift = static_cast<uint32_t>(64 - n < 128 ? 64 - n : 128);
  row.rotary_dim = r;
  row.style = rope.style;
  *out = row;
  return Status::kOk;
}

void rope_row(const RopeRow& r, float* row, size_t position) { row_at(r, row, position); }
void rope_row(const RopeRow& r, half* row, size_t position) { row_at(r, row, position); }

void rope_angles(const RopeRow& r, size_t position, float* cos, float* sin) {
  uint64_t f = kTurnsPerRadian;
  angles(r, position, f, cos, sin, r.rotary_dim / 2);
}

void rope_rotate(const RopeRow& r, float* row, const float* cos, const float* sin) {
  rotate_table_row(r, row, cos, sin);
}
void rope_rotate(const RopeRow& r, half* row, const float* cos, const float* sin) {
  rotate_table_row(r, row, cos, sin);
}

Status rope_check_tensor(const void* x, size_t elem, size_t heads, size_t n, size_t dim, size_t first_position) {
  if (x == nullptr) return Status::kNullPointer;
  if (reinterpret_cast<uintptr_t>(x) % elem != 0) return Status::kMisaligned;
  if (heads == 0 || heads > kMaxDim) return Status::kBadHeads;
  if (n == 0 || n > kMaxDim) return Status::kBadDimension;
  if (n - 1 > std::numeric_limits<size_t>::max() - first_position) return Status::kBadDimension;
  if (dim == 0 || dim > kMaxDim) return Status::kBadDimension;
  // The tensor's bytes must be addressable (a 32-bit size_t holds 2^48 elements' worth only in 64 bits).
  if (uint64_t{heads} * n * dim > std::numeric_limits<size_t>::max() / elem) return Status::kBadDimension;
  return Status::kOk;
}

}  // namespace detail
}  // namespace tinyattn
