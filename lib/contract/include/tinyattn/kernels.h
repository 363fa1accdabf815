// The contract between the driver (lib/) and a port (ports/backends/*).
//
// A port supplies a small table of fp32 primitives; the driver owns shapes,
// heads, masks, workspace and error handling. A new port fills this table
// (start from ports/backends/template) and adds its line to
// tinyattn/port_list.h; the agreement tests then pick it up on every target.
//
// Every primitive must handle any length >= 1 (tails included), must not
// allocate, and must not read or write outside the ranges given.
//
// Not public API: this header lives in lib/contract/include (CMake target
// tinyattn::contract, linked by lib/src, ports/ and the tests), outside the
// umbrella header and the installed headers.
#pragma once

#include <cstddef>

#include "tinyattn/port.h"
#include "tinyattn/tiling.h"  // kBlockRows, the fixed extents

namespace tinyattn {

struct AttendBlock;  // the fused block's arguments (below)

struct KernelsF32 {
  const char* port = nullptr;  // port_name() of its port: "scalar", "highway", ...

  // The SIMD target this table executes right now ("AVX2", "NEON", "SVE_256",
  // "scalar", ...). Reported so a misconfigured build cannot pass as SIMD.
  const char* (*simd_target)() = nullptr;

  // s[j] = scale * dot(q, k + j*ldk) over dk, for j < count. Each s[j] is
  // the same bits whatever j and count are (the same operations for a key
  // at every position of a call): a KV-cache ring holds its keys at other
  // positions than one forward over the sequence, and gets the same logits.
  void (*scores)(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale,
                 float* s) = nullptr;

  // Maximum of x[0..n). Returns NaN if any element is NaN.
  float (*row_max)(const float* x, size_t n) = nullptr;

  // x[j] = exp(x[j] - shift) for j < n, using tinyattn's exp (tinyattn/exp.h
  // contract: <= kExpMaxUlp ULP on [-87.3, 0], exactly 0 below kExpFlushBelow,
  // NaN in -> NaN out). Returns the sum of the new x[j].
  float (*exp_shift_sum)(float* x, size_t n, float shift) = nullptr;

  // y[c] = a * sum_j p[j] * v[j*ldv + c] for c < dv, j < count.
  // Terms with p[j] == 0 contribute nothing, even where v is inf or NaN
  // (0 * inf would be NaN): masked keys never reach the output, whatever the
  // value rows hold (docs/hardening.md, tests/hardening/nonfinite_test.cc).
  void (*weighted_sum)(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a,
                       float* y) = nullptr;

  // y[c] += a * x[c] for c < n.
  void (*axpy)(float a, const float* x, float* y, size_t n) = nullptr;

  // x[c] *= a for c < n.
  void (*scale)(float* x, size_t n, float a) = nullptr;

  // out[j] = exp(x[j]) for j < n (the same exp as exp_shift_sum; used by the
  // ULP tests and the self-test).
  void (*exp)(const float* x, float* out, size_t n) = nullptr;

  // Optional block primitives (nullptr: the driver runs every query row
  // through scores and weighted_sum above). They take 1 <= rows <= kBlockRows
  // query rows at once, so each key and value element loaded from memory
  // feeds `rows` multiply-adds instead of one (a register tile).

  // s[r*lds + j] = scale * dot(q + r*ldq, k + j*ldk) over dk, for r < rows,
  // j < count.
  void (*scores_block)(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count,
                       size_t dk, float scale, float* s, size_t lds) = nullptr;

  // y[r*ldy + c] = a[r] * sum_j p[r*ldp + j] * v[j*ldv + c] for r < rows,
  // c < dv, j < count. Unlike weighted_sum, zero weights need not be skipped:
  // the driver calls it only when every value row in the block is finite
  // (then 0 * v adds nothing), and otherwise uses weighted_sum row by row.
  void (*weighted_sum_block)(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count,
                             size_t dv, const float* a, float* y, size_t ldy) = nullptr;

  // Optional fused block (nullptr: the driver composes the primitives above):
  // one call from scores to outputs for a block whose scores fit in the
  // workspace, so short rows pay no call, reload or reduction latency between
  // the steps. See AttendBlock for what it computes and when it may decline.
  bool (*attend_block)(const AttendBlock& b) = nullptr;

  // Optional (nullptr: scores_block): scores_block for a full block
  // (kBlockRows rows) from the keys transposed, kt[c*ldkt + j] = k[j*ldk + c]:
  //   s[r*lds + j] = scale * sum_c q[r*ldq + c] * kt[c*ldkt + j]
  // for r < kBlockRows, j < count, c < dk. Each query element is broadcast
  // against a vector of keys, so a register tile needs no horizontal sums.
  // The driver transposes the keys into the workspace when the caller gives it
  // room (Scratch::kTransposedKeys, tinyattn/attention.h).
  void (*scores_block_transposed)(const float* q, size_t ldq, const float* kt, size_t ldkt, size_t count,
                                  size_t dk, float scale, float* s, size_t lds) = nullptr;

  // Optional (nullptr, or a null entry: attend_block): attend_block compiled
  // for fixed extents, entry detail::fixed_extent(dk, dv) (tinyattn/tiling.h)
  // for blocks of that Dk and Dv, with attend_block's semantics and declines
  // (its sums may run in another order: results within the same bounds;
  // tests/kernels/kernel_contract.cc holds each entry to both).
  // Attention<S> picks the entry at compile time and forward() from its dims;
  // the driver gives it whole calls whose rows all see the same keys and that
  // want no weights or softcap (ForwardIo::scores, a pass of its own, may be asked).
  bool (*const* attend_fixed)(const AttendBlock& b) = nullptr;

