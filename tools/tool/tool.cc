// tinyattn: the host tool, as a function (tool/tool.h; tools/tool/main.cc is
// its program, tests/fuzz/tool_fuzz.cc fuzzes it).
//   tinyattn run --q q.npy --k k.npy --v v.npy [mask options] --out y.npy [--weights a.npy]
//                [--past-k pk.npy --past-v pv.npy] [--present-k k.npy --present-v v.npy]
//                [--dtype f32|f16|i8|i16 [--qparams SPEC] [--int8-mode|--int16-mode native|tflite]]
//   tinyattn plan --dk D --qparams SPEC [--dtype i8|i16] [--int8-mode|--int16-mode native|tflite] [--heads HQ,HKV]
//                 [--scale S] [--name NAME] [--lang c|cpp] [--out FILE]
//   tinyattn explain --dims N,M,DK[,DV] [--heads HQ,HKV] [mask options] [--weights] [--port P]
//   tinyattn decode --q Q.npy --k K.npy --v V.npy --out Y.npy [cache options]
//   tinyattn selftest [--port P] [--format unity|table|both]
//   tinyattn demo [--svg path] [--color|--no-color]
// Every error is one line on the error stream and a non-zero exit status;
// every option and output path is checked before anything is read or
// written, and the outputs are written all or none.
#include "tool/tool.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "demo/heatmap.h"
#include "demo/notebook.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"
#include "tinyattn/quant.h"
#include "tinyattn/quant_i16.h"
#include "tinyattn/selftest.h"
#include "tinyattn/tinyattn.h"
#include "tool/npy.h"
#include "tool/args.h"
#include "tool/output_files.h"

namespace {

// --dtype also takes the names the tool prints for .npy types (int8, int16,
// float32, float16), so a user who copies them from a message is understood.
std::string canonical_dtype(const std::string& d) {
  if (d == "int8") return "i8";
  if (d == "int16") return "i16";
  if (d == "float32") return "f32";
  if (d == "float16") return "f16";
  return d;
}

using tinyattn_tool::Array;
using tinyattn_tool::fail;
using tinyattn_tool::Io;
using tinyattn_tool::kExitFail;
using tinyattn_tool::kExitUsage;
using tinyattn_tool::parse_long;
using tinyattn_tool::parse_port;
using tinyattn_tool::split;
using tinyattn_tool::take_value;
using tinyattn_tool::usage_error;
using tinyattn_tool::ValueOption;
using tinyattn_tool::DType;


// Largest output (Y or weights) the tool will allocate.
constexpr size_t kMaxOutputBytes = size_t{1} << 30;

// "|scalar|highway|..." from the port list.
#define TINYATTN_TOOL_PORT_NAME(e, name, fused, int8) "|" name
const char kUsage[] =
    "usage:\n"
    "  tinyattn run --q Q.npy --k K.npy --v V.npy --out Y.npy [--weights A.npy]\n"
    "               [--mask M.npy] [--causal top-left|bottom-right|offset|onnx] [--window L,R[,top-left|bottom-right|offset]]\n"
    "               [--offset K] [--scores S.npy [--score-stage scaled|softcapped|masked]]\n"
    "               [--past-k PK.npy --past-v PV.npy] [--present-k K.npy --present-v V.npy]\n"
    "               [--kv-len L[,L1,...]] [--bias B.npy] [--scale S] [--softcap C] [--heads HQ,HKV]\n"
    "               [--dtype f32|f16|i8|i16]\n"
    "               [--qparams q=S[:Z],k=S[:Z],v=S[:Z],y=S[:Z][,b=S[:Z]][,s=S[:Z]] | --qparams FILE]\n"
    "               [--int8-mode native|tflite] [--int16-mode native|tflite]\n"
    "               [--port default" TINYATTN_PORT_LIST(TINYATTN_TOOL_PORT_NAME) "]\n"
    "  tinyattn plan --dk D --qparams SPEC [--dtype i8|i16] [--int8-mode native|tflite] [--int16-mode native|tflite]\n"
    "               [--heads HQ,HKV] [--scale S] [--name NAME] [--lang c|cpp] [--out FILE]\n"
    "  tinyattn explain --dims N,M,DK[,DV] [--heads HQ,HKV] [--causal top-left|bottom-right] [--window L,R]\n"
    "               [--kv-len L] [--element-mask keep|bias] [--softcap C] [--weights] [--workspace minimal|default]\n"
    "               [--port P]\n"
    "  tinyattn decode --q Q.npy --k K.npy --v V.npy --out Y.npy [--kv-dtype f32|f16|i8-scaled|i8-scaled-f16]\n"
    "               [--window W [--sinks S]] [--rope half-split|interleaved[,THETA[,ROTARY_DIM]]] [--position P]\n"
    "               [--chunk N] [--scale S] [--port P]\n"
    "  tinyattn selftest [--port P] [--format unity|table|both]\n"
    "  tinyattn demo [--svg PATH] [--color|--no-color]\n"
    "Tensors are .npy files: Q [[B,]Hq,]N,Dk  K [[B,]Hkv,]M,Dk  V [[B,]Hkv,]M,Dv (4-D: ONNX Attention's\n"
    "batched form, one library call per batch element): float32 or float16 for f32 and f16 (f32 inputs to\n"
    "f16 are rounded to nearest even), int8 for i8, int16 for i16. --past-k/--past-v: K's and V's layout\n"
    "with P rows, joined before the new ones (--present-k/--present-v write the P + M rows). mask\n"
    "[Hq,]N,M: bool/uint8 (nonzero = attend) or float (added to the logits; not i8, i16); 4-D runs take\n"
    "any shape that broadcasts to [B,Hq,N,M] as ONNX's attn_mask does (a shorter last axis is padded as\n"
    "masked). bias: float32 (int8 with b= in --qparams for i8; none for i16). Per-head parameters:\n"
    "S1/S2/... or S1:Z1/S2:Z2/... (one per head of that tensor; i16 is symmetric: Z = 0). Outputs: Y and\n"
    "A as float32 (f32), float16 (f16); Y int8 (i8) or int16 (i16) and A uint16 Q0.15 probabilities.\n"
    "--int8-mode tflite runs TFLite's int8 graph bit for bit instead (docs/quant.md):\n"
    "s=S[:Z] in --qparams (required there, refused in native) is the int8 score tensor's quantization,\n"
    "--scale the softmax's beta, A the softmax tensor + 128 as uint16 (p * 256); plan takes it too.\n"
    "--int16-mode tflite is the same for i16 (TFLite Micro's 16x8 graph): s=S the int16 score tensor's\n"
    "scale, A the int16 softmax tensor (p * 32768).\n"
    "--softcap C caps each scaled logit s to C*tanh(s/C) before the bias and masks, as\n"
    "ONNX Attention's softcap (f32 and f16). Alignment offset: query i sits at key i + K. --causal onnx is\n"
    "ONNX's is_causal: K = the past length, or valid - N with --kv-len valid (one per batch element\n"
    "allowed, ONNX's nonpad_kv_seqlen), else 0.\n"
    "--scores writes the float32 logits [[B,]Hq,]N,M at a stage (ONNX qk_matmul_output_mode 0, 1, 2; f32).\n"
    "plan prints the int8 (or, --dtype i16, int16) plan of --qparams (same syntax) as a C (or C++)\n"
    "initializer, one head plan per query head: firmware then runs forward_i8 (forward_i16) on it with no\n"
    "floating point at all (docs/quant.md).\n"
    "explain prints the route and kernel an fp32 forward() of that shape and mask takes on the port in\n"
    "this build, and why no faster one applies (docs/core.md).\n"
    "decode runs the token sequence Q [Hq,]T,Dk, K and V [Hkv,]T,D through a KV cache, N tokens a step\n"
    "(--chunk, default 1), as firmware decodes: its storage (--kv-dtype), a ring of --window tokens\n"
    "with --sinks first tokens kept, RoPE on keys and queries from position P; Y [Hq,]T,Dv (float16\n"
    "for f16, else float32) is every step's output (docs/decode.md).\n";
#undef TINYATTN_TOOL_PORT_NAME

// The selftest's transcript goes through a plain function pointer, so the
// stream it writes to is set for the one call that uses it.
std::FILE* g_selftest_out = nullptr;
void write_selftest(const char* text) { std::fputs(text, g_selftest_out); }

// ---------------------------------------------------------------- run

struct RunArgs {
  std::string q, k, v, out, weights, mask, bias;
  std::string causal, window, offset, kv_len, scale, softcap, scores, score_stage = "scaled", heads, dtype = "f32",
      port = "default", qparams, int8_mode, int16_mode, past_k, past_v, present_k, present_v;
};

// --qparams: "q=S[:Z],k=S[:Z],v=S[:Z],y=S[:Z][,b=S[:Z]][,s=S[:Z]]"; a tensor's
// entry may list one S[:Z] per head, separated by '/'. Z defaults to 0
// (symmetric). s= is the TFLite mode's int8 score tensor. Only the syntax is
// checked here: plan_int8 judges the values.
struct TensorQuant {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  bool given = false;
  tinyattn::QuantParams params() const { return {scale.data(), zero_point.data(), scale.size()}; }
};

struct QuantSpec {
  TensorQuant q, k, v, y, b, s;
};

// The plan_int8 scheme of parsed --qparams in a mode (the softmax scale is the caller's).
tinyattn::Int8Scheme scheme_of(const QuantSpec& qs, tinyattn::Int8Mode mode) {
  tinyattn::Int8Scheme scheme;
  scheme.q = qs.q.params();
  scheme.k = qs.k.params();
  scheme.v = qs.v.params();
  scheme.y = qs.y.params();
  if (qs.b.given) scheme.bias = qs.b.params();
  scheme.mode = mode;
  if (qs.s.given) scheme.scores = qs.s.params();
  return scheme;
}

// The plan_int16 scheme of parsed --qparams in a mode (the softmax scale is the caller's).
tinyattn::Int16Scheme scheme16_of(const QuantSpec& qs, tinyattn::Int16Mode mode) {
  tinyattn::Int16Scheme scheme;
  scheme.q = qs.q.params();
  scheme.k = qs.k.params();
  scheme.v = qs.v.params();
  scheme.y = qs.y.params();
  scheme.mode = mode;
  if (qs.s.given) scheme.scores = qs.s.params();
  return scheme;
}

// --int16-mode (empty: native), and whether --qparams fits it, as
// int8_mode_error: s= (the int16 score tensor) is required in the TFLite
// mode and refused in the native one; the int16 path takes no bias (b=).
std::string int16_mode_error(const std::string& arg, const QuantSpec* qs, tinyattn::Int16Mode* mode) {
  if (arg.empty() || arg == "native") *mode = tinyattn::Int16Mode::kNative;
  else if (arg == "tflite") *mode = tinyattn::Int16Mode::kTflite;
  else return "--int16-mode must be native or tflite, got '" + arg + "'";
  if (!qs) return "";
  const bool tflite = *mode == tinyattn::Int16Mode::kTflite;
  if (qs->b.given) return "--dtype i16 takes no b= in --qparams: the int16 path has no additive bias";
  if (tflite && !qs->s.given)
    return "--int16-mode tflite needs s=SCALE in --qparams (the int16 score tensor Q.K^T is requantized into)";
  if (!tflite && qs->s.given) return "--qparams gives s= (the TFLite mode's score tensor): add --int16-mode tflite";
  return "";
}

// --int8-mode (empty: native), and whether s= in --qparams fits it: the
// TFLite mode needs the score tensor's quantization, and the native mode
// refuses one rather than ignore it (a forgotten --int8-mode tflite would
// otherwise run the other arithmetic without a word). "" when all is well.
std::string int8_mode_error(const std::string& arg, const QuantSpec* qs, tinyattn::Int8Mode* mode) {
  if (arg.empty() || arg == "native") *mode = tinyattn::Int8Mode::kNative;
  else if (arg == "tflite") *mode = tinyattn::Int8Mode::kTflite;
  else return "--int8-mode must be native or tflite, got '" + arg + "'";
  if (!qs) return "";
  const bool tflite = *mode == tinyattn::Int8Mode::kTflite;
  if (tflite && !qs->s.given)
    return "--int8-mode tflite needs s=SCALE[:ZERO_POINT] in --qparams (the int8 score tensor Q.K^T is requantized "
           "into)";
  if (!tflite && qs->s.given) return "--qparams gives s= (the TFLite mode's score tensor): add --int8-mode tflite";
  if (tflite && qs->b.given)
    return "--int8-mode tflite takes no int8 bias (b=): a TFLite graph adds it as an op of its own";
  return "";
}

// Not "name=": a file holding the same text (commas, spaces or newlines between entries).
bool qparams_is_file(const std::string& spec) { return spec.find('=') == std::string::npos; }

bool parse_qparams(const std::string& spec_in, QuantSpec* out, std::string* error) {
  std::string spec = spec_in;
  if (qparams_is_file(spec)) {
    std::FILE* f = std::fopen(spec.c_str(), "rb");
    if (!f) {
      *error = "--qparams: '" + spec + "' is neither q=S:Z,k=...,v=...,y=... nor a readable file";
      return false;
    }
    spec.clear();
    char buf[4096];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0 && spec.size() < 65536) spec.append(buf, got);
    std::fclose(f);
    if (spec.size() >= 65536) {
      *error = "--qparams: " + spec_in + " is larger than 64 KiB";
      return false;
    }
    for (char& c : spec)
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') c = ',';
  }
  for (const std::string& entry : split(spec, ',')) {
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    TensorQuant* t = name == "q" ? &out->q : name == "k" ? &out->k : name == "v" ? &out->v
                   : name == "y" ? &out->y : name == "b" ? &out->b : name == "s" ? &out->s : nullptr;
    if (eq == std::string::npos || !t) {
      *error = "--qparams: '" + entry + "' is not q=, k=, v=, y=, b= or s= followed by SCALE[:ZERO_POINT]";
      return false;
    }
    if (t->given) {
      *error = "--qparams gives " + name + " twice";
      return false;
    }
    t->given = true;
    for (const std::string& head : split(entry.substr(eq + 1), '/')) {
      const std::vector<std::string> sz = split(head, ':');
      char* end = nullptr;
      const float scale = sz[0].empty() ? 0.0f : std::strtof(sz[0].c_str(), &end);
      long long zp = 0;
      if (sz.size() > 2 || sz[0].empty() || *end != '\0' ||
          (sz.size() == 2 && !parse_long(sz[1], INT32_MIN, INT32_MAX, &zp))) {
        *error = "--qparams: " + name + ": '" + head + "' is not SCALE or SCALE:ZERO_POINT (a number and an integer)";
        return false;
      }
      t->scale.push_back(scale);
      t->zero_point.push_back(static_cast<int32_t>(zp));
    }
  }
  if (!out->q.given || !out->k.given || !out->v.given || !out->y.given) {
    *error = "--qparams must give q=, k=, v= and y= (SCALE[:ZERO_POINT] each)";
    return false;
  }
  return true;
}

