/* The C++ side of the C int8 test: plan_int8 and forward_i8 called from C
 * on the same inputs as tinyattn_plan_int8 and tinyattn_forward_i8. Its
 * struct conversions are written apart from lib/src/c_api.cc, so a field the
 * C API maps wrongly (the scheme's mode and score tensor included) shows up
 * as a mismatch. No heap: the test runs on the boards too. */
#ifndef TINYATTN_TESTS_CAPI_INT8_CXX_H
#define TINYATTN_TESTS_CAPI_INT8_CXX_H

#include "tinyattn/tinyattn_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most query heads the helper converts plans for. */
enum { CAPI_INT8_MAX_HEADS = 8 };

/* tinyattn::plan_int8 of the scheme (mode NATIVE or TFLITE). */
tinyattn_status capi_int8_cxx_plan(const tinyattn_dims* d, const tinyattn_int8_scheme* scheme,
                                   tinyattn_int8_head_plan* plans, size_t capacity);
/* tinyattn::forward_i8 on `port` with the mask's causal, kv_len, keep bytes
 * and head_stride (the fields this test sets). */
tinyattn_status capi_int8_cxx_forward(const tinyattn_dims* d, const tinyattn_forward_io_i8* io,
                                      const tinyattn_int8_head_plan* plans, size_t count, const tinyattn_mask* mask,
                                      tinyattn_port port, void* workspace, size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif
