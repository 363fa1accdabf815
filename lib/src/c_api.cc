// The C API (tinyattn/tinyattn_c.h): thin wrappers that convert the C structs
// to the C++ ones and call the C++ entry points. Boards link with
// --gc-sections, so an image keeps only the wrappers it calls (and what they
// reach): an int8-only image pulls no fp32 path through this file.
#include "tinyattn/tinyattn_c.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tinyattn/attention.h"
#include "tinyattn/backward.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/port.h"
#include "tinyattn/quant.h"
#include "tinyattn/rope.h"
#include "tinyattn/selftest.h"
#include "tinyattn/softmax.h"

namespace tinyattn {
namespace {

// Every C constant is its C++ enumerator's value (C code may store either).
#define TINYATTN_SAME_VALUE(c, cxx) static_assert(static_cast<int>(c) == static_cast<int>(cxx), #c " != " #cxx)
TINYATTN_SAME_VALUE(TINYATTN_OK, Status::kOk);
TINYATTN_SAME_VALUE(TINYATTN_NULL_POINTER, Status::kNullPointer);
TINYATTN_SAME_VALUE(TINYATTN_BAD_DIMENSION, Status::kBadDimension);
TINYATTN_SAME_VALUE(TINYATTN_BAD_HEADS, Status::kBadHeads);
TINYATTN_SAME_VALUE(TINYATTN_BAD_SCALE, Status::kBadScale);
TINYATTN_SAME_VALUE(TINYATTN_BAD_MASK, Status::kBadMask);
TINYATTN_SAME_VALUE(TINYATTN_WORKSPACE_TOO_SMALL, Status::kWorkspaceTooSmall);
TINYATTN_SAME_VALUE(TINYATTN_MISALIGNED, Status::kMisaligned);
TINYATTN_SAME_VALUE(TINYATTN_ALIASING, Status::kAliasing);
TINYATTN_SAME_VALUE(TINYATTN_PORT_UNAVAILABLE, Status::kPortUnavailable);
TINYATTN_SAME_VALUE(TINYATTN_BAD_QUANTIZATION, Status::kBadQuantization);
TINYATTN_SAME_VALUE(TINYATTN_UNSUPPORTED, Status::kUnsupported);
TINYATTN_SAME_VALUE(TINYATTN_CACHE_FULL, Status::kCacheFull);
static_assert(TINYATTN_STATUS_COUNT == kStatusCount, "a Status was added: mirror it in tinyattn_c.h");

// The C port constants are a list of their own (the C header stays plain C,
// without port_list.h), held to tinyattn/port_list.h in both directions: a
// Port without its case here fails -Wswitch and its static_assert below; a C
// constant without its Port moves TINYATTN_PORT_END_ off TINYATTN_PORT_COUNT,
// or TINYATTN_PORT_COUNT off kPortCount.
constexpr int c_port(Port p) {
  switch (p) {
    case Port::kDefault:
      return TINYATTN_PORT_DEFAULT;
    case Port::kScalar:
      return TINYATTN_PORT_SCALAR;
    case Port::kHighway:
      return TINYATTN_PORT_HIGHWAY;
    case Port::kXsimd:
      return TINYATTN_PORT_XSIMD;
    case Port::kMve:
      return TINYATTN_PORT_MVE;
    case Port::kTemplate:
      return TINYATTN_PORT_TEMPLATE;
    case Port::kDsp:
      return TINYATTN_PORT_DSP;
    case Port::kRvv:
      return TINYATTN_PORT_RVV;
  }
  return -1;
}
#define TINYATTN_C_PORT_MATCHES(e, name, fused, int8)         \
  static_assert(c_port(Port::e) == static_cast<int>(Port::e), \
                "Port::" #e                                   \
                ": its TINYATTN_PORT_ constant (tinyattn_c.h, c_port() here) is missing or has another value");
TINYATTN_C_PORT_MATCHES(kDefault, "default", 0, 0)
TINYATTN_PORT_LIST(TINYATTN_C_PORT_MATCHES)
#undef TINYATTN_C_PORT_MATCHES
static_assert(TINYATTN_PORT_END_ == TINYATTN_PORT_COUNT,
              "TINYATTN_PORT_COUNT is not the number of TINYATTN_PORT_ constants (tinyattn_c.h)");
static_assert(TINYATTN_PORT_COUNT == kPortCount,
              "tinyattn_c.h and tinyattn/port_list.h have different ports: mirror the one added or removed");

TINYATTN_SAME_VALUE(TINYATTN_ALIGN_TOP_LEFT, Align::kTopLeft);
TINYATTN_SAME_VALUE(TINYATTN_ALIGN_BOTTOM_RIGHT, Align::kBottomRight);
TINYATTN_SAME_VALUE(TINYATTN_ALIGN_OFFSET, Align::kOffset);
TINYATTN_SAME_VALUE(TINYATTN_CAUSAL_NONE, Causal::kNone);
TINYATTN_SAME_VALUE(TINYATTN_CAUSAL_TOP_LEFT, Causal::kTopLeft);
TINYATTN_SAME_VALUE(TINYATTN_CAUSAL_BOTTOM_RIGHT, Causal::kBottomRight);
TINYATTN_SAME_VALUE(TINYATTN_CAUSAL_OFFSET, Causal::kOffset);
TINYATTN_SAME_VALUE(TINYATTN_SCORES_SCALED, ScoreStage::kScaled);
TINYATTN_SAME_VALUE(TINYATTN_SCORES_SOFTCAPPED, ScoreStage::kSoftcapped);
TINYATTN_SAME_VALUE(TINYATTN_SCORES_MASKED, ScoreStage::kMasked);
TINYATTN_SAME_VALUE(TINYATTN_SCRATCH_MINIMAL, Scratch::kMinimal);
TINYATTN_SAME_VALUE(TINYATTN_SCRATCH_TRANSPOSED_KEYS, Scratch::kTransposedKeys);
TINYATTN_SAME_VALUE(TINYATTN_SCRATCH_DEFAULT, kDefaultScratch);
TINYATTN_SAME_VALUE(TINYATTN_F16_WIDEN_TO_F32, F16Compute::kWidenToF32);
TINYATTN_SAME_VALUE(TINYATTN_F16_NATIVE_F16_PRODUCTS, F16Compute::kNativeF16Products);
TINYATTN_SAME_VALUE(TINYATTN_BACKWARD_SAVED_WEIGHTS, BackwardMode::kSavedWeights);
TINYATTN_SAME_VALUE(TINYATTN_BACKWARD_RECOMPUTE, BackwardMode::kRecompute);
TINYATTN_SAME_VALUE(TINYATTN_SELFTEST_NONE, SelftestFormat::kNone);
TINYATTN_SAME_VALUE(TINYATTN_SELFTEST_UNITY, SelftestFormat::kUnity);
TINYATTN_SAME_VALUE(TINYATTN_SELFTEST_TABLE, SelftestFormat::kTable);
TINYATTN_SAME_VALUE(TINYATTN_SELFTEST_BOTH, SelftestFormat::kBoth);
#undef TINYATTN_SAME_VALUE
static_assert(sizeof(tinyattn_status) == 4 && sizeof(tinyattn_causal) == 4 && sizeof(tinyattn_align) == 4 &&
                  sizeof(tinyattn_score_stage) == 4,
              "the *_MIN_ and *_MAX_ enumerators fix 32 bits");
// Any int a C caller passes by value is a value of the C++ type (not an
// out-of-range enum, which C++ leaves undefined): the *_MIN_ enumerators.
// (__underlying_type: the freestanding subset has no std::underlying_type.)
template <class E>
constexpr bool signed_32() {
  return std::numeric_limits<__underlying_type(E)>::is_signed && sizeof(E) == 4;
}
template <class... E>
constexpr bool all_signed_32() {
  return (signed_32<E>() && ...);
}
static_assert(all_signed_32<tinyattn_status, tinyattn_port, tinyattn_align, tinyattn_causal, tinyattn_scratch,
                            tinyattn_score_stage, tinyattn_f16_compute, tinyattn_backward_mode,
                            tinyattn_selftest_format, tinyattn_kv_dtype, tinyattn_rope_style>(),
              "every C enum holds every int32 value");

// The header's constants and the C++ ones.
static_assert(TINYATTN_MAX_DIM == kMaxDim, "kMaxDim");
static_assert(TINYATTN_UNBOUNDED == kUnbounded, "kUnbounded");
static_assert(TINYATTN_WORKSPACE_ALIGN == kWorkspaceAlign, "kWorkspaceAlign");
static_assert(TINYATTN_KEY_TILE == kKeyTile, "kKeyTile");
static_assert(TINYATTN_BLOCK_ROWS == kBlockRows, "kBlockRows");
static_assert(TINYATTN_TRANSPOSED_KEYS_MIN_ROWS == kTransposedKeysMinRows, "kTransposedKeysMinRows");
static_assert(static_cast<bool>(TINYATTN_TRANSPOSED_KEYS_BUILT) == kTransposedKeysBuilt, "kTransposedKeysBuilt");
static_assert(TINYATTN_F16_KEY_TILE == kF16KeyTile, "kF16KeyTile");
static_assert(TINYATTN_PROB_ONE == kProbOne, "kProbOne");
static_assert(TINYATTN_SELFTEST_MAX_CHECKS == kSelftestMaxChecks, "kSelftestMaxChecks");
static_assert(TINYATTN_SELFTEST_I8_MAX_CHECKS == kSelftestI8MaxChecks, "kSelftestI8MaxChecks");
static_assert(TINYATTN_KEEP_BITS_ROW_BYTES(13) == keep_bits_row_bytes(13), "keep_bits_row_bytes");

// The macros are constant expressions equal to the C++ formulas; the C test
// sweeps them at run time, these pin a few cases at compile time.
static_assert(TINYATTN_FORWARD_WORKSPACE_BYTES(16, 257, 32, 1, 1) == forward_workspace_bytes(Dims{16, 257, 32, 1}),
              "forward workspace macro");
static_assert(TINYATTN_FORWARD_WORKSPACE_BYTES(64, 1000, 64, 512, 0) ==
                  forward_workspace_bytes(Dims{64, 1000, 64, 512}, false),
              "forward workspace macro");
static_assert(TINYATTN_FORWARD_WORKSPACE_BYTES_SCRATCH(64, 200, 48, 32, 1, TINYATTN_SCRATCH_TRANSPOSED_KEYS) ==
                  forward_workspace_bytes(Dims{64, 200, 48, 32}, true, Scratch::kTransposedKeys),
              "forward workspace macro, transposed keys");
static_assert(TINYATTN_FORWARD_F16_WORKSPACE_BYTES(5, 300, 40, 24, 0) ==
                  forward_f16_workspace_bytes(Dims{5, 300, 40, 24}, false),
              "fp16 workspace macro");
static_assert(TINYATTN_FORWARD_I8_WORKSPACE_BYTES(5, 300, 40, 24) == forward_i8_workspace_bytes(Dims{5, 300, 40, 24}),
              "int8 workspace macro");
static_assert(TINYATTN_BACKWARD_WORKSPACE_BYTES(5, 300, 40, 24, TINYATTN_BACKWARD_RECOMPUTE) ==
                  backward_workspace_bytes(Dims{5, 300, 40, 24}, BackwardMode::kRecompute),
              "backward workspace macro");

// The int8 plan is an array the caller owns (often const, in flash), so it is
// passed through, not copied: the C and C++ structs must have one layout.
static_assert(std::is_standard_layout_v<Int8HeadPlan> && std::is_trivially_copyable_v<Int8HeadPlan>,
              "Int8HeadPlan is passed through");
static_assert(sizeof(tinyattn_int8_head_plan) == sizeof(Int8HeadPlan), "Int8HeadPlan layout");
static_assert(alignof(tinyattn_int8_head_plan) == alignof(Int8HeadPlan), "Int8HeadPlan layout");
#define TINYATTN_SAME_OFFSET(field)                                                                  \
  static_assert(offsetof(tinyattn_int8_head_plan, field) == offsetof(Int8HeadPlan, field), #field); \
  static_assert(sizeof(tinyattn_int8_head_plan::field) == sizeof(Int8HeadPlan::field), #field)
TINYATTN_SAME_OFFSET(logit);
TINYATTN_SAME_OFFSET(output);
TINYATTN_SAME_OFFSET(bias);
TINYATTN_SAME_OFFSET(q_zero);
TINYATTN_SAME_OFFSET(k_zero);
TINYATTN_SAME_OFFSET(v_zero);
TINYATTN_SAME_OFFSET(y_zero);
TINYATTN_SAME_OFFSET(bias_zero);
#undef TINYATTN_SAME_OFFSET
static_assert(offsetof(tinyattn_fixed_multiplier, multiplier) == offsetof(FixedMultiplier, multiplier) &&
                  offsetof(tinyattn_fixed_multiplier, shift) == offsetof(FixedMultiplier, shift) &&
                  sizeof(tinyattn_fixed_multiplier) == sizeof(FixedMultiplier),
              "FixedMultiplier layout");

// fp16 tensors: uint16_t bit patterns read as tinyattn::half, a struct of one uint16_t.
static_assert(std::is_standard_layout_v<half> && sizeof(half) == sizeof(uint16_t) &&
                  alignof(half) == alignof(uint16_t),
              "half is passed through as uint16_t");

Dims to_cxx(const tinyattn_dims& d) { return Dims{d.n, d.m, d.dk, d.dv, d.hq, d.hkv}; }

Mask to_cxx(const tinyattn_mask* c) {
  Mask m;
  if (!c) return m;
  m.causal = static_cast<Causal>(c->causal);
  if (c->use_window) m.window = Window{c->window_left, c->window_right, static_cast<Align>(c->window_align)};
  // A C kv_len is always a key count (use_kv_len says whether there is one):
  // UINT32_MAX, C++'s kAllKeys, becomes another count above any valid M, so
  // validate() returns kBadMask for it as for every kv_len > M.
  if (c->use_kv_len) m.kv_len = c->kv_len == kAllKeys ? kAllKeys - 1 : c->kv_len;
  m.keep = c->keep;
  m.keep_bits = c->keep_bits;
  m.bias = c->bias;
  m.head_stride = c->head_stride;
  m.offset = c->offset;
  return m;
}

Options to_cxx(const tinyattn_options* c) {
  Options o;
  if (!c) return o;
  if (c->use_scale) o.scale = c->scale;
  if (c->use_softcap) o.softcap = c->softcap;
  o.port = static_cast<Port>(c->port);
  return o;
}

// Enum fields from C may hold any integer: read as int32_t (the enums are
// 32 bits, asserted above) and checked before any becomes a C++ enumerator.
template <class E>
int32_t raw(const E& e) {
  int32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}
bool mask_enums_ok(const tinyattn_mask* c) {
  if (!c) return true;
  const int32_t causal = raw(c->causal), align = raw(c->window_align);
  return causal >= TINYATTN_CAUSAL_NONE && causal <= TINYATTN_CAUSAL_OFFSET && align >= TINYATTN_ALIGN_TOP_LEFT &&
         align <= TINYATTN_ALIGN_OFFSET;
}
bool port_ok(tinyattn_port p) { return static_cast<unsigned>(p) < static_cast<unsigned>(TINYATTN_PORT_COUNT); }
bool options_ok(const tinyattn_options* c) {
  return !c || (raw(c->port) >= 0 && raw(c->port) < TINYATTN_PORT_COUNT);
}

tinyattn_status to_c(Status s) { return static_cast<tinyattn_status>(s); }

QuantParams to_cxx(const tinyattn_quant_params& c) {
  QuantParams p;
  p.scale = c.scale;
  p.zero_point = c.zero_point;
  p.count = c.count == 0 ? 1 : c.count;
  return p;
}

const half* as_half(const uint16_t* p) { return reinterpret_cast<const half*>(p); }
half* as_half(uint16_t* p) { return reinterpret_cast<half*>(p); }

// fp16 options: a port or compute value outside its enum is refused before
// the conversion.
tinyattn_status options_f16_status(const tinyattn_options_f16* c) {
  if (c && !options_ok(&c->options)) return TINYATTN_PORT_UNAVAILABLE;
  if (c && raw(c->compute) != TINYATTN_F16_WIDEN_TO_F32 && raw(c->compute) != TINYATTN_F16_NATIVE_F16_PRODUCTS)
    return TINYATTN_UNSUPPORTED;
  return TINYATTN_OK;
}
OptionsF16 to_cxx(const tinyattn_options_f16* c) {
  OptionsF16 o(to_cxx(c ? &c->options : nullptr));
  if (c) o.compute = static_cast<F16Compute>(c->compute);
  return o;
}

// ---- KV cache: the C struct over detail::kv_cache_* (tinyattn/kv_cache.h),
// the code KvCache runs.

// Bytes of one element of a dtype; 0 outside the enum.
size_t kv_element_bytes(tinyattn_kv_dtype dtype) {
  switch (raw(dtype)) {
    case TINYATTN_KV_F32:
      return sizeof(float);
    case TINYATTN_KV_F16:
      return sizeof(half);
    case TINYATTN_KV_I8:
    case TINYATTN_KV_I8_SCALED:
    case TINYATTN_KV_I8_SCALED_F16:
      return sizeof(int8_t);
    default:
      return 0;
  }
}
// Bytes of one scale of an int8-storage dtype (KvInt8); 0 for the others.
size_t kv_scale_bytes(tinyattn_kv_dtype dtype) {
  return raw(dtype) == TINYATTN_KV_I8_SCALED ? sizeof(float) : raw(dtype) == TINYATTN_KV_I8_SCALED_F16 ? sizeof(half) : 0;
}
bool kv_scaled(tinyattn_kv_dtype dtype) { return kv_scale_bytes(dtype) != 0; }

detail::KvCacheShape kv_shape(const tinyattn_kv_cache_config& c) {
  return detail::KvCacheShape{c.hq,     c.hkv, c.dk, c.dv, c.capacity, c.max_new == 0 ? 1 : c.max_new,
                              c.window, c.sinks};
}

// A ring's keep-bit rows, at the start of the workspace (not for int8
// storage, which walks its slots itself).
constexpr size_t kv_keep_bytes(const detail::KvCacheShape& s, size_t scale_bytes = 0) {
  return s.window != 0 && scale_bytes == 0 ? s.max_new * keep_bits_row_bytes(s.capacity) : 0;
}

// The scales, keys and values from an aligned address (as a KvCache's), or
// 0 when they could not be one object here. Each extent is <= kMaxDim once
// the shape is valid, so the product fits 64 bits.
constexpr size_t kv_storage_bytes(const detail::KvCacheShape& s, size_t element_bytes, size_t scale_bytes = 0) {
  const uint64_t bytes =
      uint64_t{s.hkv} * s.capacity * ((uint64_t{s.dk} + s.dv) * element_bytes + 2 * scale_bytes) + kWorkspaceAlign;
  return bytes <= static_cast<uint64_t>(PTRDIFF_MAX) ? static_cast<size_t>(bytes) : 0;
}

template <class T>
constexpr size_t kv_forward_workspace_bytes(const detail::KvCacheShape& s) {
  return detail::KvCacheForward<T>::workspace_bytes(detail::kv_cache_dims(s, s.max_new));
}

// The macros are these sizes (the C test compares them with KvCache's
// constants for each of its configurations, and sweeps them at run time).
constexpr detail::KvCacheShape kKvF32{4, 2, 8, 6, 24, 1, 0}, kKvF16Ring{4, 2, 40, 24, 300, 32, 250},
    kKvI8Chunked{2, 1, 17, 6, 9, 4, 0}, kKvScaledSinks{4, 2, 12, 20, 70, 3, 50, 4};
static_assert(TINYATTN_KV_CACHE_BYTES(2, 24, 8, 6, TINYATTN_KV_F32) == kv_storage_bytes(kKvF32, sizeof(float)) &&
                  TINYATTN_KV_CACHE_WORKSPACE_BYTES(24, 8, 6, 0, 0, TINYATTN_KV_F32) ==
                      kv_forward_workspace_bytes<float>(kKvF32) + kv_keep_bytes(kKvF32),
              "fp32 KV cache macros");
static_assert(TINYATTN_KV_CACHE_BYTES(2, 300, 40, 24, TINYATTN_KV_F16) == kv_storage_bytes(kKvF16Ring, sizeof(half)) &&
                  TINYATTN_KV_CACHE_WORKSPACE_BYTES(300, 40, 24, 32, 250, TINYATTN_KV_F16) ==
                      kv_forward_workspace_bytes<half>(kKvF16Ring) + kv_keep_bytes(kKvF16Ring),
              "fp16 KV cache macros");
static_assert(TINYATTN_KV_CACHE_BYTES(1, 9, 17, 6, TINYATTN_KV_I8) == kv_storage_bytes(kKvI8Chunked, sizeof(int8_t)) &&
                  TINYATTN_KV_CACHE_WORKSPACE_BYTES(9, 17, 6, 4, 0, TINYATTN_KV_I8) ==
                      kv_forward_workspace_bytes<int8_t>(kKvI8Chunked) + kv_keep_bytes(kKvI8Chunked),
              "int8 KV cache macros");
static_assert(TINYATTN_KV_CACHE_BYTES(2, 70, 12, 20, TINYATTN_KV_I8_SCALED_F16) ==
                      kv_storage_bytes(kKvScaledSinks, 1, sizeof(half)) &&
                  TINYATTN_KV_CACHE_WORKSPACE_BYTES(70, 12, 20, 3, 50, TINYATTN_KV_I8_SCALED) ==
                      detail::kv_int8_workspace_bytes(kKvScaledSinks),
              "int8 storage KV cache macros");
static_assert(TINYATTN_KV_CACHE_ROPE_BYTES(4, 0, 8, TINYATTN_KV_F32) == size_t{4} * 8 * sizeof(float) + sizeof(float) &&
                  TINYATTN_KV_CACHE_ROPE_BYTES(4, 3, 8, TINYATTN_KV_I8_SCALED) == 0,
              "RoPE workspace macro");

// The rotated queries of an fp32 or fp16 cache with RoPE, aligned at any address.
size_t kv_rope_bytes(const detail::KvCacheShape& s, tinyattn_kv_dtype dtype) {
  const int32_t d = raw(dtype);
  return d == TINYATTN_KV_F32 || d == TINYATTN_KV_F16 ? s.hq * s.max_new * s.dk * kv_element_bytes(dtype) + sizeof(float)
                                                      : 0;
}

size_t kv_workspace_bytes(const detail::KvCacheShape& s, tinyattn_kv_dtype dtype) {
  const int32_t d = raw(dtype);
  if (kv_scaled(dtype)) return detail::kv_int8_workspace_bytes(s);
  const size_t forward_bytes = d == TINYATTN_KV_I8    ? kv_forward_workspace_bytes<int8_t>(s)
                               : d == TINYATTN_KV_F16 ? kv_forward_workspace_bytes<half>(s)
                                                      : kv_forward_workspace_bytes<float>(s);
  return forward_bytes + kv_keep_bytes(s);
}

// Whether init accepts the config, as a status.
tinyattn_status kv_config_status(const tinyattn_kv_cache_config* c) {
  if (!c) return TINYATTN_NULL_POINTER;
  const size_t element = kv_element_bytes(c->dtype);
  if (element == 0) return TINYATTN_UNSUPPORTED;
  const detail::KvCacheShape s = kv_shape(*c);
  const Status st = detail::kv_cache_validate(s);
  if (st != Status::kOk) return to_c(st);
  if (kv_scaled(c->dtype) && (s.dk > kMaxDkInt8 || s.capacity >= kMaxMInt8)) return TINYATTN_BAD_DIMENSION;
  return kv_storage_bytes(s, element, kv_scale_bytes(c->dtype)) != 0 ? TINYATTN_OK : TINYATTN_BAD_DIMENSION;
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte (without
// forming an address past either range).
bool overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x <= y ? y - x < a_bytes : x - y < b_bytes;
}

// A cache init set up: init writes every pointer, a {0} cache has none.
bool kv_ready(const tinyattn_kv_cache* c) { return c && c->keys_ && c->values_ && c->scratch_; }

template <class T>
bool aligned_for(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % alignof(T) == 0;
}

// The cache's RoPE as the C++ cache holds it (rope_prepare of a setting
// that set_rope validated).
detail::KvRope kv_rope(const tinyattn_kv_cache* cache) {
  detail::KvRope r;
  if (!cache->rope_on_) return r;
  Rope rope;
  rope.theta = cache->rope_.theta;
  rope.rotary_dim = cache->rope_.rotary_dim;
  rope.style = static_cast<RopeStyle>(raw(cache->rope_.style));
  r.on = detail::rope_prepare(rope, cache->config_.dk, &r.row) == Status::kOk;
  r.origin = cache->rope_origin_;
  return r;
}

// The workspace past the keep rows; what the forward or the int8 storage may use.
Workspace kv_workspace(const tinyattn_kv_cache* cache) {
  const detail::KvCacheShape s = kv_shape(cache->config_);
  const size_t keep = kv_keep_bytes(s, kv_scale_bytes(cache->config_.dtype));
  return Workspace{cache->scratch_ + keep, kv_workspace_bytes(s, cache->config_.dtype) - keep};
}

detail::KvInt8Slots kv_int8_slots(const tinyattn_kv_cache* cache) {
  return detail::KvInt8Slots{static_cast<int8_t*>(cache->keys_), static_cast<int8_t*>(cache->values_),
                             cache->key_scales_, cache->value_scales_,
                             raw(cache->config_.dtype) == TINYATTN_KV_I8_SCALED_F16};
}

// append for element type T (C pointers of type C), when the cache holds `dtype`.
template <class T, class C>
tinyattn_status kv_append(tinyattn_kv_cache* cache, tinyattn_kv_dtype dtype, const C* k, const C* v, size_t n) {
  static_assert(sizeof(T) == sizeof(C) && alignof(T) == alignof(C), "C and C++ elements differ");
  if (!kv_ready(cache)) return TINYATTN_NULL_POINTER;
  const bool scaled = kv_scaled(cache->config_.dtype) && raw(dtype) == TINYATTN_KV_F32;
  if (raw(cache->config_.dtype) != raw(dtype) && !scaled) return TINYATTN_UNSUPPORTED;
  if (!k || !v) return TINYATTN_NULL_POINTER;
  if (!aligned_for<T>(k) || !aligned_for<T>(v)) return TINYATTN_MISALIGNED;
  size_t position = cache->position_;
  Status s;
  if constexpr (std::is_same<T, float>::value) {
    if (scaled) {
      s = detail::kv_int8_append(kv_shape(cache->config_), kv_int8_slots(cache), position, k, v, n, kv_rope(cache),
                                 kv_workspace(cache));
      cache->position_ = position;
      return to_c(s);
    }
  }
  s = detail::kv_cache_append(kv_shape(cache->config_), static_cast<T*>(cache->keys_), static_cast<T*>(cache->values_),
                              position, reinterpret_cast<const T*>(k), reinterpret_cast<const T*>(v), n,
                              kv_rope(cache));
  cache->position_ = position;
  return to_c(s);
}

// attend for element type T, past the dtype and options checks.
template <class T, class... Extra>
tinyattn_status kv_attend(tinyattn_kv_cache* cache, const T* q, T* y, size_t n, const Extra&... extra) {
  const detail::KvCacheShape s = kv_shape(cache->config_);
  const detail::KvRope rope = kv_rope(cache);
  if constexpr (std::is_same<T, float>::value) {
    if (kv_scaled(cache->config_.dtype))
      return to_c(detail::kv_int8_attend(
          s, detail::KvInt8View{static_cast<const int8_t*>(cache->keys_), static_cast<const int8_t*>(cache->values_),
                                cache->key_scales_, cache->value_scales_,
                                raw(cache->config_.dtype) == TINYATTN_KV_I8_SCALED_F16},
          rope, cache->position_, kv_workspace(cache), q, y, n, extra...));
  }
  const Workspace ws = kv_workspace(cache);
  if constexpr (!std::is_same<T, int8_t>::value) {
    // RoPE: the rotated queries, after the forward's workspace (set_rope checked the room).
    if (rope.on && q != nullptr && n != 0 && n <= s.max_new && n <= cache->position_) {
      unsigned char* end = static_cast<unsigned char*>(ws.data) + ws.bytes;
      T* rotated = reinterpret_cast<T*>(end + (alignof(T) - reinterpret_cast<uintptr_t>(end) % alignof(T)) % alignof(T));
      detail::kv_cache_copy(q, rotated, s.hq * n * s.dk);
      for (size_t h = 0; h < s.hq; ++h)
        for (size_t i = 0; i < n; ++i) detail::kv_rope_key(rope, rotated + (h * n + i) * s.dk, cache->position_ - n + i);
      q = rotated;
    }
  }
  return to_c(detail::kv_cache_attend(s, static_cast<const T*>(cache->keys_), static_cast<const T*>(cache->values_),
                                      cache->position_, ws, cache->scratch_, s.window != 0 ? s.max_new : 0, q, y, n,
                                      extra...));
}

tinyattn_status kv_attend_status(const tinyattn_kv_cache* cache, tinyattn_kv_dtype dtype) {
  if (!kv_ready(cache)) return TINYATTN_NULL_POINTER;
  if (raw(dtype) == TINYATTN_KV_F32 && kv_scaled(cache->config_.dtype)) return TINYATTN_OK;
  return raw(cache->config_.dtype) == raw(dtype) ? TINYATTN_OK : TINYATTN_UNSUPPORTED;
}

// The self-tests' argument checks (a null report, a port outside the enum, an unknown format).
tinyattn_status selftest_args(const void* report, tinyattn_port port, tinyattn_selftest_format format) {
  if (!report) return TINYATTN_NULL_POINTER;
  if (!port_ok(port)) return TINYATTN_PORT_UNAVAILABLE;
  if (static_cast<unsigned>(format) > static_cast<unsigned>(TINYATTN_SELFTEST_BOTH)) return TINYATTN_UNSUPPORTED;
  return TINYATTN_OK;
}

// The C reports have int flags where the C++ ones have bool: copied field by
// field from a C++ report on the stack.
void to_c_check(const SelftestCheck& c, tinyattn_selftest_check& o) {
  o.name = c.name;
  o.property = c.property;
  o.theory = c.theory;
  o.lo = c.lo;
  o.hi = c.hi;
  o.measured = c.measured;
  o.bound = c.bound;
  o.passed = c.passed ? 1 : 0;
}
void to_c_check(const SelftestI8Check& c, tinyattn_selftest_i8_check& o) {
  o.name = c.name;
  o.property = c.property;
  o.measured = c.measured;
  o.bound = c.bound;
  o.passed = c.passed ? 1 : 0;
}
template <class Report, class CReport>
void to_c_report(const Report& r, CReport* report) {
  *report = CReport{};
  report->count = r.count;
  report->failures = r.failures;
  report->passed = r.passed() ? 1 : 0;
  constexpr size_t kMax = std::extent_v<decltype(r.checks)>;
  for (uint32_t i = 0; i < r.count && i < kMax; ++i) to_c_check(r.checks[i], report->checks[i]);
}

// The rope as C++'s, or kUnsupported for a style outside the enum.
Status rope_from_c(const tinyattn_rope* rope, Rope* out) {
  const int32_t style = raw(rope->style);
  if (style != TINYATTN_ROPE_HALF_SPLIT && style != TINYATTN_ROPE_INTERLEAVED) return Status::kUnsupported;
  out->theta = rope->theta;
  out->rotary_dim = rope->rotary_dim;
  out->style = static_cast<RopeStyle>(style);
  return Status::kOk;
}

}  // namespace
}  // namespace tinyattn

using namespace tinyattn;  // NOLINT(google-build-using-namespace): this file only wraps it

extern "C" {

const char* tinyattn_status_string(tinyattn_status s) { return to_string(static_cast<Status>(s)); }

const char* tinyattn_port_name(tinyattn_port port) {
  return port_ok(port) ? tinyattn::port_name(static_cast<Port>(port)) : "unknown_port";
}

int tinyattn_port_available(tinyattn_port port) {
  return port_ok(port) && port_compiled(static_cast<Port>(port)) ? 1 : 0;
}

tinyattn_port tinyattn_default_port(void) { return static_cast<tinyattn_port>(default_port()); }

size_t tinyattn_forward_workspace_bytes(const tinyattn_dims* dims, int with_weights, tinyattn_scratch scratch) {
  if (!dims) return 0;
  return forward_workspace_bytes(to_cxx(*dims), with_weights != 0,
                                 scratch == TINYATTN_SCRATCH_TRANSPOSED_KEYS ? Scratch::kTransposedKeys
                                                                             : Scratch::kMinimal);
}

tinyattn_status tinyattn_forward(const tinyattn_dims* dims, const tinyattn_forward_io* io, void* workspace,
                                 size_t workspace_bytes, const tinyattn_mask* mask,
                                 const tinyattn_options* options) {
  if (!dims || !io) return TINYATTN_NULL_POINTER;
  if (!mask_enums_ok(mask)) return TINYATTN_BAD_MASK;
  if (!options_ok(options)) return TINYATTN_PORT_UNAVAILABLE;
  const int32_t stage = raw(io->score_stage);
  if (stage < TINYATTN_SCORES_SCALED || stage > TINYATTN_SCORES_MASKED) return TINYATTN_UNSUPPORTED;
  ForwardIo cio{io->q, io->k, io->v, io->y, io->weights, io->lse};
  cio.scores = io->scores;
  cio.score_stage = static_cast<ScoreStage>(stage);
  return to_c(forward(to_cxx(*dims), cio, Workspace{workspace, workspace_bytes}, to_cxx(mask), to_cxx(options)));
}

size_t tinyattn_forward_f16_workspace_bytes(const tinyattn_dims* dims, int with_weights) {
  return dims ? forward_f16_workspace_bytes(to_cxx(*dims), with_weights != 0) : 0;
}

tinyattn_status tinyattn_forward_f16(const tinyattn_dims* dims, const tinyattn_forward_io_f16* io, void* workspace,
                                     size_t workspace_bytes, const tinyattn_mask* mask,
                                     const tinyattn_options_f16* options) {
  if (!dims || !io) return TINYATTN_NULL_POINTER;
  if (!mask_enums_ok(mask)) return TINYATTN_BAD_MASK;
  if (tinyattn_status s = options_f16_status(options); s != TINYATTN_OK) return s;
  const ForwardIoF16 cio{as_half(io->q), as_half(io->k), as_half(io->v),
                         as_half(io->y), as_half(io->weights), io->lse};
  return to_c(forward_f16(to_cxx(*dims), cio, Workspace{workspace, workspace_bytes}, to_cxx(mask), to_cxx(options)));
}

int tinyattn_f16_native_products_available(void) { return f16_native_products_available() ? 1 : 0; }
const char* tinyattn_f16_native_products_name(void) { return f16_native_products_name(); }
float tinyattn_half_to_float(uint16_t h) { return to_float(half::from_bits(h)); }
uint16_t tinyattn_float_to_half(float f) { return to_half(f).bits; }

tinyattn_status tinyattn_plan_int8(const tinyattn_dims* dims, const tinyattn_int8_scheme* scheme,
                                   tinyattn_int8_head_plan* plans, size_t plan_capacity) {
  if (!dims || !scheme) return TINYATTN_NULL_POINTER;
  Int8Scheme s;
  s.q = to_cxx(scheme->q);
  s.k = to_cxx(scheme->k);
  s.v = to_cxx(scheme->v);
  s.y = to_cxx(scheme->y);
  s.bias = to_cxx(scheme->bias);
  if (scheme->use_softmax_scale) s.softmax_scale = scheme->softmax_scale;
  return to_c(plan_int8(to_cxx(*dims), s, reinterpret_cast<Int8HeadPlan*>(plans), plan_capacity));
}

tinyattn_status tinyattn_make_multiplier(double real, tinyattn_fixed_multiplier* out) {
  if (!out) return TINYATTN_NULL_POINTER;
  return to_c(make_multiplier(real, reinterpret_cast<FixedMultiplier*>(out)));
}

tinyattn_status tinyattn_validate_int8_head_plan(const tinyattn_int8_head_plan* plan) {
  if (!plan) return TINYATTN_NULL_POINTER;
  return to_c(validate(*reinterpret_cast<const Int8HeadPlan*>(plan)));
}

size_t tinyattn_forward_i8_workspace_bytes(const tinyattn_dims* dims) {
  return dims ? forward_i8_workspace_bytes(to_cxx(*dims)) : 0;
}

tinyattn_status tinyattn_forward_i8(const tinyattn_dims* dims, const tinyattn_forward_io_i8* io,
                                    const tinyattn_int8_head_plan* plans, size_t plan_count, void* workspace,
                                    size_t workspace_bytes, const tinyattn_mask* mask,
                                    const tinyattn_options* options) {
  if (!dims || !io) return TINYATTN_NULL_POINTER;
  if (!mask_enums_ok(mask)) return TINYATTN_BAD_MASK;
  if (!options_ok(options)) return TINYATTN_PORT_UNAVAILABLE;
  ForwardIoI8 cio;
  cio.q = io->q;
  cio.k = io->k;
  cio.v = io->v;
  cio.y = io->y;
  cio.weights = io->weights;
  cio.bias = io->bias;
  const Int8Plan plan{reinterpret_cast<const Int8HeadPlan*>(plans), plan_count};
  return to_c(forward_i8(to_cxx(*dims), cio, plan, Workspace{workspace, workspace_bytes}, to_cxx(mask),
                         to_cxx(options)));
}

size_t tinyattn_backward_workspace_bytes(const tinyattn_dims* dims, tinyattn_backward_mode mode) {
  if (!dims) return 0;
  return backward_workspace_bytes(to_cxx(*dims), mode == TINYATTN_BACKWARD_RECOMPUTE ? BackwardMode::kRecompute
                                                                                     : BackwardMode::kSavedWeights);
}

tinyattn_status tinyattn_backward(const tinyattn_dims* dims, tinyattn_backward_mode mode,
                                  const tinyattn_backward_io* io, void* workspace, size_t workspace_bytes,
                                  const tinyattn_mask* mask, const tinyattn_options* options) {
  if (!dims || !io) return TINYATTN_NULL_POINTER;
  if (mode != TINYATTN_BACKWARD_SAVED_WEIGHTS && mode != TINYATTN_BACKWARD_RECOMPUTE) return TINYATTN_UNSUPPORTED;
  if (!mask_enums_ok(mask)) return TINYATTN_BAD_MASK;
  if (!options_ok(options)) return TINYATTN_PORT_UNAVAILABLE;
  BackwardIo cio;
  cio.q = io->q;
  cio.k = io->k;
  cio.v = io->v;
  cio.dy = io->dy;
  cio.weights = io->weights;
  cio.lse = io->lse;
  cio.y = io->y;
  cio.dq = io->dq;
  cio.dk = io->dk;
  cio.dv = io->dv;
  cio.ds = io->ds;
  return to_c(backward(to_cxx(*dims), static_cast<BackwardMode>(mode), cio, Workspace{workspace, workspace_bytes},
                       to_cxx(mask), to_cxx(options)));
}

size_t tinyattn_kv_cache_storage_bytes(const tinyattn_kv_cache_config* config) {
  if (kv_config_status(config) != TINYATTN_OK) return 0;
  return kv_storage_bytes(kv_shape(*config), kv_element_bytes(config->dtype), kv_scale_bytes(config->dtype));
}

size_t tinyattn_kv_cache_workspace_bytes(const tinyattn_kv_cache_config* config) {
  if (kv_config_status(config) != TINYATTN_OK) return 0;
  return kv_workspace_bytes(kv_shape(*config), config->dtype);
}

tinyattn_status tinyattn_kv_cache_init(tinyattn_kv_cache* cache, const tinyattn_kv_cache_config* config,
                                       void* storage, size_t storage_bytes, void* workspace, size_t workspace_bytes) {
  if (!cache || !config || !storage || !workspace) return TINYATTN_NULL_POINTER;
  if (tinyattn_status s = kv_config_status(config); s != TINYATTN_OK) return s;
  const detail::KvCacheShape s = kv_shape(*config);
  const size_t element = kv_element_bytes(config->dtype), scale = kv_scale_bytes(config->dtype);
  if (storage_bytes < kv_storage_bytes(s, element, scale) || workspace_bytes < kv_workspace_bytes(s, config->dtype))
    return TINYATTN_WORKSPACE_TOO_SMALL;
  if (overlap(storage, storage_bytes, workspace, workspace_bytes)) return TINYATTN_ALIASING;
  const auto misalignment = reinterpret_cast<uintptr_t>(storage) % kWorkspaceAlign;
  unsigned char* base = static_cast<unsigned char*>(storage) + (misalignment ? kWorkspaceAlign - misalignment : 0);
  tinyattn_kv_cache c{};
  c.config_ = *config;
  c.config_.max_new = s.max_new;
  // The scales first (aligned for their type), then the int8 or float rows.
  c.key_scales_ = scale ? base : nullptr;
  c.value_scales_ = scale ? base + s.hkv * s.capacity * scale : nullptr;
  unsigned char* keys = base + 2 * s.hkv * s.capacity * scale;
  c.keys_ = keys;
  c.values_ = keys + s.hkv * s.capacity * s.dk * element;
  c.scratch_ = static_cast<uint8_t*>(workspace);
  c.scratch_bytes_ = workspace_bytes;
  c.position_ = 0;
  *cache = c;
  return TINYATTN_OK;
}

tinyattn_status tinyattn_kv_cache_append(tinyattn_kv_cache* cache, const float* k, const float* v, size_t n) {
  return kv_append<float>(cache, TINYATTN_KV_F32, k, v, n);
}

tinyattn_status tinyattn_kv_cache_append_f16(tinyattn_kv_cache* cache, const uint16_t* k, const uint16_t* v,
                                             size_t n) {
  return kv_append<half>(cache, TINYATTN_KV_F16, k, v, n);
}

tinyattn_status tinyattn_kv_cache_append_i8(tinyattn_kv_cache* cache, const int8_t* k, const int8_t* v, size_t n) {
  return kv_append<int8_t>(cache, TINYATTN_KV_I8, k, v, n);
}

tinyattn_status tinyattn_kv_cache_attend(tinyattn_kv_cache* cache, const float* q, float* y, size_t n,
                                         const tinyattn_options* options) {
  if (tinyattn_status s = kv_attend_status(cache, TINYATTN_KV_F32); s != TINYATTN_OK) return s;
  if (!options_ok(options)) return TINYATTN_PORT_UNAVAILABLE;
  return kv_attend(cache, q, y, n, to_cxx(options));
}

tinyattn_status tinyattn_kv_cache_attend_f16(tinyattn_kv_cache* cache, const uint16_t* q, uint16_t* y, size_t n,
                                             const tinyattn_options_f16* options) {
  if (tinyattn_status s = kv_attend_status(cache, TINYATTN_KV_F16); s != TINYATTN_OK) return s;
  if (tinyattn_status s = options_f16_status(options); s != TINYATTN_OK) return s;
  return kv_attend(cache, as_half(q), as_half(y), n, to_cxx(options));
}

tinyattn_status tinyattn_kv_cache_attend_i8(tinyattn_kv_cache* cache, const int8_t* q, int8_t* y, size_t n,
                                            const tinyattn_int8_head_plan* plans, size_t plan_count,
                                            const tinyattn_options* options) {
  if (tinyattn_status s = kv_attend_status(cache, TINYATTN_KV_I8); s != TINYATTN_OK) return s;
  if (!options_ok(options)) return TINYATTN_PORT_UNAVAILABLE;
  const Int8Plan plan{reinterpret_cast<const Int8HeadPlan*>(plans), plan_count};
  return kv_attend(cache, q, y, n, plan, to_cxx(options));
}

tinyattn_status tinyattn_kv_cache_set_rope(tinyattn_kv_cache* cache, const tinyattn_rope* rope,
                                           size_t first_position) {
  if (!kv_ready(cache) || !rope) return TINYATTN_NULL_POINTER;
  if (cache->position_ != 0 || raw(cache->config_.dtype) == TINYATTN_KV_I8) return TINYATTN_UNSUPPORTED;
  const detail::KvCacheShape s = kv_shape(cache->config_);
  if (cache->scratch_bytes_ - kv_workspace_bytes(s, cache->config_.dtype) < kv_rope_bytes(s, cache->config_.dtype))
    return TINYATTN_WORKSPACE_TOO_SMALL;
  const int32_t style = raw(rope->style);
  if (style != TINYATTN_ROPE_HALF_SPLIT && style != TINYATTN_ROPE_INTERLEAVED) return TINYATTN_UNSUPPORTED;
  Rope r;
  r.theta = rope->theta;
  r.rotary_dim = rope->rotary_dim;
  r.style = static_cast<RopeStyle>(style);
  if (Status st = validate(r, s.dk); st != Status::kOk) return to_c(st);
  cache->rope_ = *rope;
  cache->rope_origin_ = first_position;
  cache->rope_on_ = 1;
  return TINYATTN_OK;
}

tinyattn_status tinyattn_kv_cache_reset(tinyattn_kv_cache* cache) {
  if (!kv_ready(cache)) return TINYATTN_NULL_POINTER;
  cache->position_ = 0;
  return TINYATTN_OK;
}

size_t tinyattn_kv_cache_length(const tinyattn_kv_cache* cache) {
  return kv_ready(cache) ? detail::kv_cache_size(kv_shape(cache->config_), cache->position_) : 0;
}

size_t tinyattn_kv_cache_position(const tinyattn_kv_cache* cache) { return kv_ready(cache) ? cache->position_ : 0; }

const void* tinyattn_kv_cache_keys(const tinyattn_kv_cache* cache) { return kv_ready(cache) ? cache->keys_ : nullptr; }

const void* tinyattn_kv_cache_values(const tinyattn_kv_cache* cache) {
  return kv_ready(cache) ? cache->values_ : nullptr;
}

tinyattn_status tinyattn_apply_rope(const tinyattn_rope* rope, float* x, size_t heads, size_t n, size_t dim,
                                    size_t first_position) {
  if (!rope) return TINYATTN_NULL_POINTER;
  Rope r;
  if (Status s = rope_from_c(rope, &r); s != Status::kOk) return to_c(s);
  return to_c(apply_rope(r, x, heads, n, dim, first_position));
}

tinyattn_status tinyattn_apply_rope_f16(const tinyattn_rope* rope, uint16_t* x, size_t heads, size_t n, size_t dim,
                                        size_t first_position) {
  if (!rope) return TINYATTN_NULL_POINTER;
  Rope r;
  if (Status s = rope_from_c(rope, &r); s != Status::kOk) return to_c(s);
  return to_c(apply_rope(r, reinterpret_cast<half*>(x), heads, n, dim, first_position));
}

// An out-of-range port value is rejected here: Port is 8 bits, so a cast
// alone could wrap it onto a real port.
tinyattn_status tinyattn_softmax_rows(const float* x, float* p, size_t rows, size_t n, size_t ld_x, size_t ld_p,
                                      tinyattn_port port) {
  if (!port_ok(port)) return TINYATTN_PORT_UNAVAILABLE;
  return to_c(softmax_rows(x, p, rows, n, ld_x, ld_p, static_cast<Port>(port)));
}

tinyattn_status tinyattn_softmax_vjp_rows(const float* p, const float* dp, float* dx, size_t rows, size_t n,
                                          size_t ld_p, size_t ld_dp, size_t ld_dx, tinyattn_port port) {
  if (!port_ok(port)) return TINYATTN_PORT_UNAVAILABLE;
  return to_c(softmax_vjp_rows(p, dp, dx, rows, n, ld_p, ld_dp, ld_dx, static_cast<Port>(port)));
}

tinyattn_status tinyattn_selftest(tinyattn_selftest_report* report, tinyattn_port port, tinyattn_write_fn write,
                                  tinyattn_selftest_format format) {
  if (tinyattn_status s = selftest_args(report, port, format); s != TINYATTN_OK) return s;
  SelftestReport r;
  const Status s = selftest(&r, static_cast<Port>(port), write, static_cast<SelftestFormat>(format));
  if (s != Status::kOk) return to_c(s);
  to_c_report(r, report);
  return TINYATTN_OK;
}

tinyattn_status tinyattn_selftest_int8(tinyattn_selftest_i8_report* report, tinyattn_port port,
                                       tinyattn_write_fn write, tinyattn_selftest_format format) {
  if (tinyattn_status s = selftest_args(report, port, format); s != TINYATTN_OK) return s;
  SelftestI8Report r;
  const Status s = selftest_int8(&r, static_cast<Port>(port), write, static_cast<SelftestFormat>(format));
  if (s != Status::kOk) return to_c(s);
  to_c_report(r, report);
  return TINYATTN_OK;
}

}  // extern "C"
