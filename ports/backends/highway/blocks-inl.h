// The four-row register tiles (KernelsF32::scores_block, weighted_sum_block,
// scores_block_transposed) and the generic fused block (attend_block,
// AttendBlockKernel), on every target but SCALAR (one lane: a register tile
// gains nothing over the row kernels). Included once per target by
// highway_kernels.cc.

// Per-target include guard: foreach_target.h includes highway_kernels.cc,
// and with it this file, once per target (HWY_TARGET_TOGGLE flips each time).
#if defined(TINYATTN_HIGHWAY_BLOCKS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TINYATTN_HIGHWAY_BLOCKS_INL_H_
#undef TINYATTN_HIGHWAY_BLOCKS_INL_H_
#else
#define TINYATTN_HIGHWAY_BLOCKS_INL_H_
#endif

#include <hwy/highway.h>

#include <limits>

#include "rows-inl.h"
#include "tinyattn/kernels.h"
#include "x86-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tinyattn {
namespace highway {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// One query row's vector qv against the tile's key vectors: its kKeys
// accumulators. The three-key tile keeps qv in a register (InRegister).
template <int kKeys>
HWY_INLINE void RowFma(V qv, V ka, V kb, V kc, V& a, V& b, V& e) {
  if (kKeys == 3) qv = InRegister(qv);
  a = hn::MulAdd(qv, ka, a);
  if (kKeys >= 2) b = hn::MulAdd(qv, kb, b);
  if (kKeys == 3) e = hn::MulAdd(qv, kc, e);
}

// A full vector of Dk at offset c, or (kTail) the first `rest` lanes.
template <bool kTail>
HWY_INLINE V LoadDk(D d, const float* HWY_RESTRICT p, size_t rest) {
  if (kTail) return LoadTail(d, p, rest);
  (void)rest;
  return hn::LoadU(d, p);
}

// The scores of four rows (s0 + j .. s3 + j) for one key each, from their
// accumulators a0..a3 (scaled).
HWY_INLINE void StoreKey(D d, V a0, V a1, V a2, V a3, float scale, float* s0, float* s1, float* s2, float* s3,
                         size_t j) {
#if TINYATTN_HWY_SUM4
  const hn::Full128<float> d4;
  HWY_ALIGN float sums[4];
  hn::Store(hn::Mul(Sum4(d, a0, a1, a2, a3), hn::Set(d4, scale)), d4, sums);
  s0[j] = sums[0];
  s1[j] = sums[1];
  s2[j] = sums[2];
  s3[j] = sums[3];
#else
  s0[j] = scale * ReduceSum(d, a0);
  s1[j] = scale * ReduceSum(d, a1);
  s2[j] = scale * ReduceSum(d, a2);
  s3[j] = scale * ReduceSum(d, a3);
#endif
}

// The same for two keys, j and j + 1 (accumulators a_r and b_r of row r).
HWY_INLINE void StoreKeyPair(D d, V a0, V b0, V a1, V b1, V a2, V b2, V a3, V b3, float scale, float* s0, float* s1,
                             float* s2, float* s3, size_t j) {
#if TINYATTN_HWY_SUM8 || TINYATTN_HWY_SUM4
  const hn::Full128<float> d4;
  const hn::Half<hn::Full128<float>> d2;
#if TINYATTN_HWY_SUM8
  // Lanes 2r, 2r + 1: row r's scores of keys j, j + 1.
  const D8 d8;
  const auto sum = hn::Mul(Sum8(d, a0, b0, a1, b1, a2, b2, a3, b3), hn::Set(d8, scale));
  const auto r01 = hn::LowerHalf(d4, sum), r23 = hn::UpperHalf(d4, sum);
#else
  const auto sc = hn::Set(d4, scale);
  const auto r01 = hn::Mul(Sum4(d, a0, b0, a1, b1), sc);  // rows 0, 1
  const auto r23 = hn::Mul(Sum4(d, a2, b2, a3, b3), sc);
#endif
  hn::StoreU(hn::LowerHalf(d2, r01), d2, s0 + j);
  hn::StoreU(hn::UpperHalf(d2, r01), d2, s1 + j);
  hn::StoreU(hn::LowerHalf(d2, r23), d2, s2 + j);
  hn::StoreU(hn::UpperHalf(d2, r23), d2, s3 + j);
#else
  StoreKey(d, a0, a1, a2, a3, scale, s0, s1, s2, s3, j);
  StoreKey(d, b0, b1, b2, b3, scale, s0, s1, s2, s3, j + 1);
#endif
}

// One step of Dk for the tile: kKeys key loads and four query loads feed
// 4*kKeys FMAs, one query vector live at a time.
template <int kKeys, bool kTail>
HWY_INLINE void ScoresStep(D d, const float* const* q, const float* const* k, size_t c, size_t rest, V& a0, V& a1,
                           V& a2, V& a3, V& b0, V& b1, V& b2, V& b3, V& e0, V& e1, V& e2, V& e3) {
  const V ka = LoadDk<kTail>(d, k[0] + c, rest);
  const V kb = kKeys >= 2 ? LoadDk<kTail>(d, k[1] + c, rest) : ka;
  const V kc = kKeys == 3 ? LoadDk<kTail>(d, k[2] + c, rest) : ka;
  RowFma<kKeys>(LoadDk<kTail>(d, q[0] + c, rest), ka, kb, kc, a0, b0, e0);
  RowFma<kKeys>(LoadDk<kTail>(d, q[1] + c, rest), ka, kb, kc, a1, b1, e1);
  RowFma<kKeys>(LoadDk<kTail>(d, q[2] + c, rest), ka, kb, kc, a2, b2, e2);
  RowFma<kKeys>(LoadDk<kTail>(d, q[3] + c, rest), ka, kb, kc, a3, b3, e3);
}

// Four query rows by kKeys (1 to 3) keys j.. of the block: 4*kKeys FMA
// chains. Three keys (AVX2/AVX-512): twelve chains (eight do not cover the
// FMA latency on two pipes), whose 12 accumulators, 3 key vectors and one
// query vector fill the 16 AVX2 registers; AVX2 at Dk 128: 78 GFLOP/s, 65
// with two keys; Dk 32 and 64 about equal. The horizontal sums run once per
// (row, key), four or eight at a time.
template <int kKeys>
HWY_INLINE void ScoresTile(const float* const* q, const float* HWY_RESTRICT k, size_t ldk, size_t dk, float scale,
                           float* const* s, size_t j) {
  const D d;
  const size_t N = hn::Lanes(d);
  const size_t full = dk - dk % N, rest = dk - full;
  const float* keys[3] = {k, k + (kKeys >= 2 ? ldk : 0), k + (kKeys == 3 ? 2 * ldk : 0)};
  V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);  // key j, rows 0..3
  V b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);  // key j + 1
  V e0 = hn::Zero(d), e1 = hn::Zero(d), e2 = hn::Zero(d), e3 = hn::Zero(d);  // key j + 2
  for (size_t c = 0; c < full; c += N)
    ScoresStep<kKeys, false>(d, q, keys, c, 0, a0, a1, a2, a3, b0, b1, b2, b3, e0, e1, e2, e3);
  if (rest) ScoresStep<kKeys, true>(d, q, keys, full, rest, a0, a1, a2, a3, b0, b1, b2, b3, e0, e1, e2, e3);
  if (kKeys == 1) return StoreKey(d, a0, a1, a2, a3, scale, s[0], s[1], s[2], s[3], j);
  StoreKeyPair(d, a0, b0, a1, b1, a2, b2, a3, b3, scale, s[0], s[1], s[2], s[3], j);
  if (kKeys == 3) StoreKey(d, e0, e1, e2, e3, scale, s[0], s[1], s[2], s[3], j + 2);
}

