// `tinyattn decode`: a token sequence through a KV cache, step by step, as
// firmware decodes it: the cache's storage type (--kv-dtype), a ring with
// attention sinks (--window, --sinks) and RoPE (--rope), over the C API's
// cache (run-time extents). Y of every step, [Hq,]T,Dv, goes to --out.
#include <cstring>
#include <string>
#include <vector>

#include "tinyattn/tinyattn.h"
#include "tinyattn/tinyattn_c.h"
#include "tool/args.h"
#include "tool/npy.h"
#include "tool/output_files.h"

namespace tinyattn_tool {

namespace {

// A (q, k or v) tensor as [H][T][D] floats, from 2-D T,D (one head) or 3-D H,T,D.
bool load_heads(const Io& io, const std::string& flag, const std::string& path, std::vector<float>* x, size_t* heads,
                size_t* tokens, size_t* width, int* code) {
  Array a;
  std::string error;
  if (!read_npy(path, &a, &error)) {
    *code = fail(io, error);
    return false;
  }
  if (a.dtype != DType::kF32 && a.dtype != DType::kF16) {
    *code = fail(io, path + ": " + flag.substr(2) + " must be float32 or float16, got " + dtype_name(a.dtype));
    return false;
  }
  if (a.shape.size() != 2 && a.shape.size() != 3) {
    *code = fail(io, path + ": " + flag.substr(2) + " must be [H,]T,D, got shape " + a.shape_text());
    return false;
  }
  *heads = a.shape.size() == 3 ? a.shape[0] : 1;
  *tokens = a.shape[a.shape.size() - 2];
  *width = a.shape.back();
  *x = a.to_f32();
  return true;
}

// Tokens [t0, t0 + n) of x[heads][tokens][width] as [heads][n][width], and back.
template <class T>
void gather(const std::vector<T>& x, size_t heads, size_t tokens, size_t width, size_t t0, size_t n, T* out) {
  for (size_t h = 0; h < heads; ++h)
    std::memcpy(out + h * n * width, x.data() + (h * tokens + t0) * width, n * width * sizeof(T));
}
template <class T>
void scatter(const T* y, size_t heads, size_t tokens, size_t width, size_t t0, size_t n, std::vector<T>* out) {
  for (size_t h = 0; h < heads; ++h)
    std::memcpy(out->data() + (h * tokens + t0) * width, y + h * n * width, n * width * sizeof(T));
}

// Multiply-adds one decode may do (attends over at most the capacity each
// step): bounds the tool's run time on hostile shapes.
constexpr double kMaxWork = 68719476736.0;  // 2^36
// The largest Y the tool writes (as `run`).
constexpr double kMaxOutputBytes = 1073741824.0;  // 2^30

}  // namespace

int cmd_decode(const Io& io, int argc, char** argv) {
  std::string q_path, k_path, v_path, out, kv_dtype = "f32", window_s, sinks_s, rope_s, position_s, chunk_s, scale_s,
                                         port_s = "default";
  ValueOption opts[] = {{"--q", &q_path},          {"--k", &k_path},         {"--v", &v_path},
                        {"--out", &out},           {"--kv-dtype", &kv_dtype}, {"--window", &window_s},
                        {"--sinks", &sinks_s},     {"--rope", &rope_s},       {"--position", &position_s},
                        {"--chunk", &chunk_s},     {"--scale", &scale_s},     {"--port", &port_s}};
  constexpr size_t kOpts = sizeof opts / sizeof opts[0];
  for (int i = 0; i < argc; ++i) {
    const int taken = take_value(io, opts, kOpts, argc, argv, &i);
    if (taken > 0) return taken;
    if (taken < 0) return usage_error(io, std::string("decode: unknown option '") + argv[i] + "'");
  }
  if (q_path.empty() || k_path.empty() || v_path.empty() || out.empty())
    return usage_error(io, "decode needs --q, --k, --v and --out");

  tinyattn_kv_dtype dtype;
  if (kv_dtype == "f32")
    dtype = TINYATTN_KV_F32;
  else if (kv_dtype == "f16")
    dtype = TINYATTN_KV_F16;
  else if (kv_dtype == "i8-scaled")
    dtype = TINYATTN_KV_I8_SCALED;
  else if (kv_dtype == "i8-scaled-f16")
    dtype = TINYATTN_KV_I8_SCALED_F16;
  else
    return usage_error(io, "--kv-dtype must be f32, f16, i8-scaled or i8-scaled-f16, got '" + kv_dtype + "'");
  long long window = 0, sinks = 0, chunk = 1, position = 0;
  const long long kMax = static_cast<long long>(tinyattn::kMaxDim);
  if (!window_s.empty() && !parse_long(window_s, 1, kMax, &window))
    return usage_error(io, "--window must be an integer in [1, " + std::to_string(kMax) + "], got '" + window_s + "'");
  if (!sinks_s.empty() && !parse_long(sinks_s, 0, kMax, &sinks))
    return usage_error(io, "--sinks must be an integer in [0, " + std::to_string(kMax) + "], got '" + sinks_s + "'");
  if (sinks > 0 && window == 0) return usage_error(io, "--sinks needs --window (the sinks stay in front of a ring)");
  if (!chunk_s.empty() && !parse_long(chunk_s, 1, kMax, &chunk))
    return usage_error(io, "--chunk must be an integer in [1, " + std::to_string(kMax) + "], got '" + chunk_s + "'");
  if (!position_s.empty() && !parse_long(position_s, 0, 0x7FFFFFFFLL, &position))
    return usage_error(io, "--position must be an integer in [0, 2^31), got '" + position_s + "'");
  tinyattn_rope rope = TINYATTN_ROPE_DEFAULT;
  if (!rope_s.empty()) {
    const std::vector<std::string> r = split(rope_s, ',');
    if (r[0] == "half-split")
      rope.style = TINYATTN_ROPE_HALF_SPLIT;
    else if (r[0] == "interleaved")
      rope.style = TINYATTN_ROPE_INTERLEAVED;
    else
      return usage_error(io, "--rope must be half-split|interleaved[,THETA[,ROTARY_DIM]], got '" + rope_s + "'");
    if (r.size() > 3) return usage_error(io, "--rope takes at most a style, a theta and a rotary dim");
    if (r.size() > 1) {
      char* end = nullptr;
      rope.theta = std::strtof(r[1].c_str(), &end);
      if (r[1].empty() || *end != '\0') return usage_error(io, "--rope theta must be a number, got '" + r[1] + "'");
    }
    long long rotary = 0;
    if (r.size() > 2 && !parse_long(r[2], 0, kMax, &rotary))
      return usage_error(io, "--rope rotary dim must be an integer in [0, " + std::to_string(kMax) + "]");
    rope.rotary_dim = static_cast<uint32_t>(rotary);
  }
  tinyattn_options options;
  std::memset(&options, 0, sizeof options);
  tinyattn::Port port;
  if (!parse_port(port_s, &port)) return usage_error(io, "--port: unknown or unavailable port '" + port_s + "'");
  options.port = static_cast<tinyattn_port>(port);
  if (!scale_s.empty()) {
    char* end = nullptr;
    options.scale = std::strtof(scale_s.c_str(), &end);
    if (*end != '\0') return usage_error(io, "--scale must be a number, got '" + scale_s + "'");
    options.use_scale = 1;
  }
  std::string error;
  if (!check_paths({{"--out", out}}, {{"--q", q_path}, {"--k", k_path}, {"--v", v_path}}, &error))
    return fail(io, error, kExitUsage);

  std::vector<float> q, k, v;
  size_t hq = 0, hk = 0, hv = 0, tq = 0, tk = 0, tv = 0, dk = 0, dk2 = 0, dv = 0;
  int code = 0;
  if (!load_heads(io, "--q", q_path, &q, &hq, &tq, &dk, &code) ||
      !load_heads(io, "--k", k_path, &k, &hk, &tk, &dk2, &code) ||
      !load_heads(io, "--v", v_path, &v, &hv, &tv, &dv, &code))
    return code;
  if (tq != tk || tk != tv) return fail(io, "q, k and v must hold the same tokens (T), got " + std::to_string(tq) +
                                                ", " + std::to_string(tk) + ", " + std::to_string(tv));
  if (dk != dk2) return fail(io, "q and k must have the same width, got " + std::to_string(dk) + " and " +
                                     std::to_string(dk2));
  if (hk != hv) return fail(io, "k and v must have the same heads, got " + std::to_string(hk) + " and " +
                                    std::to_string(hv));
  const size_t tokens = tq, n_max = static_cast<size_t>(chunk) < tokens ? static_cast<size_t>(chunk) : tokens;
  const size_t capacity = window == 0 ? tokens : static_cast<size_t>(sinks + window) + n_max - 1;
  tinyattn_kv_cache_config config = TINYATTN_KV_CACHE_CONFIG_SINKS(
      dtype, hq, hk, dk, dv, capacity, n_max, static_cast<size_t>(window), static_cast<size_t>(sinks));
  const size_t storage_bytes = tinyattn_kv_cache_storage_bytes(&config);
  const size_t ws_bytes = tinyattn_kv_cache_workspace_bytes(&config);
  if (storage_bytes == 0 || ws_bytes == 0)
    return fail(io, "no cache of this shape: heads " + std::to_string(hq) + "/" + std::to_string(hk) + " (Hq a multiple of Hkv), Dk " +
                        std::to_string(dk) + ", Dv " + std::to_string(dv) + ", capacity " + std::to_string(capacity));
  if (static_cast<double>(hq) * static_cast<double>(tokens) * static_cast<double>(dv) * sizeof(float) > kMaxOutputBytes)
    return fail(io, "decode: Y would pass the tool's 1 GiB output limit");
  const double visible = static_cast<double>(capacity < tokens ? capacity : tokens);
  if (static_cast<double>(tokens) * visible * static_cast<double>(hq) * static_cast<double>(dk + dv) > kMaxWork)
    return fail(io, "decode: the sequence is too long for the tool (more than 2^36 multiply-adds)");
  const size_t rope_bytes = TINYATTN_KV_CACHE_ROPE_BYTES(hq, n_max, dk, dtype);
  std::vector<unsigned char> storage(storage_bytes), workspace(ws_bytes + rope_bytes);
  tinyattn_kv_cache cache;
  tinyattn_status s = tinyattn_kv_cache_init(&cache, &config, storage.data(), storage.size(), workspace.data(),
                                             workspace.size());
  if (s == TINYATTN_OK && !rope_s.empty())
    s = tinyattn_kv_cache_set_rope(&cache, &rope, static_cast<size_t>(position));
  if (s != TINYATTN_OK) return fail(io, std::string("decode: ") + tinyattn_status_string(s));

  const bool f16 = dtype == TINYATTN_KV_F16;
  std::vector<float> y(hq * tokens * dv);
  std::vector<uint16_t> y16(f16 ? y.size() : 0), q16, k16, v16;
  if (f16) {
    for (const auto& pair : {std::make_pair(&q, &q16), std::make_pair(&k, &k16), std::make_pair(&v, &v16)}) {
      pair.second->resize(pair.first->size());
      for (size_t i = 0; i < pair.first->size(); ++i) (*pair.second)[i] = tinyattn_float_to_half((*pair.first)[i]);
    }
  }
  std::vector<float> sq(hq * n_max * dk), sk(hk * n_max * dk), sv(hk * n_max * dv), sy(hq * n_max * dv);
  std::vector<uint16_t> hq16(f16 ? sq.size() : 0), hk16(f16 ? sk.size() : 0), hv16(f16 ? sv.size() : 0),
      hy16(f16 ? sy.size() : 0);
  tinyattn_options_f16 options_f16;
  std::memset(&options_f16, 0, sizeof options_f16);
  options_f16.options = options;
  for (size_t t0 = 0; t0 < tokens;) {
    const size_t n = tokens - t0 < n_max ? tokens - t0 : n_max;
    if (f16) {
      gather(q16, hq, tokens, dk, t0, n, hq16.data());
      gather(k16, hk, tokens, dk, t0, n, hk16.data());
      gather(v16, hk, tokens, dv, t0, n, hv16.data());
      s = tinyattn_kv_cache_append_f16(&cache, hk16.data(), hv16.data(), n);
      if (s == TINYATTN_OK) s = tinyattn_kv_cache_attend_f16(&cache, hq16.data(), hy16.data(), n, &options_f16);
      if (s == TINYATTN_OK) scatter(hy16.data(), hq, tokens, dv, t0, n, &y16);
    } else {
      gather(q, hq, tokens, dk, t0, n, sq.data());
      gather(k, hk, tokens, dk, t0, n, sk.data());
      gather(v, hk, tokens, dv, t0, n, sv.data());
      s = tinyattn_kv_cache_append(&cache, sk.data(), sv.data(), n);
      if (s == TINYATTN_OK) s = tinyattn_kv_cache_attend(&cache, sq.data(), sy.data(), n, &options);
      if (s == TINYATTN_OK) scatter(sy.data(), hq, tokens, dv, t0, n, &y);
    }
    if (s != TINYATTN_OK)
      return fail(io, "decode: step at token " + std::to_string(t0) + ": " + tinyattn_status_string(s));
    t0 += n;
  }
  std::vector<size_t> shape = {hq, tokens, dv};
  const std::vector<uint8_t> bytes = f16 ? npy_bytes("<f2", shape, y16.data(), 2) : npy_bytes_f32(shape, y.data());
  if (!write_all_or_none({{out, bytes}}, &error)) return fail(io, error);
  std::fprintf(io.out, "decode: %zu tokens, heads %zu/%zu, Dk %zu, Dv %zu, kv-dtype %s, %s; cache %zu bytes + %zu workspace\n",
               tokens, hq, hk, dk, dv, kv_dtype.c_str(),
               window == 0 ? "linear" : ("window " + std::to_string(window) + ", sinks " + std::to_string(sinks)).c_str(),
               storage_bytes, workspace.size());
  return 0;
}

}  // namespace tinyattn_tool
