// effective_scale (tinyattn/attention.h): out of line, so that public headers
// need no <cmath>.
#include "row_core.h"

namespace tinyattn {

float effective_scale(const Dims& d, const Options& o) {
  return o.scale ? *o.scale : detail::default_scale(d);
}

}  // namespace tinyattn
