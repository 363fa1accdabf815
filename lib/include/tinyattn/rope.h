// Rotary position embedding (RoPE): rotates query and key features in pairs
// by angles that grow with the token's position, so that a query-key dot
// product depends on their relative position only.
//
// For a row x of head width `dim` at position p, with r = rotary_dim (0: the
// whole row) and pairs k = 0 .. r/2 - 1:
//
//   angle(p, k) = p * theta^(-2k/r)
//   (a, b) -> (a cos - b sin, b cos + a sin)
//
// where (a, b) is
//   kHalfSplit   (x[k], x[k + r/2])   Hugging Face Llama / GPT-NeoX rotate_half
//   kInterleaved (x[2k], x[2k + 1])   GPT-J, Meta's reference (complex pairs)
// and features r .. dim - 1 are left as they are (partial rotary, Hugging
// Face's partial_rotary_factor). docs/rope.md has a picture of the pairs.
//
// Accuracy (the spec is that formula in exact arithmetic): for positions p
// and rotary widths r with p * r < 2^32 (16 million tokens at r = 256) and
// every valid theta, each output of a pair is within kRopeMaxError *
// max(|a|, |b|) of the exact rotation of that pair, in float; in half, plus
// the rounding of the result to half. The computed path (apply_rope) and the
// table path (RopeTable) give the same bits, so one bound covers both.
// Hugging Face's float32 computation is off by about |angle| * 2^-23 (0.008
// at position 65536); here the angle is reduced modulo a turn in exact
// integer arithmetic, and what grows with the position (about p k 2^-54
// radians for pair k) stays below the bound while p * r < 2^32 (docs/rope.md).
//
// No heap, no exceptions, nothing global; every call validates its arguments
// before it writes anything, and on any status other than kOk the tensor is
// left untouched.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/half.h"
#include "tinyattn/shape.h"
#include "tinyattn/status.h"

namespace tinyattn {

enum class RopeStyle : uint8_t {
  kHalfSplit = 0,    // pairs (x[k], x[k + r/2]): Hugging Face Llama, GPT-NeoX, Mistral, Qwen
  kInterleaved = 1,  // pairs (x[2k], x[2k + 1]): GPT-J, Meta's Llama reference, GLM
};

struct Rope {
  float theta = 10000.0f;   // base: finite and >= 1 (models use 10^4 .. 10^7)
  uint32_t rotary_dim = 0;  // 0: the whole head; else even and <= the head width
  RopeStyle style = RopeStyle::kHalfSplit;
};

// Bound on |y - exact| / max(|a|, |b|) for each output of a pair (see above);
// 2^-21, about 8 float roundings of the pair's magnitude.
inline constexpr float kRopeMaxError = 4.76837158203125e-07f;  // 2^-21

// kOk when `rope` can rotate rows of width head_dim. Statuses, in this order:
//   kBadDimension  head_dim == 0 or > kMaxDim; rotary_dim odd or > head_dim;
//                  rotary_dim == 0 and head_dim odd (the whole head must pair up)
//   kBadScale      theta NaN, infinite or < 1
//   kUnsupported   style is not a RopeStyle enumerator
Status validate(const Rope& rope, size_t head_dim);

// Rotates x[heads][n][dim] (the layout forward() takes for Q and K) in place;
// token i of every head is at position first_position + i (any size_t is
// valid: angles wrap modulo a turn). Statuses, in this order: kNullPointer (x),
// kMisaligned (x not aligned to its type), kBadHeads (heads == 0 or >
// kMaxDim), kBadDimension (n == 0 or > kMaxDim, the last position
// first_position + n - 1 past SIZE_MAX, dim == 0 or > kMaxDim, or the tensor
// larger than SIZE_MAX bytes), then those of validate(rope, dim).
Status apply_rope(const Rope& rope, float* x, size_t heads, size_t n, size_t dim, size_t first_position);
Status apply_rope(const Rope& rope, half* x, size_t heads, size_t n, size_t dim, size_t first_position);

namespace detail {

// A Rope prepared for one head width: what validate() checked, plus the ratio
// of successive pair frequencies (theta^(-2/r), a 64-bit mantissa and a shift),
// so a row costs no power or logarithm. Made by rope_prepare only.
struct RopeRow {
  uint64_t ratio = 0;       // theta^(-2/r) * 2^(63 + shift), in [2^63, 2^64)
  uint32_t shift = 0;       // 0 .. 191
  uint32_t rotary_dim = 0;  // r: even, > 0
  RopeStyle style = RopeStyle::kHalfSplit;
};

// validate(rope, head_dim), then fills *out (untouched unless kOk; out null: kNullPointer).
Status rope_prepare(const Rope& rope, size_t head_dim, RopeRow* out);

// The one-row primitive: rotates the first rotary_dim features of row (a row
// of the head width it was prepared for) to `position`. No checks: `r` comes
// from rope_prepare and row is not null.
void rope_row(const RopeRow& r, float* row, size_t position);
void rope_row(const RopeRow& r, half* row, size_t position);

// cos and sin of the r/2 angles of one position (RopeTable's rows): the
// values rope_row rotates with.
void rope_angles(const RopeRow& r, size_t position, float* cos, float* sin);
// Rotates one row with given cos/sin of its r/2 pairs, the arithmetic rope_row uses.
void rope_rotate(const RopeRow& r, float* row, const float* cos, const float* sin);
void rope_rotate(const RopeRow& r, half* row, const float* cos, const float* sin);

// apply_rope's checks of the tensor (all but validate's), shared with RopeTable::apply.
Status rope_check_tensor(const void* x, size_t elem_bytes, size_t heads, size_t n, size_t dim, size_t first_position);

}  // namespace detail

// cos and sin for positions [0, MaxPositions) of a Rope with rotary_dim
// RotaryDim: kBytes of RAM (inside the object) for a rotation without
// trigonometry, with the same bits as apply_rope. init() fills it once (the
// cost of apply_rope on MaxPositions rows); apply() then takes apply_rope's
// arguments. A table used before a successful init() returns kUnsupported;
// a position at or past MaxPositions returns kBadDimension.
//
//   static tinyattn::RopeTable<64, 2048> table;  // 64 features, 2048 positions: 512 KiB
//   tinyattn::Rope rope;                         // theta 10000, whole head, rotate_half
//   if (table.init(rope) == tinyattn::Status::kOk) table.apply(q, heads, n, 64, first_position);
template <size_t RotaryDim, size_t MaxPositions>
class RopeTable {
  static_assert(RotaryDim > 0 && RotaryDim % 2 == 0 && RotaryDim <= kMaxDim,
                "tinyattn::RopeTable: RotaryDim must be even and in [2, kMaxDim]");
  static_assert(MaxPositions > 0, "tinyattn::RopeTable: MaxPositions must be at least 1");
  static_assert(MaxPositions <= static_cast<size_t>(-1) / RotaryDim / sizeof(float),
                "tinyattn::RopeTable: the table does not fit in memory");
  static constexpr size_t kPairs = RotaryDim / 2;

 public:
  static constexpr size_t kRotaryDim = RotaryDim;
  static constexpr size_t kMaxPositions = MaxPositions;
  // The table's RAM: cos and sin, kPairs floats each per position.
  static constexpr size_t kBytes = 2 * MaxPositions * kPairs * sizeof(float);

  // rope.rotary_dim must be RotaryDim, or 0 (then apply's dim must be RotaryDim).
  // Statuses: those of validate(rope, RotaryDim), kBadDimension for another
  // rotary_dim; on any but kOk the table keeps its previous contents.
  Status init(const Rope& rope) {
    if (rope.rotary_dim != 0 && rope.rotary_dim != RotaryDim) return Status::kBadDimension;
    detail::RopeRow row;
    Rope whole = rope;
    whole.rotary_dim = RotaryDim;
    if (Status s = detail::rope_prepare(whole, RotaryDim, &row); s != Status::kOk) return s;
    for (size_t p = 0; p < MaxPositions; ++p) detail::rope_angles(row, p, &cos_[p * kPairs], &sin_[p * kPairs]);
    row_ = row;
    whole_head_ = rope.rotary_dim == 0;
    ready_ = true;
    return Status::kOk;
  }

  bool ready() const { return ready_; }

  // apply_rope(rope, x, heads, n, dim, first_position) with the init() rope.
  Status apply(float* x, size_t heads, size_t n, size_t dim, size_t first_position) const {
    return apply_rows(x, heads, n, dim, first_position);
  }
  Status apply(half* x, size_t heads, size_t n, size_t dim, size_t first_position) const {
    return apply_rows(x, heads, n, dim, first_position);
  }

 private:
  template <class T>
  Status apply_rows(T* x, size_t heads, size_t n, size_t dim, size_t first_position) const {
    if (Status s = detail::rope_check_tensor(x, sizeof(T), heads, n, dim, first_position); s != Status::kOk) return s;
    if (!ready_) return Status::kUnsupported;
    if (dim < RotaryDim || (whole_head_ && dim != RotaryDim)) return Status::kBadDimension;
    if (first_position >= MaxPositions || n > MaxPositions - first_position) return Status::kBadDimension;
    for (size_t h = 0; h < heads; ++h)
      for (size_t i = 0; i < n; ++i) {
        const size_t p = first_position + i;
        detail::rope_rotate(row_, x + (h * n + i) * dim, &cos_[p * kPairs], &sin_[p * kPairs]);
      }
    return Status::kOk;
  }

  float cos_[MaxPositions * kPairs] = {};
  float sin_[MaxPositions * kPairs] = {};
  detail::RopeRow row_;
  bool whole_head_ = false;
  bool ready_ = false;
};

}  // namespace tinyattn
