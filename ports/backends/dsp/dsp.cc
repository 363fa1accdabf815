// The Armv7E-M DSP port (Cortex-M4, M7, M33, M35P): its int8 kernels
// (dsp_i8.cc) use the dual 16-bit multiply-accumulates. Its fp32 table is
// the scalar port's with the products replaced where the core has a
// single-precision FPU (FPv4-SP, FPv5). The block products take register
// tiles of four query rows by four keys (scores) or four value columns
// (P.V), sixteen accumulators in s0-s15 and the operands of two steps in
// s16-s31, loaded two or four floats per VLDM, so a step costs 8 loads for
// 32 multiply-adds (the scalar block kernel: 5 for 4). A decode step has one
// to three rows: `scores`, `weighted_sum` and the blocks of fewer rows take
// one-row tiles (a query row against four keys, eight columns per VLDM; one
// row's 16, 8 or 4 output columns with eight weights per VLDM) and, for the
// scores of two rows and more, a two-row tile. GCC 12 never merges float
// loads into VLDM, hence the asm. The four-row sums run in the scalar block
// kernels' order: the same floats. Without an FPU (M33 without FP) every
// float operation is a libgcc call and the scalar kernels stay. The
// softmax's row_max, exp_shift_sum and exp take two elements per loop step
// (softmax_rows-inl.h: exp_poly's steps, its constants reloaded by VLDM).
// The other entries are the scalar port's functions under this port's
// name, so an image with both ports holds them once.
#include "backends/scalar/scalar.h"
#include "port.h"

#include <cstddef>

namespace tinyattn {
namespace dsp {
namespace {

#if defined(__ARM_FP) && (__ARM_FP & 4) && defined(__OPTIMIZE__)

// The asm below names every single-precision register (so the compiler
// keeps nothing of its own in them across it) and loads two or four
// consecutive floats per VLDM. The tiles are functions of their own
// (noinline): inlined into the block kernel's loop, GCC 12 at -Os finds no
// registers for the ten operands of the score tile ("impossible
// constraints"), and at -O0 none at all, so unoptimized builds keep the
// scalar kernels.
#define TINYATTN_DSP_CLOBBERS                                                                                         \
  "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", \
      "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31", "memory", "cc"

alignas(8) constexpr float kZeros[16] = {};

// What a tile's asm reads besides its operand rows, from one register (the
// others hold the row pointers).
struct TileArgs {
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  const float* zeros;  // kZeros, cleared into the sixteen accumulators
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  size_t steps;  // pairs of multiply-add steps (dk / 2 or count / 2)
  union {
    // cppcheck-suppress unusedStructMember ; read by the score tile's asm
    float scale;     // scores: the factor of every score
    const float* a;  // weighted sums: the four rows' factors
  };
  float* out;  // the tile's first output row
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  size_t ld_out;      // bytes between its output rows
  size_t ld_operand;  // elements between the key rows (scores) or the value rows
};
static_assert(offsetof(TileArgs, steps) == 4 && offsetof(TileArgs, scale) == 8 && offsetof(TileArgs, a) == 8 &&
                  offsetof(TileArgs, out) == 12 && offsetof(TileArgs, ld_out) == 16,
              "the asm below addresses TileArgs by these offsets");

}  // namespace
}  // namespace dsp
}  // namespace tinyattn

// The full block's tiles, on TileArgs and kZeros above.
#include "block_tiles-inl.h"

namespace tinyattn {
namespace dsp {
namespace {

// What a one-row tile's asm reads besides its operand rows.
struct RowArgs {
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  const float* zeros;  // kZeros, cleared into the accumulators
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  size_t steps;  // scores: dk / 8; weighted sums: count / 8
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  float factor;  // scores: scale; weighted sums: a
  float* out;    // the tile's outputs
  // cppcheck-suppress unusedStructMember ; read by the tiles' asm
  size_t rest;  // scores: (dk % 8) / 2; weighted sums: count % 8
  // cppcheck-suppress unusedStructMember ; read by the two-row tile's asm
  size_t ld_out;  // bytes between the two-row tile's output rows
  float four[4];  // the outputs of a one-row score tile of fewer than four keys
};
static_assert(offsetof(RowArgs, steps) == 4 && offsetof(RowArgs, factor) == 8 && offsetof(RowArgs, out) == 12 &&
                  offsetof(RowArgs, rest) == 16 && offsetof(RowArgs, ld_out) == 20,
              "the asm below addresses RowArgs by these offsets");

}  // namespace
}  // namespace dsp
}  // namespace tinyattn

