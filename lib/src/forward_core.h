// The fp32 forward's pieces shared by its dispatch (forward.cc) and its
// block algorithms (forward_blocks.cc): the problem one call solves, as a
// source of rows for the shared row core (row_core.h).
#pragma once

#include "plan.h"
#include "row_core.h"

namespace tinyattn {
namespace detail {

using Row = RowOf<float>;

// The key range of each query row. Without a causal or window mask every row
// has the same one, computed once per call (small shapes feel the per-row cost).
class Ranges {
 public:
  Ranges(const Mask& mask, const Dims& d)
      : mask_(mask),
        n_(d.n),
        m_(d.m),
        same_(mask.causal == Causal::kNone && !mask.window.active()),
        first_(key_range(mask, 0, d.n, d.m)) {}
  KeyRange operator()(size_t i) const { return same_ ? first_ : key_range(mask_, i, n_, m_); }
  bool same_for_every_row() const { return same_; }
  // The union of the key ranges of rows [i0, i1) that see a key (empty
  // when none does); *any_empty: whether one of them sees none.
  KeyRange span(size_t i0, size_t i1, bool* any_empty = nullptr) const {
    if (same_) {
      if (any_empty) *any_empty = first_.empty();
      return first_;
    }
    KeyRange u{m_, 0};
    bool empty = false;
    for (size_t i = i0; i < i1; ++i) {
      const KeyRange r = key_range(mask_, i, n_, m_);
      empty |= r.empty();
      if (r.empty()) continue;
      if (r.lo < u.lo) u.lo = r.lo;
      if (r.hi > u.hi) u.hi = r.hi;
    }
    if (any_empty) *any_empty = empty;
    return u;
  }

 private:
  const Mask& mask_;
  size_t n_, m_;
  bool same_;
  KeyRange first_;
};

// One forward() call after validation; the row core's source of fp32 rows
// (keys and values read in place, a whole row per port call).
struct Problem : RowContext {
  const ForwardIo& io;
  Ranges range;
  // A tile of keys transposed (Scratch::kTransposedKeys), ldkt floats per
  // key element; null: scores from K as given. Which keys it holds is the
  // caller's (Block::kt_lo): the driver transposes them before it uses them.
  float* kt = nullptr;
  size_t ldkt = 0;

