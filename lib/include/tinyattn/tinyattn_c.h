/* tinyattn C API: scaled dot-product attention from C99 (and C++).
 *
 * The same library as the C++ API (tinyattn.h), behind plain functions and
 * structs: fp32, fp16, int8 and int16 forward, a KV cache for decoding, the fp32
 * backward pass, the power-on self-test, status names and workspace sizes.
 * Nothing allocates; every function that computes returns a tinyattn_status
 * and writes nothing on error. Semantics, layouts and error cases are those
 * of the C++ functions of the same name (docs/c_api.md maps one to the
 * other).
 *
 * Zero-initialised structs mean defaults: a mask of {0} masks nothing,
 * options of {0} use 1/sqrt(Dk) and the default port; a null mask or options
 * pointer means the same. Dims have no such default for the heads: use
 * TINYATTN_DIMS(n, m, dk, dv) (one head) or set hq and hkv.
 *
 * Workspace sizes exist twice: as functions and as macros that are integer
 * constant expressions, so firmware can declare static buffers:
 *   static unsigned char ws[TINYATTN_FORWARD_WORKSPACE_BYTES(16, 16, 32, 32, 1)];
 * Macro arguments are evaluated more than once. */
#ifndef TINYATTN_TINYATTN_C_H
#define TINYATTN_TINYATTN_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status ------------------------------------------------------------ */

/* Each enum ends in a *_MIN_ = INT32_MIN and a *_MAX_ = 0x7FFFFFFF that are
 * not values: they make the enum a signed 32 bits whatever -fshort-enums
 * says, so the C and C++ sides agree on struct layouts, and any int a C
 * caller stores or passes is a value of the type on the C++ side too (the
 * library rejects out-of-range ones with a status). */

typedef enum tinyattn_status {
  TINYATTN_OK = 0,
  TINYATTN_NULL_POINTER,         /* a required pointer is null */
  TINYATTN_BAD_DIMENSION,        /* a dimension is zero or larger than TINYATTN_MAX_DIM */
  TINYATTN_BAD_HEADS,            /* hq or hkv is zero, or hq % hkv != 0 */
  TINYATTN_BAD_SCALE,            /* the softmax scale is NaN or infinite */
  TINYATTN_BAD_MASK,             /* kv_len > M, an empty window, both keep forms set */
  TINYATTN_WORKSPACE_TOO_SMALL,  /* fewer bytes than the *_workspace_bytes function returns */
  TINYATTN_MISALIGNED,           /* a tensor pointer is not aligned to its element type */
  TINYATTN_ALIASING,             /* an output overlaps an input or another output */
  TINYATTN_PORT_UNAVAILABLE,     /* the requested port is not compiled into this build */
  TINYATTN_BAD_QUANTIZATION,     /* int8/int16 scales, zero points or plan out of range */
  TINYATTN_UNSUPPORTED,          /* a valid request this build cannot serve */
  TINYATTN_CACHE_FULL,           /* a KV cache (C++ KvCache) append past its capacity */
  TINYATTN_STATUS_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_STATUS_MAX_ = 0x7FFFFFFF
} tinyattn_status;

#define TINYATTN_STATUS_COUNT 13

/* "ok", "null_pointer", ... (never null). */
const char* tinyattn_status_string(tinyattn_status s);

/* ---- Ports ------------------------------------------------------------- */

typedef enum tinyattn_port {
  TINYATTN_PORT_DEFAULT = 0, /* the build's default port */
  TINYATTN_PORT_SCALAR,
  TINYATTN_PORT_HIGHWAY,
  TINYATTN_PORT_XSIMD,
  TINYATTN_PORT_MVE,      /* Arm Helium (Cortex-M55) */
  TINYATTN_PORT_TEMPLATE, /* the example port of docs/ports.md */
  TINYATTN_PORT_DSP,      /* Armv7E-M DSP extension (Cortex-M4, M7, M33) */
  TINYATTN_PORT_RVV,      /* RISC-V Vector extension (RVV 1.0, Zve32f) */
  /* further ports go above this line */
  TINYATTN_PORT_END_, /* not a value: one past the last port (= TINYATTN_PORT_COUNT) */
  TINYATTN_PORT_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_PORT_MAX_ = 0x7FFFFFFF
} tinyattn_port;

/* The ports of tinyattn/port_list.h in its order (lib/src/c_api.cc does not
 * compile until the two lists and this count agree). */
#define TINYATTN_PORT_COUNT 8

/* "scalar", "highway", ... ("default" for TINYATTN_PORT_DEFAULT); never null. */
const char* tinyattn_port_name(tinyattn_port port);
/* Nonzero when the port's fp32 kernels are compiled into this build. */
int tinyattn_port_available(tinyattn_port port);
/* The port TINYATTN_PORT_DEFAULT resolves to. */
tinyattn_port tinyattn_default_port(void);

/* ---- Dimensions, mask, options ----------------------------------------- */

#define TINYATTN_MAX_DIM 65536u

/* Layouts are dense, row-major, heads outermost:
 *   Q[hq][n][dk]  K[hkv][m][dk]  V[hkv][m][dv]  Y[hq][n][dv]
 *   weights A[hq][n][m]          log-sum-exp L[hq][n]
 * Query head h reads KV head h / (hq / hkv). */
typedef struct tinyattn_dims {
  size_t n;   /* query rows */
  size_t m;   /* key/value rows */
  size_t dk;  /* query/key width */
  size_t dv;  /* value/output width */
  size_t hq;  /* query heads (>= 1) */
  size_t hkv; /* key/value heads (>= 1, divides hq) */
} tinyattn_dims;

/* Initializers: one head, or explicit heads. */
#define TINYATTN_DIMS(n, m, dk, dv) {(n), (m), (dk), (dv), 1, 1}
#define TINYATTN_DIMS_HEADS(n, m, dk, dv, hq, hkv) {(n), (m), (dk), (dv), (hq), (hkv)}

/* Where the diagonal of a causal or windowed mask sits when N != M. */
typedef enum tinyattn_align {
  TINYATTN_ALIGN_TOP_LEFT = 0,  /* query i at key i (PyTorch is_causal) */
  TINYATTN_ALIGN_BOTTOM_RIGHT, /* query i at key i + M - N (KV-cache decode) */
  TINYATTN_ALIGN_OFFSET,       /* query i at key i + mask.offset */
  TINYATTN_ALIGN_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_ALIGN_MAX_ = 0x7FFFFFFF
} tinyattn_align;

