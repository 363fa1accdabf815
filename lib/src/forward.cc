// The fp32 forward driver: validation, heads, masks and the softmax bookkeeping.
// The arithmetic itself is the port's (KernelsF32).
#include <cmath>
#include <cstring>
#include <limits>

#include "detail.h"
#include "tinyattn/attention.h"
#include "tinyattn/exp.h"

namespace tinyattn {
namespace detail {

Extent keep_extent(const Mask& mask, const Dims& d) {
  if (mask.keep) return {mask.keep, mask_rows_bytes(d, d.m, mask.head_stride)};
  if (mask.keep_bits)
    return {mask.keep_bits, mask_rows_bytes(d, keep_bits_row_bytes(d.m), mask.head_stride)};
  return {nullptr, 0};
}

Extent bias_extent(const Mask& mask, const Dims& d) {
  if (!mask.bias) return {nullptr, 0};
  return {mask.bias, mask_rows_bytes(d, uint64_t{d.m} * sizeof(float), uint64_t{mask.head_stride} * sizeof(float))};
}

Status validate_common(const Dims& d, const Mask& mask, const Options& o, const KernelsF32** kernels) {
  if (Status s = validate(d); s != Status::kOk) return s;
  if (Status s = validate(mask, d); s != Status::kOk) return s;
  if (mask.bias && !aligned(mask.bias)) return Status::kMisaligned;
  if (o.scale && !std::isfinite(*o.scale)) return Status::kBadScale;
  const KernelsF32* k = kernels_f32(o.port);
  if (k == nullptr) return Status::kPortUnavailable;
  *kernels = k;
  return Status::kOk;
}

void apply_element_masks(const Mask& mask, const Dims& d, size_t h, size_t i, KeyRange r, float* s) {
  const float minus_inf = -std::numeric_limits<float>::infinity();
  const size_t head_offset = h * mask.head_stride;
  // Bias first, keep mask last: a dropped key must end at exactly -inf even when
  // its bias is +inf or NaN (-inf + inf would be NaN and poison the row).
  if (mask.bias) {
    const float* row = mask.bias + head_offset + i * d.m;
    for (size_t j = r.lo; j < r.hi; ++j) s[j - r.lo] += row[j];
  }
  if (mask.keep) {
    const uint8_t* row = mask.keep + head_offset + i * d.m;
    for (size_t j = r.lo; j < r.hi; ++j)
      if (!row[j]) s[j - r.lo] = minus_inf;
  } else if (mask.keep_bits) {
    const uint8_t* row = mask.keep_bits + head_offset + i * keep_bits_row_bytes(d.m);
    for (size_t j = r.lo; j < r.hi; ++j)
      if (!((row[j >> 3] >> (j & 7)) & 1u)) s[j - r.lo] = minus_inf;
  }
}

}  // namespace detail

namespace {

using detail::Extent;
using detail::fill;

// Only the Highway and xsimd ports have attend_block: a build with neither
// (the boards' scalar and Helium builds) leaves the fused path out of the
// image (the Cortex-M4F code size goal, docs/performance.md).
#if TINYATTN_HAVE_HIGHWAY || TINYATTN_HAVE_XSIMD
#define TINYATTN_FUSED_BLOCKS 1
#else
#define TINYATTN_FUSED_BLOCKS 0
#endif
// The same two ports have scores_block_transposed; not built for M-profile
// cores (kTransposedKeysBuilt), where its bookkeeping would also cost the
// board stack bound (docs/hardening.md).
#if TINYATTN_FUSED_BLOCKS && !(defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M')
#define TINYATTN_TRANSPOSED_KEYS 1
#else
#define TINYATTN_TRANSPOSED_KEYS 0
#endif

// Whether forward() keeps a tile of the keys transposed (Scratch::kTransposedKeys):
// the dims allow it, the port can use it, and the caller gave room for it.
bool transposes_keys(const KernelsF32& kern, const Dims& d, bool with_weights, size_t ws_bytes) {
#if TINYATTN_TRANSPOSED_KEYS
  return forward_transposes_keys(d, with_weights) && kern.scores_block_transposed != nullptr &&
         kern.scores_block != nullptr && kern.weighted_sum_block != nullptr &&
         ws_bytes >= forward_workspace_bytes(d, with_weights, Scratch::kTransposedKeys);
#else
  (void)kern, (void)d, (void)with_weights, (void)ws_bytes;
  return false;
#endif
}

// A frame of its own: its extent tables are not on the stack while forward()
// runs the blocks (the board stack bound, docs/hardening.md).
TINYATTN_NOINLINE Status validate_forward(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                                          const Options& o, const KernelsF32** kernels) {
  if (Status s = detail::validate_common(d, mask, o, kernels); s != Status::kOk) return s;
  if (!io.q || !io.k || !io.v || !io.y || !ws.data) return Status::kNullPointer;
  if (!detail::aligned(io.q) || !detail::aligned(io.k) || !detail::aligned(io.v) ||
      !detail::aligned(io.y) || !detail::aligned(io.weights) || !detail::aligned(io.lse))
    return Status::kMisaligned;
  // On 32-bit targets Hq*N*M floats may not be addressable (validate(Dims)
  // checks every other tensor).
  if (io.weights && !fits_address_space(uint64_t{d.hq} * d.n * d.m)) return Status::kBadDimension;
  const bool with_weights = io.weights != nullptr;
  if (ws.bytes < forward_workspace_bytes(d, with_weights)) return Status::kWorkspaceTooSmall;
  const size_t ws_needed = forward_workspace_bytes(
      d, with_weights, transposes_keys(**kernels, d, with_weights, ws.bytes) ? Scratch::kTransposedKeys : Scratch::kMinimal);

  const Extent inputs[] = {{io.q, d.q_elems() * sizeof(float)},
                           {io.k, d.k_elems() * sizeof(float)},
                           {io.v, d.v_elems() * sizeof(float)},
                           detail::keep_extent(mask, d),
                           detail::bias_extent(mask, d)};
  const Extent outputs[] = {{io.y, d.y_elems() * sizeof(float)},
                            {io.weights, d.weight_elems() * sizeof(float)},
                            {io.lse, d.lse_elems() * sizeof(float)},
                            // only the part forward() writes: a larger caller buffer may hold other data
                            {ws.data, ws_needed}};
  return detail::check_aliasing(inputs, outputs);
}



constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Everything one query row needs, resolved once by the head/row loops.
struct Row {
  const float* q = nullptr;
  const float* k = nullptr;  // key r.lo of this row's KV head
  const float* v = nullptr;  // value r.lo
  float* y = nullptr;
  float* weights = nullptr;  // full row of M, or null
  float* lse = nullptr;      // one float, or null
  KeyRange r;
  size_t h = 0, i = 0;
};

// The key range of each query row. Without a causal or window mask every row
// has the same one, computed once per call (small shapes feel the per-row cost).
class Ranges {
 public:
  Ranges(const Mask& mask, const Dims& d)
      : mask_(mask), n_(d.n), m_(d.m), same_(mask.causal == Causal::kNone && !mask.window.active()),
        first_(key_range(mask, 0, d.n, d.m)) {}
  KeyRange operator()(size_t i) const { return same_ ? first_ : key_range(mask_, i, n_, m_); }
  bool same_for_every_row() const { return same_; }