  const RowContext& ctx() const { return *this; }
  size_t plain_tile() const { return d.m; }
  size_t online_tile() const { return kKeyTile; }
  void begin_row(const Row&) const {}
  void scores(const Row& row, size_t off, size_t n, float* s) const {
    kern.scores(row.q, row.k + off * d.dk, d.dk, n, d.dk, scale, s);
  }
  void values(const Row& row, size_t off, size_t n, const float* p, float a, float* out) const {
    kern.weighted_sum(p, row.v + off * d.dv, d.dv, n, d.dv, a, out);
  }
  float* output(const Row& row, float*) const { return row.y; }
};

// Row i of query head h.
inline Row make_row(const Problem& p, size_t h, size_t i) {
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
             r,
             h,
             i};
}

// Rows [i0, i0 + count) of query head h that go through the port's block
// primitives together. They share one key span u, the union of their key
// ranges (consecutive rows' structured ranges differ by a few keys at most).
// Rows are built from it on use (make_row) rather than kept, which keeps the
// board stack small.
struct Block {
  size_t h = 0, i0 = 0, count = 0;
  KeyRange u;                // union of the rows' key ranges
  const float* k = nullptr;  // key u.lo of the KV head
  const float* v = nullptr;  // value u.lo
  size_t kt_lo = 0;          // the key in column 0 of Problem::kt (when used)
};

// Each row's log-sum-exp from a block's max and sum: out of the block loop,
// whose registers the four inlined logs took (most calls write no lse).
inline TINYATTN_NOINLINE void write_block_lse(const float* max, const float* sum, size_t rows, float* lse) {
  for (size_t row = 0; row < rows; ++row) lse[row] = log_sum_exp(max[row], sum[row]);
}

// The fixed-extent route (plan.h): the plan's kernel `attend` on every row
// of every head, `step` rows a call, every row seeing the `count` keys from
// key `lo`; false as soon as a call declines (a logit or output not finite),
// and the call must run its route from the start. The plan's fields come as
// scalars: in registers, where a microcontroller gives this loop a frame of
// its own.
TINYATTN_BLOCK_LOOP bool run_fixed_extent(bool (*attend)(const AttendBlock&), size_t step, size_t lo, size_t count,
                                          const Dims& d, const ForwardIo& io, Workspace ws, float scale) {
  if (!kFusedBlocksBuilt) return false;
  float max[kFixedExtentCallRows], sum[kFixedExtentCallRows];
  // Field by field (a list with zeros is a memset first, AttendBlock): q, k,
  // v, y and rows change per block; the scores go to the plain path's rows
  // (forward_workspace_bytes).
  AttendBlock a;  // NOLINT(cppcoreguidelines-pro-type-member-init): every field is set below or per block
  a.ldq = a.ldk = a.dk = d.dk;
  a.ldv = a.ldy = a.dv = d.dv;
  a.count = count;
  a.scale = scale;
  a.s = workspace_floats(ws);
  a.lds = align_up(d.m, kWorkspaceAlign / sizeof(float));
  a.max = max;
  a.sum = sum;
  a.own = nullptr;
  a.kt = nullptr;
  a.ldkt = 0;
  const float* q = io.q;
  float* y = io.y;
  float* lse = io.lse;
  // KV heads outside, their query heads inside: query head h reads KV head
  // h / group, so it belongs to kv_head while h * hkv < (kv_head + 1) * hq
  // (no division).
  size_t h = 0;
  for (size_t kv_head = 0; kv_head < d.hkv; ++kv_head) {
    a.k = io.k + (kv_head * d.m + lo) * d.dk;
    a.v = io.v + (kv_head * d.m + lo) * d.dv;
    for (const size_t heads_end = (kv_head + 1) * d.hq; h * d.hkv < heads_end; ++h) {
      for (size_t i0 = 0, rows = 0; i0 < d.n; i0 += rows) {
        const size_t left = d.n - i0;
        rows = left >= step ? step : left >= kBlockRows ? kBlockRows : left;
        a.rows = rows;
        a.q = q;
        a.y = y;
        if (!attend(a)) return false;
        q += rows * d.dk;
        y += rows * d.dv;
        if (lse) {
          write_block_lse(max, sum, rows, lse);
          lse += rows;
        }
      }
    }
  }
  return true;
}

// A validated call's plan, run: the fixed-extent kernel where the plan has
// one (and it runs every block), else the plan's route (run_route, which
// plans it: a call the fixed-extent kernel took whole never needs it).
// extent: fixed_extent(Dk, Dv), a constant where the shape is.
template <bool kKeyTiles>
TINYATTN_ALWAYS_INLINE void run_plan(const KernelsF32& kern, const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                     const CallTraits& c, float scale, float softcap, int extent) {
  const FixedExtentPlan f = plan_fixed_extent(kern, d, c, ws.bytes, extent);
  if (!(f.kernel && run_fixed_extent(f.kernel, f.rows, c.keys.lo, c.keys.size(), d, io, ws, scale)))
    run_route<kKeyTiles>(kern, d, io, ws, mask, scale, softcap);
}

// A call with a mask or options, its plan run: forward()'s and
// Attention<S>'s checked calls.
template <bool kKeyTiles>
TINYATTN_CHECKED_CALL void run_checked(const KernelsF32& kern, const Dims& d, const ForwardIo& io, Workspace ws,
                                       const Mask& mask, const Options& o, int extent) {
  run_plan<kKeyTiles>(kern, d, io, ws, mask, call_traits(d, mask, o, io.weights != nullptr), effective_scale(d, o),
                      softcap_of(o), extent);
}

// A constant Mask{}: a temporary argument is written on every call, the
// fallback taken or not (7-8 ns of 138 at (8,8,16,16) on AVX-512).
inline constexpr Mask kNoMask{};

// A validated call in which every row sees every key and Y is the one
// output (no mask that drops keys, weights, lse, scores or softcap):
// forward()'s and Attention<S>'s plain calls.
template <bool kKeyTiles>
TINYATTN_BLOCK_LOOP void run_plain(const KernelsF32& kern, const Dims& d, const ForwardIo& io, Workspace ws,
                                   float scale, int extent) {
  run_plan<kKeyTiles>(kern, d, io, ws, kNoMask, plain_call_traits(d), scale, 0.0f, extent);
}
#undef TINYATTN_BLOCK_LOOP
#undef TINYATTN_CHECKED_CALL

// The block algorithms (forward_blocks.cc). Each has a frame of its own, so
// the stack costs the deepest of them, not their sum.
//
// plain_row for a block: all rows' scores in the workspace (lds apart).
void plain_block(const Problem& p, const Block& b, float* s, size_t lds);
// plain_block in one port call (KernelsF32::attend_block), for blocks without
// element masks or weights output; false if the port declined (a logit or
// output not finite), and the block must take another path.
bool fused_block(const Problem& p, const Block& b, float* s, size_t lds);
// The online softmax for rows [g0, g1) of head h, key tile by key tile, in
// blocks; m and l hold the rows' running maxima and sums.
void tiled_group(const Problem& p, size_t h, size_t g0, size_t g1, float* s, float* part, size_t lda, float* m,
                 float* l);
// Problem::kt[c*ldkt + j - lo] = K[j][c] for keys [lo, hi) of a KV head.
void transpose_keys(const Problem& p, size_t kv_head, size_t lo, size_t hi);

}  // namespace detail
}  // namespace tinyattn