typedef enum tinyattn_causal {
  TINYATTN_CAUSAL_NONE = 0,
  TINYATTN_CAUSAL_TOP_LEFT,
  TINYATTN_CAUSAL_BOTTOM_RIGHT,
  TINYATTN_CAUSAL_OFFSET, /* query i sees keys j <= i + mask.offset */
  TINYATTN_CAUSAL_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_CAUSAL_MAX_ = 0x7FFFFFFF
} tinyattn_causal;

/* A window side without limit. */
#define TINYATTN_UNBOUNDED INT32_MAX

/* Bytes per row of a keep_bits mask of M keys. */
#define TINYATTN_KEEP_BITS_ROW_BYTES(m) (((size_t)(m) + 7u) / 8u)

/* Every mask that is set applies; masked keys get weight exactly 0, a row
 * with no visible key gives zero output, zero weights and lse -inf. */
typedef struct tinyattn_mask {
  tinyattn_causal causal;
  /* Sliding window, when use_window is nonzero: query i at diagonal
   * position p(i) (see window_align) sees keys p(i) - window_left <= j <=
   * p(i) + window_right; TINYATTN_UNBOUNDED leaves a side open. */
  int use_window;
  int32_t window_left;
  int32_t window_right;
  tinyattn_align window_align;
  /* Key padding, when use_kv_len is nonzero: only keys j < kv_len are valid
   * (kv_len = 0 masks every key; kv_len > M, UINT32_MAX included, is
   * TINYATTN_BAD_MASK). */
  int use_kv_len;
  uint32_t kv_len;
  /* Element masks, each optional: keep bytes [N][M] (nonzero = attend),
   * keep bits [N][TINYATTN_KEEP_BITS_ROW_BYTES(M)] (LSB first; at most one
   * of the two), an additive fp32 bias [N][M] (-inf masks). head_stride:
   * elements between consecutive query heads' masks, 0 = the same for all. */
  const uint8_t* keep;
  const uint8_t* keep_bits;
  const float* bias;
  size_t head_stride;
  /* The diagonal of TINYATTN_CAUSAL_OFFSET and TINYATTN_ALIGN_OFFSET (may be
   * negative); 0 unless one of them is used. ONNX Attention's causal mask
   * over a cache of past_len keys holding N new ones: offset = past_len,
   * kv_len = past_len + N. */
  int32_t offset;
} tinyattn_mask;

typedef struct tinyattn_options {
  int use_scale;       /* nonzero: scale below; zero: 1/sqrt(Dk) */
  float scale;         /* the softmax scale, finite */
  tinyattn_port port;  /* which compiled-in port runs the kernels */
  /* Logit soft-capping when use_softcap is nonzero: s -> softcap tanh(s /
   * softcap) before the masks (Gemma 2, ONNX Attention); softcap > 0 and
   * finite. fp32 and fp16 only (int8, int16: TINYATTN_UNSUPPORTED). */
  int use_softcap;
  float softcap;
} tinyattn_options;

/* ---- fp32 forward ------------------------------------------------------ */

#define TINYATTN_WORKSPACE_ALIGN 64u
#define TINYATTN_KEY_TILE 256u
#define TINYATTN_BLOCK_ROWS 4u
#define TINYATTN_TRANSPOSED_KEYS_MIN_ROWS 32u

/* What a forward workspace holds beyond the minimum (attention.h, Scratch).
 * DEFAULT is the fast one, as in C++ (kDefaultScratch): the transposed keys
 * where they apply, nothing more on M-profile cores; MINIMAL is the least RAM. */
typedef enum tinyattn_scratch {
  TINYATTN_SCRATCH_MINIMAL = 0,
  TINYATTN_SCRATCH_TRANSPOSED_KEYS,
  TINYATTN_SCRATCH_DEFAULT = TINYATTN_SCRATCH_TRANSPOSED_KEYS,
  TINYATTN_SCRATCH_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_SCRATCH_MAX_ = 0x7FFFFFFF
} tinyattn_scratch;

/* Which logits tinyattn_forward_io.scores receives (ONNX Attention's
 * qk_matmul_output_mode 0-2). */
typedef enum tinyattn_score_stage {
  TINYATTN_SCORES_SCALED = 0, /* scale * Q K^T, every key (masked ones too) */
  TINYATTN_SCORES_SOFTCAPPED, /* after the softcap (SCALED when none is set) */
  TINYATTN_SCORES_MASKED,     /* after the mask: + bias, -inf where it drops a key */
  TINYATTN_SCORES_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_SCORES_MAX_ = 0x7FFFFFFF
} tinyattn_score_stage;

typedef struct tinyattn_forward_io {
  const float* q;  /* [hq][n][dk] */
  const float* k;  /* [hkv][m][dk] */
  const float* v;  /* [hkv][m][dv] */
  float* y;        /* [hq][n][dv], required */
  float* weights;  /* [hq][n][m], optional */
  float* lse;      /* [hq][n], optional (natural log; -inf for a fully masked row) */
  float* scores;   /* [hq][n][m], optional: the logits at score_stage (a pass of its own) */
  tinyattn_score_stage score_stage;
} tinyattn_forward_io;

/* Every field, for C99 initializers under -Wextra: the tensors and no scores. */
#define TINYATTN_FORWARD_IO(q, k, v, y, weights, lse) \
  {(q), (k), (v), (y), (weights), (lse), NULL, TINYATTN_SCORES_SCALED}

/* Scratch bytes for tinyattn_forward (any alignment; the slack is included).
 * with_weights nonzero is always enough; zero suits callers that never ask
 * for the weights (then the scratch does not grow with M). */
size_t tinyattn_forward_workspace_bytes(const tinyattn_dims* dims, int with_weights, tinyattn_scratch scratch);

/* mask and options may be null (defaults). */
tinyattn_status tinyattn_forward(const tinyattn_dims* dims, const tinyattn_forward_io* io, void* workspace,
                                 size_t workspace_bytes, const tinyattn_mask* mask,
                                 const tinyattn_options* options);

/* ---- fp16 forward ------------------------------------------------------ */

/* fp16 tensors are IEEE binary16 bit patterns in uint16_t. */
typedef enum tinyattn_f16_compute {
  TINYATTN_F16_WIDEN_TO_F32 = 0,     /* fp32 products and sums (every build) */
  TINYATTN_F16_NATIVE_F16_PRODUCTS, /* fp16 products where the CPU has them, else UNSUPPORTED */
  TINYATTN_F16_COMPUTE_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_F16_COMPUTE_MAX_ = 0x7FFFFFFF
} tinyattn_f16_compute;

