// The fp32 forward's block algorithms: query rows kBlockRows at a time
// through the port's block primitives (each K and V element loaded once for
// the block's rows), with the row core's bookkeeping per row.
//
// Scores are computed over the block's whole key span u; each row then only
// looks at its own range, and keys of u outside it get weight exactly 0,
// which the block weighted sum may multiply with V because the driver uses
// blocks only where V is finite.
#include "forward_core.h"

namespace tinyattn {
namespace detail {

namespace {

// Row r's own keys among [lo, lo + len), relative to lo (empty if none).
KeyRange own_part(const Problem& p, const Block& b, size_t r, size_t lo, size_t len) {
  const KeyRange rr = p.range(b.i0 + r);
  const size_t hi = lo + len;
  const size_t a = rr.lo < lo ? lo : rr.lo > hi ? hi : rr.lo;
  const size_t e = rr.hi < lo ? lo : rr.hi > hi ? hi : rr.hi;
  return e > a ? KeyRange{a - lo, e - lo} : KeyRange{0, 0};
}

// K^T at key u.lo + off of a full block (its keys up to u.lo + off + len
// are there), or null: no transposed keys, or a partial block.
const float* transposed_for(const Problem& p, const Block& b, size_t off, size_t len) {
  if (!kTransposedKeysUsed) return nullptr;
  const size_t lo = b.u.lo + off;
  if (!p.kt || b.count != kBlockRows || lo < b.kt_lo || lo + len - b.kt_lo > p.ldkt) return nullptr;
  return p.kt + (lo - b.kt_lo);
}

// Logits of keys [u.lo + off, u.lo + off + len) for every row of the block,
// row r at s + r*lds: the port's scores, then per row the overflow rule,
// the softcap and its element masks on its own keys (finish_logits' order).
void block_logits(const Problem& p, const Block& b, size_t off, size_t len, float* s, size_t lds) {
  const size_t dk = p.d.dk;
  const float* q = p.io.q + (b.h * p.d.n + b.i0) * dk;
  const float* k = b.k + off * dk;
  if (const float* kt = transposed_for(p, b, off, len))
    p.kern.scores_block_transposed(q, dk, kt, p.ldkt, len, dk, p.scale, s, lds);
  else
    p.kern.scores_block(q, dk, b.count, k, dk, len, dk, p.scale, s, lds);
  const size_t lo = b.u.lo + off;
  // One check over the block's rows where they are contiguous (the common
  // case), then the rows one by one only if it fails or they are not.
  const bool finite = lds == len && all_finite(s, b.count * len);
  // The common case (finite, no softcap, no element masks): nothing per row.
  const size_t rows = finite && p.softcap == 0.0f && !p.element_masks ? 0 : b.count;
  for (size_t r = 0; r < rows; ++r) {
    if (!finite) settle_logits(q + r * dk, k, dk, len, dk, p.scale, s + r * lds);
    if (p.softcap != 0.0f) cap_logits(p.softcap, s + r * lds, len);
    if (!p.element_masks) continue;
    const KeyRange o = own_part(p, b, r, lo, len);
    if (!o.empty()) apply_element_masks(p.mask, p.d, b.h, b.i0 + r, KeyRange{lo + o.lo, lo + o.hi}, s + r * lds + o.lo);
  }
}

// Weight 0 for the keys of the span outside a row's own part.
void zero_outside(float* s, size_t len, KeyRange own) {
  fill(s, own.lo, 0.0f);
  fill(s + own.hi, len - own.hi, 0.0f);
}

// The online softmax of one row of a block over one tile of logits (its own
// part `own` of the tile): tiled_row's loop body. Returns whether the tile
// adds to the row's accumulator.
bool tile_step(const Problem& p, const Block& b, size_t r, float* sr, KeyRange own, float* acc, Online& o, bool& nan) {
  if (nan || own.empty()) return false;
  float* mine = sr + own.lo;
  const size_t cnt = own.size();
  const float tile_max = p.kern.row_max(mine, cnt);
  if (tile_max != tile_max) {
    nan = true;
    finish_nan(make_row(p, b.h, b.i0 + r), p.d.dv, nullptr);
    return false;
  }
  if (tile_max == -kInf) return false;
  raise_max(p.kern, acc, p.d.dv, o, tile_max);
  o.l += exponentiate(p.kern, mine, cnt, o.m);
  return true;
}

// One key tile of a block in the tiled path: keys [u.lo + off, u.lo + off +
// n) of the block's span, rows' running max m[r] and sum l[r] (NaN once the
// row met a NaN logit; finish_nan has then written it), accumulating into the
// rows' outputs y; row r's scores at s + r*kKeyTile, its tile sum at part +
// r*lda.
void tiled_block_tile(const Problem& p, const Block& b, size_t off, size_t n, float* s, float* part, size_t lda,
                      float* m, float* l) {
  const size_t dv = p.d.dv;
  float* y = p.io.y + (b.h * p.d.n + b.i0) * dv;
  static constexpr float kOnes[kBlockRows] = {1.0f, 1.0f, 1.0f, 1.0f};
  static_assert(kBlockRows == 4, "kOnes lists kBlockRows ones");
  block_logits(p, b, off, n, s, kKeyTile);
  unsigned adds = 0;  // bit r: row r takes this tile
  for (size_t r = 0; r < b.count; ++r) {
    float* sr = s + r * kKeyTile;
    const KeyRange own = own_part(p, b, r, b.u.lo + off, n);
    bool nan = l[r] != l[r];
    Online o{m[r], l[r]};
    if (tile_step(p, b, r, sr, own, y + r * dv, o, nan)) {
      adds |= 1u << r;
      zero_outside(sr, n, own);
    } else {
      fill(sr, n, 0.0f);
    }
    m[r] = o.m;
    l[r] = nan ? kNaN : o.l;
  }
  if (adds == 0) return;
  p.kern.weighted_sum_block(s, kKeyTile, b.count, b.v + off * dv, dv, n, dv, kOnes, part, lda);
  for (size_t r = 0; r < b.count; ++r)
    if (adds & (1u << r)) p.kern.axpy(1.0f, part + r * lda, y + r * dv, dv);
}

}  // namespace

void transpose_keys(const Problem& p, size_t kv_head, size_t lo, size_t hi) {
  // In blocks of eight keys, so each row of K^T gets eight consecutive floats.
  const size_t dk = p.d.dk, ld = p.ldkt;
  float* kt = p.kt;
  const float* k = p.io.k + (kv_head * p.d.m + lo) * dk;
  const size_t n = hi - lo, full = n - n % 8;
  for (size_t j0 = 0; j0 < full; j0 += 8) {  // a fixed count: unrolled
    const float* kj = k + j0 * dk;
    float* out = kt + j0;
    for (size_t c = 0; c < dk; ++c, out += ld)
      for (size_t j = 0; j < 8; ++j) out[j] = kj[j * dk + c];
  }
  for (size_t c = 0; c < dk; ++c)
    for (size_t j = full; j < n; ++j) kt[c * ld + j] = k[j * dk + c];
}

TINYATTN_NOINLINE void plain_block(const Problem& p, const Block& b, float* s, size_t lds) {
  const size_t len = b.u.size(), dv = p.d.dv;
  block_logits(p, b, 0, len, s, lds);
  float a[kBlockRows] = {};
  RowEnd end[kBlockRows] = {};
  for (size_t r = 0; r < b.count; ++r) {
    // The row's range and outputs as its live path needs them: a whole Row
    // (make_row) only for the rows that end early.
    const size_t i = b.i0 + r;
    const KeyRange rr = p.range(i);
    const KeyRange own{rr.lo - b.u.lo, rr.hi - b.u.lo};  // u covers it
    float* sr = s + r * lds;
    float* mine = sr + own.lo;
    const size_t n = own.size();
    const float max = p.kern.row_max(mine, n);
    a[r] = 1.0f;
    end[r] = max == -kInf ? RowEnd::kNoKey : max != max ? RowEnd::kNaNLogit : RowEnd::kLive;
    if (end[r] != RowEnd::kLive) {
      const Row row = make_row(p, b.h, i);
      if (end[r] == RowEnd::kNoKey)
        finish_empty(row, dv);
      else
        finish_nan(row, dv, mine);
    } else {
      const float sum = exponentiate(p.kern, mine, n, max);
      const float inv = 1.0f / sum;
      const size_t idx = b.h * p.d.n + i;
      if (p.io.weights) {
        p.kern.scale(mine, n, inv);
        store(mine, p.io.weights + idx * p.d.m + rr.lo, n);
      } else {
        a[r] = inv;
      }
      if (p.io.lse) p.io.lse[idx] = log_sum_exp(max, sum);
    }
    if (end[r] == RowEnd::kLive)
      zero_outside(sr, len, own);
    else
      fill(sr, len, 0.0f);
  }
  float* y = p.io.y + (b.h * p.d.n + b.i0) * dv;
  p.kern.weighted_sum_block(s, lds, b.count, b.v, dv, len, dv, a, y, dv);
  // The block sum wrote every row; the rows that ended early get theirs back.
  for (size_t r = 0; r < b.count; ++r)
    if (end[r] != RowEnd::kLive) fill(y + r * dv, dv, end[r] == RowEnd::kNaNLogit ? kNaN : 0.0f);
}

TINYATTN_NOINLINE bool fused_block(const Problem& p, const Block& b, float* s, size_t lds) {
  if (!kFusedBlocksBuilt) return false;
  size_t own[2 * kBlockRows];
  bool all_keys = true;  // every row sees the whole span: the port skips the range bookkeeping
  for (size_t r = 0; r < b.count; ++r) {
    const KeyRange rr = p.range(b.i0 + r);
    own[2 * r] = rr.lo - b.u.lo;
    own[2 * r + 1] = rr.hi - b.u.lo;
    all_keys &= rr.lo == b.u.lo && rr.hi == b.u.hi;
  }
  const size_t idx = b.h * p.d.n + b.i0;
  float max[kBlockRows], sum[kBlockRows];
  AttendBlock a;  // NOLINT(cppcoreguidelines-pro-type-member-init): every field is set below
  a.q = p.io.q + idx * p.d.dk;
  a.ldq = p.d.dk;
  a.rows = b.count;
  a.k = b.k;
  a.ldk = p.d.dk;
  a.v = b.v;
  a.ldv = p.d.dv;
  a.count = b.u.size();
  a.dk = p.d.dk;
  a.dv = p.d.dv;
  a.scale = p.scale;
  a.own = all_keys ? nullptr : own;
  a.s = s;
  a.lds = lds;
  a.y = p.io.y + idx * p.d.dv;
  a.ldy = p.d.dv;
  a.max = max;
  a.sum = sum;
  a.kt = transposed_for(p, b, 0, b.u.size());
  a.ldkt = p.ldkt;
  if (!p.kern.attend_block(a)) return false;
  if (p.io.lse)
    for (size_t r = 0; r < b.count; ++r) p.io.lse[idx + r] = log_sum_exp(max[r], sum[r]);
  return true;
}

// Each tile of K and V is loaded from memory once for all of the group's
// blocks rather than once per block (with every block walking all tiles, K
// and V of a long sequence stream from beyond L2 for each block: 40% slower
// at M = 512, Dk = Dv = 128). The rows' outputs are their accumulators.
TINYATTN_NOINLINE void tiled_group(const Problem& p, size_t h, size_t g0, size_t g1, float* s, float* part, size_t lda,
                                   float* m, float* l) {
  const size_t kv_head = h / p.d.group();
  for (size_t i = g0; i < g1; ++i) {
    m[i - g0] = -kInf;
    l[i - g0] = 0.0f;
    fill(p.io.y + (h * p.d.n + i) * p.d.dv, p.d.dv, 0.0f);
  }
  const KeyRange all = p.range.span(g0, g1);
  for (size_t t_lo = all.lo; t_lo < all.hi; t_lo += kKeyTile) {
    const size_t t_hi = all.hi - t_lo < kKeyTile ? all.hi : t_lo + kKeyTile;
    if (kTransposedKeysUsed && p.kt) transpose_keys(p, kv_head, t_lo, t_hi);
    for (size_t i0 = g0; i0 < g1; i0 += kBlockRows) {
      const size_t count = g1 - i0 < kBlockRows ? g1 - i0 : kBlockRows;
      const KeyRange u = p.range.span(i0, i0 + count);
      const size_t lo = u.lo > t_lo ? u.lo : t_lo, hi = u.hi < t_hi ? u.hi : t_hi;
      if (lo >= hi) continue;  // no row of this block sees a key of this tile
      const Block b{
          h,   i0, count, u, p.io.k + (kv_head * p.d.m + u.lo) * p.d.dk, p.io.v + (kv_head * p.d.m + u.lo) * p.d.dv,
          t_lo};
      tiled_block_tile(p, b, lo - u.lo, hi - lo, s, part, lda, m + (i0 - g0), l + (i0 - g0));
    }
  }
  for (size_t i = g0; i < g1; ++i) {
    const float mi = m[i - g0], li = l[i - g0];
    if (li != li) continue;  // finish_nan wrote it
    const Row row = make_row(p, h, i);
    if (mi == -kInf) {
      finish_empty(row, p.d.dv);
      continue;
    }
    p.kern.scale(row.y, p.d.dv, 1.0f / li);
    if (row.lse) *row.lse = log_sum_exp(mi, li);
  }
}

}  // namespace detail
}  // namespace tinyattn