// A tensor as [batch][heads][rows][cols]: a 2-D file is one head of one batch
// element, a 3-D file [heads, rows, cols] one batch element, a 4-D file ONNX
// Attention's [batch, heads, sequence, width].
struct Tensor4 {
  size_t batch = 1, heads = 1, rows = 0, cols = 0;
  size_t rank = 2;
};

bool as_tensor4(const Array& a, const std::string& name, Tensor4* t, std::string* error) {
  const std::vector<size_t>& s = a.shape;
  if (s.size() == 2) *t = {1, 1, s[0], s[1], 2};
  else if (s.size() == 3) *t = {1, s[0], s[1], s[2], 3};
  else if (s.size() == 4) *t = {s[0], s[1], s[2], s[3], 4};
  else {
    *error = name + ": expected 2-D [rows, cols], 3-D [heads, rows, cols] or 4-D [batch, heads, rows, cols], got shape " +
             a.shape_text();
    return false;
  }
  return true;
}

// The product of sizes, SIZE_MAX if it overflows (so a limit check fails).
size_t product(std::initializer_list<size_t> factors) {
  size_t p = 1;
  for (size_t f : factors) {
    if (f != 0 && p > SIZE_MAX / f) return SIZE_MAX;
    p *= f;
  }
  return p;
}

bool load_float(const std::string& path, const std::string& what, Array* a, std::vector<float>* values,
                std::string* error, const char* mode = "--dtype f32") {
  if (!tinyattn_tool::read_npy(path, a, error)) return false;
  if (a->dtype != DType::kF32 && a->dtype != DType::kF16) {
    *error = path + ": " + what + " must be float32 or float16 for " + mode + ", got " + tinyattn_tool::dtype_name(a->dtype);
    return false;
  }
  *values = a->to_f32();
  return true;
}

// fp16 inputs as they are; float32 ones rounded to the nearest half (ties to even), as the library converts.
bool load_half(const std::string& path, const std::string& what, Array* a, std::vector<tinyattn::half>* values,
               std::string* error) {
  std::vector<float> f;
  if (!load_float(path, what, a, &f, error, "--dtype f16")) return false;
  values->resize(f.size());
  if (a->dtype == DType::kF16) {
    for (size_t i = 0; i < f.size(); ++i)
      (*values)[i] = tinyattn::half::from_bits(static_cast<uint16_t>(a->data[2 * i] | a->data[2 * i + 1] << 8));
  } else {
    tinyattn::to_half(f.data(), values->data(), f.size());
  }
  return true;
}

bool load_int8(const std::string& path, const std::string& what, Array* a, std::vector<int8_t>* values,
               std::string* error) {
  if (!tinyattn_tool::read_npy(path, a, error)) return false;
  if (a->dtype != DType::kI8) {
    *error = path + ": " + what + " must be int8 for --dtype i8, got " + tinyattn_tool::dtype_name(a->dtype);
    return false;
  }
  values->resize(a->data.size());
  std::memcpy(values->data(), a->data.data(), a->data.size());
  return true;
}