typedef struct tinyattn_options_f16 {
  tinyattn_options options;
  tinyattn_f16_compute compute;
} tinyattn_options_f16;

typedef struct tinyattn_forward_io_f16 {
  const uint16_t* q;  /* [hq][n][dk] */
  const uint16_t* k;  /* [hkv][m][dk] */
  const uint16_t* v;  /* [hkv][m][dv] */
  uint16_t* y;        /* [hq][n][dv], required */
  uint16_t* weights;  /* [hq][n][m], optional */
  float* lse;         /* [hq][n], optional, fp32 */
} tinyattn_forward_io_f16;

#define TINYATTN_F16_KEY_TILE 8u

size_t tinyattn_forward_f16_workspace_bytes(const tinyattn_dims* dims, int with_weights);
tinyattn_status tinyattn_forward_f16(const tinyattn_dims* dims, const tinyattn_forward_io_f16* io, void* workspace,
                                     size_t workspace_bytes, const tinyattn_mask* mask,
                                     const tinyattn_options_f16* options);
/* Whether TINYATTN_F16_NATIVE_F16_PRODUCTS runs here, and which kernels. */
int tinyattn_f16_native_products_available(void);
const char* tinyattn_f16_native_products_name(void);
/* Conversions (round to nearest even; exact widening). */
float tinyattn_half_to_float(uint16_t h);
uint16_t tinyattn_float_to_half(float f);

/* ---- int8 forward (docs/quant.md) -------------------------------------- */

#define TINYATTN_PROB_ONE 32768u

/* real = scale * (q - zero_point). count: 1 (per tensor) or one per head of
 * that tensor; 0 means 1. zero_point null means 0. */
typedef struct tinyattn_quant_params {
  const float* scale;
  const int32_t* zero_point;
  size_t count;
} tinyattn_quant_params;

/* What tinyattn_forward_i8 computes for a head (tinyattn::Int8Mode,
 * docs/quant.md). */
typedef enum tinyattn_int8_mode {
  TINYATTN_INT8_MODE_NATIVE = 0, /* tinyattn's integer softmax, Q0.15 weights */
  TINYATTN_INT8_MODE_TFLITE,     /* TFLite's int8 BatchMatMul, Softmax, BatchMatMul, bit for bit */
  TINYATTN_INT8_MODE_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_INT8_MODE_MAX_ = 0x7FFFFFFF
} tinyattn_int8_mode;

/* Zero-initialised: the native mode without a bias. New fields go at the
 * end, so positional initialisers of the first ones keep their meaning. */
typedef struct tinyattn_int8_scheme {
  tinyattn_quant_params q, k, v, y;
  int use_softmax_scale;  /* nonzero: softmax_scale; zero: 1/sqrt(Dk) (TFLite: the softmax's beta) */
  float softmax_scale;
  tinyattn_quant_params bias;  /* bias.scale null: no bias (native mode only) */
  tinyattn_int8_mode mode;     /* a value outside the enum: TINYATTN_UNSUPPORTED */
  /* TFLITE only (required there, ignored in NATIVE): the int8 score tensor
   * Q.K^T is requantized into (the model's BatchMatMul output); count 1 or hq. */
  tinyattn_quant_params scores;
} tinyattn_int8_scheme;

/* real ~= multiplier * 2^-shift. Same layout as tinyattn::FixedMultiplier. */
typedef struct tinyattn_fixed_multiplier {
  int32_t multiplier;
  int32_t shift;
} tinyattn_fixed_multiplier;

/* TFLite's multiplier form (tflite::QuantizeMultiplier): real ~=
 * multiplier * 2^(shift - 31). Same layout as tinyattn::TfliteMultiplier. */
typedef struct tinyattn_tflite_multiplier {
  int32_t multiplier;
  int32_t shift;
} tinyattn_tflite_multiplier;

/* The integers TFLite's Prepare() computes for one head of
 * TINYATTN_INT8_MODE_TFLITE (docs/quant.md). Same layout as tinyattn::TfliteParams. */
typedef struct tinyattn_tflite_params {
  tinyattn_tflite_multiplier scores; /* BatchMatMul Q.K^T: sq * sk / s_scores */
  int32_t scores_zero;
  tinyattn_tflite_multiplier beta;   /* Softmax input_multiplier, input_left_shift */
  int32_t diff_min;
  tinyattn_tflite_multiplier output; /* BatchMatMul P.V: (1/256) * sv / sy */
} tinyattn_tflite_params;

/* One query head's plan: integers only, so it can be computed offline and
 * kept in flash. Same layout as tinyattn::Int8HeadPlan. mode, a
 * tinyattn_int8_mode value kept as int32_t: NATIVE reads logit, output,
 * bias; TFLITE reads tflite; both the zero points of q, k, v, y. */
typedef struct tinyattn_int8_head_plan {
  tinyattn_fixed_multiplier logit;
  tinyattn_fixed_multiplier output;
  tinyattn_fixed_multiplier bias;
  int32_t q_zero, k_zero, v_zero, y_zero, bias_zero;
  int32_t mode;
  tinyattn_tflite_params tflite;
} tinyattn_int8_head_plan;

typedef struct tinyattn_forward_io_i8 {
  const int8_t* q;    /* [hq][n][dk] */
  const int8_t* k;    /* [hkv][m][dk] */
  const int8_t* v;    /* [hkv][m][dv] */
  int8_t* y;          /* [hq][n][dv], required */
  uint16_t* weights;  /* [hq][n][m] Q0.15 probabilities, optional */
  const int8_t* bias; /* [n][m] int8 logit bias (per head every mask head_stride), optional */
} tinyattn_forward_io_i8;

/* Fills plans[0..hq) from the scheme (uses floating point once). */
tinyattn_status tinyattn_plan_int8(const tinyattn_dims* dims, const tinyattn_int8_scheme* scheme,
                                   tinyattn_int8_head_plan* plans, size_t plan_capacity);
/* The fixed-point form of a positive real. */
tinyattn_status tinyattn_make_multiplier(double real, tinyattn_fixed_multiplier* out);
/* Checks a plan made elsewhere (offline). */
tinyattn_status tinyattn_validate_int8_head_plan(const tinyattn_int8_head_plan* plan);

size_t tinyattn_forward_i8_workspace_bytes(const tinyattn_dims* dims);
/* 1 KB more: room for a TFLITE head's table of the 256 exps an int8 score
 * difference can need, each computed once per head (the same bytes either way). */
