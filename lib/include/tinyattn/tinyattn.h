// tinyattn: fixed-size, allocation-free scaled dot-product attention.
// One include for the whole public API.
#pragma once

#include "tinyattn/attention.h"
#include "tinyattn/backward.h"
#include "tinyattn/exp.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"
#include "tinyattn/kernels.h"
#include "tinyattn/mask.h"
#include "tinyattn/quant.h"
#include "tinyattn/shape.h"
#include "tinyattn/softmax.h"
#include "tinyattn/status.h"
