// The C API (tinyattn/tinyattn_c.h): thin wrappers that convert the C structs
// to the C++ ones and call the C++ entry points. Boards link with
// --gc-sections, so an image keeps only the wrappers it calls (and what they
// reach): an int8-only image pulls no fp32 path through this file.
#include "tinyattn/tinyattn_c.h"

#include "c_api_common.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tinyattn/attention.h"
#include "tinyattn/backward.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"
#include "tinyattn/port.h"
#include "tinyattn/quant.h"
#include "tinyattn/quant_i16.h"
#include "tinyattn/selftest.h"
#include "tinyattn/softmax.h"

namespace tinyattn {
namespace {

using c_api::as_half;
using c_api::options_f16_status;
using c_api::options_ok;
using c_api::port_ok;
using c_api::raw;
using c_api::to_c;
using c_api::to_cxx;

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
TINYATTN_SAME_VALUE(TINYATTN_INT8_MODE_NATIVE, Int8Mode::kNative);
TINYATTN_SAME_VALUE(TINYATTN_INT8_MODE_TFLITE, Int8Mode::kTflite);
TINYATTN_SAME_VALUE(TINYATTN_INT16_MODE_NATIVE, Int16Mode::kNative);
TINYATTN_SAME_VALUE(TINYATTN_INT16_MODE_TFLITE, Int16Mode::kTflite);
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
                            tinyattn_selftest_format, tinyattn_kv_dtype, tinyattn_rope_style, tinyattn_int8_mode,
                            tinyattn_int16_mode>(),
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
static_assert(TINYATTN_SELFTEST_I16_MAX_CHECKS == kSelftestI16MaxChecks, "kSelftestI16MaxChecks");
static_assert(TINYATTN_MAX_DK_INT16 == kMaxDkInt16 && TINYATTN_MAX_M_INT16 == kMaxMInt16, "int16 limits");
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
static_assert(TINYATTN_FORWARD_I16_WORKSPACE_BYTES(5, 300, 40, 24) == forward_i16_workspace_bytes(Dims{5, 300, 40, 24}),
              "int16 workspace macro");
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
TINYATTN_SAME_OFFSET(mode);
TINYATTN_SAME_OFFSET(tflite);
#undef TINYATTN_SAME_OFFSET
// The scheme is converted field by field, not passed through; mode and scores
// stay after bias so positional initialisers of the older fields still fill them.
static_assert(offsetof(tinyattn_int8_scheme, bias) < offsetof(tinyattn_int8_scheme, mode) &&
                  offsetof(tinyattn_int8_scheme, mode) < offsetof(tinyattn_int8_scheme, scores) &&
                  sizeof(tinyattn_int8_scheme) ==
                      offsetof(tinyattn_int8_scheme, scores) + sizeof(tinyattn_quant_params),
              "tinyattn_int8_scheme: fields are appended");
// The int16 plan is passed through the same way.
static_assert(std::is_standard_layout_v<Int16HeadPlan> && std::is_trivially_copyable_v<Int16HeadPlan>,
              "Int16HeadPlan is passed through");
static_assert(sizeof(tinyattn_int16_head_plan) == sizeof(Int16HeadPlan), "Int16HeadPlan layout");
static_assert(alignof(tinyattn_int16_head_plan) == alignof(Int16HeadPlan), "Int16HeadPlan layout");
#define TINYATTN_SAME_OFFSET(field)                                                                    \
  static_assert(offsetof(tinyattn_int16_head_plan, field) == offsetof(Int16HeadPlan, field), #field); \
  static_assert(sizeof(tinyattn_int16_head_plan::field) == sizeof(Int16HeadPlan::field), #field)
TINYATTN_SAME_OFFSET(logit);
TINYATTN_SAME_OFFSET(output);
TINYATTN_SAME_OFFSET(mode);
TINYATTN_SAME_OFFSET(tflite);
#undef TINYATTN_SAME_OFFSET
#define TINYATTN_SAME_OFFSET(field)                                                                        \
  static_assert(offsetof(tinyattn_tflite_params_i16, field) == offsetof(TfliteParamsI16, field), #field); \
  static_assert(sizeof(tinyattn_tflite_params_i16::field) == sizeof(TfliteParamsI16::field), #field)
TINYATTN_SAME_OFFSET(scores);
TINYATTN_SAME_OFFSET(beta);
TINYATTN_SAME_OFFSET(output);
#undef TINYATTN_SAME_OFFSET
static_assert(sizeof(tinyattn_tflite_params_i16) == sizeof(TfliteParamsI16), "TfliteParamsI16 layout");
// As int8's: mode and scores stay after the softmax scale.
static_assert(offsetof(tinyattn_int16_scheme, softmax_scale) < offsetof(tinyattn_int16_scheme, mode) &&
                  offsetof(tinyattn_int16_scheme, mode) < offsetof(tinyattn_int16_scheme, scores) &&
                  sizeof(tinyattn_int16_scheme) ==
                      offsetof(tinyattn_int16_scheme, scores) + sizeof(tinyattn_quant_params),
              "tinyattn_int16_scheme: fields are appended");
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

bool mask_enums_ok(const tinyattn_mask* c) {
  if (!c) return true;
  const int32_t causal = raw(c->causal), align = raw(c->window_align);
  return causal >= TINYATTN_CAUSAL_NONE && causal <= TINYATTN_CAUSAL_OFFSET && align >= TINYATTN_ALIGN_TOP_LEFT &&
         align <= TINYATTN_ALIGN_OFFSET;
}

QuantParams to_cxx(const tinyattn_quant_params& c) {
  QuantParams p;
  p.scale = c.scale;
  p.zero_point = c.zero_point;
  p.count = c.count == 0 ? 1 : c.count;
  return p;
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
  // Read as an integer: a value outside the enum is refused before it becomes an Int8Mode.
  const int32_t mode = raw(scheme->mode);
  if (mode != TINYATTN_INT8_MODE_NATIVE && mode != TINYATTN_INT8_MODE_TFLITE) return TINYATTN_UNSUPPORTED;
  s.mode = static_cast<Int8Mode>(mode);
  s.scores = to_cxx(scheme->scores);
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

size_t tinyattn_forward_i8_tflite_workspace_bytes(const tinyattn_dims* dims) {
  return dims ? forward_i8_tflite_workspace_bytes(to_cxx(*dims)) : 0;
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

tinyattn_status tinyattn_plan_int16(const tinyattn_dims* dims, const tinyattn_int16_scheme* scheme,
                                    tinyattn_int16_head_plan* plans, size_t plan_capacity) {
  if (!dims || !scheme) return TINYATTN_NULL_POINTER;
  Int16Scheme s;
  s.q = to_cxx(scheme->q);
  s.k = to_cxx(scheme->k);
  s.v = to_cxx(scheme->v);
  s.y = to_cxx(scheme->y);
  if (scheme->use_softmax_scale) s.softmax_scale = scheme->softmax_scale;
  // As int8: a value outside the enum is refused here, not passed on as a mode.
  const int32_t mode = raw(scheme->mode);
  if (mode != TINYATTN_INT16_MODE_NATIVE && mode != TINYATTN_INT16_MODE_TFLITE) return TINYATTN_UNSUPPORTED;
  s.mode = static_cast<Int16Mode>(mode);
  s.scores = to_cxx(scheme->scores);
  return to_c(plan_int16(to_cxx(*dims), s, reinterpret_cast<Int16HeadPlan*>(plans), plan_capacity));
}

tinyattn_status tinyattn_validate_int16_head_plan(const tinyattn_int16_head_plan* plan) {
  if (!plan) return TINYATTN_NULL_POINTER;
  return to_c(validate(*reinterpret_cast<const Int16HeadPlan*>(plan)));
}

size_t tinyattn_forward_i16_workspace_bytes(const tinyattn_dims* dims) {
  return dims ? forward_i16_workspace_bytes(to_cxx(*dims)) : 0;
}

tinyattn_status tinyattn_forward_i16(const tinyattn_dims* dims, const tinyattn_forward_io_i16* io,
                                     const tinyattn_int16_head_plan* plans, size_t plan_count, void* workspace,
                                     size_t workspace_bytes, const tinyattn_mask* mask,
                                     const tinyattn_options* options) {
  if (!dims || !io) return TINYATTN_NULL_POINTER;
  if (!mask_enums_ok(mask)) return TINYATTN_BAD_MASK;
  if (!options_ok(options)) return TINYATTN_PORT_UNAVAILABLE;
  ForwardIoI16 cio;
  cio.q = io->q;
  cio.k = io->k;
  cio.v = io->v;
  cio.y = io->y;
  cio.weights = io->weights;
  const Int16Plan plan{reinterpret_cast<const Int16HeadPlan*>(plans), plan_count};
  return to_c(forward_i16(to_cxx(*dims), cio, plan, Workspace{workspace, workspace_bytes}, to_cxx(mask),
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

tinyattn_status tinyattn_selftest_int16(tinyattn_selftest_i16_report* report, tinyattn_port port,
                                        tinyattn_write_fn write, tinyattn_selftest_format format) {
  if (tinyattn_status s = selftest_args(report, port, format); s != TINYATTN_OK) return s;
  SelftestI16Report r;
  const Status s = selftest_int16(&r, static_cast<Port>(port), write, static_cast<SelftestFormat>(format));
  if (s != Status::kOk) return to_c(s);
  to_c_report(r, report);
  return TINYATTN_OK;
}

}  // extern "C"