size_t tinyattn_forward_i8_tflite_workspace_bytes(const tinyattn_dims* dims);
/* Integer arithmetic only. plans: plan_count (= hq) head plans. The mask's
 * float bias and options->use_scale are UNSUPPORTED here (the plan holds
 * the scale); options->port picks the kernels (same bytes on each). */
tinyattn_status tinyattn_forward_i8(const tinyattn_dims* dims, const tinyattn_forward_io_i8* io,
                                    const tinyattn_int8_head_plan* plans, size_t plan_count, void* workspace,
                                    size_t workspace_bytes, const tinyattn_mask* mask,
                                    const tinyattn_options* options);

/* ---- int16 forward (docs/quant.md, "int16") ----------------------------- */

/* Limits of the int16 path (Dk keeps the scores' differences in 96-bit
 * products, M keeps the P.V sums exact in int32): TINYATTN_BAD_DIMENSION beyond. */
#define TINYATTN_MAX_DK_INT16 32768u
#define TINYATTN_MAX_M_INT16 65535u

/* What tinyattn_forward_i16 computes for a head (tinyattn::Int16Mode,
 * docs/quant.md). */
typedef enum tinyattn_int16_mode {
  TINYATTN_INT16_MODE_NATIVE = 0, /* exact int64 scores, the int8 path's integer softmax, Q0.15 weights */
  TINYATTN_INT16_MODE_TFLITE,     /* TFLite Micro's 16x8 BatchMatMul, Softmax, BatchMatMul, bit for bit */
  TINYATTN_INT16_MODE_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_INT16_MODE_MAX_ = 0x7FFFFFFF
} tinyattn_int16_mode;

/* Symmetric scales: real = scale * q; zero_point null or all zero (else
 * TINYATTN_BAD_QUANTIZATION). Zero-initialised: the native mode,
 * 1/sqrt(Dk). New fields go at the end. */
typedef struct tinyattn_int16_scheme {
  tinyattn_quant_params q, k, v, y;
  int use_softmax_scale; /* nonzero: softmax_scale; zero: 1/sqrt(Dk) (TFLITE: the softmax's beta) */
  float softmax_scale;
  tinyattn_int16_mode mode; /* a value outside the enum: TINYATTN_UNSUPPORTED */
  /* TFLITE only (required there, ignored in NATIVE): the int16 score tensor
   * Q.K^T is requantized into (the model's BatchMatMul output); count 1 or hq,
   * zero point null or 0. */
  tinyattn_quant_params scores;
} tinyattn_int16_scheme;

/* The integers TFLite's Prepare() computes for one head of
 * TINYATTN_INT16_MODE_TFLITE. Same layout as tinyattn::TfliteParamsI16. */
typedef struct tinyattn_tflite_params_i16 {
  tinyattn_tflite_multiplier scores; /* BatchMatMul Q.K^T: sq * sk / s_scores */
  tinyattn_tflite_multiplier beta;   /* Softmax input multiplier: s_scores * beta / (10 / 65535) */
  tinyattn_tflite_multiplier output; /* BatchMatMul P.V: (1/32768) * sv / sy */
} tinyattn_tflite_params_i16;

/* One query head's plan: integers only (44 bytes), so it can be computed
 * offline and kept in flash. Same layout as tinyattn::Int16HeadPlan. mode,
 * a tinyattn_int16_mode value kept as int32_t: NATIVE reads logit and
 * output, TFLITE reads tflite (the other fields stay 0). */
typedef struct tinyattn_int16_head_plan {
  tinyattn_fixed_multiplier logit;  /* softmax_scale * sq * sk * log2(e) * 2^26 */
  tinyattn_fixed_multiplier output; /* sv / (sy * 2^15) */
  int32_t mode;
  tinyattn_tflite_params_i16 tflite;
} tinyattn_int16_head_plan;

typedef struct tinyattn_forward_io_i16 {
  const int16_t* q;  /* [hq][n][dk] */
  const int16_t* k;  /* [hkv][m][dk] */
  const int16_t* v;  /* [hkv][m][dv] */
  int16_t* y;        /* [hq][n][dv], required */
  uint16_t* weights; /* [hq][n][m] Q0.15 probabilities (TFLITE: the int16 softmax tensor), optional */
} tinyattn_forward_io_i16;

/* Fills plans[0..hq) from the scheme (uses floating point once). */
tinyattn_status tinyattn_plan_int16(const tinyattn_dims* dims, const tinyattn_int16_scheme* scheme,
                                    tinyattn_int16_head_plan* plans, size_t plan_capacity);
/* Checks a plan made elsewhere (offline). */
tinyattn_status tinyattn_validate_int16_head_plan(const tinyattn_int16_head_plan* plan);

size_t tinyattn_forward_i16_workspace_bytes(const tinyattn_dims* dims);
/* Integer arithmetic only. plans: plan_count (= hq) head plans, of either
 * mode. The mask's float bias, options->use_scale and options->use_softcap
 * are UNSUPPORTED (the plan holds the scale); options->port picks the
 * kernels (same bytes on each). */
tinyattn_status tinyattn_forward_i16(const tinyattn_dims* dims, const tinyattn_forward_io_i16* io,
                                     const tinyattn_int16_head_plan* plans, size_t plan_count, void* workspace,
                                     size_t workspace_bytes, const tinyattn_mask* mask,
                                     const tinyattn_options* options);

/* ---- KV cache (tinyattn/kv_cache.h) ------------------------------------ */

/* The keys and values of the tokens seen so far, for decoding: C++'s
 * KvCache<T, Hq, Hkv, Dk, Dv, Capacity, MaxNew, SlidingWindow, Sinks> with
 * its extents given at run time, over two buffers the caller owns (usually
 * static, sized by the macros at the end of this header):
 *   static unsigned char kv[TINYATTN_KV_CACHE_BYTES(1, 64, 16, 16, TINYATTN_KV_F32)];
 * Append copies n new tokens, K[hkv][n][dk] and V[hkv][n][dv]; attend runs
 * the n newest tokens' queries Q[hq][n][dk] over the cache (Y[hq][n][dv])
 * with the forward of the cache's type, under the mask ONNX Attention gives
 * a cache: each query sees itself and every earlier token (a ring: the
 * window - 1 tokens before it, and the sinks). Statuses as the forward's,
 * plus TINYATTN_BAD_DIMENSION for n of 0, above max_new or (attend) above
 * the tokens appended, and TINYATTN_CACHE_FULL for an append past the
 * capacity of a linear cache; on any status but TINYATTN_OK nothing changes
 * but the workspace (scratch, which a refused call may have written).
 * docs/decode.md describes the storage types, sinks and RoPE. */

