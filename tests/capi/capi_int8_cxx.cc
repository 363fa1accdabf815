#include "capi_int8_cxx.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tinyattn/quant.h"

namespace {

using namespace tinyattn;

Dims dims_of(const tinyattn_dims* d) {
  Dims r{d->n, d->m, d->dk, d->dv};
  r.hq = d->hq;
  r.hkv = d->hkv;
  return r;
}

QuantParams quant_of(const tinyattn_quant_params& c) {
  QuantParams p;
  p.scale = c.scale;
  p.zero_point = c.zero_point;
  if (c.count != 0) p.count = c.count;
  return p;
}

Int8HeadPlan g_plans[CAPI_INT8_MAX_HEADS];

}  // namespace

extern "C" {

tinyattn_status capi_int8_cxx_plan(const tinyattn_dims* d, const tinyattn_int8_scheme* scheme,
                                   tinyattn_int8_head_plan* plans, size_t capacity) {
  if (capacity > CAPI_INT8_MAX_HEADS) return TINYATTN_UNSUPPORTED;
  Int8Scheme s;
  s.q = quant_of(scheme->q);
  s.k = quant_of(scheme->k);
  s.v = quant_of(scheme->v);
  s.y = quant_of(scheme->y);
  s.bias = quant_of(scheme->bias);
  if (scheme->use_softmax_scale) s.softmax_scale = scheme->softmax_scale;
  s.mode = scheme->mode == TINYATTN_INT8_MODE_TFLITE ? Int8Mode::kTflite : Int8Mode::kNative;
  s.scores = quant_of(scheme->scores);
  const Status st = plan_int8(dims_of(d), s, g_plans, capacity);
  if (st == Status::kOk)
    std::memcpy(static_cast<void*>(plans), static_cast<const void*>(g_plans), capacity * sizeof *g_plans);
  return static_cast<tinyattn_status>(st);
}

tinyattn_status capi_int8_cxx_forward(const tinyattn_dims* d, const tinyattn_forward_io_i8* io,
                                      const tinyattn_int8_head_plan* plans, size_t count, const tinyattn_mask* mask,
                                      tinyattn_port port, void* workspace, size_t workspace_bytes) {
  if (count > CAPI_INT8_MAX_HEADS) return TINYATTN_UNSUPPORTED;
  std::memcpy(static_cast<void*>(g_plans), static_cast<const void*>(plans), count * sizeof *g_plans);
  Mask m;
  if (mask) {
    m = mask->causal == TINYATTN_CAUSAL_TOP_LEFT       ? Mask::causal_top_left()
        : mask->causal == TINYATTN_CAUSAL_BOTTOM_RIGHT ? Mask::causal_bottom_right()
                                                       : Mask::none();
    if (mask->use_kv_len) m.kv_len = mask->kv_len;
    m.keep = mask->keep;
    m.head_stride = mask->head_stride;
  }
  ForwardIoI8 cio;
  cio.q = io->q;
  cio.k = io->k;
  cio.v = io->v;
  cio.y = io->y;
  cio.weights = io->weights;
  cio.bias = io->bias;
  Options o;
  o.port = static_cast<Port>(port);
  return static_cast<tinyattn_status>(
      forward_i8(dims_of(d), cio, Int8Plan{g_plans, count}, Workspace{workspace, workspace_bytes}, m, o));
}

}  // extern "C"