// Inlined into the fixed-extent kernels (AttendFixed), where dk is a
// constant: the Dk loops then have fixed trip counts and no tail.
HWY_INLINE void ScoresBlockImpl(const float* HWY_RESTRICT q, size_t ldq, size_t rows, const float* HWY_RESTRICT k,
                                size_t ldk, size_t count, size_t dk, float scale, float* HWY_RESTRICT s, size_t lds) {
  if (rows != kBlockRows) {
    for (size_t r = 0; r < rows; ++r) Scores(q + r * ldq, k, ldk, count, dk, scale, s + r * lds);
    return;
  }
  const float* const qr[kBlockRows] = {q, q + ldq, q + 2 * ldq, q + 3 * ldq};
  float* const sr[kBlockRows] = {s, s + lds, s + 2 * lds, s + 3 * lds};
  size_t j = 0;
  if (TINYATTN_HWY_SUM8)
    for (; j + 3 <= count; j += 3) ScoresTile<3>(qr, k + j * ldk, ldk, dk, scale, sr, j);
  for (; j + 2 <= count; j += 2) ScoresTile<2>(qr, k + j * ldk, ldk, dk, scale, sr, j);
  if (j < count) ScoresTile<1>(qr, k + j * ldk, ldk, dk, scale, sr, j);
}