typedef enum tinyattn_kv_dtype {
  TINYATTN_KV_F32 = 0,       /* float: tinyattn_kv_cache_append, _attend */
  TINYATTN_KV_F16,           /* binary16 bits in uint16_t: _append_f16, _attend_f16 */
  TINYATTN_KV_I8,            /* int8_t: _append_i8, _attend_i8 (with a plan) */
  TINYATTN_KV_I8_SCALED,     /* int8 rows with an fp32 scale per token and KV head, for an fp32
                              * model: _append and _attend take float (C++ KvInt8<float>) */
  TINYATTN_KV_I8_SCALED_F16, /* the same with fp16 scales (C++ KvInt8<half>) */
  TINYATTN_KV_DTYPE_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_KV_DTYPE_MAX_ = 0x7FFFFFFF
} tinyattn_kv_dtype;

typedef struct tinyattn_kv_cache_config {
  tinyattn_kv_dtype dtype;
  size_t hq, hkv;   /* query and key/value heads (hq % hkv == 0: grouped-query) */
  size_t dk, dv;    /* key and value widths */
  size_t capacity;  /* token slots per KV head */
  size_t max_new;   /* the most tokens one append or attend takes; 0 means 1 (decode) */
  /* 0: the cache keeps the first `capacity` tokens; W > 0: a ring in which
   * each query sees itself and the W - 1 tokens before it (sliding-window
   * models), which needs capacity >= W + max_new - 1. */
  size_t window;
  /* With a ring: the first `sinks` tokens stay for good and every query
   * sees them too (attention sinks); capacity >= sinks + W + max_new - 1. */
  size_t sinks;
} tinyattn_kv_cache_config;

/* Every field, in the C++ template's order (the _SINKS form with sinks). */
#define TINYATTN_KV_CACHE_CONFIG(dtype, hq, hkv, dk, dv, capacity, max_new, window) \
  {(dtype), (hq), (hkv), (dk), (dv), (capacity), (max_new), (window), 0}
#define TINYATTN_KV_CACHE_CONFIG_SINKS(dtype, hq, hkv, dk, dv, capacity, max_new, window, sinks) \
  {(dtype), (hq), (hkv), (dk), (dv), (capacity), (max_new), (window), (sinks)}

/* Rotary position embedding (C++ tinyattn/rope.h, docs/rope.md). */
typedef enum tinyattn_rope_style {
  TINYATTN_ROPE_HALF_SPLIT = 0,  /* pairs (x[k], x[k + r/2]): Hugging Face rotate_half */
  TINYATTN_ROPE_INTERLEAVED = 1, /* pairs (x[2k], x[2k + 1]): GPT-J, Meta's reference */
  TINYATTN_ROPE_STYLE_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_ROPE_STYLE_MAX_ = 0x7FFFFFFF
} tinyattn_rope_style;

typedef struct tinyattn_rope {
  float theta;          /* base, finite and >= 1 (10000 in most models) */
  uint32_t rotary_dim;  /* 0: the whole head; else even and <= the head width */
  tinyattn_rope_style style;
} tinyattn_rope;

#define TINYATTN_ROPE_DEFAULT {10000.0f, 0u, TINYATTN_ROPE_HALF_SPLIT}

/* Rotates x[heads][n][dim] in place, token i at position first_position + i
 * (C++ apply_rope, with its statuses). */
tinyattn_status tinyattn_apply_rope(const tinyattn_rope* rope, float* x, size_t heads, size_t n, size_t dim,
                                    size_t first_position);
tinyattn_status tinyattn_apply_rope_f16(const tinyattn_rope* rope, uint16_t* x, size_t heads, size_t n, size_t dim,
                                        size_t first_position);

/* The cache: fields ending in _ are private (written by
 * tinyattn_kv_cache_init, read through the functions below). A cache that
 * was never initialized, {0}, is refused with TINYATTN_NULL_POINTER. */
typedef struct tinyattn_kv_cache {
  tinyattn_kv_cache_config config_;
  void* keys_;            /* [hkv][capacity][dk], in the storage buffer */
  void* values_;          /* [hkv][capacity][dv], after the keys */
  void* key_scales_;      /* _I8_SCALED*: [hkv][capacity] each, before the keys */
  void* value_scales_;
  uint8_t* scratch_;      /* attend's keep-bit rows (a ring), then the forward's workspace */
  size_t scratch_bytes_;
  size_t position_;       /* tokens appended since init or reset */
  tinyattn_rope rope_;    /* with rope_on_: set by tinyattn_kv_cache_set_rope */
  size_t rope_origin_;
  int rope_on_;
} tinyattn_kv_cache;

/* Bytes of storage (keys and values, any alignment: the slack is included)
 * and of attend's workspace for a config; 0 for a config init refuses. */
size_t tinyattn_kv_cache_storage_bytes(const tinyattn_kv_cache_config* config);
size_t tinyattn_kv_cache_workspace_bytes(const tinyattn_kv_cache_config* config);

/* Makes *cache an empty cache over the two buffers, which must stay valid
 * as long as it is used and must not overlap (TINYATTN_ALIASING). The
 * workspace is scratch rewritten by every attend: caches that never attend
 * at the same time (the layers of one model) may share one. Statuses:
 * TINYATTN_NULL_POINTER, TINYATTN_UNSUPPORTED (a dtype outside the enum),
 * those of the dims {max_new, capacity, dk, dv, hq, hkv} (BAD_DIMENSION,
 * BAD_HEADS), TINYATTN_BAD_DIMENSION for max_new > capacity or a ring that
 * does not fit, TINYATTN_WORKSPACE_TOO_SMALL for a buffer below its size.
 * On error *cache is not written. */
tinyattn_status tinyattn_kv_cache_init(tinyattn_kv_cache* cache, const tinyattn_kv_cache_config* config,
                                       void* storage, size_t storage_bytes, void* workspace, size_t workspace_bytes);

/* Appends n tokens (1 <= n <= max_new). A function of another dtype than
 * the cache's returns TINYATTN_UNSUPPORTED; a k or v not aligned to its
 * element type, TINYATTN_MISALIGNED. */
tinyattn_status tinyattn_kv_cache_append(tinyattn_kv_cache* cache, const float* k, const float* v, size_t n);
tinyattn_status tinyattn_kv_cache_append_f16(tinyattn_kv_cache* cache, const uint16_t* k, const uint16_t* v,
                                             size_t n);
tinyattn_status tinyattn_kv_cache_append_i8(tinyattn_kv_cache* cache, const int8_t* k, const int8_t* v, size_t n);