// The one- and two-row tiles, on RowArgs above.
#include "score_rows-inl.h"
#include "sum_rows-inl.h"
// The softmax's row kernels (row_max, exp_shift_sum and exp), two elements
// per step.
#include "softmax_rows-inl.h"

namespace tinyattn {
namespace dsp {
namespace {

// The row loops, inlined where they are used: a call between the kernels
// would add its frame to the deepest chain (stage 80-stack).
#define TINYATTN_DSP_INLINE inline __attribute__((always_inline))

// s[j] = scale * dot(q, k_j) for one query row, dk even (t: its steps,
// rest and scale), in tiles of four keys, the last tile overlapping the one
// before when four do not divide count (its sums are the same floats again);
// under four keys, one tile per key with the key in all four places.
TINYATTN_DSP_INLINE void scores_row(const float* q, const float* k, size_t ldk, size_t count, RowArgs& t, float* s) {
  if (count < 4) {
    t.out = t.four;
    for (size_t j = 0; j < count; ++j) {
      scores_row_tile(q, k + j * ldk, 0, t);
      s[j] = t.four[0];
    }
    return;
  }
  for (size_t j = 0;; j += 4) {
    if (j + 4 > count) j = count - 4;
    t.out = s + j;
    scores_row_tile(q, k + j * ldk, ldk, t);
    if (j + 4 == count) break;
  }
}

// KernelsF32::scores: the one-row tiles; odd dk by the scalar kernel, for
// every key alike.
void scores(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale, float* s) {
  if (dk % 2 != 0) {
    scalar::f32::scores(q, k, ldk, count, dk, scale, s);
    return;
  }
  RowArgs t{kZeros, dk / 8, scale, s, dk % 8 / 2, 0, {}};
  scores_row(q, k, ldk, count, t, s);
}

// y = a * sum_j p[j] * v[j*ldv + ...] for one row, dv >= 4, every term
// computed (no zero skipping), in tiles of 16, 8 and 4 columns, a last tile
// of four overlapping the one before when four do not divide dv.
TINYATTN_DSP_INLINE void weighted_sum_row(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a,
                                          float* y) {
  RowArgs t{kZeros, count / 8, a, y, count % 8, 0, {}};
  const size_t ld = ldv * sizeof(float);
  size_t c = 0;
  for (; c + 16 <= dv; c += 16) {
    t.out = y + c;
    weighted_sum_row16(p, v + c, ld - 8 * sizeof(float), t);
  }
  if (c + 8 <= dv) {
    t.out = y + c;
    weighted_sum_row8(p, v + c, ld, t);
    c += 8;
  }
  if (c + 4 <= dv) {
    t.out = y + c;
    weighted_sum_row4(p, v + c, ld, t);
    c += 4;
  }
  if (c < dv) {
    t.out = y + dv - 4;
    weighted_sum_row4(p, v + dv - 4, ld, t);
  }
}

// weighted_sum_row, and whether every output is finite (x * 0 is 0 for a
// finite x, NaN otherwise).
__attribute__((noinline)) bool weighted_sum_finite(const float* p, const float* v, size_t ldv, size_t count, size_t dv,
                                                   float a, float* y) {
  weighted_sum_row(p, v, ldv, count, dv, a, y);
  float z = 0.0f;
  for (size_t c = 0; c < dv; ++c) z += y[c] * 0.0f;
  return z == 0.0f;
}

// KernelsF32::weighted_sum: the row tiles multiply every weight, so a zero
// weight meeting an inf or NaN value row gives NaN where the contract says
// the key adds nothing. With finite terms the two agree (adding 0 * v
// changes no sum), so only an output that is not finite is computed again
// by the scalar kernel, which skips zero weights.
void weighted_sum(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y) {
  if (dv >= 4 && weighted_sum_finite(p, v, ldv, count, dv, a, y)) return;
  scalar::f32::weighted_sum(p, v, ldv, count, dv, a, y);
}

// The blocks' paths other than a full block's: each its own function (the
// full blocks' code stays what it was without them), called through a
// dispatcher of the same signature, so each call chain holds at most two of
// this file's frames above a tile (stage 80-stack bounds every indirect call
// by the deepest port function).

// Fewer rows than a block (a decode step's one to three), dk even: the
// first two rows through the two-row tile, the others through the one-row
// tiles (both sum as scores does: the same floats).
__attribute__((noinline)) void scores_block_rows(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk,
                                                 size_t count, size_t dk, float scale, float* s, size_t lds) {
  RowArgs t{kZeros, dk / 8, scale, s, dk % 8 / 2, lds * sizeof(float), {}};
  size_t r = 0;
  if (rows >= 2 && count >= 4) {
    for (size_t j = 0;; j += 4) {
      if (j + 4 > count) j = count - 4;
      t.out = s + j;
      scores_rows2_tile(q, ldq, k + j * ldk, ldk, t);
      if (j + 4 == count) break;
    }
    r = 2;
  }
  for (; r < rows; ++r) scores_row(q + r * ldq, k, ldk, count, t, s + r * lds);
}

// What scores_block leaves to others: fewer rows (dk even) to
// scores_block_rows; odd dk, or a full block of fewer than four keys, to the
// scalar kernel.
__attribute__((noinline)) void scores_block_rest(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk,
                                                 size_t count, size_t dk, float scale, float* s, size_t lds) {
  if (rows != kBlockRows && dk % 2 == 0)
    scores_block_rows(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
  else
    scalar::f32::scores_block(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
}

// s[r*lds + j] = scale * dot(q_r, k_j): a full block (kBlockRows rows) of
// at least four keys with dk even in tiles of four keys, the last tile
// overlapping the one before when four do not divide count (its sums are
// the same floats again); anything else by scores_block_rest.
// kRest: scores_block_rest, or for the extent tables the scalar kernel.
template <void (*kRest)(const float*, size_t, size_t, const float*, size_t, size_t, size_t, float, float*, size_t)>
void scores_block_tiles(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count, size_t dk,
                        float scale, float* s, size_t lds) {
  if (rows != kBlockRows || dk % 2 != 0 || dk == 0 || count < 4) {
    kRest(q, ldq, rows, k, ldk, count, dk, scale, s, lds);
    return;
  }
  TileArgs t{kZeros, dk / 2, {scale}, s, lds * sizeof(float), ldk};
  for (size_t j = 0;; j += 4) {
    if (j + 4 > count) j = count - 4;
    t.out = s + j;
    scores_tile(q, ldq, k + j * ldk, t);
    if (j + 4 == count) break;
  }
}

// Fewer rows than a block, dv >= 4: row by row through the one-row tiles.
__attribute__((noinline)) void weighted_sum_block_rows(const float* p, size_t ldp, size_t rows, const float* v,
                                                       size_t ldv, size_t count, size_t dv, const float* a, float* y,
                                                       size_t ldy) {
  for (size_t r = 0; r < rows; ++r) weighted_sum_row(p + r * ldp, v, ldv, count, dv, a[r], y + r * ldy);
}

// A full block of an odd count, dv >= 4: the tiles that take its first key
// on its own.
__attribute__((noinline)) void weighted_sum_block_odd(const float* p, size_t ldp, size_t, const float* v, size_t ldv,
                                                      size_t count, size_t dv, const float* a, float* y, size_t ldy) {
  TileArgs t{kZeros, count / 2, {0.0f}, y, ldy * sizeof(float), ldv};
  t.a = a;
  for (size_t c = 0;; c += 4) {
    if (c + 4 > dv) c = dv - 4;
    t.out = y + c;
    weighted_sum_tile_odd(p, ldp, v + c, t);
    if (c + 4 == dv) break;
  }
}

// What weighted_sum_block leaves to others: fewer rows to
// weighted_sum_block_rows, an odd count to weighted_sum_block_odd; dv < 4 (or
// no key) to the scalar kernel.
__attribute__((noinline)) void weighted_sum_block_rest(const float* p, size_t ldp, size_t rows, const float* v,
                                                       size_t ldv, size_t count, size_t dv, const float* a, float* y,
                                                       size_t ldy) {
  if (dv < 4 || count == 0)
    scalar::f32::weighted_sum_block(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
  else if (rows != kBlockRows)
    weighted_sum_block_rows(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
  else
    weighted_sum_block_odd(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
}

// y[r*ldy + c] = a[r] * sum_j p[r*ldp + j] * v[j*ldv + c]: a full block with
// an even count and dv >= 4 in tiles of four columns, the last tile
// overlapping the one before when four do not divide dv; anything else by
// weighted_sum_block_rest. Every value row is finite here
// (KernelsF32::weighted_sum_block), so zero weights need no test.
// kRest: weighted_sum_block_rest, or for the extent tables
// weighted_sum_full_rest.
template <void (*kRest)(const float*, size_t, size_t, const float*, size_t, size_t, size_t, const float*, float*,
                        size_t)>
void weighted_sum_block_tiles(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count,
                              size_t dv, const float* a, float* y, size_t ldy) {
  if (rows != kBlockRows || count % 2 != 0 || count == 0 || dv < 4) {
    kRest(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
    return;
  }
  TileArgs t{kZeros, count / 2, {0.0f}, y, ldy * sizeof(float), ldv};
  t.a = a;
  for (size_t c = 0;; c += 4) {
    if (c + 4 > dv) c = dv - 4;
    t.out = y + c;
    weighted_sum_tile(p, ldp, v + c, t);
    if (c + 4 == dv) break;
  }
}

#undef TINYATTN_DSP_INLINE

// What the extent tables' weighted_sum_block leaves to others: a full block
// of an odd count to weighted_sum_block_odd, the rest (fewer rows, which
// their calls never have, or dv < 4) to the scalar kernel.
void weighted_sum_full_rest(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count,
                            size_t dv, const float* a, float* y, size_t ldy) {
  if (rows == kBlockRows && dv >= 4 && count != 0)
    weighted_sum_block_odd(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
  else
    scalar::f32::weighted_sum_block(p, ldp, rows, v, ldv, count, dv, a, y, ldy);
}

constexpr KernelsF32 make_table() {
  KernelsF32 t = scalar::table_f32("dsp");
  t.row_max = row_max;
  t.exp_shift_sum = exp_shift_sum;
  t.exp = exp;
  t.scores = scores;
  t.weighted_sum = weighted_sum;
  t.scores_block = scores_block_tiles<scores_block_rest>;
  t.weighted_sum_block = weighted_sum_block_tiles<weighted_sum_block_rest>;
  return t;
}
constexpr KernelsF32 kKernels = make_table();

// The table of Attention<S>'s plain call at a square fixed extent on full
// blocks (port_kernels_f32_extent): the four-row tiles, the exp loop, and
// the scalar kernels for everything else, so such an image links none of
// the one- and two-row tiles of a decode step (nor this port's row_max: 36
// bytes more than the scalar one at -Os).
constexpr KernelsF32 make_extent_table() {
  KernelsF32 t = scalar::table_f32("dsp");
  t.exp_shift_sum = exp_shift_sum;
  t.exp = exp;
  t.scores_block = scores_block_tiles<scalar::f32::scores_block>;
  t.weighted_sum_block = weighted_sum_block_tiles<weighted_sum_full_rest>;
  return t;
}
constexpr KernelsF32 kExtentKernels = make_extent_table();

#else  // no single-precision FPU (soft float) or an unoptimized build: the scalar kernels

constexpr KernelsF32 kKernels = scalar::table_f32("dsp");
constexpr const KernelsF32& kExtentKernels = kKernels;

#endif

}  // namespace
}  // namespace dsp

template <>
const KernelsF32* port_kernels_f32<Port::kDsp>() {
  return &dsp::kKernels;
}
#define TINYATTN_DSP_EXTENT_TABLE(e, extent)                     \
  template <>                                                    \
  const KernelsF32* port_kernels_f32_extent<Port::e, extent>() { \
    return &dsp::kExtentKernels;                                 \
  }
TINYATTN_SQUARE_EXTENTS(TINYATTN_DSP_EXTENT_TABLE, kDsp)
#undef TINYATTN_DSP_EXTENT_TABLE

}  // namespace tinyattn