bool load_int16(const std::string& path, const std::string& what, Array* a, std::vector<int16_t>* values,
                std::string* error) {
  if (!tinyattn_tool::read_npy(path, a, error)) return false;
  if (a->dtype != DType::kI16) {
    *error = path + ": " + what + " must be int16 for --dtype i16, got " + tinyattn_tool::dtype_name(a->dtype);
    return false;
  }
  values->resize(a->data.size() / 2);
  for (size_t i = 0; i < values->size(); ++i)  // little-endian in the file, whatever the host
    (*values)[i] = static_cast<int16_t>(static_cast<uint16_t>(a->data[2 * i] | a->data[2 * i + 1] << 8));
  return true;
}

std::string shapes(const std::string& a_name, const Array& a, const std::string& b_name, const Array& b) {
  return a_name + " has shape " + a.shape_text() + " and " + b_name + " has shape " + b.shape_text();
}

// ONNX's present_key / present_value: the past [B][H][P][D] and the new
// [B][H][M][D] joined along the sequence axis, [B][H][P + M][D].
template <typename T>
std::vector<T> concat_sequence(const std::vector<T>& past, const std::vector<T>& cur, size_t bh, size_t p, size_t m,
                               size_t d) {
  std::vector<T> out(bh * (p + m) * d);
  for (size_t i = 0; i < bh; ++i) {
    std::copy(past.begin() + i * p * d, past.begin() + (i + 1) * p * d, out.begin() + i * (p + m) * d);
    std::copy(cur.begin() + i * m * d, cur.begin() + (i + 1) * m * d, out.begin() + i * (p + m) * d + p * d);
  }
  return out;
}

// An element mask file (keep bytes, a float or an int8 bias) as [b][h][n][t].
struct MaskShape {
  size_t b = 1, h = 1, n = 1, t = 1;
};

// The shapes an element mask may have. 2-D and 3-D runs: [N, T] (every head)
// or [Hq, N, T], the library's own layouts. 4-D runs: ONNX Attention's
// attn_mask, anything that broadcasts to [B, Hq, N, T] (missing leading axes
// are 1, each of B, Hq, N given as 1 or in full) whose last axis may also be
// shorter than T: ONNX pads it with -inf (false), so those keys are masked.
bool mask_shape(const Array& a, const std::string& path, bool onnx, bool pad_ok, const Array& qa, const Array& ka,
                size_t batch, const tinyattn::Dims& d, MaskShape* ms, std::string* error) {
  const std::vector<size_t>& s = a.shape;
  if (!onnx) {
    if ((s.size() == 2 || s.size() == 3) && s[s.size() - 2] == d.n && s.back() == d.m &&
        (s.size() == 2 || s[0] == d.hq)) {
      *ms = {1, s.size() == 3 ? s[0] : 1, d.n, d.m};
      return true;
    }
    *error = path + " has shape " + a.shape_text() + " but Q " + qa.shape_text() + " and K " + ka.shape_text() +
             " need [N, M] = (" + std::to_string(d.n) + ", " + std::to_string(d.m) + ") or [Hq, N, M] = (" +
             std::to_string(d.hq) + ", " + std::to_string(d.n) + ", " + std::to_string(d.m) + ")";
    return false;
  }
  const size_t full[4] = {batch, d.hq, d.n, d.m};
  size_t dims[4] = {1, 1, 1, 1};
  bool ok = !s.empty() && s.size() <= 4;
  for (size_t i = 0; ok && i < s.size(); ++i) dims[4 - s.size() + i] = s[i];
  for (size_t i = 0; ok && i < 3; ++i) ok = dims[i] == 1 || dims[i] == full[i];
  ok = ok && (pad_ok ? dims[3] <= d.m : dims[3] == d.m);
  if (!ok) {
    *error = path + " has shape " + a.shape_text() + " but an attn_mask must broadcast to [B, Hq, N, T] = (" +
             std::to_string(batch) + ", " + std::to_string(d.hq) + ", " + std::to_string(d.n) + ", " +
             std::to_string(d.m) + "): 1 to 4 axes, each leading one 1 or in full, the last " +
             (pad_ok ? "at most T (the keys past it are masked, as ONNX pads)" : "exactly T (an int8 bias is not padded)");
    return false;
  }
  *ms = {dims[0], dims[1], dims[2], dims[3]};
  return true;
}

// The mask laid out for the library: [s.b][hm][N][T] (hm = s.h, or Hq to share
// a head stride with the other mask), rows broadcast over N, the last axis
// padded with `pad`.
template <typename T>
std::vector<T> expand_mask(const std::vector<T>& src, const MaskShape& s, size_t hm, size_t n, size_t t, T pad) {
  std::vector<T> out(s.b * hm * n * t, pad);
  for (size_t b = 0; b < s.b; ++b)
    for (size_t h = 0; h < hm; ++h)
      for (size_t i = 0; i < n; ++i) {
        const size_t from = ((b * s.h + (s.h == 1 ? 0 : h)) * s.n + (s.n == 1 ? 0 : i)) * s.t;
        std::copy(src.begin() + from, src.begin() + from + s.t, out.begin() + ((b * hm + h) * n + i) * t);
      }
  return out;
}