/* The n newest tokens (already appended) attend to the cache: Q[hq][n][dk]
 * -> Y[hq][n][dv]. options (may be null) as tinyattn_forward's, and so on
 * per dtype; plans: plan_count (= hq) head plans, as tinyattn_forward_i8. */
tinyattn_status tinyattn_kv_cache_attend(tinyattn_kv_cache* cache, const float* q, float* y, size_t n,
                                         const tinyattn_options* options);
tinyattn_status tinyattn_kv_cache_attend_f16(tinyattn_kv_cache* cache, const uint16_t* q, uint16_t* y, size_t n,
                                             const tinyattn_options_f16* options);
tinyattn_status tinyattn_kv_cache_attend_i8(tinyattn_kv_cache* cache, const int8_t* q, int8_t* y, size_t n,
                                            const tinyattn_int8_head_plan* plans, size_t plan_count,
                                            const tinyattn_options* options);

/* RoPE from now on: keys rotated as they are appended, queries as they
 * attend, token t at position first_position + t (C++ KvCache::set_rope).
 * Statuses: TINYATTN_NULL_POINTER; TINYATTN_UNSUPPORTED on a cache that
 * holds tokens and for TINYATTN_KV_I8; TINYATTN_WORKSPACE_TOO_SMALL for an
 * fp32 or fp16 cache whose workspace lacks TINYATTN_KV_CACHE_ROPE_BYTES (the
 * rotated queries); those of the rope for head width dk. */
tinyattn_status tinyattn_kv_cache_set_rope(tinyattn_kv_cache* cache, const tinyattn_rope* rope,
                                           size_t first_position);

/* Forgets every token (the buffers are not cleared: unfilled slots are
 * never read); the RoPE setting stays. */
tinyattn_status tinyattn_kv_cache_reset(tinyattn_kv_cache* cache);
/* Tokens the slots hold: every one appended (linear), the last capacity of
 * them (ring); 0 for a null or uninitialized cache. */
size_t tinyattn_kv_cache_length(const tinyattn_kv_cache* cache);
/* Tokens appended since init or reset: the next token's position. */
size_t tinyattn_kv_cache_position(const tinyattn_kv_cache* cache);
/* The slots, K[hkv][capacity][dk] and V[hkv][capacity][dv], of the cache's
 * element type (int8 for _I8_SCALED*; token t in slot t % capacity without
 * sinks); null for a null or uninitialized cache. */
const void* tinyattn_kv_cache_keys(const tinyattn_kv_cache* cache);
const void* tinyattn_kv_cache_values(const tinyattn_kv_cache* cache);

/* ---- fp32 backward (docs/backward.md) ---------------------------------- */

typedef enum tinyattn_backward_mode {
  TINYATTN_BACKWARD_SAVED_WEIGHTS = 0, /* A from io->weights */
  TINYATTN_BACKWARD_RECOMPUTE, /* A recomputed from Q, K and io->lse */
  TINYATTN_BACKWARD_MODE_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_BACKWARD_MODE_MAX_ = 0x7FFFFFFF
} tinyattn_backward_mode;

typedef struct tinyattn_backward_io {
  const float* q;        /* [hq][n][dk], required */
  const float* k;        /* [hkv][m][dk], required */
  const float* v;        /* [hkv][m][dv], required */
  const float* dy;       /* [hq][n][dv], required */
  const float* weights;  /* [hq][n][m], SAVED_WEIGHTS */
  const float* lse;      /* [hq][n], RECOMPUTE */
  const float* y;        /* [hq][n][dv], optional */
  float* dq;             /* [hq][n][dk], required */
  float* dk;             /* [hkv][m][dk], required */
  float* dv;             /* [hkv][m][dv], required */
  float* ds;             /* [hq][n][m], optional */
} tinyattn_backward_io;

size_t tinyattn_backward_workspace_bytes(const tinyattn_dims* dims, tinyattn_backward_mode mode);
/* mask and options must be those of the forward call. */
tinyattn_status tinyattn_backward(const tinyattn_dims* dims, tinyattn_backward_mode mode,
                                  const tinyattn_backward_io* io, void* workspace, size_t workspace_bytes,
                                  const tinyattn_mask* mask, const tinyattn_options* options);

/* ---- Row softmax (tinyattn/softmax.h) ---------------------------------- */

/* softmax of `rows` rows of n floats: row r of x at x + r * ld_x, of p at
 * p + r * ld_p (ld >= n). p may be x in place (same ld); any other overlap
 * is TINYATTN_ALIASING. Rows as the forward's: all -inf -> zeros, a NaN ->
 * all NaN, +inf entries share the weight. */
tinyattn_status tinyattn_softmax_rows(const float* x, float* p, size_t rows, size_t n, size_t ld_x, size_t ld_p,
                                      tinyattn_port port);
/* dx = (diag(p) - p p^T) dp per row, each matrix with its own ld; dx may be
 * p or dp in place. */
tinyattn_status tinyattn_softmax_vjp_rows(const float* p, const float* dp, float* dx, size_t rows, size_t n,
                                          size_t ld_p, size_t ld_dp, size_t ld_dx, tinyattn_port port);

/* ---- Self-test (docs/selftest.md) -------------------------------------- */

#define TINYATTN_SELFTEST_MAX_CHECKS 48

typedef enum tinyattn_selftest_format {
  TINYATTN_SELFTEST_NONE = 0, /* report only */
  TINYATTN_SELFTEST_UNITY,    /* selftest:<n>:<name>:PASS|FAIL lines and a Unity summary */
  TINYATTN_SELFTEST_TABLE,    /* the properties table */
  TINYATTN_SELFTEST_BOTH,
  TINYATTN_SELFTEST_FORMAT_MIN_ = -0x7FFFFFFF - 1,
  TINYATTN_SELFTEST_FORMAT_MAX_ = 0x7FFFFFFF
} tinyattn_selftest_format;

typedef struct tinyattn_selftest_check {
  const char* name;
  const char* property;
  const char* theory;
  float lo, hi;      /* empirical range of the checked quantity */
  float measured;    /* worst deviation measured */
  float bound;       /* what measured was held to */
  int passed;
} tinyattn_selftest_check;

typedef struct tinyattn_selftest_report {
  uint32_t count;
  uint32_t failures;
  int passed;  /* count > 0 && failures == 0 */
  tinyattn_selftest_check checks[TINYATTN_SELFTEST_MAX_CHECKS];
} tinyattn_selftest_report;

/* Text sink (UART, semihosting, ...); may be null. */
typedef void (*tinyattn_write_fn)(const char* text);

