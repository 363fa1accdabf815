// Code size of one fp32 forward shape (bench/board/size.sh): built once with
// the call and once without (-DTINYATTN_SIZE_EMPTY); the difference in text is
// what Attention<Shape<16, 16, 32, 32>> adds to an image.
#include "tinyattn/tinyattn.h"

namespace {
using Attn = tinyattn::Attention<tinyattn::Shape<16, 16, 32, 32>>;
#ifndef TINYATTN_SIZE_EMPTY
Attn attn;
#endif
Attn::Q q;
Attn::K k;
Attn::V v;
Attn::Y y;
}  // namespace

// The inputs are not known at link time, so nothing can be folded away.
volatile float input_seed = 0.5f;

int main() {
  q[0] = k[0] = v[0] = input_seed;
#ifdef TINYATTN_SIZE_EMPTY
  y[0] = q[0] + k[0] + v[0];
  return y[0] > 0.0f ? 0 : 1;
#else
  return attn(q, k, v, y) == tinyattn::Status::kOk ? 0 : 1;
#endif
}