int cmd_run(const Io& io, int argc, char** argv) {
  RunArgs r;
  ValueOption opts[] = {{"--q", &r.q},
                        {"--k", &r.k},
                        {"--v", &r.v},
                        {"--out", &r.out},
                        {"--weights", &r.weights},
                        {"--mask", &r.mask},
                        {"--bias", &r.bias},
                        {"--causal", &r.causal},
                        {"--window", &r.window},
                        {"--kv-len", &r.kv_len},
                        {"--scale", &r.scale},
                        {"--softcap", &r.softcap},
                        {"--offset", &r.offset},
                        {"--scores", &r.scores},
                        {"--score-stage", &r.score_stage},
                        {"--heads", &r.heads},
                        {"--past-k", &r.past_k},
                        {"--past-v", &r.past_v},
                        {"--present-k", &r.present_k},
                        {"--present-v", &r.present_v},
                        {"--dtype", &r.dtype},
                        {"--port", &r.port},
                        {"--qparams", &r.qparams},
                        {"--int8-mode", &r.int8_mode},
                        {"--int16-mode", &r.int16_mode}};
  for (int i = 0; i < argc; ++i) {
    const int taken = take_value(io, opts, sizeof opts / sizeof opts[0], argc, argv, &i);
    if (taken > 0) return taken;
    if (taken < 0) return usage_error(io, std::string("run: unknown argument '") + argv[i] + "'");
  }
  if (r.q.empty() || r.k.empty() || r.v.empty() || r.out.empty())
    return usage_error(io, "run needs --q, --k, --v and --out");
  r.dtype = canonical_dtype(r.dtype);
  if (r.dtype != "f32" && r.dtype != "f16" && r.dtype != "i8" && r.dtype != "i16")
    return usage_error(io, "--dtype must be f32, f16, i8 or i16, got '" + r.dtype + "'");
  const bool is_f16 = r.dtype == "f16", is_i8 = r.dtype == "i8", is_i16 = r.dtype == "i16";
  const bool quantized = is_i8 || is_i16;
  if (is_i8 && r.qparams.empty())
    return usage_error(io, "--dtype i8 needs --qparams q=S[:Z],k=S[:Z],v=S[:Z],y=S[:Z]");
  if (is_i16 && r.qparams.empty()) return usage_error(io, "--dtype i16 needs --qparams q=S,k=S,v=S,y=S");
  if (!quantized && !r.qparams.empty()) return usage_error(io, "--qparams applies to --dtype i8 and i16 only");
  if (!is_i8 && !r.int8_mode.empty()) return usage_error(io, "--int8-mode applies to --dtype i8 only");
  if (!is_i16 && !r.int16_mode.empty()) return usage_error(io, "--int16-mode applies to --dtype i16 only");
  if (is_i16 && !r.bias.empty())
    return usage_error(io, "--dtype i16 takes no --bias: the int16 path has no additive bias (a bool --mask masks)");
  tinyattn::Int8Mode int8_mode = tinyattn::Int8Mode::kNative;
  if (std::string e = int8_mode_error(r.int8_mode, nullptr, &int8_mode); !e.empty()) return usage_error(io, e);
  tinyattn::Int16Mode int16_mode = tinyattn::Int16Mode::kNative;
  if (std::string e = int16_mode_error(r.int16_mode, nullptr, &int16_mode); !e.empty()) return usage_error(io, e);
  if (r.past_k.empty() != r.past_v.empty())
    return usage_error(io, "--past-k and --past-v go together (ONNX's past_key and past_value)");
  if (r.present_k.empty() != r.present_v.empty())
    return usage_error(io, "--present-k and --present-v go together (ONNX's present_key and present_value)");
  const bool has_past = !r.past_k.empty();

  tinyattn::Options opt;
  if (!parse_port(r.port, &opt.port)) return usage_error(io, "--port: unknown port '" + r.port + "'");
  if (!r.scale.empty()) {
    char* end = nullptr;
    const float s = std::strtof(r.scale.c_str(), &end);
    if (*end != '\0' || !std::isfinite(s)) return usage_error(io, "--scale must be a finite number, got '" + r.scale + "'");
    opt.scale = s;
  }
  if (!r.softcap.empty()) {
    char* end = nullptr;
    const float c = std::strtof(r.softcap.c_str(), &end);
    if (*end != '\0' || !(c > 0.0f) || !std::isfinite(c))
      return usage_error(io, "--softcap must be a finite number > 0, got '" + r.softcap + "'");
    if (quantized)
      return usage_error(io, "--softcap applies to --dtype f32 and f16 (forward_i8 and forward_i16 have no softcap)");
    opt.softcap = c;
  }

  tinyattn::ScoreStage stage = tinyattn::ScoreStage::kScaled;
  if (r.score_stage == "softcapped") stage = tinyattn::ScoreStage::kSoftcapped;
  else if (r.score_stage == "masked") stage = tinyattn::ScoreStage::kMasked;
  else if (r.score_stage != "scaled")
    return usage_error(io, "--score-stage must be scaled, softcapped or masked, got '" + r.score_stage + "'");
  if (!r.scores.empty() && r.dtype != "f32") return usage_error(io, "--scores applies to --dtype f32");

  tinyattn::Mask mask;
  const bool onnx_causal = r.causal == "onnx";
  if (!r.causal.empty()) {
    if (r.causal == "top-left") mask.causal = tinyattn::Causal::kTopLeft;
    else if (r.causal == "bottom-right") mask.causal = tinyattn::Causal::kBottomRight;
    else if (r.causal == "offset" || onnx_causal) mask.causal = tinyattn::Causal::kOffset;
    else return usage_error(io, "--causal must be top-left, bottom-right, offset or onnx, got '" + r.causal + "'");
  }
  if (!r.window.empty()) {
    const std::vector<std::string> w = split(r.window, ',');
    long long left = 0, right = 0;
    if (w.size() < 2 || w.size() > 3 || !parse_long(w[0], -65536, 65536, &left) || !parse_long(w[1], -65536, 65536, &right))
      return usage_error(io, "--window must be L,R[,top-left|bottom-right|offset] (integers), got '" + r.window + "'");
    mask.window.left = static_cast<int32_t>(left);
    mask.window.right = static_cast<int32_t>(right);
    if (w.size() == 3) {
      if (w[2] == "top-left") mask.window.align = tinyattn::Align::kTopLeft;
      else if (w[2] == "bottom-right") mask.window.align = tinyattn::Align::kBottomRight;
      else if (w[2] == "offset") mask.window.align = tinyattn::Align::kOffset;
      else return usage_error(io, "--window alignment must be top-left, bottom-right or offset, got '" + w[2] + "'");
    }
  }
  if (onnx_causal && !r.offset.empty())
    return usage_error(io, "--causal onnx takes its offset from the past length or --kv-len; drop --offset");
  const bool offset_aligned =
      !onnx_causal && (mask.causal == tinyattn::Causal::kOffset || mask.window.align == tinyattn::Align::kOffset);
  if (offset_aligned != !r.offset.empty())
    return usage_error(io, "--offset K goes with --causal offset or a --window aligned to offset, and they need it");
  if (!r.offset.empty()) {
    long long off = 0;
    if (!parse_long(r.offset, -65536, 65536, &off))
      return usage_error(io, "--offset must be an integer in [-65536, 65536], got '" + r.offset + "'");
    mask.offset = static_cast<int32_t>(off);
  }
  // --heads and --kv-len: the syntax here, before any file is read; whether
  // they fit the tensors once the files are read.
  long long heads_q = 0, heads_kv = 0;
  if (!r.heads.empty()) {
    const std::vector<std::string> h = split(r.heads, ',');
    if (h.size() != 2 || !parse_long(h[0], 1, tinyattn::kMaxDim, &heads_q) ||
        !parse_long(h[1], 1, tinyattn::kMaxDim, &heads_kv))
      return usage_error(io, "--heads must be HQ,HKV (positive integers), got '" + r.heads + "'");
  }
  std::vector<uint32_t> kv_lens;
  if (!r.kv_len.empty()) {
    for (const std::string& part : split(r.kv_len, ',')) {
      long long l = 0;
      if (!parse_long(part, 0, tinyattn::kMaxDim, &l))
        return usage_error(io, "--kv-len must be L or L0,L1,... (integers in [0, " + std::to_string(tinyattn::kMaxDim) +
                                   "]), got '" + r.kv_len + "'");
      kv_lens.push_back(static_cast<uint32_t>(l));
    }
  }

  // Every output path, and none the same file as another or as an input,
  // before anything is read or written.
  std::string error;
  std::vector<tinyattn_tool::NamedPath> outputs = {{"--out", r.out}}, inputs;
  for (const tinyattn_tool::NamedPath& o : std::initializer_list<tinyattn_tool::NamedPath>{
           {"--weights", r.weights}, {"--scores", r.scores}, {"--present-k", r.present_k}, {"--present-v", r.present_v}})
    if (!o.path.empty()) outputs.push_back(o);
  for (const tinyattn_tool::NamedPath& in : std::initializer_list<tinyattn_tool::NamedPath>{
           {"--q", r.q}, {"--k", r.k}, {"--v", r.v}, {"--mask", r.mask}, {"--bias", r.bias},
           {"--past-k", r.past_k}, {"--past-v", r.past_v}})
    if (!in.path.empty()) inputs.push_back(in);
  if (quantized && qparams_is_file(r.qparams)) inputs.push_back({"--qparams", r.qparams});
  if (!tinyattn_tool::check_paths(outputs, inputs, &error)) return fail(io, error, kExitUsage);

  QuantSpec qspec;
  if (quantized && !parse_qparams(r.qparams, &qspec, &error)) return usage_error(io, error);
  if (is_i8 && !(error = int8_mode_error(r.int8_mode, &qspec, &int8_mode)).empty()) return usage_error(io, error);
  if (is_i16 && !(error = int16_mode_error(r.int16_mode, &qspec, &int16_mode)).empty()) return usage_error(io, error);
  Array qa, ka, va, pka, pva;
  std::vector<float> q, k, v, pk, pv;
  std::vector<tinyattn::half> qh, kh, vh, pkh, pvh;
  std::vector<int8_t> qi, ki, vi, pki, pvi;
  std::vector<int16_t> qs16, ks16, vs16, pks16, pvs16;
  const bool loaded =
      is_f16  ? load_half(r.q, "Q", &qa, &qh, &error) && load_half(r.k, "K", &ka, &kh, &error) &&
                    load_half(r.v, "V", &va, &vh, &error) &&
                    (!has_past || (load_half(r.past_k, "the past keys", &pka, &pkh, &error) &&
                                   load_half(r.past_v, "the past values", &pva, &pvh, &error)))
      : is_i8 ? load_int8(r.q, "Q", &qa, &qi, &error) && load_int8(r.k, "K", &ka, &ki, &error) &&
                    load_int8(r.v, "V", &va, &vi, &error) &&
                    (!has_past || (load_int8(r.past_k, "the past keys", &pka, &pki, &error) &&
                                   load_int8(r.past_v, "the past values", &pva, &pvi, &error)))
      : is_i16 ? load_int16(r.q, "Q", &qa, &qs16, &error) && load_int16(r.k, "K", &ka, &ks16, &error) &&
                     load_int16(r.v, "V", &va, &vs16, &error) &&
                     (!has_past || (load_int16(r.past_k, "the past keys", &pka, &pks16, &error) &&
                                    load_int16(r.past_v, "the past values", &pva, &pvs16, &error)))
              : load_float(r.q, "Q", &qa, &q, &error) && load_float(r.k, "K", &ka, &k, &error) &&
                    load_float(r.v, "V", &va, &v, &error) &&
                    (!has_past || (load_float(r.past_k, "the past keys", &pka, &pk, &error) &&
                                   load_float(r.past_v, "the past values", &pva, &pv, &error)));
  if (!loaded) return fail(io, error);
  Tensor4 qt, kt, vt;
  if (!as_tensor4(qa, r.q, &qt, &error) || !as_tensor4(ka, r.k, &kt, &error) || !as_tensor4(va, r.v, &vt, &error))
    return fail(io, error);
  if (qt.rank != kt.rank || qt.rank != vt.rank)
    return fail(io, shapes(r.q, qa, r.k, ka) + " and " + r.v + " has shape " + va.shape_text() +
                ": Q, K and V must have the same rank (2-D, 3-D, or 4-D [batch, heads, rows, cols])");
  if (qt.batch != kt.batch || kt.batch != vt.batch)
    return fail(io, shapes(r.q, qa, r.k, ka) + " and " + r.v + " has shape " + va.shape_text() +
                ": the batch sizes differ");
  if (qt.cols != kt.cols)
    return fail(io, shapes(r.q, qa, r.k, ka) + ": Dk differs (" + std::to_string(qt.cols) + " vs " + std::to_string(kt.cols) + ")");
  if (kt.rows != vt.rows)
    return fail(io, shapes(r.k, ka, r.v, va) + ": M (key rows) differs (" + std::to_string(kt.rows) + " vs " +
                std::to_string(vt.rows) + ")");
  if (kt.heads != vt.heads)
    return fail(io, shapes(r.k, ka, r.v, va) + ": key/value head counts differ");
  if (qt.heads % kt.heads != 0)
    return fail(io, shapes(r.q, qa, r.k, ka) + ": query heads (" + std::to_string(qt.heads) +
                ") must be a multiple of key/value heads (" + std::to_string(kt.heads) + ")");
  if (!r.heads.empty()) {
    if (static_cast<size_t>(heads_q) != qt.heads || static_cast<size_t>(heads_kv) != kt.heads)
      return fail(io, "--heads " + r.heads + " does not match the files: " + shapes(r.q, qa, r.k, ka) +
                  " (" + std::to_string(qt.heads) + "," + std::to_string(kt.heads) + " heads)");
  }
  // The past keys and values: K's and V's layout with P rows each.
  size_t past = 0;
  if (has_past) {
    Tensor4 pkt, pvt;
    if (!as_tensor4(pka, r.past_k, &pkt, &error) || !as_tensor4(pva, r.past_v, &pvt, &error)) return fail(io, error);
    if (pkt.rank != kt.rank || pkt.batch != kt.batch || pkt.heads != kt.heads || pkt.cols != kt.cols)
      return fail(io, shapes(r.past_k, pka, r.k, ka) + ": the past keys need K's batch, heads and Dk (" +
                  std::string(kt.rank == 4 ? "[B, Hkv, P, Dk]" : kt.rank == 3 ? "[Hkv, P, Dk]" : "[P, Dk]") + ")");
    if (pvt.rank != vt.rank || pvt.batch != vt.batch || pvt.heads != vt.heads || pvt.cols != vt.cols)
      return fail(io, shapes(r.past_v, pva, r.v, va) + ": the past values need V's batch, heads and Dv (" +
                  std::string(vt.rank == 4 ? "[B, Hkv, P, Dv]" : vt.rank == 3 ? "[Hkv, P, Dv]" : "[P, Dv]") + ")");
    if (pkt.rows != pvt.rows)
      return fail(io, shapes(r.past_k, pka, r.past_v, pva) + ": past lengths differ (" + std::to_string(pkt.rows) +
                  " vs " + std::to_string(pvt.rows) + ")");
    past = pkt.rows;
  }
  const size_t batch = qt.batch, total = past + kt.rows;
  if (total > tinyattn::kMaxDim)
    return fail(io, "the past and the new keys make " + std::to_string(total) + " keys, above the limit of " +
                std::to_string(tinyattn::kMaxDim));
  const tinyattn::Dims d{qt.rows, total, qt.cols, vt.cols, qt.heads, kt.heads};
  const bool onnx = qt.rank == 4;

  // --kv-len: one length for every batch element, or (4-D) one per element (ONNX's nonpad_kv_seqlen).
  if (!kv_lens.empty()) {
    bool ok = kv_lens.size() == 1 || kv_lens.size() == batch;
    for (size_t i = 0; ok && i < kv_lens.size(); ++i) ok = kv_lens[i] <= d.m;
    if (!ok)
      return usage_error(io, "--kv-len must be an integer in [0, M=" + std::to_string(d.m) + "]" +
                         (batch > 1 ? " or one per batch element (" + std::to_string(batch) + ")" : std::string()) +
                         ", got '" + r.kv_len + "'");
    kv_lens.resize(batch, kv_lens[0]);
  }

  // Element masks: --mask (bool/uint8 keep, or float: ONNX's additive attn_mask) and --bias.
  Array ma, ba;
  MaskShape keep_shape, add_shape;
  std::vector<uint8_t> keep_src;
  std::vector<float> add_src;
  std::vector<int8_t> bias_i8_src;
  std::string add_path;  // the file of the additive mask, if any
  if (!r.mask.empty()) {
    if (!tinyattn_tool::read_npy(r.mask, &ma, &error)) return fail(io, error);
    if (ma.dtype == DType::kBool || ma.dtype == DType::kU8) {
      if (!mask_shape(ma, r.mask, onnx, true, qa, ka, batch, d, &keep_shape, &error)) return fail(io, error);
      keep_src = ma.data;
    } else if (ma.dtype == DType::kF32 || ma.dtype == DType::kF16) {
      if (is_i8)
        return fail(io, r.mask + ": --dtype i8 takes no float mask (the int8 path is integer only); give a bool mask "
                    "or an int8 --bias");
      if (is_i16)
        return fail(io, r.mask + ": --dtype i16 takes no float mask (the int16 path is integer only, without a "
                    "bias); give a bool mask");
      if (!mask_shape(ma, r.mask, onnx, true, qa, ka, batch, d, &add_shape, &error)) return fail(io, error);
      add_src = ma.to_f32();
      add_path = r.mask;
    } else {
      return fail(io, r.mask + ": a mask must be bool or uint8 (nonzero = attend) or float32/float16 (added to the "
                  "logits, ONNX's float attn_mask), got " + tinyattn_tool::dtype_name(ma.dtype));
    }
  }
  if (!r.bias.empty() && is_i8) {
    // The int8 path has no float bias (it would need floating point at run time): an int8 one, quantized by b=.
    if (!tinyattn_tool::read_npy(r.bias, &ba, &error)) return fail(io, error);
    if (ba.dtype != DType::kI8)
      return fail(io, r.bias + ": --dtype i8 takes no float bias (the int8 path is integer only); give an int8 bias "
                  "and its b=SCALE[:ZERO_POINT] in --qparams, got " + tinyattn_tool::dtype_name(ba.dtype));
    if (!qspec.b.given) return fail(io, r.bias + ": an int8 bias needs b=SCALE[:ZERO_POINT] in --qparams");
    if (!mask_shape(ba, r.bias, onnx, false, qa, ka, batch, d, &add_shape, &error)) return fail(io, error);
    bias_i8_src.resize(ba.data.size());
    std::memcpy(bias_i8_src.data(), ba.data.data(), ba.data.size());
  } else if (!r.bias.empty()) {
    if (!add_path.empty())
      return fail(io, r.mask + " is a float mask (added to the logits) and --bias " + r.bias +
                  " is another: the library adds one; give one of them");
    if (!load_float(r.bias, "the bias", &ba, &add_src, &error)) return fail(io, error);
    if (!mask_shape(ba, r.bias, onnx, true, qa, ka, batch, d, &add_shape, &error)) return fail(io, error);
    add_path = r.bias;
  }
  if (is_i8 && qspec.b.given && r.bias.empty()) return usage_error(io, "--qparams gives b= but there is no --bias");
  const bool has_keep = !keep_src.empty(), has_add = !add_src.empty() || !bias_i8_src.empty();
  // One head stride serves both masks: a per-head one makes the other per-head too.
  const size_t mask_heads = (has_keep && keep_shape.h > 1) || (has_add && add_shape.h > 1) ? d.hq : 1;

  // Every size is known: check them before allocating.
  const size_t y_elems = product({batch, d.y_elems()}), w_elems = product({batch, d.weight_elems()});
  const size_t present_elems = product({batch, d.hkv, d.m, d.dk + d.dv});
  const size_t keep_elems = has_keep ? product({keep_shape.b, mask_heads, d.n, d.m}) : 0;
  const size_t add_elems = has_add ? product({add_shape.b, mask_heads, d.n, d.m}) : 0;
  if (product({y_elems, sizeof(float)}) > kMaxOutputBytes ||
      ((!r.weights.empty() || !r.scores.empty()) && product({w_elems, sizeof(float)}) > kMaxOutputBytes) ||
      product({present_elems, sizeof(float)}) > kMaxOutputBytes || keep_elems > kMaxOutputBytes ||
      product({add_elems, sizeof(float)}) > kMaxOutputBytes)
    return fail(io, "the outputs would exceed the 1 GiB limit (B*Hq*N*M = " + std::to_string(w_elems) + ")");

  std::vector<uint8_t> keep;
  std::vector<float> bias;
  std::vector<int8_t> bias_i8;
  if (has_keep) keep = expand_mask<uint8_t>(keep_src, keep_shape, mask_heads, d.n, d.m, 0);
  if (!add_src.empty())
    bias = expand_mask<float>(add_src, add_shape, mask_heads, d.n, d.m, -std::numeric_limits<float>::infinity());
  if (!bias_i8_src.empty()) bias_i8 = expand_mask<int8_t>(bias_i8_src, add_shape, mask_heads, d.n, d.m, 0);
  mask.head_stride = mask_heads > 1 ? d.n * d.m : 0;
  const size_t keep_batch_stride = keep_shape.b > 1 ? mask_heads * d.n * d.m : 0;
  const size_t add_batch_stride = add_shape.b > 1 ? mask_heads * d.n * d.m : 0;

  // With a past, K and V become ONNX's present tensors, [B][Hkv][P + M][D].
  const size_t bh = batch * d.hkv;
  if (has_past) {
    if (is_f16) {
      kh = concat_sequence(pkh, kh, bh, past, kt.rows, d.dk);
      vh = concat_sequence(pvh, vh, bh, past, kt.rows, d.dv);
    } else if (is_i8) {
      ki = concat_sequence(pki, ki, bh, past, kt.rows, d.dk);
      vi = concat_sequence(pvi, vi, bh, past, kt.rows, d.dv);
    } else if (is_i16) {
      ks16 = concat_sequence(pks16, ks16, bh, past, kt.rows, d.dk);
      vs16 = concat_sequence(pvs16, vs16, bh, past, kt.rows, d.dv);
    } else {
      k = concat_sequence(pk, k, bh, past, kt.rows, d.dk);
      v = concat_sequence(pv, v, bh, past, kt.rows, d.dv);
    }
  }

  const bool want_weights = !r.weights.empty();
  std::vector<float> y, weights, scores;
  std::vector<tinyattn::half> yh, weights_h;
  std::vector<int8_t> yi;
  std::vector<int16_t> y16;
  std::vector<uint16_t> weights_q15;
  std::vector<unsigned char> ws;
  std::vector<tinyattn::Int8HeadPlan> plans;
  std::vector<tinyattn::Int16HeadPlan> plans16;
  const char* api = "tinyattn::forward";
  if (is_f16) {
    api = "tinyattn::forward_f16";
    yh.resize(y_elems);
    weights_h.resize(want_weights ? w_elems : 0);
    ws.resize(tinyattn::forward_f16_workspace_bytes(d, want_weights));
  } else if (is_i8) {
    tinyattn::Int8Scheme scheme = scheme_of(qspec, int8_mode);
    scheme.softmax_scale = opt.scale;
    plans.resize(d.hq);
    const tinyattn::Status s = tinyattn::plan_int8(d, scheme, plans.data(), plans.size());
    if (s != tinyattn::Status::kOk) {
      std::string hint;
      if (s == tinyattn::Status::kBadQuantization)
        hint = " (scales must be finite and > 0, zero points in [-128, 127], one entry per tensor or one per head, "
               "and the requantization multipliers representable: see docs/quant.md)";
      return fail(io, std::string("tinyattn::plan_int8 rejected --qparams: ") + tinyattn::to_string(s) + hint);
    }
    api = "tinyattn::forward_i8";
    yi.resize(y_elems);
    weights_q15.resize(want_weights ? w_elems : 0);
    ws.resize(tinyattn::forward_i8_workspace_bytes(d));
  } else if (is_i16) {
    tinyattn::Int16Scheme scheme = scheme16_of(qspec, int16_mode);
    scheme.softmax_scale = opt.scale;
    plans16.resize(d.hq);
    const tinyattn::Status s = tinyattn::plan_int16(d, scheme, plans16.data(), plans16.size());
    if (s != tinyattn::Status::kOk) {
      std::string hint;
      if (s == tinyattn::Status::kBadQuantization)
        hint = " (scales must be finite and > 0, zero points 0: int16 tensors are symmetric, one entry per tensor "
               "or one per head, and the requantization multipliers representable: see docs/quant.md)";
      return fail(io, std::string("tinyattn::plan_int16 rejected --qparams: ") + tinyattn::to_string(s) + hint);
    }
    api = "tinyattn::forward_i16";
    y16.resize(y_elems);
    weights_q15.resize(want_weights ? w_elems : 0);
    ws.resize(tinyattn::forward_i16_workspace_bytes(d));
  } else {
    y.resize(y_elems);
    weights.resize(want_weights ? w_elems : 0);
    scores.resize(r.scores.empty() ? 0 : w_elems);
    ws.resize(tinyattn::forward_workspace_bytes(d, want_weights));
  }

  // The library's layout is [H][S][D] per batch element: one call per element.
  const size_t qs = d.hq * d.n * d.dk, ks = d.hkv * d.m * d.dk, vs = d.hkv * d.m * d.dv;
  const size_t ys = d.y_elems(), wsz = d.weight_elems();
  for (size_t b = 0; b < batch; ++b) {
    tinyattn::Mask mb = mask;
    if (!kv_lens.empty()) mb.kv_len = kv_lens[b];
    if (onnx_causal) {
      // ONNX's is_causal: query i sees keys j <= i + offset, the offset being the
      // past length (internal cache) or the valid keys before the N new ones
      // (external cache, --kv-len valid), else 0.
      const tinyattn::Mask c = has_past         ? tinyattn::Mask::causal_offset(static_cast<int32_t>(past))
                               : kv_lens.empty() ? tinyattn::Mask::causal_offset(0)
                                                 : tinyattn::Mask::causal_cache(kv_lens[b], static_cast<uint32_t>(d.n));
      mb.causal = c.causal;
      mb.offset = c.offset;
      if (!has_past && !kv_lens.empty()) mb.kv_len = c.kv_len;
    }
    if (has_keep) mb.keep = keep.data() + b * keep_batch_stride;
    if (!bias.empty()) mb.bias = bias.data() + b * add_batch_stride;
    tinyattn::Status s = tinyattn::Status::kOk;
    const tinyattn::Workspace w{ws.data(), ws.size()};
    if (is_f16) {
      const tinyattn::ForwardIoF16 call{qh.data() + b * qs, kh.data() + b * ks, vh.data() + b * vs,
                                        yh.data() + b * ys, want_weights ? weights_h.data() + b * wsz : nullptr,
                                        nullptr};
      s = tinyattn::forward_f16(d, call, w, mb, opt);
    } else if (is_i8) {
      tinyattn::ForwardIoI8 call;
      call.q = qi.data() + b * qs;
      call.k = ki.data() + b * ks;
      call.v = vi.data() + b * vs;
      call.y = yi.data() + b * ys;
      call.weights = want_weights ? weights_q15.data() + b * wsz : nullptr;
      call.bias = bias_i8.empty() ? nullptr : bias_i8.data() + b * add_batch_stride;
      s = tinyattn::forward_i8(d, call, tinyattn::Int8Plan{plans.data(), plans.size()}, w, mb,
                               tinyattn::Options{{}, opt.port});
    } else if (is_i16) {
      tinyattn::ForwardIoI16 call;
      call.q = qs16.data() + b * qs;
      call.k = ks16.data() + b * ks;
      call.v = vs16.data() + b * vs;
      call.y = y16.data() + b * ys;
      call.weights = want_weights ? weights_q15.data() + b * wsz : nullptr;
      s = tinyattn::forward_i16(d, call, tinyattn::Int16Plan{plans16.data(), plans16.size()}, w, mb,
                                tinyattn::Options{{}, opt.port});
    } else {
      tinyattn::ForwardIo call{q.data() + b * qs, k.data() + b * ks, v.data() + b * vs, y.data() + b * ys,
                               want_weights ? weights.data() + b * wsz : nullptr, nullptr};
      call.scores = r.scores.empty() ? nullptr : scores.data() + b * wsz;
      call.score_stage = stage;
      s = tinyattn::forward(d, call, w, mb, opt);
    }
    if (s != tinyattn::Status::kOk) {
      std::string hint;
      if (s == tinyattn::Status::kBadMask)
        hint = " (the window is empty: L + R must be >= 0, or --offset + N > --kv-len: a query past the valid keys)";
      else if (s == tinyattn::Status::kBadDimension && int8_mode == tinyattn::Int8Mode::kTflite)
        hint = " (--int8-mode tflite takes at most " + std::to_string(tinyattn::kMaxMTflite) +
               " keys: TFLite's softmax sums in Q12.19)";
      else if (s == tinyattn::Status::kBadDimension && is_i16)
        hint = " (--dtype i16 takes Dk <= " + std::to_string(tinyattn::kMaxDkInt16) + " and at most " +
               std::to_string(tinyattn::kMaxMInt16) + " keys)";
      return fail(io, std::string(api) + " rejected the problem" +
                  (batch > 1 ? " (batch element " + std::to_string(b) + ")" : std::string()) + ": " +
                  tinyattn::to_string(s) + hint);
    }
  }

  // Outputs keep Q's rank: [N, X], [Hq, N, X] or [B, Hq, N, X]; the present ones K's.
  const auto shaped = [&](const Tensor4& like, size_t heads, size_t rows, size_t cols) {
    std::vector<size_t> s = {rows, cols};
    if (like.rank >= 3) s.insert(s.begin(), heads);
    if (like.rank == 4) s.insert(s.begin(), batch);
    return s;
  };
  const std::vector<size_t> y_shape = shaped(qt, d.hq, d.n, d.dv), w_shape = shaped(qt, d.hq, d.n, d.m);
  const std::vector<size_t> pk_shape = shaped(kt, d.hkv, d.m, d.dk), pv_shape = shaped(vt, d.hkv, d.m, d.dv);
  const bool present = !r.present_k.empty();
  // half is two bytes of IEEE bits, so '<f2' writes it as it is.
  const char* float_descr = is_f16 ? "<f2" : is_i8 ? "|i1" : is_i16 ? "<i2" : "<f4";
  const size_t float_size = is_f16 || is_i16 ? 2 : is_i8 ? 1 : 4;
  const void* y_data = is_f16   ? static_cast<const void*>(yh.data())
                       : is_i8  ? static_cast<const void*>(yi.data())
                       : is_i16 ? static_cast<const void*>(y16.data())
                                : static_cast<const void*>(y.data());
  std::vector<tinyattn_tool::OutputFile> files;
  files.push_back({r.out, tinyattn_tool::npy_bytes(float_descr, y_shape, y_data, float_size)});
  if (want_weights)
    files.push_back({r.weights, is_f16      ? tinyattn_tool::npy_bytes("<f2", w_shape, weights_h.data(), 2)
                                : quantized ? tinyattn_tool::npy_bytes("<u2", w_shape, weights_q15.data(), 2)
                                            : tinyattn_tool::npy_bytes_f32(w_shape, weights.data())});
  if (!r.scores.empty()) files.push_back({r.scores, tinyattn_tool::npy_bytes_f32(w_shape, scores.data())});
  if (present) {
    const void* k_data = is_f16   ? static_cast<const void*>(kh.data())
                         : is_i8  ? static_cast<const void*>(ki.data())
                         : is_i16 ? static_cast<const void*>(ks16.data())
                                  : static_cast<const void*>(k.data());
    const void* v_data = is_f16   ? static_cast<const void*>(vh.data())
                         : is_i8  ? static_cast<const void*>(vi.data())
                         : is_i16 ? static_cast<const void*>(vs16.data())
                                  : static_cast<const void*>(v.data());
    files.push_back({r.present_k, tinyattn_tool::npy_bytes(float_descr, pk_shape, k_data, float_size)});
    files.push_back({r.present_v, tinyattn_tool::npy_bytes(float_descr, pv_shape, v_data, float_size)});
  }
  return tinyattn_tool::write_all_or_none(files, &error) ? 0 : fail(io, error);
}
// ---------------------------------------------------------------- plan