/* Runs the self-test of one port; TINYATTN_OK when it ran (then read
 * report->passed). Not re-entrant (static scratch); uses a C++ report on the
 * stack besides *report. */
tinyattn_status tinyattn_selftest(tinyattn_selftest_report* report, tinyattn_port port, tinyattn_write_fn write,
                                  tinyattn_selftest_format format);

/* The integer-only self-test of the int8 path (tinyattn::selftest_int8): an
 * FPU-less int8-only image that calls only it links no floating-point code. */
#define TINYATTN_SELFTEST_I8_MAX_CHECKS 24

typedef struct tinyattn_selftest_i8_check {
  const char* name;
  const char* property;
  uint32_t measured; /* wrong integers, CRC mismatches, or the worst deviation */
  uint32_t bound;    /* what measured was held to */
  int passed;
} tinyattn_selftest_i8_check;

typedef struct tinyattn_selftest_i8_report {
  uint32_t count;
  uint32_t failures;
  int passed; /* count > 0 && failures == 0 */
  tinyattn_selftest_i8_check checks[TINYATTN_SELFTEST_I8_MAX_CHECKS];
} tinyattn_selftest_i8_report;

/* Runs the int8 self-test of one port; TINYATTN_OK when it ran (then read
 * report->passed). Not re-entrant (static scratch); uses a C++ report on the
 * stack besides *report (about 0.5 KB on 32-bit targets). */
tinyattn_status tinyattn_selftest_int8(tinyattn_selftest_i8_report* report, tinyattn_port port,
                                       tinyattn_write_fn write, tinyattn_selftest_format format);

/* The integer-only self-test of the int16 path (tinyattn::selftest_int16),
 * reported as the int8 one's integer checks. */
#define TINYATTN_SELFTEST_I16_MAX_CHECKS 24

typedef struct tinyattn_selftest_i16_report {
  uint32_t count;
  uint32_t failures;
  int passed; /* count > 0 && failures == 0 */
  tinyattn_selftest_i8_check checks[TINYATTN_SELFTEST_I16_MAX_CHECKS];
} tinyattn_selftest_i16_report;

/* Runs the int16 self-test of one port, as tinyattn_selftest_int8. */
tinyattn_status tinyattn_selftest_int16(tinyattn_selftest_i16_report* report, tinyattn_port port,
                                        tinyattn_write_fn write, tinyattn_selftest_format format);

/* ---- Workspace sizes as constant expressions --------------------------- */
/* Each equals its function above for the same arguments (the tests sweep
 * them); the heads never matter. Helpers ending in _ are not API. */

#define TINYATTN_ALIGN_UP_(x, a) ((((size_t)(x)) + (a)-1u) / (a) * (a))
#define TINYATTN_MIN_(a, b) ((a) < (b) ? (a) : (b))
#define TINYATTN_MAX_(a, b) ((a) > (b) ? (a) : (b))
#define TINYATTN_FLOATS_BYTES_(count) TINYATTN_ALIGN_UP_((size_t)(count) * sizeof(float), TINYATTN_WORKSPACE_ALIGN)

#define TINYATTN_FORWARD_USES_TILES_(m, with_weights) (!(with_weights) && (size_t)(m) > TINYATTN_KEY_TILE)
#define TINYATTN_FORWARD_SCORE_ROWS_BYTES_(n, m, dv, tiled)                                                 \
  (TINYATTN_MIN_((size_t)(n), (size_t)TINYATTN_BLOCK_ROWS) *                                                \
       ((tiled) ? TINYATTN_FLOATS_BYTES_(TINYATTN_KEY_TILE) + 2u * TINYATTN_FLOATS_BYTES_(dv)               \
                : TINYATTN_FLOATS_BYTES_(m)) +                                                              \
   TINYATTN_WORKSPACE_ALIGN)

/* Whether this target builds the transposed-keys scratch at all (not on
 * M-profile cores). */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define TINYATTN_TRANSPOSED_KEYS_BUILT 0
#else
#define TINYATTN_TRANSPOSED_KEYS_BUILT 1
#endif
#define TINYATTN_FORWARD_TRANSPOSES_KEYS_(n, m, with_weights)                     \
  (TINYATTN_TRANSPOSED_KEYS_BUILT && (size_t)(n) >= TINYATTN_TRANSPOSED_KEYS_MIN_ROWS && \
   ((size_t)(m) <= TINYATTN_KEY_TILE || TINYATTN_FORWARD_USES_TILES_(m, with_weights)))

/* With weights, also the no-weights path's need, so one buffer serves both. */
#define TINYATTN_FORWARD_MINIMAL_BYTES_(n, m, dv, with_weights)                                            \
  TINYATTN_MAX_(TINYATTN_FORWARD_SCORE_ROWS_BYTES_(n, m, dv, TINYATTN_FORWARD_USES_TILES_(m, with_weights)), \
                ((with_weights) ? TINYATTN_FORWARD_SCORE_ROWS_BYTES_(n, m, dv, TINYATTN_FORWARD_USES_TILES_(m, 0)) \
                                : (size_t)0))

/* The default workspace (TINYATTN_SCRATCH_DEFAULT), as forward_workspace_bytes(dims, with_weights). */
#define TINYATTN_FORWARD_WORKSPACE_BYTES(n, m, dk, dv, with_weights) \
  TINYATTN_FORWARD_WORKSPACE_BYTES_SCRATCH(n, m, dk, dv, with_weights, TINYATTN_SCRATCH_DEFAULT)

#define TINYATTN_FORWARD_WORKSPACE_BYTES_SCRATCH(n, m, dk, dv, with_weights, scratch)                       \
  (TINYATTN_FORWARD_MINIMAL_BYTES_(n, m, dv, with_weights) +                                                \
   (((scratch) == TINYATTN_SCRATCH_TRANSPOSED_KEYS && TINYATTN_FORWARD_TRANSPOSES_KEYS_(n, m, 0))            \
        ? (size_t)(dk) * TINYATTN_ALIGN_UP_(TINYATTN_MIN_((size_t)(m), (size_t)TINYATTN_KEY_TILE),          \
                                            TINYATTN_WORKSPACE_ALIGN / sizeof(float)) * sizeof(float)       \
        : (size_t)0))

