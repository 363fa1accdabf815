/* The C++ side of the C API test: the reference (double) and the C++ API
 * called on the same data, behind C functions. Its struct conversions are
 * written apart from lib/src/c_api.cc on purpose, so a wrong field mapping
 * there shows up as a mismatch here. */
#ifndef TINYATTN_TESTS_CAPI_CXX_H
#define TINYATTN_TESTS_CAPI_CXX_H

#include "tinyattn/tinyattn_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tinyattn::ref: visibility of key j to query i of head h, and the forward
 * and backward passes in double (weights, lse, ds may be null). */
int capi_ref_visible(const tinyattn_dims* d, const tinyattn_mask* mask, size_t h, size_t i, size_t j);
void capi_ref_forward(const tinyattn_dims* d, const float* q, const float* k, const float* v,
                      const tinyattn_mask* mask, double scale, double* y, double* weights, double* lse);
/* The same with Options::softcap c (the reference's softcap argument). */
void capi_ref_forward_softcap(const tinyattn_dims* d, const float* q, const float* k, const float* v,
                              const tinyattn_mask* mask, double scale, double softcap, double* y, double* weights,
                              double* lse);
/* The reference logit of (h, i, j) with the mask applied (-inf when masked). */
double capi_ref_logit(const tinyattn_dims* d, const float* q, const float* k, const tinyattn_mask* mask,
                      double scale, double softcap, size_t h, size_t i, size_t j);
void capi_ref_backward(const tinyattn_dims* d, const float* q, const float* k, const float* v, const float* dy,
                       const tinyattn_mask* mask, double scale, double* dq, double* dk, double* dv);

/* The C++ plan_int8 and forward_i8 (default port, own workspace). */
tinyattn_status capi_cxx_plan_int8(const tinyattn_dims* d, const tinyattn_int8_scheme* scheme,
                                   tinyattn_int8_head_plan* plans, size_t capacity);
tinyattn_status capi_cxx_forward_i8(const tinyattn_dims* d, const tinyattn_forward_io_i8* io,
                                    const tinyattn_int8_head_plan* plans, size_t count, const tinyattn_mask* mask);

/* The C++ status name and the C++ constexpr workspace formulas. */
const char* capi_cxx_status_string(int s);
/* transposed_keys: 1 Scratch::kTransposedKeys, 0 kMinimal, -1 the default (no argument). */
size_t capi_cxx_forward_workspace_bytes(const tinyattn_dims* d, int with_weights, int transposed_keys);
size_t capi_cxx_forward_f16_workspace_bytes(const tinyattn_dims* d, int with_weights);
size_t capi_cxx_forward_i8_workspace_bytes(const tinyattn_dims* d);
size_t capi_cxx_forward_i8_tflite_workspace_bytes(const tinyattn_dims* d);
size_t capi_cxx_backward_workspace_bytes(const tinyattn_dims* d, int recompute);

/* The C++ self-test of the default port: its check count and failures. */
int capi_cxx_selftest(unsigned* count, unsigned* failures);
int capi_cxx_selftest_int8(unsigned* count, unsigned* failures);

#ifdef __cplusplus
}
#endif

#endif
