#include "float_paths.h"

#include <cmath>
#include <limits>

#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"

namespace tatest {

const char* path_name(FloatPath path) {
  switch (path) {
    case FloatPath::kF32: return "fp32";
    case FloatPath::kF16Widen: return "fp16-widen";
    case FloatPath::kF16Native: return "fp16-native";
  }
  return "?";
}

bool path_available(FloatPath path) {
  return path != FloatPath::kF16Native || tinyattn::f16_native_products_available();
}

void round_to_half(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = tinyattn::to_float(tinyattn::to_half(x[i]));
}

void round_inputs_to_half(Problem& p) {
  round_to_half(p.q, p.d.q_elems());
  round_to_half(p.k, p.d.k_elems());
  round_to_half(p.v, p.d.v_elems());
}

bool path_uses_tiles(FloatPath path, const tinyattn::Dims& d, bool with_weights) {
  return is_f16(path) ? tinyattn::forward_f16_uses_tiles(d, with_weights)
                      : tinyattn::forward_uses_tiles(d, with_weights);
}

tinyattn::Status run_path(FloatPath path, Problem& p, tinyattn::Port port, const tinyattn::Mask& mask,
                          const tinyattn::Options& o, bool with_weights) {
  if (path == FloatPath::kF32) return run_port(p, port, mask, o, with_weights);
  using tinyattn::half;
  const tinyattn::Dims& d = p.d;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t x = 0; x < d.y_elems(); ++x) p.y[x] = nan;
  for (size_t x = 0; x < d.weight_elems(); ++x) p.weights[x] = nan;
  for (size_t x = 0; x < d.lse_elems(); ++x) p.lse[x] = nan;
  half* q = alloc<half>(d.q_elems());
  half* k = alloc<half>(d.k_elems());
  half* v = alloc<half>(d.v_elems());
  half* y = alloc<half>(d.y_elems());
  half* w = with_weights ? alloc<half>(d.weight_elems()) : nullptr;
  const size_t ws_bytes = tinyattn::forward_f16_workspace_bytes(d, with_weights);
  void* ws = Arena::allocate(ws_bytes);
  if (!q || !k || !v || !y || (with_weights && !w) || !ws) return tinyattn::Status::kNullPointer;  // arena full
  tinyattn::to_half(p.q, q, d.q_elems());
  tinyattn::to_half(p.k, k, d.k_elems());
  tinyattn::to_half(p.v, v, d.v_elems());
  tinyattn::OptionsF16 opt(o);
  opt.port = port;
  opt.compute = path == FloatPath::kF16Native ? tinyattn::F16Compute::kNativeF16Products
                                              : tinyattn::F16Compute::kWidenToF32;
  const tinyattn::Status s =
      tinyattn::forward_f16(d, tinyattn::ForwardIoF16{q, k, v, y, w, p.lse}, {ws, ws_bytes}, mask, opt);
  if (s != tinyattn::Status::kOk) return s;
  tinyattn::to_float(y, p.y, d.y_elems());
  if (w) tinyattn::to_float(w, p.weights, d.weight_elems());
  return s;
}

size_t path_runs_under_test(PathRun* out, size_t cap) {
  tinyattn::Port ports[kMaxPorts];
  const size_t np = ports_under_test(ports);
  size_t n = 0;
  for (size_t i = 0; i < np; ++i)
    for (FloatPath path : kFloatPaths)
      if (path_available(path) && n < cap) out[n++] = PathRun{ports[i], path};
  return n;
}

Agreement against_reference(const Problem& p, FloatPath path, bool with_weights) {
  constexpr double kHalfRel = 1.0 / 2048, kHalfSub = 1.0 / 33554432.0;
  const double f16_rel = is_f16(path) ? kHalfRel : 0.0, f16_abs = is_f16(path) ? kHalfSub : 0.0;
  const double native = path == FloatPath::kF16Native ? 4e-3 : 0.0;
  const tinyattn::Dims& d = p.d;
  double vmax = 0.0;
  for (size_t x = 0; x < d.v_elems(); ++x)
    if (std::isfinite(p.v[x]) && std::fabs(p.v[x]) > vmax) vmax = std::fabs(p.v[x]);
  Agreement a;
  a.y = close(p.y, p.y_ref, d.y_elems(), (kOutAtol + native) * (vmax + 1.0) + f16_abs, kOutRtol + f16_rel + native);
  a.lse = close(p.lse, p.lse_ref, d.lse_elems(), 1e-5 + native, 1e-5);
  if (with_weights)
    a.weights = close(p.weights, p.weights_ref, d.weight_elems(), kWeightAtol + f16_abs + native,
                      kWeightRtol + f16_rel + native);
  return a;
}

}  // namespace tatest