#define TINYATTN_FORWARD_F16_WORKSPACE_BYTES(n, m, dk, dv, with_weights)                                 \
  (TINYATTN_FLOATS_BYTES_((!(with_weights) && (size_t)(m) > TINYATTN_F16_KEY_TILE) ? (size_t)TINYATTN_F16_KEY_TILE \
                                                                                 : (size_t)(m)) +      \
   TINYATTN_FLOATS_BYTES_(dk) +                                                                           \
   TINYATTN_FLOATS_BYTES_(TINYATTN_MIN_((size_t)(m), (size_t)TINYATTN_F16_KEY_TILE) *                     \
                          TINYATTN_MAX_((size_t)(dk), (size_t)(dv))) +                                    \
   2u * TINYATTN_FLOATS_BYTES_(dv) + TINYATTN_WORKSPACE_ALIGN)

#define TINYATTN_FORWARD_I8_WORKSPACE_BYTES(n, m, dk, dv)                                             \
  (TINYATTN_ALIGN_UP_((size_t)(m) * sizeof(int32_t), TINYATTN_WORKSPACE_ALIGN) +                     \
   TINYATTN_ALIGN_UP_((size_t)(dv) * sizeof(int32_t), TINYATTN_WORKSPACE_ALIGN) + TINYATTN_WORKSPACE_ALIGN)

#define TINYATTN_FORWARD_I8_TFLITE_WORKSPACE_BYTES(n, m, dk, dv) \
  (TINYATTN_FORWARD_I8_WORKSPACE_BYTES(n, m, dk, dv) + 256u * sizeof(int32_t))

#define TINYATTN_FORWARD_I16_WORKSPACE_BYTES(n, m, dk, dv)                                            \
  (TINYATTN_ALIGN_UP_((size_t)(m) * sizeof(int64_t), TINYATTN_WORKSPACE_ALIGN) +                    \
   TINYATTN_ALIGN_UP_((size_t)(m) * sizeof(int32_t), TINYATTN_WORKSPACE_ALIGN) +                    \
   TINYATTN_ALIGN_UP_((size_t)(dv) * sizeof(int32_t), TINYATTN_WORKSPACE_ALIGN) + TINYATTN_WORKSPACE_ALIGN)

#define TINYATTN_BACKWARD_WORKSPACE_BYTES(n, m, dk, dv, mode)                                           \
  (TINYATTN_FLOATS_BYTES_(TINYATTN_MIN_((size_t)(m), (size_t)TINYATTN_KEY_TILE)) *                     \
       ((mode) == TINYATTN_BACKWARD_RECOMPUTE ? 2u : 1u) +                                               \
   ((size_t)(m) > TINYATTN_KEY_TILE ? TINYATTN_FLOATS_BYTES_(dk) : (size_t)0) + TINYATTN_WORKSPACE_ALIGN)

/* The KV cache's buffers, as tinyattn_kv_cache_storage_bytes and
 * tinyattn_kv_cache_workspace_bytes. Storage: the scales (_I8_SCALED*), the
 * keys and the values, stored from a TINYATTN_WORKSPACE_ALIGN boundary.
 * Workspace: a ring's keep-bit rows, then the forward's workspace for
 * max_new queries over capacity keys (as C++'s KvCache::workspace_bytes);
 * for _I8_SCALED*, the int8 storage's scratch. The query heads never matter.
 * A cache with RoPE (tinyattn_kv_cache_set_rope) of dtype F32 or F16 needs
 * TINYATTN_KV_CACHE_ROPE_BYTES more workspace, for the rotated queries (and
 * their alignment). */
#define TINYATTN_KV_SCALED_(dtype) ((dtype) == TINYATTN_KV_I8_SCALED || (dtype) == TINYATTN_KV_I8_SCALED_F16)
#define TINYATTN_KV_DTYPE_BYTES(dtype) \
  ((dtype) == TINYATTN_KV_F32 ? sizeof(float) : (dtype) == TINYATTN_KV_F16 ? sizeof(uint16_t) : sizeof(int8_t))
#define TINYATTN_KV_SCALE_BYTES_(dtype) \
  ((dtype) == TINYATTN_KV_I8_SCALED ? sizeof(float) : (dtype) == TINYATTN_KV_I8_SCALED_F16 ? sizeof(uint16_t) : (size_t)0)
#define TINYATTN_KV_CACHE_BYTES(hkv, capacity, dk, dv, dtype)                                                    \
  ((size_t)(hkv) * (size_t)(capacity) *                                                                        \
       (((size_t)(dk) + (size_t)(dv)) * TINYATTN_KV_DTYPE_BYTES(dtype) + 2 * TINYATTN_KV_SCALE_BYTES_(dtype)) + \
   TINYATTN_WORKSPACE_ALIGN)
#define TINYATTN_KV_CACHE_MAX_NEW_(max_new) TINYATTN_MAX_((size_t)(max_new), (size_t)1)
#define TINYATTN_KV_CACHE_WORKSPACE_BYTES(capacity, dk, dv, max_new, window, dtype)                                \
  (TINYATTN_KV_SCALED_(dtype)                                                                                     \
       ? TINYATTN_WORKSPACE_ALIGN + 8 * (size_t)(capacity) + 8 * (size_t)(dv) +                                  \
             4 * TINYATTN_MAX_((size_t)(dk), (size_t)(dv)) +                                                       \
             ((size_t)(dk) + 3) / 4 * 4                                                                           \
       : ((dtype) == TINYATTN_KV_I8                                                                               \
              ? TINYATTN_FORWARD_I8_WORKSPACE_BYTES(TINYATTN_KV_CACHE_MAX_NEW_(max_new), capacity, dk, dv)        \
          : (dtype) == TINYATTN_KV_F16                                                                            \
              ? TINYATTN_FORWARD_F16_WORKSPACE_BYTES(TINYATTN_KV_CACHE_MAX_NEW_(max_new), capacity, dk, dv, 0)    \
              : TINYATTN_FORWARD_WORKSPACE_BYTES(TINYATTN_KV_CACHE_MAX_NEW_(max_new), capacity, dk, dv, 0)) +    \
             ((window) != 0 ? TINYATTN_KV_CACHE_MAX_NEW_(max_new) * TINYATTN_KEEP_BITS_ROW_BYTES(capacity) : (size_t)0))
#define TINYATTN_KV_CACHE_ROPE_BYTES(hq, max_new, dk, dtype)                                                    \
  ((dtype) == TINYATTN_KV_F32 || (dtype) == TINYATTN_KV_F16                                                     \
       ? (size_t)(hq) * TINYATTN_KV_CACHE_MAX_NEW_(max_new) * (size_t)(dk) * TINYATTN_KV_DTYPE_BYTES(dtype) + \
             sizeof(float)                                                                                     \
       : (size_t)0)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TINYATTN_TINYATTN_C_H */
