// tinyattn: fixed-size, allocation-free scaled dot-product attention.
// One include for the whole public API: every header of lib/include/tinyattn
// but the C API's tinyattn_c.h (tests/api checks that none is missing). The port contract (kernel tables,
// the exp coefficients) is not public and lives in lib/contract/include.
#pragma once

#include "tinyattn/attention.h"
#include "tinyattn/backward.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/mask.h"
#include "tinyattn/port.h"
#include "tinyattn/port_list.h"
#include "tinyattn/quant.h"
#include "tinyattn/quant_i16.h"
#include "tinyattn/rope.h"
#include "tinyattn/selftest.h"
#include "tinyattn/shape.h"
#include "tinyattn/softmax.h"
#include "tinyattn/status.h"
#include "tinyattn/tiling.h"
