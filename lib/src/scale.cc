// effective_scale (tinyattn/attention.h): out of line, so that public headers
// need no <cmath>.
#include <cmath>

#include "tinyattn/attention.h"

namespace tinyattn {

float effective_scale(const Dims& d, const Options& o) {
  return o.scale ? *o.scale : 1.0f / std::sqrt(static_cast<float>(d.dk));
}

}  // namespace tinyattn