// The offline int16 plan of cmd_plan: plan_int16 on the host, printed as an
// initializer of tinyattn_int16_head_plan (C) or tinyattn::Int16HeadPlan
// (C++), one layout (lib/src/c_api.cc asserts it).
int print_plan_int16(const Io& io, const tinyattn::Dims& d, const QuantSpec& qspec, tinyattn::Int16Mode mode,
                     const std::string& scale_arg, float softmax_scale, const std::string& cmdline,
                     const std::string& name, bool c, const std::string& out) {
  tinyattn::Int16Scheme scheme = scheme16_of(qspec, mode);
  if (!scale_arg.empty()) scheme.softmax_scale = softmax_scale;
  std::vector<tinyattn::Int16HeadPlan> plans(d.hq);
  const tinyattn::Status st = tinyattn::plan_int16(d, scheme, plans.data(), plans.size());
  if (st != tinyattn::Status::kOk)
    return fail(io, std::string("tinyattn::plan_int16 rejected the arguments: ") + tinyattn::to_string(st) +
                " (scales finite and > 0, zero points 0, one entry per tensor or one per head, HQ a multiple of "
                "HKV: see docs/quant.md)");
  std::string text = "/* tinyattn int16 plan: " + cmdline + "\n" +
                     " * One head plan per query head: {logit, output multipliers {multiplier, shift}, mode,\n" +
                     " * TFLite-mode integers}. " +
                     (c ? "Pass it to tinyattn_forward_i16 with plan_count = HQ. */\n"
                        : "Pass tinyattn::Int16Plan{plan, HQ} to tinyattn::forward_i16. */\n") +
                     (c ? "#include \"tinyattn/tinyattn_c.h\"\n\n" : "#include \"tinyattn/quant_i16.h\"\n\n") +
                     (c ? "static const tinyattn_int16_head_plan " : "static const tinyattn::Int16HeadPlan ") + name +
                     "[" + std::to_string(d.hq) + "] = {\n";
  for (const tinyattn::Int16HeadPlan& p : plans) {
    char line[256];
    const tinyattn::TfliteParamsI16& t = p.tflite;
    // C: the int32_t; C++: the enum's name (an enum class takes no integer initializer)
    const bool tfl = p.mode == tinyattn::Int16Mode::kTflite;
    const char* mode_name = c ? (tfl ? "TINYATTN_INT16_MODE_TFLITE" : "TINYATTN_INT16_MODE_NATIVE")
                              : (tfl ? "tinyattn::Int16Mode::kTflite" : "tinyattn::Int16Mode::kNative");
    std::snprintf(line, sizeof line, "    {{%ld, %ld}, {%ld, %ld}, %s, {{%ld, %ld}, {%ld, %ld}, {%ld, %ld}}},\n",
                  static_cast<long>(p.logit.multiplier), static_cast<long>(p.logit.shift),
                  static_cast<long>(p.output.multiplier), static_cast<long>(p.output.shift), mode_name,
                  static_cast<long>(t.scores.multiplier), static_cast<long>(t.scores.shift),
                  static_cast<long>(t.beta.multiplier), static_cast<long>(t.beta.shift),
                  static_cast<long>(t.output.multiplier), static_cast<long>(t.output.shift));
    text += line;
  }
  text += "};\n";
  std::string error;
  if (out.empty()) {
    std::fputs(text.c_str(), io.out);
    return 0;
  }
  if (!tinyattn_tool::write_all_or_none({{out, std::vector<uint8_t>(text.begin(), text.end())}}, &error))
    return fail(io, error + " (the plan)");
  return 0;
}