 private:
  const Mask& mask_;
  size_t n_, m_;
  bool same_;
  KeyRange first_;
};

struct Problem {
  const Dims& d;
  const KernelsF32& kern;
  const Mask& mask;
  const ForwardIo& io;
  float scale = 1.0f;
  bool element_masks = false;
  Ranges range;
#if TINYATTN_TRANSPOSED_KEYS
  // A tile of keys transposed (Scratch::kTransposedKeys), ldkt floats per
  // key element; null: scores from K as given. Which keys it holds is the
  // caller's (Block::kt_lo): the driver transposes them before it uses them.
  float* kt = nullptr;
  size_t ldkt = 0;
#endif
};

// Row i of query head h.
Row make_row(const Problem& p, size_t h, size_t i) {
  const Dims& d = p.d;
  const size_t kv_head = h / d.group();
  const size_t idx = h * d.n + i;
  const KeyRange r = p.range(i);
  return Row{p.io.q + idx * d.dk,
             p.io.k + (kv_head * d.m + r.lo) * d.dk,
             p.io.v + (kv_head * d.m + r.lo) * d.dv,
             p.io.y + idx * d.dv,
             p.io.weights ? p.io.weights + idx * d.m : nullptr,
             p.io.lse ? p.io.lse + idx : nullptr,
             r, h, i};
}

// Scores of keys [r.lo + off, r.lo + off + len) of a row, masks applied.
void row_scores(const Problem& p, const Row& row, size_t off, size_t len, float* s) {
  p.kern.scores(row.q, row.k + off * p.d.dk, p.d.dk, len, p.d.dk, p.scale, s);
  if (p.element_masks)
    detail::apply_element_masks(p.mask, p.d, row.h, row.i, KeyRange{row.r.lo + off, row.r.lo + off + len}, s);
}

void finish_empty(const Problem& p, const Row& row) {  // no visible key: zeros
  fill(row.y, p.d.dv, 0.0f);
  if (row.weights) fill(row.weights + row.r.lo, row.r.size(), 0.0f);
  if (row.lse) *row.lse = -kInf;
}

// A NaN logit poisons its own row only. Masked keys keep weight exactly 0
// even here (s: the row's masked scores; the tiled path has no weights).
void finish_nan(const Problem& p, const Row& row, const float* s) {
  fill(row.y, p.d.dv, kNaN);
  if (row.weights)
    for (size_t j = 0; j < row.r.size(); ++j) row.weights[row.r.lo + j] = s[j] == -kInf ? 0.0f : kNaN;
  if (row.lse) *row.lse = kNaN;
}

// s[j] -> exp(s[j] - max) and their sum; with max == +inf, the limit of
// softmax: the +inf logits share all the weight.
float exponentiate(const Problem& p, float* s, size_t len, float max) {
  if (max != kInf) return p.kern.exp_shift_sum(s, len, max);
  float sum = 0.0f;
  for (size_t j = 0; j < len; ++j) {
    s[j] = s[j] == kInf ? 1.0f : 0.0f;
    sum += s[j];
  }
  return sum;
}

// One pass over the whole row kept in the workspace (M floats).
void plain_row(const Problem& p, const Row& row, float* s) {
  const size_t len = row.r.size();
  row_scores(p, row, 0, len, s);
  const float max = p.kern.row_max(s, len);
  if (max == -kInf) return finish_empty(p, row);
  if (max != max) return finish_nan(p, row, s);
  const float sum = exponentiate(p, s, len, max);
  const float inv = 1.0f / sum;
  if (row.weights) {
    p.kern.scale(s, len, inv);
    std::memcpy(row.weights + row.r.lo, s, len * sizeof(float));
    p.kern.weighted_sum(s, row.v, p.d.dv, len, p.d.dv, 1.0f, row.y);
  } else {
    p.kern.weighted_sum(s, row.v, p.d.dv, len, p.d.dv, inv, row.y);
  }
  if (row.lse) *row.lse = max == kInf ? kInf : max + std::log(sum);
}

// Online softmax over key tiles: a running max m, a running sum l and an
// unnormalised accumulator acc; when a tile raises the max, acc and l are
// rescaled by exp(m_old - m_new). Workspace: kKeyTile scores + 2*Dv floats.
void tiled_row(const Problem& p, const Row& row, float* s, float* acc, float* part) {
  const size_t len = row.r.size();
  const size_t dv = p.d.dv;
  float m = -kInf, l = 0.0f;
  fill(acc, dv, 0.0f);
  for (size_t off = 0; off < len; off += kKeyTile) {
    const size_t n = len - off < kKeyTile ? len - off : kKeyTile;
    row_scores(p, row, off, n, s);
    const float tile_max = p.kern.row_max(s, n);
    if (tile_max != tile_max) return finish_nan(p, row, nullptr);
    if (tile_max == -kInf) continue;  // nothing visible in this tile
    if (tile_max > m) {
      // Rescale what was accumulated under the old max (exp(-inf) = 0 when
      // m was -inf, or when the new max is +inf: earlier finite keys drop out).
      const float factor = m == -kInf ? 0.0f : tile_max == kInf ? 0.0f : exp_poly(m - tile_max);
      // A zero factor drops what came before outright: scaling would turn an
      // infinite value (from V) into NaN, and those keys now have weight 0.
      if (factor == 0.0f) fill(acc, dv, 0.0f);
      else p.kern.scale(acc, dv, factor);
      l *= factor;
      m = tile_max;
    }
    l += exponentiate(p, s, n, m);
    p.kern.weighted_sum(s, row.v + off * dv, dv, n, dv, 1.0f, part);
    p.kern.axpy(1.0f, part, acc, dv);
  }
  if (m == -kInf) return finish_empty(p, row);
  const float inv = 1.0f / l;
  for (size_t c = 0; c < dv; ++c) row.y[c] = acc[c] * inv;
  if (row.lse) *row.lse = m == kInf ? kInf : m + std::log(l);
}


// ---- Blocks of kBlockRows query rows (the port's block primitives) ----
//
// The rows of a block share one key span u, the union of their key ranges
// (consecutive rows' structured ranges differ by a few keys at most). Scores
// are computed over all of u; each row then only looks at its own range, and
// keys of u outside it get weight exactly 0, which the block weighted sum may
// multiply with V because the driver uses blocks only where V is finite.

// Rows [i0, i0 + count) of query head h; rows are built from it on use
// (make_row) rather than kept, which keeps the board stack small.
struct Block {
  size_t h = 0, i0 = 0, count = 0;
  KeyRange u;                // union of the rows' key ranges
  const float* k = nullptr;  // key u.lo of the KV head
  const float* v = nullptr;  // value u.lo
#if TINYATTN_TRANSPOSED_KEYS
  size_t kt_lo = 0;  // the key in column 0 of Problem::kt (when used)
#endif
};

enum class RowEnd : unsigned char { kLive, kNoKey, kNaNLogit };

// Row r's own keys among [lo, lo + len), relative to lo (empty if none).
KeyRange own_part(const Problem& p, const Block& b, size_t r, size_t lo, size_t len) {
  const KeyRange rr = p.range(b.i0 + r);
  const size_t hi = lo + len;
  const size_t a = rr.lo < lo ? lo : rr.lo > hi ? hi : rr.lo;
  const size_t e = rr.hi < lo ? lo : rr.hi > hi ? hi : rr.hi;
  return e > a ? KeyRange{a - lo, e - lo} : KeyRange{0, 0};
}

#if TINYATTN_TRANSPOSED_KEYS
// p.kt[c*ldkt + j - lo] = K[j][c] for keys [lo, hi) (at most ldkt) of KV
// head kv_head. In blocks of eight keys, so each row of K^T gets eight
// consecutive floats.
void transpose_keys(const Problem& p, size_t kv_head, size_t lo, size_t hi) {
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

// K^T at key u.lo + off of a full block (its keys up to u.lo + off + len
// are there), or null: no transposed keys, or a partial block.
const float* transposed_for(const Problem& p, const Block& b, size_t off, size_t len) {
  const size_t lo = b.u.lo + off;
  if (!p.kt || b.count != kBlockRows || lo < b.kt_lo || lo + len - b.kt_lo > p.ldkt) return nullptr;
  return p.kt + (lo - b.kt_lo);
}
#endif

// Scores of keys [u.lo + off, u.lo + off + len) for every row of the block,
// row r at s + r*lds; then, per row, its element masks on its own keys.
void block_scores(const Problem& p, const Block& b, size_t off, size_t len, float* s, size_t lds) {
  const float* q = p.io.q + (b.h * p.d.n + b.i0) * p.d.dk;
#if TINYATTN_TRANSPOSED_KEYS
  if (const float* kt = transposed_for(p, b, off, len))
    p.kern.scores_block_transposed(q, p.d.dk, kt, p.ldkt, len, p.d.dk, p.scale, s, lds);
  else
#endif
    p.kern.scores_block(q, p.d.dk, b.count, b.k + off * p.d.dk, p.d.dk, len, p.d.dk, p.scale, s, lds);
  if (!p.element_masks) return;
  const size_t lo = b.u.lo + off;
  for (size_t r = 0; r < b.count; ++r) {
    const KeyRange o = own_part(p, b, r, lo, len);
    if (!o.empty())
      detail::apply_element_masks(p.mask, p.d, b.h, b.i0 + r, KeyRange{lo + o.lo, lo + o.hi}, s + r * lds + o.lo);
  }
}

// Weight 0 for the keys of the span outside a row's own part.
void zero_outside(float* s, size_t len, KeyRange own) {
  fill(s, own.lo, 0.0f);
  fill(s + own.hi, len - own.hi, 0.0f);
}

// plain_row for a block: all rows' scores in the workspace (lds apart).
void plain_block(const Problem& p, const Block& b, float* s, size_t lds) {
  const size_t len = b.u.size();
  block_scores(p, b, 0, len, s, lds);
  float a[kBlockRows] = {};
  RowEnd end[kBlockRows] = {};
  for (size_t r = 0; r < b.count; ++r) {
    const Row row = make_row(p, b.h, b.i0 + r);
    const KeyRange own{row.r.lo - b.u.lo, row.r.hi - b.u.lo};  // u covers it
    float* sr = s + r * lds;
    float* mine = sr + own.lo;
    const size_t n = own.size();
    const float max = p.kern.row_max(mine, n);
    a[r] = 1.0f;
    end[r] = max == -kInf ? RowEnd::kNoKey : max != max ? RowEnd::kNaNLogit : RowEnd::kLive;
    if (end[r] == RowEnd::kNoKey) {
      finish_empty(p, row);
    } else if (end[r] == RowEnd::kNaNLogit) {
      finish_nan(p, row, mine);
    } else {
      const float sum = exponentiate(p, mine, n, max);
      const float inv = 1.0f / sum;
      if (row.weights) {
        p.kern.scale(mine, n, inv);
        std::memcpy(row.weights + row.r.lo, mine, n * sizeof(float));
      } else {
        a[r] = inv;
      }
      if (row.lse) *row.lse = max == kInf ? kInf : max + std::log(sum);
    }
    if (end[r] == RowEnd::kLive) zero_outside(sr, len, own);
    else fill(sr, len, 0.0f);
  }
  float* y = p.io.y + (b.h * p.d.n + b.i0) * p.d.dv;
  p.kern.weighted_sum_block(s, lds, b.count, b.v, p.d.dv, len, p.d.dv, a, y, p.d.dv);
  // The block sum wrote every row; the rows that ended early get theirs back.
  for (size_t r = 0; r < b.count; ++r)
    if (end[r] != RowEnd::kLive) fill(y + r * p.d.dv, p.d.dv, end[r] == RowEnd::kNaNLogit ? kNaN : 0.0f);
}

#if TINYATTN_FUSED_BLOCKS
// plain_block in one port call (KernelsF32::attend_block), for blocks without
// element masks or weights output. Returns false if the port declined (a NaN
// or infinite logit, or an output that is not finite); the other paths then
// compute the block with their semantics for those.
bool fused_block(const Problem& p, const Block& b, float* s, size_t lds) {
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
  AttendBlock a{p.io.q + idx * p.d.dk, p.d.dk, b.count, b.k, p.d.dk, b.v, p.d.dv, b.u.size(), p.d.dk,
                p.d.dv, p.scale, all_keys ? nullptr : own, s, lds, p.io.y + idx * p.d.dv, p.d.dv, max, sum};
#if TINYATTN_TRANSPOSED_KEYS
  a.kt = transposed_for(p, b, 0, b.u.size());
  a.ldkt = p.ldkt;
#endif
  if (!p.kern.attend_block(a)) return false;
  if (p.io.lse)
    for (size_t r = 0; r < b.count; ++r) p.io.lse[idx + r] = max[r] + std::log(sum[r]);
  return true;
}
#endif

// The online softmax of one row of a block over one tile of scores (its own
// part `own` of the tile): tiled_row's loop body. Returns whether the tile
// adds to the row's accumulator.
bool tile_step(const Problem& p, const Block& b, size_t r, float* sr, KeyRange own, float* acc, float& m, float& l,
               bool& nan) {
  if (nan || own.empty()) return false;
  float* mine = sr + own.lo;
  const size_t cnt = own.size();
  const float tile_max = p.kern.row_max(mine, cnt);
  if (tile_max != tile_max) {
    nan = true;
    finish_nan(p, make_row(p, b.h, b.i0 + r), nullptr);
    return false;
  }
  if (tile_max == -kInf) return false;
  if (tile_max > m) {  // as in tiled_row
    const float factor = m == -kInf ? 0.0f : tile_max == kInf ? 0.0f : exp_poly(m - tile_max);
    if (factor == 0.0f) fill(acc, p.d.dv, 0.0f);
    else p.kern.scale(acc, p.d.dv, factor);
    l *= factor;
    m = tile_max;
  }
  l += exponentiate(p, mine, cnt, m);
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
  block_scores(p, b, off, n, s, kKeyTile);
  unsigned adds = 0;  // bit r: row r takes this tile
  for (size_t r = 0; r < b.count; ++r) {
    float* sr = s + r * kKeyTile;
    const KeyRange own = own_part(p, b, r, b.u.lo + off, n);
    bool nan = l[r] != l[r];
    if (tile_step(p, b, r, sr, own, y + r * dv, m[r], l[r], nan)) {
      adds |= 1u << r;
      zero_outside(sr, n, own);
    } else {
      fill(sr, n, 0.0f);
    }
    if (nan) l[r] = kNaN;
  }
  if (adds == 0) return;
  p.kern.weighted_sum_block(s, kKeyTile, b.count, b.v + off * dv, dv, n, dv, kOnes, part, lda);
  for (size_t r = 0; r < b.count; ++r)
    if (adds & (1u << r)) p.kern.axpy(1.0f, part + r * lda, y + r * dv, dv);
}

// tiled_row for the rows [g0, g1) of head h, in blocks of kBlockRows rows, key
// tile by key tile: each tile of K and V is loaded from memory once for all
// of the group's blocks rather than once per block (with every block walking
// all tiles, K and V of a long sequence stream from beyond L2 for each block:
// 40% slower at M = 512, Dk = Dv = 128). The rows' outputs are their
// accumulators; their running max and sum live at m and l.
void tiled_group(const Problem& p, size_t h, size_t g0, size_t g1, float* s, float* part, size_t lda, float* m,
                 float* l) {
  const size_t kv_head = h / p.d.group();
  KeyRange all{p.d.m, 0};  // the union of the group's rows' key ranges
  for (size_t i = g0; i < g1; ++i) {
    const KeyRange r = p.range(i);
    m[i - g0] = -kInf;
    l[i - g0] = 0.0f;
    fill(p.io.y + (h * p.d.n + i) * p.d.dv, p.d.dv, 0.0f);
    if (r.empty()) continue;
    if (r.lo < all.lo) all.lo = r.lo;
    if (r.hi > all.hi) all.hi = r.hi;
  }
  for (size_t t_lo = all.lo; t_lo < all.hi; t_lo += kKeyTile) {
    const size_t t_hi = all.hi - t_lo < kKeyTile ? all.hi : t_lo + kKeyTile;
#if TINYATTN_TRANSPOSED_KEYS
    if (p.kt) transpose_keys(p, kv_head, t_lo, t_hi);
#endif
    for (size_t i0 = g0; i0 < g1; i0 += kBlockRows) {
      const size_t count = g1 - i0 < kBlockRows ? g1 - i0 : kBlockRows;
      KeyRange u{p.d.m, 0};
      for (size_t i = i0; i < i0 + count; ++i) {
        const KeyRange r = p.range(i);
        if (r.empty()) continue;
        if (r.lo < u.lo) u.lo = r.lo;
        if (r.hi > u.hi) u.hi = r.hi;
      }
      const size_t lo = u.lo > t_lo ? u.lo : t_lo, hi = u.hi < t_hi ? u.hi : t_hi;
      if (lo >= hi) continue;  // no row of this block sees a key of this tile
      Block b{h, i0, count, u, p.io.k + (kv_head * p.d.m + u.lo) * p.d.dk, p.io.v + (kv_head * p.d.m + u.lo) * p.d.dv};
#if TINYATTN_TRANSPOSED_KEYS
      b.kt_lo = t_lo;
#endif
      tiled_block_tile(p, b, lo - u.lo, hi - lo, s, part, lda, m + (i0 - g0), l + (i0 - g0));
    }
  }
  for (size_t i = g0; i < g1; ++i) {
    const float mi = m[i - g0], li = l[i - g0];
    if (li != li) continue;  // finish_nan wrote it
    const Row row = make_row(p, h, i);
    if (mi == -kInf) {
      finish_empty(p, row);
      continue;
    }
    p.kern.scale(row.y, p.d.dv, 1.0f / li);
    if (row.lse) *row.lse = mi == kInf ? kInf : mi + std::log(li);
  }
}

// Whether x[0..n) holds no inf or NaN: an all-ones exponent sets bit 31 of
// (bits & exponent) + lowest exponent bit, which no finite value does. Integer
// operations and one OR chain, so the compiler can vectorise it.
bool all_finite(const float* x, size_t n) {
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    any |= (bits & 0x7f800000u) + 0x00800000u;
  }
  return (any & 0x80000000u) == 0;
}

// The keys any query row can see: the union of the rows' structured ranges.
KeyRange keys_seen(const Ranges& range, const Dims& d) {
  if (range.same_for_every_row()) return range(0);
  KeyRange all{d.m, 0};
  for (size_t i = 0; i < d.n; ++i) {
    const KeyRange r = range(i);
    if (r.empty()) continue;
    if (r.lo < all.lo) all.lo = r.lo;
    if (r.hi > all.hi) all.hi = r.hi;
  }
  return all;
}

}  // namespace

Status forward(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, const Options& o) {
  const KernelsF32* kp = nullptr;
  if (Status s = validate_forward(d, io, ws, mask, o, &kp); s != Status::kOk) return s;
  detail::forward_validated(*kp, d, io, ws, mask, effective_scale(d, o));
  return Status::kOk;
}

void detail::forward_validated(const KernelsF32& kern, const Dims& d, const ForwardIo& io, Workspace ws,
                               const Mask& mask, float scale) {
  const bool tiled = forward_uses_tiles(d, io.weights != nullptr);
  const size_t rows = forward_block_rows(d);
  float* s = detail::workspace_floats(ws);
  Problem p{d, kern, mask, io, scale, detail::has_element_masks(mask), Ranges(mask, d)};
#if TINYATTN_TRANSPOSED_KEYS
  // The transposed keys follow the minimal workspace (forward_workspace_bytes).
  if (transposes_keys(kern, d, io.weights != nullptr, ws.bytes)) {
    p.kt = s + (forward_workspace_bytes(d, io.weights != nullptr) - kWorkspaceAlign) / sizeof(float);
    p.ldkt = forward_transposed_keys_stride(d);
  }
#endif
  // Layout (see forward_workspace_bytes): `rows` score rows, lds floats apart;
  // in the tiled path then `rows` accumulators and `rows` tile sums, lda apart.
  // A group of the tiled path accumulates into its rows' outputs and keeps
  // its rows' running max and sum where the accumulators would be: at least
  // 16 floats per row of the block (lda >= 16), so groups of 32 rows and more.
  constexpr size_t kAlignFloats = kWorkspaceAlign / sizeof(float);
  const size_t lds = tiled ? kKeyTile : align_up(d.m, kAlignFloats);
  const size_t lda = align_up(d.dv, kAlignFloats);
  float* acc = tiled ? s + rows * lds : nullptr;
  float* part = tiled ? acc + rows * lda : nullptr;
  const size_t group = rows * lda / 2 / kBlockRows * kBlockRows;  // rows per tiled group

  // Blocks need the port's block primitives, and a V without inf or NaN in
  // the keys any row sees (KernelsF32::weighted_sum_block); checked once per
  // KV head, when a block first needs it. The fused block (attend_block)
  // checks its own outputs instead and declines when one is not finite.
  const bool blocks = kern.scores_block != nullptr && kern.weighted_sum_block != nullptr && rows > 1;
#if TINYATTN_FUSED_BLOCKS
  const bool fused = kern.attend_block != nullptr && !tiled && !p.element_masks && io.weights == nullptr;
#endif
  const KeyRange seen = blocks ? keys_seen(p.range, d) : KeyRange{};
  size_t checked_head = d.hkv;  // none yet
#if TINYATTN_TRANSPOSED_KEYS
  size_t kt_head = d.hkv;  // the KV head in p.kt (plain path)
#endif
  bool v_finite = false;

  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kv_head = h / d.group();
    auto head_v_finite = [&] {
      if (kv_head != checked_head) {
        checked_head = kv_head;
        v_finite = all_finite(io.v + (kv_head * d.m + seen.lo) * d.dv, seen.size() * d.dv);
      }
      return v_finite;
    };
#if TINYATTN_TRANSPOSED_KEYS
    if (p.kt && !tiled && kv_head != kt_head && !seen.empty()) {  // M <= kKeyTile
      transpose_keys(p, kv_head, seen.lo, seen.hi);
      kt_head = kv_head;
    }
#endif
    if (tiled && blocks && head_v_finite()) {
      for (size_t g0 = 0; g0 < d.n; g0 += group)
        tiled_group(p, h, g0, d.n - g0 < group ? d.n : g0 + group, s, part, lda, acc, acc + group);
      continue;
    }
    for (size_t i0 = 0; i0 < d.n; i0 += kBlockRows) {
      const size_t count = d.n - i0 < kBlockRows ? d.n - i0 : kBlockRows;
      KeyRange u{d.m, 0};
      bool any_empty = false;
      for (size_t i = i0; i < i0 + count; ++i) {
        const KeyRange r = p.range(i);
        if (io.weights) {  // keys outside the range never get weight
          float* w = io.weights + (h * d.n + i) * d.m;
          fill(w, r.lo, 0.0f);
          fill(w + r.hi, d.m - r.hi, 0.0f);
        }
        any_empty |= r.empty();
        if (r.lo < u.lo) u.lo = r.lo;
        if (r.hi > u.hi) u.hi = r.hi;
      }
      Block b{h, i0, count, u, io.k + (kv_head * d.m + u.lo) * d.dk, io.v + (kv_head * d.m + u.lo) * d.dv};
#if TINYATTN_TRANSPOSED_KEYS
      b.kt_lo = seen.lo;
#endif
#if TINYATTN_FUSED_BLOCKS
      if (fused && !any_empty && fused_block(p, b, s, lds)) continue;
#endif
      if (blocks && i0 + 1 < d.n && !any_empty && head_v_finite()) {  // two rows or more
        plain_block(p, b, s, lds);  // tiled blocks took the group path above
        continue;
      }
      for (size_t i = i0; i < i0 + count; ++i) {
        const Row row = make_row(p, h, i);
        if (row.r.empty()) finish_empty(p, row);
        else if (tiled) tiled_row(p, row, s, acc, part);
        else plain_row(p, row, s);
      }
    }
  }
}

}  // namespace tinyattn
