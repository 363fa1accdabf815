// The portable int8 kernels: the specification of quant.h written as plain
// loops. Every other port's int8 table must return exactly these integers.
#include "scalar.h"
#include "port.h"

#include "backends/int8_fixed.h"

#include <climits>

namespace tinyattn {
namespace scalar {
namespace i8 {

int32_t scores(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
               int32_t* s) {
  int32_t max = INT32_MIN;
  for (size_t j = 0; j < count; ++j) {
    const int8_t* kj = k + j * ldk;
    int32_t dot = 0;
    for (size_t c = 0; c < dk; ++c) dot += (static_cast<int32_t>(q[c]) - q_zero) * (static_cast<int32_t>(kj[c]) - k_zero);
    s[j] = dot;
    if (dot > max) max = dot;
  }
  return max;
}

int64_t exp_row(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  int64_t sum = 0;
  for (size_t j = 0; j < n; ++j) {
    e[j] = s[j] == INT32_MIN ? 0 : exp2_q30(apply(logit, s[j]) - max_logit);
    sum += e[j];
  }
  return sum;
}

// p = floor((e 2^15 + floor(sum/2)) / sum) without a 64-bit division per
// key (a library call on cores without one): a per-row 32-bit reciprocal
// gives each quotient or one more, and one exact comparison picks
// (backends/int8_fixed.h); rows outside its range divide.
void probabilities(const int32_t* e, size_t n, int64_t sum, int32_t* p) {
  const ReciprocalQ15 q = reciprocal_q15(sum);
  if (!q.exact) return reciprocal_divide(q, e, n, p);
  for (size_t j = 0; j < n; ++j) {
    const uint32_t ej = static_cast<uint32_t>(e[j]);
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(ej) * q.r) >> 32);
    p[j] = static_cast<int32_t>(reciprocal_fix(q, ej, ((hi + q.round) >> q.sh) + 1));
  }
}

void weighted_sum(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc) {
  for (size_t c = 0; c < dv; ++c) acc[c] = 0;
  for (size_t j = 0; j < count; ++j) {
    const int32_t pj = p[j];
    if (pj == 0) continue;  // most keys of a peaked row: nothing to add
    const int8_t* vj = v + j * ldv;
    for (size_t c = 0; c < dv; ++c) acc[c] += pj * (static_cast<int32_t>(vj[c]) - v_zero);
  }
}

void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y) {
  for (size_t c = 0; c < n; ++c) {
    const int64_t x = y_zero + apply(output, acc[c]);
    y[c] = static_cast<int8_t>(x < -128 ? -128 : (x > 127 ? 127 : x));
  }
}

}  // namespace i8

namespace {
constexpr KernelsI8 kKernelsI8 = table_i8("scalar");
}  // namespace

const KernelsI8& kernels_i8() { return kKernelsI8; }

}  // namespace scalar

template <>
const KernelsI8* port_kernels_i8<Port::kScalar>() {
  return &scalar::kernels_i8();
}
}  // namespace tinyattn