// The offline int8 plan: plan_int8 on the host, printed as an initializer
// of tinyattn_int8_head_plan (C) or tinyattn::Int8HeadPlan (C++), whose
// layouts are one (lib/src/c_api.cc asserts it). Only Dk and the heads enter
// a plan; N and M do not. --dtype i16 prints the int16 plan instead.
int cmd_plan(const Io& io, int argc, char** argv) {
  std::string dk_arg, qparams, heads = "1,1", scale_arg, name = "tinyattn_plan", lang = "c", out, mode_arg,
      mode16_arg, dtype = "i8";
  ValueOption opts[] = {{"--dk", &dk_arg},       {"--qparams", &qparams},    {"--heads", &heads},
                        {"--scale", &scale_arg}, {"--name", &name},          {"--lang", &lang},
                        {"--out", &out},         {"--int8-mode", &mode_arg}, {"--int16-mode", &mode16_arg},
                        {"--dtype", &dtype}};
  for (int i = 0; i < argc; ++i) {
    const int taken = take_value(io, opts, sizeof opts / sizeof opts[0], argc, argv, &i);
    if (taken > 0) return taken;
    if (taken < 0) return usage_error(io, std::string("plan: unknown argument '") + argv[i] + "'");
  }
  long long dk = 0, hq = 0, hkv = 0;
  if (!parse_long(dk_arg, 1, static_cast<long long>(tinyattn::kMaxDim), &dk))
    return usage_error(io, "plan: --dk must be an integer in [1, " + std::to_string(tinyattn::kMaxDim) + "]");
  const std::vector<std::string> h = split(heads, ',');
  if (h.size() != 2 || !parse_long(h[0], 1, 65535, &hq) || !parse_long(h[1], 1, 65535, &hkv))
    return usage_error(io, "plan: --heads must be HQ,HKV (positive integers), got '" + heads + "'");
  if (qparams.empty()) return usage_error(io, "plan: --qparams q=S[:Z],k=S[:Z],v=S[:Z],y=S[:Z][,b=S[:Z]] is required");
  bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!identifier) return usage_error(io, "plan: --name must be a C identifier, got '" + name + "'");
  if (lang != "c" && lang != "cpp") return usage_error(io, "plan: --lang must be c or cpp");
  dtype = canonical_dtype(dtype);
  if (dtype != "i8" && dtype != "i16") return usage_error(io, "plan: --dtype must be i8 or i16, got '" + dtype + "'");
  const bool is_i16 = dtype == "i16";
  if (is_i16 && !mode_arg.empty()) return usage_error(io, "plan: --int8-mode applies to --dtype i8 only");
  if (!is_i16 && !mode16_arg.empty()) return usage_error(io, "plan: --int16-mode applies to --dtype i16 only");
  tinyattn::Int8Mode int8_mode = tinyattn::Int8Mode::kNative;
  if (std::string e = int8_mode_error(mode_arg, nullptr, &int8_mode); !e.empty()) return usage_error(io, "plan: " + e);
  tinyattn::Int16Mode int16_mode = tinyattn::Int16Mode::kNative;
  if (std::string e = int16_mode_error(mode16_arg, nullptr, &int16_mode); !e.empty())
    return usage_error(io, "plan: " + e);
  float softmax_scale = 0.0f;
  if (!scale_arg.empty()) {
    char* end = nullptr;
    softmax_scale = std::strtof(scale_arg.c_str(), &end);
    if (*end != '\0' || !std::isfinite(softmax_scale))
      return usage_error(io, "--scale must be a finite number, got '" + scale_arg + "'");
  }
  std::string error;
  if (!out.empty()) {
    std::vector<tinyattn_tool::NamedPath> inputs;
    if (qparams_is_file(qparams)) inputs.push_back({"--qparams", qparams});
    if (!tinyattn_tool::check_paths({{"--out", out}}, inputs, &error)) return fail(io, error, kExitUsage);
  }
  QuantSpec qspec;
  if (!parse_qparams(qparams, &qspec, &error)) return usage_error(io, error);
  tinyattn::Dims d{1, 1, static_cast<size_t>(dk), 1};
  d.hq = static_cast<size_t>(hq);
  d.hkv = static_cast<size_t>(hkv);
  if (is_i16) {
    if (!(error = int16_mode_error(mode16_arg, &qspec, &int16_mode)).empty()) return usage_error(io, "plan: " + error);
    std::string cmdline = "tinyattn plan --dtype i16 --dk " + dk_arg + " --heads " + heads + " --qparams " + qparams;
    if (!scale_arg.empty()) cmdline += " --scale " + scale_arg;
    if (!mode16_arg.empty()) cmdline += " --int16-mode " + mode16_arg;
    for (size_t at; (at = cmdline.find("*/")) != std::string::npos;) cmdline.replace(at, 2, "* /");  // stay a comment
    return print_plan_int16(io, d, qspec, int16_mode, scale_arg, softmax_scale, cmdline, name, lang == "c", out);
  }
  if (!(error = int8_mode_error(mode_arg, &qspec, &int8_mode)).empty()) return usage_error(io, "plan: " + error);
  tinyattn::Int8Scheme scheme = scheme_of(qspec, int8_mode);
  if (!scale_arg.empty()) scheme.softmax_scale = softmax_scale;
  std::vector<tinyattn::Int8HeadPlan> plans(d.hq);
  const tinyattn::Status st = tinyattn::plan_int8(d, scheme, plans.data(), plans.size());
  if (st != tinyattn::Status::kOk)
    return fail(io, std::string("tinyattn::plan_int8 rejected the arguments: ") + tinyattn::to_string(st) +
                " (scales finite and > 0, zero points in [-128, 127], one entry per tensor or one per head, HQ a "
                "multiple of HKV: see docs/quant.md)");
  const bool c = lang == "c";
  std::string cmdline = "tinyattn plan --dk " + dk_arg + " --heads " + heads + " --qparams " + qparams;
  if (!scale_arg.empty()) cmdline += " --scale " + scale_arg;
  if (!mode_arg.empty()) cmdline += " --int8-mode " + mode_arg;
  for (size_t at; (at = cmdline.find("*/")) != std::string::npos;) cmdline.replace(at, 2, "* /");  // stay a comment
  std::string text = "/* tinyattn int8 plan: " + cmdline + "\n" +
                     " * One head plan per query head: {logit, output, bias multipliers {multiplier, shift},\n"
                     " * zero points of q, k, v, y and the bias, mode, TFLite-mode integers}. " +
                     (c ? "Pass it to tinyattn_forward_i8 with plan_count = HQ. */\n"
                        : "Pass tinyattn::Int8Plan{plan, HQ} to tinyattn::forward_i8. */\n") +
                     (c ? "#include \"tinyattn/tinyattn_c.h\"\n\n" : "#include \"tinyattn/quant.h\"\n\n") +
                     (c ? "static const tinyattn_int8_head_plan " : "static const tinyattn::Int8HeadPlan ") + name +
                     "[" + std::to_string(hq) + "] = {\n";
  for (const tinyattn::Int8HeadPlan& p : plans) {
    char line[384];
    const tinyattn::TfliteParams& t = p.tflite;
    // C: the int32_t; C++: the enum's name (an enum class takes no integer initializer)
    const bool tfl = p.mode == tinyattn::Int8Mode::kTflite;
    const std::string mode = c ? (tfl ? "TINYATTN_INT8_MODE_TFLITE" : "TINYATTN_INT8_MODE_NATIVE")
                               : (tfl ? "tinyattn::Int8Mode::kTflite" : "tinyattn::Int8Mode::kNative");
    std::snprintf(line, sizeof line,
                  "    {{%ld, %ld}, {%ld, %ld}, {%ld, %ld}, %ld, %ld, %ld, %ld, %ld, %s, "
                  "{{%ld, %ld}, %ld, {%ld, %ld}, %ld, {%ld, %ld}}},\n",
                  static_cast<long>(p.logit.multiplier), static_cast<long>(p.logit.shift),
                  static_cast<long>(p.output.multiplier), static_cast<long>(p.output.shift),
                  static_cast<long>(p.bias.multiplier), static_cast<long>(p.bias.shift), static_cast<long>(p.q_zero),
                  static_cast<long>(p.k_zero), static_cast<long>(p.v_zero), static_cast<long>(p.y_zero),
                  static_cast<long>(p.bias_zero), mode.c_str(), static_cast<long>(t.scores.multiplier),
                  static_cast<long>(t.scores.shift), static_cast<long>(t.scores_zero),
                  static_cast<long>(t.beta.multiplier), static_cast<long>(t.beta.shift),
                  static_cast<long>(t.diff_min), static_cast<long>(t.output.multiplier),
                  static_cast<long>(t.output.shift));
    text += line;
  }
  text += "};\n";
  if (out.empty()) {
    std::fputs(text.c_str(), io.out);
    return 0;
  }
  if (!tinyattn_tool::write_all_or_none({{out, std::vector<uint8_t>(text.begin(), text.end())}}, &error))
    return fail(io, error + " (the plan)");
  return 0;
}

