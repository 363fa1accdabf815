#include "capi_int16_cxx.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tinyattn/quant_i16.h"
#include "tinyattn/selftest.h"

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

Int16HeadPlan g_plans[CAPI_INT16_MAX_HEADS];
SelftestI16Report g_report;

}  // namespace

extern "C" {

tinyattn_status capi_int16_cxx_plan(const tinyattn_dims* d, const tinyattn_int16_scheme* scheme,
                                    tinyattn_int16_head_plan* plans, size_t capacity) {
  if (capacity > CAPI_INT16_MAX_HEADS) return TINYATTN_UNSUPPORTED;
  Int16Scheme s;
  s.q = quant_of(scheme->q);
  s.k = quant_of(scheme->k);
  s.v = quant_of(scheme->v);
  s.y = quant_of(scheme->y);
  if (scheme->use_softmax_scale) s.softmax_scale = scheme->softmax_scale;
  s.mode = scheme->mode == TINYATTN_INT16_MODE_TFLITE ? Int16Mode::kTflite : Int16Mode::kNative;
  s.scores = quant_of(scheme->scores);
  const Status st = plan_int16(dims_of(d), s, g_plans, capacity);
  if (st == Status::kOk)
    std::memcpy(static_cast<void*>(plans), static_cast<const void*>(g_plans), capacity * sizeof *g_plans);
  return static_cast<tinyattn_status>(st);
}

tinyattn_status capi_int16_cxx_forward(const tinyattn_dims* d, const tinyattn_forward_io_i16* io,
                                       const tinyattn_int16_head_plan* plans, size_t count,
                                       const tinyattn_mask* mask, tinyattn_port port, void* workspace,
                                       size_t workspace_bytes) {
  if (count > CAPI_INT16_MAX_HEADS) return TINYATTN_UNSUPPORTED;
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
  ForwardIoI16 cio;
  cio.q = io->q;
  cio.k = io->k;
  cio.v = io->v;
  cio.y = io->y;
  cio.weights = io->weights;
  Options o;
  o.port = static_cast<Port>(port);
  return static_cast<tinyattn_status>(
      forward_i16(dims_of(d), cio, Int16Plan{g_plans, count}, Workspace{workspace, workspace_bytes}, m, o));
}

size_t capi_int16_cxx_workspace_bytes(const tinyattn_dims* d) { return forward_i16_workspace_bytes(dims_of(d)); }

int capi_int16_cxx_selftest(unsigned* count, unsigned* failures) {
  if (selftest_int16(&g_report) != Status::kOk) return 0;
  *count = g_report.count;
  *failures = g_report.failures;
  return 1;
}

}  // extern "C"
