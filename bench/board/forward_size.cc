// Code size of one forward shape (bench/board/size.sh): built once with the
// call and once without (-DTINYATTN_SIZE_EMPTY); the difference in text is
// what Attention<Shape<16, 16, 32, 32>> adds to an image. With
// -DTINYATTN_SIZE_INT8 the call is AttentionI8 of the same shape, run on a
// plan made offline (set_plan: integers only, no floating point linked in);
// with -DTINYATTN_SIZE_TFLITE as well, AttentionI8 in Int8Mode::kTflite
// alone, on a TFLite plan made offline (plan_int8's for scales 1/64 and
// score scale 1/8). -DTINYATTN_SIZE_INT16 (with or without
// -DTINYATTN_SIZE_TFLITE): AttentionI16 in either mode, likewise on an
// offline plan.
#if defined(TINYATTN_SIZE_INT16)
#include "tinyattn/quant_i16.h"
#elif defined(TINYATTN_SIZE_INT8)
#include "tinyattn/quant.h"
#else
#include "tinyattn/tinyattn.h"
#endif

namespace {
#if defined(TINYATTN_SIZE_INT16) && defined(TINYATTN_SIZE_TFLITE)
using Attn = tinyattn::AttentionI16<tinyattn::Shape<16, 16, 32, 32>, tinyattn::Int16Mode::kTflite>;
using Elem = int16_t;
#elif defined(TINYATTN_SIZE_INT16)
using Attn = tinyattn::AttentionI16<tinyattn::Shape<16, 16, 32, 32>>;
using Elem = int16_t;
#elif defined(TINYATTN_SIZE_INT8) && defined(TINYATTN_SIZE_TFLITE)
using Attn = tinyattn::AttentionI8<tinyattn::Shape<16, 16, 32, 32>, tinyattn::Int8Mode::kTflite>;
using Elem = int8_t;
#elif defined(TINYATTN_SIZE_INT8)
using Attn = tinyattn::AttentionI8<tinyattn::Shape<16, 16, 32, 32>>;
using Elem = int8_t;
#else
using Attn = tinyattn::Attention<tinyattn::Shape<16, 16, 32, 32>>;
using Elem = float;
#endif
#ifndef TINYATTN_SIZE_EMPTY
Attn attn;
#endif
Attn::Q q;
Attn::K k;
Attn::V v;
Attn::Y y;
}  // namespace

// The inputs are not known at link time, so nothing can be folded away.
#if defined(TINYATTN_SIZE_INT8) || defined(TINYATTN_SIZE_INT16)
volatile Elem input_seed = 64;
#else
volatile Elem input_seed = 0.5f;
#endif

int main() {
  q[0] = k[0] = v[0] = input_seed;
#ifdef TINYATTN_SIZE_EMPTY
  y[0] = static_cast<Elem>(q[0] + k[0] + v[0]);
  return y[0] > 0 ? 0 : 1;
#else
#if defined(TINYATTN_SIZE_INT16)
  // A valid plan given as integers, as one computed offline would be.
  std::array<tinyattn::Int16HeadPlan, 1> plan{};
#ifdef TINYATTN_SIZE_TFLITE
  plan[0].mode = tinyattn::Int16Mode::kTflite;
  plan[0].tflite.scores = {1073741824, -8};
  plan[0].tflite.beta = {1518500224, 6};
  plan[0].tflite.output = {1073741824, -7};
#else
  plan[0].logit = {1581110316, 34};
  plan[0].output = {1073741824, 45};
#endif
  attn.set_plan(plan);
#elif defined(TINYATTN_SIZE_INT8)
  // A valid plan given as integers, as one computed offline would be.
  std::array<tinyattn::Int8HeadPlan, 1> plan{};
#ifdef TINYATTN_SIZE_TFLITE
  plan[0].mode = tinyattn::Int8Mode::kTflite;
  plan[0].tflite.scores = {1073741824, -8};
  plan[0].tflite.beta = {1518500224, 21};
  plan[0].tflite.diff_min = -992;
  plan[0].tflite.output = {1073741824, -7};
#else
  plan[0].logit = {1581110316, 18};
  plan[0].output = {1073741824, 45};
#endif
  attn.set_plan(plan);
#endif
  return attn(q, k, v, y) == tinyattn::Status::kOk ? 0 : 1;
#endif
}
