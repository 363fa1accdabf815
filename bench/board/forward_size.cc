// Code size of one forward shape (bench/board/size.sh): built once with the
// call and once without (-DTINYATTN_SIZE_EMPTY); the difference in text is
// what Attention<Shape<16, 16, 32, 32>> adds to an image. With
// -DTINYATTN_SIZE_INT8 the call is AttentionI8 of the same shape, run on a
// plan made offline (set_plan: integers only, no floating point linked in).
#ifdef TINYATTN_SIZE_INT8
#include "tinyattn/quant.h"
#else
#include "tinyattn/tinyattn.h"
#endif

namespace {
#ifdef TINYATTN_SIZE_INT8
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
#ifdef TINYATTN_SIZE_INT8
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
#ifdef TINYATTN_SIZE_INT8
  // A valid plan given as integers, as one computed offline would be.
  std::array<tinyattn::Int8HeadPlan, 1> plan{};
  plan[0].logit = {1581110316, 18};
  plan[0].output = {1073741824, 45};
  attn.set_plan(plan);
#endif
  return attn(q, k, v, y) == tinyattn::Status::kOk ? 0 : 1;
#endif
}
