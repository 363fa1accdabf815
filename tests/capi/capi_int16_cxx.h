/* The C++ side of the C int16 test: plan_int16, forward_i16 and the sizes
 * called from C on the same inputs as tinyattn_plan_int16 and
 * tinyattn_forward_i16. Its struct conversions are written apart from
 * lib/src/c_api.cc, so a field the C API maps wrongly shows up as a mismatch.
 * No heap: the test runs on the boards too. */
#ifndef TINYATTN_TESTS_CAPI_INT16_CXX_H
#define TINYATTN_TESTS_CAPI_INT16_CXX_H

#include "tinyattn/tinyattn_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most query heads the helper converts plans for. */
enum { CAPI_INT16_MAX_HEADS = 8 };

/* tinyattn::plan_int16 of the scheme (mode NATIVE or TFLITE). */
tinyattn_status capi_int16_cxx_plan(const tinyattn_dims* d, const tinyattn_int16_scheme* scheme,
                                    tinyattn_int16_head_plan* plans, size_t capacity);
/* tinyattn::forward_i16 on `port` with the mask's causal, kv_len, keep bytes
 * and head_stride (the fields this test sets). */
tinyattn_status capi_int16_cxx_forward(const tinyattn_dims* d, const tinyattn_forward_io_i16* io,
                                       const tinyattn_int16_head_plan* plans, size_t count,
                                       const tinyattn_mask* mask, tinyattn_port port, void* workspace,
                                       size_t workspace_bytes);
/* tinyattn::forward_i16_workspace_bytes. */
size_t capi_int16_cxx_workspace_bytes(const tinyattn_dims* d);
/* tinyattn::selftest_int16 on the default port without printing: its check
 * count and failures; nonzero when it ran. */
int capi_int16_cxx_selftest(unsigned* count, unsigned* failures);

#ifdef __cplusplus
}
#endif

#endif
