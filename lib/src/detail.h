// Checks and helpers shared by every driver (fp32, fp16, int8, backward).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/attention.h"
#include "tinyattn/kernels.h"

// Keeps a function's frame out of its caller's: where a driver picks one of
// several block routines, the stack then costs the deepest of them, not
// their sum (the board stack bound, docs/hardening.md).
#if defined(__GNUC__)
#define TINYATTN_NOINLINE __attribute__((noinline))
#else
#define TINYATTN_NOINLINE
#endif

namespace tinyattn {

struct KernelsI8;
struct ForwardIoI8;
struct Int8Plan;
struct KernelsI16;
struct ForwardIoI16;
struct Int16Plan;
struct TfliteMultiplier;

namespace detail {

struct Extent {
  const void* p;
  size_t bytes;
};

// Written with differences rather than end addresses, so an extent that ends
// at (or a byte count that would run past) the top of the address space
// cannot wrap around and hide an overlap. For extents that exist (non-null,
// non-empty).
inline bool overlaps_nonempty(Extent a, Extent b) {
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(a.p), b0 = reinterpret_cast<uintptr_t>(b.p);
  return a0 >= b0 ? a0 - b0 < b.bytes : b0 - a0 < a.bytes;
}
inline bool overlaps(Extent a, Extent b) {
  return a.p != nullptr && b.p != nullptr && a.bytes != 0 && b.bytes != 0 && overlaps_nonempty(a, b);
}

// kAliasing if any of out[0..n_out) overlaps one of in[0..n_in) or another
// of out, else kOk. The callers list only extents that exist (non-null, non-
// empty): a small forward has two outputs and three inputs, not five and
// nine. Every pair is tested, without a branch per pair: a call that passes
// is the one that matters, and these pairs were a sixth of its time.
inline Status check_aliasing(const Extent* in, size_t n_in, const Extent* out, size_t n_out) {
  bool any = false;
  for (size_t a = 0; a < n_out; ++a) {
    for (size_t i = 0; i < n_in; ++i) any |= overlaps_nonempty(out[a], in[i]);
    for (size_t b = a + 1; b < n_out; ++b) any |= overlaps_nonempty(out[a], out[b]);
  }
  return any ? Status::kAliasing : Status::kOk;
}

// One pointer argument of an entry point: what the call reads or writes
// there (bytes), the alignment of its element, and whether it may be null.
struct Tensor {
  const void* p = nullptr;
  size_t bytes = 0;
  size_t align = 1;
  bool required = false;
};

// Whether t.p is aligned for its element (null passes: that is `required`'s
// check). Alignments are powers of two: a mask, not a division per tensor
// (nine of them were a tenth of a small forward's time).
inline bool aligned_for(const Tensor& t) { return (reinterpret_cast<uintptr_t>(t.p) & (t.align - 1)) == 0; }

// The checks on an entry point's memory, after validate_common, in one order
// so the same fault gets the same status from every entry point:
//  1. check_pointers: a required pointer or the workspace null
//     (kNullPointer); a pointer not aligned for its element (kMisaligned);
//  2. the entry point's own checks of what the pointers hold (e.g. an int8 plan);
//  3. check_memory: fewer workspace bytes than ws_needed
//     (kWorkspaceTooSmall); an output overlapping an input or another output,
//     the workspace being an output of ws_written bytes (kAliasing).
template <size_t kIn, size_t kOut>
Status check_pointers(const Tensor (&inputs)[kIn], const Tensor (&outputs)[kOut], Workspace ws) {
  bool missing = ws.data == nullptr, misaligned = false;
  for (const Tensor& t : inputs) missing |= t.required && t.p == nullptr, misaligned |= !aligned_for(t);
  for (const Tensor& t : outputs) missing |= t.required && t.p == nullptr, misaligned |= !aligned_for(t);
  if (missing) return Status::kNullPointer;
  return misaligned ? Status::kMisaligned : Status::kOk;
}

template <size_t kIn, size_t kOut>
Status check_memory(const Tensor (&inputs)[kIn], const Tensor (&outputs)[kOut], Workspace ws, size_t ws_needed,
                    size_t ws_written) {
  if (ws.bytes < ws_needed) return Status::kWorkspaceTooSmall;
  Extent in[kIn], out[kOut + 1];
  size_t n_in = 0, n_out = 0;
  for (const Tensor& t : inputs)
    if (t.p != nullptr && t.bytes != 0) in[n_in++] = {t.p, t.bytes};
  for (const Tensor& t : outputs)
    if (t.p != nullptr && t.bytes != 0) out[n_out++] = {t.p, t.bytes};
  if (ws.data != nullptr && ws_written != 0) out[n_out++] = {ws.data, ws_written};
  return check_aliasing(in, n_in, out, n_out);
}

// Both, for the float paths, whose own check is that the full-row arrays
// (weights, dS: Hq*N*M floats) are addressable on this target (kBadDimension).
template <size_t kIn, size_t kOut>
Status validate_tensors(const Tensor (&inputs)[kIn], const Tensor (&outputs)[kOut], Workspace ws, size_t ws_needed,
                        size_t ws_written, bool rows_addressable) {
  if (Status s = check_pointers(inputs, outputs, ws); s != Status::kOk) return s;
  if (!rows_addressable) return Status::kBadDimension;
  return check_memory(inputs, outputs, ws, ws_needed, ws_written);
}

// Sets p[0..n) to value (the drivers' zero and NaN rows).
template <class T>
void fill(T* p, size_t n, T value) {
  for (size_t c = 0; c < n; ++c) p[c] = value;
}

template <class T>
inline bool aligned(const T* p) {
  return reinterpret_cast<uintptr_t>(p) % alignof(T) == 0;
}

// Bytes a mask's element arrays span, for the aliasing checks. Computed in
// 64 bits; validate(Mask, Dims) has checked that it fits the address space.
inline uint64_t mask_rows_bytes64(const Dims& d, uint64_t row_bytes, uint64_t head_stride_bytes) {
  return head_stride_bytes * (uint64_t{d.hq} - uint64_t{1}) + uint64_t{d.n} * row_bytes;
}
inline size_t mask_rows_bytes(const Dims& d, uint64_t row_bytes, uint64_t head_stride_bytes) {
  return static_cast<size_t>(mask_rows_bytes64(d, row_bytes, head_stride_bytes));
}

// The keep and bias masks as inputs of a call (null when not given).
Tensor keep_tensor(const Mask& mask, const Dims& d);
Tensor bias_tensor(const Mask& mask, const Dims& d);

// The part of validation every fp32 entry point shares: dims, mask, scale, port.
Status validate_common(const Dims& d, const Mask& mask, const Options& o, const KernelsF32** kernels);
// The same after the dims: what a call with valid dims can still get wrong
// (Attention<S>'s dims are checked at compile time).
Status validate_call(const Dims& d, const Mask& mask, const Options& o, const KernelsF32** kernels);
// validate_call() without the port: *kernels is the table the caller gives
// (nullptr: kPortUnavailable).
Status validate_call_on(const Dims& d, const Mask& mask, const Options& o, const KernelsF32* table,
                        const KernelsF32** kernels);

// Sets s[j] for keys j in [r.lo, r.hi) of query row i, head h: -inf where the
// keep mask drops the key, + bias where a bias is given.
void apply_element_masks(const Mask& mask, const Dims& d, size_t h, size_t i, KeyRange r, float* s);

inline bool has_element_masks(const Mask& m) {
  return m.keep != nullptr || m.keep_bits != nullptr || m.bias != nullptr;
}

// A call with nothing to check or apply but the port: Mask{} (valid for any
// dims, every row sees every key) and neither a scale nor a softcap. The
// usual call; the checks it cannot fail were a quarter of a small call.
inline bool plain_call(const Mask& m, const Options& o) {
  return m.causal == Causal::kNone && !m.window.active() && m.window.align == Align::kTopLeft &&
         m.kv_len == kAllKeys && m.offset == 0 && !has_element_masks(m) && m.head_stride == 0 && !o.scale &&
         !o.softcap;
}

// Options::softcap as the drivers take it: 0 when unset (validation has
// checked that a set one is > 0).
inline float softcap_of(const Options& o) { return o.softcap ? *o.softcap : 0.0f; }

// A validated fp32 call's route (plan.h), planned and run, on an explicit
// kernel table: run_plan (forward_core.h) calls it where no fixed-extent
// kernel ran the call, the self-test with the table under test. softcap:
// Options::softcap, 0 for none. kKeyTiles = false leaves the key-tiled
// routes out of the image: for an Attention<S> whose M fits one tile, which
// never takes them.
template <bool kKeyTiles = true>
void run_route(const KernelsF32& kernels, const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
               float scale, float softcap);
extern template void run_route<true>(const KernelsF32&, const Dims&, const ForwardIo&, Workspace, const Mask&,
                                     float, float);
extern template void run_route<false>(const KernelsF32&, const Dims&, const ForwardIo&, Workspace, const Mask&,
                                      float, float);

// forward_i8() after validation, on an explicit int8 kernel table: forward_i8()
// calls it with the port's table, the int8 self-test with the table under test.
void forward_i8_validated(const KernelsI8& kernels, const Dims& d, const ForwardIoI8& io, const Int8Plan& plan,
                          Workspace ws, const Mask& mask);

// forward_i16() after validation, on an explicit int16 kernel table
// (forward_i16() with the port's, the int16 self-test with the one under test).
void forward_i16_validated(const KernelsI16& kernels, const Dims& d, const ForwardIoI16& io, const Int16Plan& plan,
                           Workspace ws, const Mask& mask);

// tflite::QuantizeMultiplier: real ~= multiplier * 2^(shift - 31),
// multiplier in [2^30, 2^31) (fixed_point.cc; the TFLite modes' plans).
Status quantize_multiplier(double real, TfliteMultiplier* out);

// exp2_q30's table: 2^(i/32) in Q1.30, i = 0..31 (forward_i8.cc; the int8
// self-test checks its CRC-32).
extern const int64_t kExp2Table[32];

// Aligned pointer inside a caller workspace (forward_workspace_bytes includes the slack).
// Offsets the caller's pointer rather than casting an integer back to a
// pointer, so the result keeps the buffer's provenance.
inline float* workspace_floats(Workspace ws) {
  unsigned char* base = static_cast<unsigned char*>(ws.data);
  const uintptr_t p = reinterpret_cast<uintptr_t>(base);
  return reinterpret_cast<float*>(base + (align_up(p, kWorkspaceAlign) - p));
}

}  // namespace detail
}  // namespace tinyattn
