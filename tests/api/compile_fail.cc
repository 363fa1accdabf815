// Compiled (never linked) by the api_shape_* ctest tests: each TINYATTN_CASE
// instantiates one Shape; the invalid ones must stop the build with the
// static_assert message the test looks for, the valid one must compile.
#include "tinyattn/attention.h"

#if TINYATTN_CASE == 1
using S = tinyattn::Shape<4, 4, 8, 8, 3, 2>;  // Hq % Hkv != 0
#elif TINYATTN_CASE == 2
using S = tinyattn::Shape<0, 4, 8, 8>;  // N = 0
#elif TINYATTN_CASE == 3
using S = tinyattn::Shape<4, 4, 0, 8>;  // Dk = 0
#else
using S = tinyattn::Shape<4, 4, 8, 8, 4, 2>;  // valid: the control
#endif

tinyattn::Attention<S> attention;