void ScoresBlock(const float* HWY_RESTRICT q, size_t ldq, size_t rows, const float* HWY_RESTRICT k, size_t ldk,
                 size_t count, size_t dk, float scale, float* HWY_RESTRICT s, size_t lds) {
  ScoresBlockImpl(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
}

// One vector of columns of four rows, row r scaled by a_r: `rest` lanes
// where partial, else whole.
HWY_INLINE void StoreTileColumn(D d, bool partial, V r0, V r1, V r2, V r3, V a0, V a1, V a2, V a3,
                                float* HWY_RESTRICT y, size_t ldy, size_t rest) {
  if (partial) {
    StoreTail(d, hn::Mul(r0, a0), y, rest);
    StoreTail(d, hn::Mul(r1, a1), y + ldy, rest);
    StoreTail(d, hn::Mul(r2, a2), y + 2 * ldy, rest);
    StoreTail(d, hn::Mul(r3, a3), y + 3 * ldy, rest);
    return;
  }
  hn::StoreU(hn::Mul(r0, a0), d, y);
  hn::StoreU(hn::Mul(r1, a1), d, y + ldy);
  hn::StoreU(hn::Mul(r2, a2), d, y + 2 * ldy);
  hn::StoreU(hn::Mul(r3, a3), d, y + 3 * ldy);
}

// Vectors of columns per weighted-sum tile (four rows each): 3 where the
// vector registers are 16 (x86: 12 accumulators, 3 value vectors and a
// weight); 5 on AArch64's 32 (NEON, SVE: 20 accumulators, 4 weights and the
// values), so fewer passes over the keys, each of which reloads the four
// rows' weights. Six vectors' 24 accumulators spilled three of them in the
// loop (GCC 12 loads all values first): more instructions than five.
#if HWY_ARCH_ARM_A64
#define TINYATTN_HWY_TILE_COLS 5
#else
#define TINYATTN_HWY_TILE_COLS 3
#endif
static_assert(TINYATTN_HWY_TILE_COLS == 3 || TINYATTN_HWY_TILE_COLS == 5, "the tiles below have 3 or 5 vectors");

// Four rows by `kCols` (1 to TINYATTN_HWY_TILE_COLS) vectors of columns: per
// key, kCols value loads and four weight broadcasts feed 4*kCols FMAs (3:
// twelve independent chains, enough to cover the FMA latency on two pipes).
// kTail: the last vector is a partial one of `rest` (< N) lanes, in the same
// pass over the keys as the whole ones.
template <int kCols, bool kTail = false>
HWY_INLINE void WeightedSumTile(const float* HWY_RESTRICT p, size_t ldp, const float* HWY_RESTRICT v, size_t ldv,
                                size_t count, const float* a, float* HWY_RESTRICT y, size_t ldy, size_t rest) {
  static_assert(kCols >= 1 && kCols <= TINYATTN_HWY_TILE_COLS, "kCols vectors of accumulators fit the registers");
  const D d;
  const size_t N = hn::Lanes(d);
  const float *p0 = p, *p1 = p + ldp, *p2 = p + 2 * ldp, *p3 = p + 3 * ldp;
  V y0 = hn::Zero(d), y1 = hn::Zero(d), y2 = hn::Zero(d), y3 = hn::Zero(d);  // column vector 0, rows 0..3
  V z0 = hn::Zero(d), z1 = hn::Zero(d), z2 = hn::Zero(d), z3 = hn::Zero(d);  // column vector 1
  V x0 = hn::Zero(d), x1 = hn::Zero(d), x2 = hn::Zero(d), x3 = hn::Zero(d);  // column vector 2
#if TINYATTN_HWY_TILE_COLS > 3
  V u0 = hn::Zero(d), u1 = hn::Zero(d), u2 = hn::Zero(d), u3 = hn::Zero(d);  // column vector 3
  V t0 = hn::Zero(d), t1 = hn::Zero(d), t2 = hn::Zero(d), t3 = hn::Zero(d);  // column vector 4
#endif
  const float* vj = v;
  for (size_t j = 0; j < count; ++j, vj += ldv) {
    // V is finite here (KernelsF32::weighted_sum_block): zero weights add nothing.
    const V va = kTail && kCols == 1 ? LoadTail(d, vj, rest) : hn::LoadU(d, vj);
    if (kCols == 1) {
      y0 = hn::MulAdd(hn::Set(d, p0[j]), va, y0);
      y1 = hn::MulAdd(hn::Set(d, p1[j]), va, y1);
      y2 = hn::MulAdd(hn::Set(d, p2[j]), va, y2);
      y3 = hn::MulAdd(hn::Set(d, p3[j]), va, y3);
#if TINYATTN_HWY_TILE_COLS > 3
    } else if (kCols > 3) {
      // A value vector at a time against the four rows' weights; the last
      // (kCols - 1) is the partial one where kTail.
      const V w0 = hn::Set(d, p0[j]), w1 = hn::Set(d, p1[j]), w2 = hn::Set(d, p2[j]), w3 = hn::Set(d, p3[j]);
      y0 = hn::MulAdd(w0, va, y0);
      y1 = hn::MulAdd(w1, va, y1);
      y2 = hn::MulAdd(w2, va, y2);
      y3 = hn::MulAdd(w3, va, y3);
      const V vb = hn::LoadU(d, vj + N);
      z0 = hn::MulAdd(w0, vb, z0);
      z1 = hn::MulAdd(w1, vb, z1);
      z2 = hn::MulAdd(w2, vb, z2);
      z3 = hn::MulAdd(w3, vb, z3);
      const V vc = hn::LoadU(d, vj + 2 * N);
      x0 = hn::MulAdd(w0, vc, x0);
      x1 = hn::MulAdd(w1, vc, x1);
      x2 = hn::MulAdd(w2, vc, x2);
      x3 = hn::MulAdd(w3, vc, x3);
      const V vd = kTail && kCols == 4 ? LoadTail(d, vj + 3 * N, rest) : hn::LoadU(d, vj + 3 * N);
      u0 = hn::MulAdd(w0, vd, u0);
      u1 = hn::MulAdd(w1, vd, u1);
      u2 = hn::MulAdd(w2, vd, u2);
      u3 = hn::MulAdd(w3, vd, u3);
      if (kCols == 5) {
        const V ve = kTail ? LoadTail(d, vj + 4 * N, rest) : hn::LoadU(d, vj + 4 * N);
        t0 = hn::MulAdd(w0, ve, t0);
        t1 = hn::MulAdd(w1, ve, t1);
        t2 = hn::MulAdd(w2, ve, t2);
        t3 = hn::MulAdd(w3, ve, t3);
      }
#endif
    } else {
      const V vb = kTail && kCols == 2 ? LoadTail(d, vj + N, rest) : hn::LoadU(d, vj + N);
      const V vc = kCols == 3 ? (kTail ? LoadTail(d, vj + 2 * N, rest) : hn::LoadU(d, vj + 2 * N)) : vb;
      V w = hn::Set(d, p0[j]);
      y0 = hn::MulAdd(w, va, y0);
      z0 = hn::MulAdd(w, vb, z0);
      if (kCols == 3) x0 = hn::MulAdd(w, vc, x0);
      w = hn::Set(d, p1[j]);
      y1 = hn::MulAdd(w, va, y1);
      z1 = hn::MulAdd(w, vb, z1);
      if (kCols == 3) x1 = hn::MulAdd(w, vc, x1);
      w = hn::Set(d, p2[j]);
      y2 = hn::MulAdd(w, va, y2);
      z2 = hn::MulAdd(w, vb, z2);
      if (kCols == 3) x2 = hn::MulAdd(w, vc, x2);
      w = hn::Set(d, p3[j]);
      y3 = hn::MulAdd(w, va, y3);
      z3 = hn::MulAdd(w, vb, z3);
      if (kCols == 3) x3 = hn::MulAdd(w, vc, x3);
    }
  }
  const V a0 = hn::Set(d, a[0]), a1 = hn::Set(d, a[1]), a2 = hn::Set(d, a[2]), a3 = hn::Set(d, a[3]);
  // The whole vectors, then the last one (partial with kTail).
  StoreTileColumn(d, kTail && kCols == 1, y0, y1, y2, y3, a0, a1, a2, a3, y, ldy, rest);
  if (kCols >= 2) StoreTileColumn(d, kTail && kCols == 2, z0, z1, z2, z3, a0, a1, a2, a3, y + N, ldy, rest);
  if (kCols >= 3) StoreTileColumn(d, kTail && kCols == 3, x0, x1, x2, x3, a0, a1, a2, a3, y + 2 * N, ldy, rest);
#if TINYATTN_HWY_TILE_COLS > 3
  if (kCols >= 4) StoreTileColumn(d, kTail && kCols == 4, u0, u1, u2, u3, a0, a1, a2, a3, y + 3 * N, ldy, rest);
  if (kCols == 5) StoreTileColumn(d, kTail, t0, t1, t2, t3, a0, a1, a2, a3, y + 4 * N, ldy, rest);
#endif
}

#if TINYATTN_HWY_TILE_COLS > 3
// The tile of `cols` (1 to 5) vectors, the last partial where kTail.
template <bool kTail>
HWY_INLINE void WeightedSumTileOf(size_t cols, const float* HWY_RESTRICT p, size_t ldp, const float* HWY_RESTRICT v,
                                  size_t ldv, size_t count, const float* a, float* HWY_RESTRICT y, size_t ldy,
                                  size_t rest) {
  switch (cols) {
    case 1: return WeightedSumTile<1, kTail>(p, ldp, v, ldv, count, a, y, ldy, rest);
    case 2: return WeightedSumTile<2, kTail>(p, ldp, v, ldv, count, a, y, ldy, rest);
    case 3: return WeightedSumTile<3, kTail>(p, ldp, v, ldv, count, a, y, ldy, rest);
    case 4: return WeightedSumTile<4, kTail>(p, ldp, v, ldv, count, a, y, ldy, rest);
    default: return WeightedSumTile<5, kTail>(p, ldp, v, ldv, count, a, y, ldy, rest);
  }
}
#endif

// Inlined, as ScoresBlockImpl, where dv is a constant.
HWY_INLINE void WeightedSumBlockImpl(const float* HWY_RESTRICT p, size_t ldp, size_t rows,
                                     const float* HWY_RESTRICT v, size_t ldv, size_t count, size_t dv, const float* a,
                                     float* HWY_RESTRICT y, size_t ldy) {
  if (rows != kBlockRows) {
    for (size_t r = 0; r < rows; ++r) WeightedSum(p + r * ldp, v, ldv, count, dv, a[r], y + r * ldy);
    return;
  }
  const D d;
  const size_t N = hn::Lanes(d);
  size_t c = 0;
#if TINYATTN_HWY_TILE_COLS > 3
  // As few tiles as five vectors each allow, of equal widths (16 vectors:
  // 4 + 4 + 4 + 4 rather than 5 + 5 + 5 + 1, whose one vector's four FMA
  // chains would not cover the latency); a partial last vector rides in the
  // last tile's pass over the keys.
  size_t vectors = (dv + N - 1) / N;
  for (size_t tiles = (vectors + 4) / 5; tiles > 1; --tiles) {
    const size_t cols = (vectors + tiles - 1) / tiles;
    WeightedSumTileOf<false>(cols, p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
    vectors -= cols;
    c += cols * N;
  }
  if (dv % N != 0)
    WeightedSumTileOf<true>(vectors, p, ldp, v + c, ldv, count, a, y + c, ldy, dv - c - (vectors - 1) * N);
  else
    WeightedSumTileOf<false>(vectors, p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
#else
  if (dv % N != 0) {
    // A partial last vector rides in the last tile's pass over the keys (a
    // pass of its own cost as much as a whole vector's: Dv 20 on AVX-512 was
    // two passes, as slow as Dv 32). Tiles of three vectors, then 2 + 2
    // rather than 3 + 1.
    size_t vectors = (dv + N - 1) / N;
    for (; vectors > 3 && vectors != 4; vectors -= 3, c += 3 * N)
      WeightedSumTile<3>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
    if (vectors == 4) {
      WeightedSumTile<2>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
      vectors = 2;
      c += 2 * N;
    }
    const size_t rest = dv - c - (vectors - 1) * N;
    if (vectors == 3) WeightedSumTile<3, true>(p, ldp, v + c, ldv, count, a, y + c, ldy, rest);
    else if (vectors == 2) WeightedSumTile<2, true>(p, ldp, v + c, ldv, count, a, y + c, ldy, rest);
    else WeightedSumTile<1, true>(p, ldp, v + c, ldv, count, a, y + c, ldy, rest);
    return;
  }
  // Three vectors at a time, but not 3 + 1 where 2 + 2 fits (two equal tiles).
  for (; c + 3 * N <= dv && dv - c != 4 * N; c += 3 * N)
    WeightedSumTile<3>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
  for (; c + 2 * N <= dv; c += 2 * N) WeightedSumTile<2>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
  if (c + N <= dv) WeightedSumTile<1>(p, ldp, v + c, ldv, count, a, y + c, ldy, 0);
#endif
}

void WeightedSumBlock(const float* HWY_RESTRICT p, size_t ldp, size_t rows, const float* HWY_RESTRICT v, size_t ldv,
                      size_t count, size_t dv, const float* a, float* HWY_RESTRICT y, size_t ldy) {
  WeightedSumBlockImpl(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
}

// Scores of a full block from the keys transposed: the weighted-sum tile with
// the query rows as weights and K^T's rows as value rows (each query element
// broadcast against a vector of keys, no horizontal sums). Every product is
// computed, so an inf or NaN in K reaches its scores as in a dot product.
void ScoresBlockTransposed(const float* HWY_RESTRICT q, size_t ldq, const float* HWY_RESTRICT kt, size_t ldkt,
                           size_t count, size_t dk, float scale, float* HWY_RESTRICT s, size_t lds) {
  const float a[kBlockRows] = {scale, scale, scale, scale};
  static_assert(kBlockRows == 4, "a lists kBlockRows scales");
  WeightedSumBlock(q, ldq, kBlockRows, kt, ldkt, dk, count, a, s, lds);
}

// f(r, x_r, y_r) for rows r < R <= 4: the rows' vectors are named variables,
// not array elements, which SVE's sizeless vectors cannot be. The lambdas
// below capture no vector for the same reason.
template <size_t R, class F>
HWY_INLINE void ForRows(const F& f, V& x0, V& x1, V& x2, V& x3, V& y0, V& y1, V& y2, V& y3) {
  f(0, x0, y0);
  if (R > 1) f(1, x1, y1);
  if (R > 2) f(2, x2, y2);
  if (R > 3) f(3, x3, y3);
}

// Whether y[r*ldy + c] is finite for every r < R, c < dv.
template <size_t R>
HWY_INLINE bool OutputsFinite(D d, const float* HWY_RESTRICT y, size_t ldy, size_t dv) {
  const size_t N = hn::Lanes(d);
  const size_t full = dv - dv % N;
  auto ok = hn::IsFinite(hn::Zero(d));  // all true
  for (size_t r = 0; r < R; ++r) {
    for (size_t c = 0; c < full; c += N) ok = hn::And(ok, hn::IsFinite(hn::LoadU(d, y + r * ldy + c)));
    if (full < dv) ok = hn::And(ok, hn::IsFinite(LoadTail(d, y + r * ldy + full, dv - full)));  // zeros past dv
  }
  return hn::AllTrue(d, ok);
}

// The least lane of the first R of l0..l3 (lane-wise: one vector).
template <size_t R>
HWY_INLINE V MinOfRows(V l0, V l1, V l2, V l3) {
  if (R > 1) l0 = hn::Min(l0, l1);
  if (R > 2) l0 = hn::Min(l0, l2);
  if (R > 3) l0 = hn::Min(l0, l3);
  return l0;
}

// The fused block for R rows. The rows' max, exp and sum chains run
// interleaved (j outer, rows inner), which short rows (the small shapes'
// case) need: a row at a time is bound by the latency of its reductions. No
// NaN bookkeeping in the max (x86 max returns an operand): a NaN score makes
// its row's sum NaN instead, which the check below catches. The max pass
// also keeps each row's least score, so a -inf one (a dot product that
// overflowed: the driver recomputes it) declines; keys outside a row's
// range get -FLT_MAX instead, whose numerator is exactly 0 below any max
// above -FLT_MAX (a row at -FLT_MAX declines). kFixed: dk and dv are the
// constants of a fixed-extent kernel, and the block products are inlined for
// them (the same operations in the same order as the generic kernel, so the
// same floats).
template <size_t R, bool kFixed>
HWY_INLINE bool AttendRows(const AttendBlock& b, size_t dk, size_t dv) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kMax = std::numeric_limits<float>::max();
  const D d;
  const size_t N = hn::Lanes(d);
  float* HWY_RESTRICT s = b.s;
  const size_t lds = b.lds, count = b.count, full = count - count % N, rest = count - full;
  if (R == kBlockRows && b.kt) ScoresBlockTransposed(b.q, b.ldq, b.kt, b.ldkt, count, dk, b.scale, s, lds);
  else if (kFixed) ScoresBlockImpl(b.q, b.ldq, R, b.k, b.ldk, count, dk, b.scale, s, lds);
  else ScoresBlock(b.q, b.ldq, R, b.k, b.ldk, count, dk, b.scale, s, lds);
  if (b.own) {  // keys outside a row's range: -FLT_MAX, finite, with numerators exactly 0
    for (size_t r = 0; r < R; ++r) {
      float* sr = s + r * lds;
      for (size_t j = 0; j < b.own[2 * r]; ++j) sr[j] = -kMax;
      for (size_t j = b.own[2 * r + 1]; j < count; ++j) sr[j] = -kMax;
    }
  }
  V m0 = hn::Set(d, -kInf), m1 = m0, m2 = m0, m3 = m0;  // each row's max
  V l0 = hn::Set(d, kInf), l1 = l0, l2 = l0, l3 = l0;   // each row's least score
  for (size_t j = 0; j < full; j += N)
    ForRows<R>(
        [&](size_t r, V& m, V& l) {
          const V x = hn::LoadU(d, s + r * lds + j);
          m = hn::Max(m, x);
          l = hn::Min(l, x);
        },
        m0, m1, m2, m3, l0, l1, l2, l3);
  if (rest)
    ForRows<R>(
        [&](size_t r, V& m, V& l) {
          const V x = LoadTail(d, s + r * lds + full, rest);  // lanes past count 0: finite
          m = hn::Max(m, hn::IfThenElse(hn::FirstN(d, rest), x, hn::Set(d, -kInf)));
          l = hn::Min(l, x);
        },
        m0, m1, m2, m3, l0, l1, l2, l3);
  ForRows<R>([&](size_t, V& m, V&) { m = BroadcastMax(d, m); }, m0, m1, m2, m3, l0, l1, l2, l3);
  bool ok = hn::AllTrue(d, hn::Gt(MinOfRows<R>(l0, l1, l2, l3), hn::Set(d, -kInf)));
  V a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;  // each row's sum
  for (size_t j = 0; j < full; j += N)
    ForRows<R>(
        [&](size_t r, V& m, V& a) {
          const V e = ExpNonPositive(d, hn::Sub(hn::LoadU(d, s + r * lds + j), m));
          hn::StoreU(e, d, s + r * lds + j);
          a = hn::Add(a, e);
        },
        m0, m1, m2, m3, a0, a1, a2, a3);
  if (rest)
    ForRows<R>(
        [&](size_t r, V& m, V& a) {
          float* x = s + r * lds + full;
          const V e = hn::IfThenElseZero(hn::FirstN(d, rest), ExpNonPositive(d, hn::Sub(LoadTail(d, x, rest), m)));
          StoreTail(d, e, x, rest);
          a = hn::Add(a, e);
        },
        m0, m1, m2, m3, a0, a1, a2, a3);
  // A row with a finite max has a term exp(0) = 1, so its sum is >= 1; the
  // compare also fails for a NaN sum.
  float inv[kBlockRows];
  ForRows<R>(
      [&](size_t r, V& m, V& a) {
        const float mx = hn::GetLane(m), sum = ReduceSum(d, a);
        ok &= mx > -kMax && mx < kInf && sum >= 1.0f;
        b.max[r] = mx;
        b.sum[r] = sum;
        inv[r] = 1.0f / sum;
      },
      m0, m1, m2, m3, a0, a1, a2, a3);
  if (!ok) return false;
  if (kFixed) WeightedSumBlockImpl(s, lds, R, b.v, b.ldv, count, dv, inv, b.y, b.ldy);
  else WeightedSumBlock(s, lds, R, b.v, b.ldv, count, dv, inv, b.y, b.ldy);
  // An inf or NaN in V (a zero weight times inf is NaN): declined, the
  // driver's row kernels skip zero weights.
  return OutputsFinite<R>(d, b.y, b.ldy, dv);
}

bool AttendBlockKernel(const AttendBlock& b) {
  switch (b.rows) {
    case 1: return AttendRows<1, false>(b, b.dk, b.dv);
    case 2: return AttendRows<2, false>(b, b.dk, b.dv);
    case 3: return AttendRows<3, false>(b, b.dk, b.dv);
    default: return AttendRows<4, false>(b, b.dk, b.dv);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace highway
}  // namespace tinyattn
HWY_AFTER_NAMESPACE();

#endif  // TINYATTN_HIGHWAY_BLOCKS_INL_H_