  // Optional (nullptr: row_max, exp_shift_sum and scale row by row): the
  // softmax of 1 <= count <= kShortRowsAtOnce short rows of n floats in place,
  // row r at s + r*ld, in one call, so short rows (softmax_rows) pay no call,
  // store and reload between the three passes. Returns false, touching
  // nothing, when n is longer than short_rows_max (or 0). Otherwise max[r] is
  // row_max of row r and, where that is finite, the row becomes exactly what
  // exp_shift_sum(row, n, max[r]) then scale(row, n, 1.0f / sum) make of it
  // (the same floats), with sum[r] that sum; rows whose maximum is -inf, +inf
  // or NaN are left as they were, for the caller.
  bool (*softmax_short_rows)(float* s, size_t ld, size_t count, size_t n, float* max, float* sum) = nullptr;
  // The longest row softmax_short_rows takes (the driver does not call it
  // for longer ones: a declined call measured 15 ns per row at 256 floats).
  size_t short_rows_max = 0;

  // Calls of at most this many keys (0: none) may give attend_fixed several
  // consecutive blocks, up to kFixedRowsAtOnce rows (AttendBlock::rows), so
  // a port can issue one block's softmax, a chain of latencies, before the
  // next block's products, or lay its work out across the rows of all of
  // them (Highway's AVX-512 kernel with the rows as the lanes). A call of
  // several blocks declines exactly when one of its blocks' calls would; its
  // outputs, maxima and sums are within the same bounds (its sums may run in
  // another order than a call per block's).
  size_t fixed_multi_block_keys = 0;
};

// At most this many rows per softmax_short_rows call.
inline constexpr size_t kShortRowsAtOnce = 8;

// At most this many rows per attend_fixed call (KernelsF32::fixed_multi_block_keys).
inline constexpr size_t kFixedRowsAtOnce = 2 * kBlockRows;

// Arguments of KernelsF32::attend_block. For r < rows (1 <= rows <= kBlockRows;
// for attend_fixed, also a multiple of kBlockRows up to kFixedRowsAtOnce),
// row r sees keys [own[2r], own[2r+1]) of [0, count) (own == nullptr: all of
// them; every range is non-empty) and the port computes
//   s_rj   = scale * dot(q + r*ldq, k + j*ldk)                  (into s + r*lds)
//   max[r] = max_j s_rj,  sum[r] = sum_j exp(s_rj - max[r])     (tinyattn's exp)
//   y[r*ldy + c] = sum_j exp(s_rj - max[r]) * v[j*ldv + c] / sum[r]
// over the row's own keys; lds >= count. The port returns false when any
// s_rj over a row's own keys is not finite: NaN, +inf, and -inf too, which
// here is a dot product that overflowed fp32 (finite Q and K can give one),
// never a masked key (the driver recomputes such logits by the overflow rule,
// docs/hardening.md); and when an output y is not finite (an inf or NaN in
// V: the port may multiply a zero weight with it). y, max and sum are then
// unspecified and the driver computes the block again with the primitives
// above, whose semantics cover those rows. A port may also decline a block
// it could answer, which is only slower (Highway, xsimd and Helium decline a
// row whose max is -FLT_MAX, the value they give keys outside the row's
// range); it never accepts one of the blocks above. It may write s either
// way. kt, ldkt: as for scores_block_transposed, where the driver has the
// keys transposed.
// No default member initializers: a driver sets every field. With them, a
// block filled field by field was first cleared by a 160-byte `rep stos` on
// x86 (GCC); brace-initialize ({} or a list) for zeros.
struct AttendBlock {
  const float* q;
  size_t ldq, rows;
  const float* k;
  size_t ldk;
  const float* v;
  size_t ldv, count, dk, dv;
  float scale;
  const size_t* own;
  float* s;
  size_t lds;
  float* y;
  size_t ldy;
  float* max;
  float* sum;
  // The keys transposed (kt[c*ldkt + j] = k[j*ldk + c]) or nullptr; a port
  // with scores_block_transposed uses them for a full block.
  const float* kt;
  size_t ldkt;
};

// The kernel table of a port, or nullptr if that port is not compiled in
// (or, for a port choosing its SIMD target at run time, if this CPU can run
// none of the ones compiled). kDefault resolves to the build's default port.
const KernelsF32* kernels_f32(Port port);

// The build's default port's table (kernels_f32(Port::kDefault)), bound at
// compile time: an image that reaches tables only through this links no
// other port's kernels (Attention<S> called without Options).
const KernelsF32* default_kernels_f32();

// The table Attention<S>'s plain call attn(q, k, v, y) runs on where S has
// Dk = Dv of the fixed extents (kExtent = detail::fixed_extent(Dk, Dv)), N a
// multiple of kBlockRows, and fits one key tile: default_kernels_f32(), or,
// where the default port cuts it, a table with the kernels of that extent's
// full blocks and the scalar port's for the rest, so an image of one shape
// links no more of the port than that shape reaches (ports/port.h,
// port_kernels_f32_extent).
template <int kExtent>
const KernelsF32* default_kernels_f32_extent();

}  // namespace tinyattn
