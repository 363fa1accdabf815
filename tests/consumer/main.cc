// The usage example of README and docs/core.md; built and run by ctest.
#include <cstdio>

#include "tinyattn/tinyattn.h"

// 4 queries over 6 keys, width 8: the object owns its scratch, so this
// static instance is its whole RAM cost (sizeof attn bytes).
static tinyattn::Attention<tinyattn::Shape<4, 6, 8, 8>> attn;
static decltype(attn)::Q q;  // std::array<float, 4 * 8>
static decltype(attn)::K k;
static decltype(attn)::V v;
static decltype(attn)::Y y;

int main() {
  for (size_t i = 0; i < q.size(); ++i) q[i] = 0.1f * static_cast<float>(i % 5);
  for (size_t i = 0; i < k.size(); ++i) k[i] = 0.2f * static_cast<float>(i % 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i / 8);  // row j holds j
  const tinyattn::Status s = attn(q, k, v, y, tinyattn::Mask::causal_top_left());
  if (s != tinyattn::Status::kOk) {
    std::printf("error: %s\n", tinyattn::to_string(s));
    return 1;
  }
  std::printf("y[0][0] = %g (query 0 sees key 0 only: 0), RAM %zu bytes\n", y[0], sizeof attn);
  return y[0] == 0.0f && y[3 * 8] > 0.0f ? 0 : 1;
}