// ---------------------------------------------------------------- selftest

int cmd_selftest(const Io& io, int argc, char** argv) {
  std::string port_arg = "default", format_arg = "both";
  ValueOption opts[] = {{"--port", &port_arg}, {"--format", &format_arg}};
  for (int i = 0; i < argc; ++i) {
    const int taken = take_value(io, opts, sizeof opts / sizeof opts[0], argc, argv, &i);
    if (taken > 0) return taken;
    if (taken < 0) return usage_error(io, std::string("selftest: unknown argument '") + argv[i] + "'");
  }
  tinyattn::Port port = tinyattn::Port::kDefault;
  if (!parse_port(port_arg, &port)) return usage_error(io, "--port: unknown port '" + port_arg + "'");
  tinyattn::SelftestFormat format = tinyattn::SelftestFormat::kBoth;
  if (format_arg == "unity") format = tinyattn::SelftestFormat::kUnity;
  else if (format_arg == "table") format = tinyattn::SelftestFormat::kTable;
  else if (format_arg != "both") return usage_error(io, "--format must be unity, table or both");
  static tinyattn::SelftestReport report;
  g_selftest_out = io.out;
  const tinyattn::Status s = tinyattn::selftest(&report, port, write_selftest, format);
  if (s != tinyattn::Status::kOk)
    return fail(io, std::string("selftest on port ") + tinyattn::port_name(port) + ": " + tinyattn::to_string(s));
  return report.passed() ? 0 : kExitFail;
}

