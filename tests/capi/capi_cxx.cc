#include "capi_cxx.h"

#include <cstring>
#include <vector>

#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"
#include "tinyattn/selftest.h"

namespace {

using namespace tinyattn;

Dims dims_of(const tinyattn_dims* d) {
  Dims r;
  r.n = d->n;
  r.m = d->m;
  r.dk = d->dk;
  r.dv = d->dv;
  r.hq = d->hq;
  r.hkv = d->hkv;
  return r;
}

// Built from the Mask factories and fields, not from c_api.cc's conversion.
Mask mask_of(const tinyattn_mask* c) {
  if (!c) return Mask::none();
  Mask m = c->causal == TINYATTN_CAUSAL_TOP_LEFT       ? Mask::causal_top_left()
           : c->causal == TINYATTN_CAUSAL_BOTTOM_RIGHT ? Mask::causal_bottom_right()
           : c->causal == TINYATTN_CAUSAL_OFFSET       ? Mask::causal_offset(c->offset)
                                                       : Mask::none();
  if (c->use_window) {
    m.window.left = c->window_left;
    m.window.right = c->window_right;
    m.window.align = c->window_align == TINYATTN_ALIGN_BOTTOM_RIGHT ? Align::kBottomRight
                     : c->window_align == TINYATTN_ALIGN_OFFSET     ? Align::kOffset
                                                                    : Align::kTopLeft;
    if (m.window.align == Align::kOffset) m.offset = c->offset;
  }
  if (c->use_kv_len) m.kv_len = c->kv_len;
  m.keep = c->keep;
  m.keep_bits = c->keep_bits;
  m.bias = c->bias;
  m.head_stride = c->head_stride;
  return m;
}

QuantParams quant_of(const tinyattn_quant_params& c) {
  QuantParams p;
  p.scale = c.scale;
  p.zero_point = c.zero_point;
  if (c.count != 0) p.count = c.count;
  return p;
}

}  // namespace

extern "C" {

int capi_ref_visible(const tinyattn_dims* d, const tinyattn_mask* mask, size_t h, size_t i, size_t j) {
  return ref::visible(mask_of(mask), dims_of(d), h, i, j) ? 1 : 0;
}

void capi_ref_forward(const tinyattn_dims* d, const float* q, const float* k, const float* v,
                      const tinyattn_mask* mask, double scale, double* y, double* weights, double* lse) {
  ref::forward(dims_of(d), q, k, v, mask_of(mask), scale, y, weights, lse);
}

void capi_ref_forward_softcap(const tinyattn_dims* d, const float* q, const float* k, const float* v,
                              const tinyattn_mask* mask, double scale, double softcap, double* y, double* weights,
                              double* lse) {
  ref::forward(dims_of(d), q, k, v, mask_of(mask), scale, y, weights, lse, softcap);
}

double capi_ref_logit(const tinyattn_dims* d, const float* q, const float* k, const tinyattn_mask* mask,
                      double scale, double softcap, size_t h, size_t i, size_t j) {
  return ref::logit(dims_of(d), q, k, mask_of(mask), scale, h, i, j, softcap);
}

void capi_ref_backward(const tinyattn_dims* d, const float* q, const float* k, const float* v, const float* dy,
                       const tinyattn_mask* mask, double scale, double* dq, double* dk, double* dv) {
  ref::backward(dims_of(d), q, k, v, dy, mask_of(mask), scale, dq, dk, dv);
}

tinyattn_status capi_cxx_plan_int8(const tinyattn_dims* d, const tinyattn_int8_scheme* scheme,
                                   tinyattn_int8_head_plan* plans, size_t capacity) {
  Int8Scheme s;
  s.q = quant_of(scheme->q);
  s.k = quant_of(scheme->k);
  s.v = quant_of(scheme->v);
  s.y = quant_of(scheme->y);
  s.bias = quant_of(scheme->bias);
  if (scheme->use_softmax_scale) s.softmax_scale = scheme->softmax_scale;
  s.mode = scheme->mode == TINYATTN_INT8_MODE_TFLITE ? Int8Mode::kTflite : Int8Mode::kNative;
  s.scores = quant_of(scheme->scores);
  std::vector<Int8HeadPlan> out(capacity);
  const Status st = plan_int8(dims_of(d), s, out.data(), capacity);
  if (st == Status::kOk) std::memcpy(static_cast<void*>(plans), static_cast<const void*>(out.data()), capacity * sizeof(Int8HeadPlan));
  return static_cast<tinyattn_status>(st);
}

tinyattn_status capi_cxx_forward_i8(const tinyattn_dims* d, const tinyattn_forward_io_i8* io,
                                    const tinyattn_int8_head_plan* plans, size_t count, const tinyattn_mask* mask) {
  std::vector<Int8HeadPlan> p(count);
  std::memcpy(static_cast<void*>(p.data()), static_cast<const void*>(plans), count * sizeof(Int8HeadPlan));
  ForwardIoI8 cio;
  cio.q = io->q;
  cio.k = io->k;
  cio.v = io->v;
  cio.y = io->y;
  cio.weights = io->weights;
  cio.bias = io->bias;
  const Dims cd = dims_of(d);
  std::vector<unsigned char> ws(forward_i8_workspace_bytes(cd));
  return static_cast<tinyattn_status>(
      forward_i8(cd, cio, Int8Plan{p.data(), count}, Workspace{ws.data(), ws.size()}, mask_of(mask), Options{}));
}

const char* capi_cxx_status_string(int s) { return to_string(static_cast<Status>(s)); }

size_t capi_cxx_forward_workspace_bytes(const tinyattn_dims* d, int with_weights, int transposed_keys) {
  if (transposed_keys < 0) return forward_workspace_bytes(dims_of(d), with_weights != 0);  // the default
  return forward_workspace_bytes(dims_of(d), with_weights != 0,
                                 transposed_keys ? Scratch::kTransposedKeys : Scratch::kMinimal);
}
size_t capi_cxx_forward_f16_workspace_bytes(const tinyattn_dims* d, int with_weights) {
  return forward_f16_workspace_bytes(dims_of(d), with_weights != 0);
}
size_t capi_cxx_forward_i8_workspace_bytes(const tinyattn_dims* d) { return forward_i8_workspace_bytes(dims_of(d)); }
size_t capi_cxx_forward_i8_tflite_workspace_bytes(const tinyattn_dims* d) {
  return forward_i8_tflite_workspace_bytes(dims_of(d));
}
size_t capi_cxx_backward_workspace_bytes(const tinyattn_dims* d, int recompute) {
  return backward_workspace_bytes(dims_of(d), recompute ? BackwardMode::kRecompute : BackwardMode::kSavedWeights);
}

int capi_cxx_selftest(unsigned* count, unsigned* failures) {
  static SelftestReport report;
  if (selftest(&report, Port::kDefault, nullptr, SelftestFormat::kNone) != Status::kOk) return 0;
  *count = report.count;
  *failures = report.failures;
  return 1;
}

int capi_cxx_selftest_int8(unsigned* count, unsigned* failures) {
  static SelftestI8Report report;
  if (selftest_int8(&report, Port::kDefault, nullptr, SelftestFormat::kNone) != Status::kOk) return 0;
  *count = report.count;
  *failures = report.failures;
  return 1;
}

}  // extern "C"
