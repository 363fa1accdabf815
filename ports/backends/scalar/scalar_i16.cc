// The portable int16 kernels: the specification of quant_i16.h written as
// plain loops. Every other port's int16 table must return exactly these
// integers.
#include <climits>

#include "port.h"
#include "scalar.h"

namespace tinyattn {
namespace scalar {
namespace i16 {

int64_t scores(const int16_t* q, const int16_t* k, size_t ldk, size_t count, size_t dk, int64_t* s) {
  int64_t max = INT64_MIN;
  for (size_t j = 0; j < count; ++j) {
    const int16_t* kj = k + j * ldk;
    int64_t dot = 0;
    for (size_t c = 0; c < dk; ++c) dot += static_cast<int64_t>(static_cast<int32_t>(q[c]) * kj[c]);  // |q k| <= 2^30
    s[j] = dot;
    if (dot > max) max = dot;
  }
  return max;
}

int64_t exp_row(const int64_t* s, size_t n, FixedMultiplier logit, int64_t max_score, int32_t* e) {
  int64_t sum = 0;
  for (size_t j = 0; j < n; ++j) {
    e[j] = s[j] == INT64_MIN ? 0 : exp2_q30(-apply_wide(logit, max_score - s[j]));
    sum += e[j];
  }
  return sum;
}

void weighted_sum(const int32_t* p, const int16_t* v, size_t ldv, size_t count, size_t dv, int32_t* acc) {
  for (size_t c = 0; c < dv; ++c) acc[c] = 0;
  for (size_t j = 0; j < count; ++j) {
    const int32_t pj = p[j];
    if (pj == 0) continue;  // most keys of a peaked row: nothing to add
    const int16_t* vj = v + j * ldv;
    for (size_t c = 0; c < dv; ++c) acc[c] += pj * static_cast<int32_t>(vj[c]);
  }
}

void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int16_t* y) {
  for (size_t c = 0; c < n; ++c) {
    const int64_t x = apply(output, acc[c]);
    y[c] = static_cast<int16_t>(x < -32768 ? -32768 : (x > 32767 ? 32767 : x));
  }
}

}  // namespace i16

namespace {
constexpr KernelsI16 kKernelsI16 = table_i16("scalar");
}  // namespace

const KernelsI16& kernels_i16() { return kKernelsI16; }

}  // namespace scalar

template <>
const KernelsI16* port_kernels_i16<Port::kScalar>() {
  return &scalar::kernels_i16();
}
}  // namespace tinyattn