// ---------------------------------------------------------------- demo

int cmd_demo(const Io& io, int argc, char** argv) {
  std::string svg = "attention_map.svg";
  bool color = isatty(fileno(io.out)) && std::getenv("NO_COLOR") == nullptr;
  ValueOption opts[] = {{"--svg", &svg}};
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--color") {
      color = true;
      continue;
    }
    if (a == "--no-color") {
      color = false;
      continue;
    }
    const int taken = take_value(io, opts, 1, argc, argv, &i);
    if (taken > 0) return taken;
    if (taken < 0) return usage_error(io, "demo: unknown argument '" + a + "'");
  }
  std::string error;
  if (!tinyattn_tool::check_paths({{"--svg", svg}}, {}, &error)) return fail(io, error, kExitUsage);
  const tinyattn_demo::Notebook nb = tinyattn_demo::run_notebook();
  if (!nb.ok) return fail(io, "demo: " + nb.error);
  const std::string title = "Self-Attention Map A = Softmax(QK^T / sqrt(dk))";
  std::vector<tinyattn_demo::GradientPoint> points;
  for (const tinyattn_demo::SaturationRow& r : nb.saturation) points.push_back({r.dk, r.scaled, r.unscaled});
  const std::string picture = tinyattn_demo::figure_svg(nb.map.tokens, nb.map.weights, points);
  if (!tinyattn_tool::write_all_or_none({{svg, std::vector<uint8_t>(picture.begin(), picture.end())}}, &error))
    return fail(io, error + " (the heatmap)");
  std::fprintf(io.out, "%s: \"The animal didn't cross the street because it was too tired\"\n", title.c_str());
  std::fprintf(io.out, "(rows: queries, columns: keys; synthetic embeddings of the seed notebook, seed 1337)\n\n");
  std::fputs(tinyattn_demo::heatmap_terminal(nb.map.tokens, nb.map.weights, color).c_str(), io.out);
  std::fprintf(io.out, "heatmap and gradient panel written to %s\n\n", svg.c_str());
  std::fputs(tinyattn_demo::render(nb.properties).c_str(), io.out);
  std::fputs("\n", io.out);
  std::fputs(tinyattn_demo::render(nb.saturation_table).c_str(), io.out);
  std::fputs("\n", io.out);
  std::fputs(tinyattn_demo::render(nb.disambiguation).c_str(), io.out);
  return 0;
}

}  // namespace

namespace tinyattn_tool {

int tool_main(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const Io io{out, err};
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? err : out);
    return argc < 2 ? kExitUsage : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "run") return cmd_run(io, argc - 2, argv + 2);
  if (cmd == "plan") return cmd_plan(io, argc - 2, argv + 2);
  if (cmd == "selftest") return cmd_selftest(io, argc - 2, argv + 2);
  if (cmd == "demo") return cmd_demo(io, argc - 2, argv + 2);
  if (cmd == "explain") return cmd_explain(io, argc - 2, argv + 2);
  if (cmd == "decode") return cmd_decode(io, argc - 2, argv + 2);
  return usage_error(io, "unknown command '" + cmd + "' (run, plan, explain, decode, selftest, demo)");
}

}  // namespace tinyattn_tool
