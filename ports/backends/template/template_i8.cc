// The template port's int8 kernels (tinyattn/kernels_i8.h), forwarding to the
// scalar port's. A port without int8 kernels leaves this file out and sets
// the int8 column of its line in tinyattn/port_list.h to 0: kernels_i8() then
// gives it the scalar table (the int8 path is integer-exact, so it loses
// speed, never results).
#include "backends/scalar/scalar.h"
#include "port.h"

namespace tinyattn {
namespace template_port {
namespace {

const char* simd_target() { return "scalar"; }

const KernelsI8& base() { return scalar::kernels_i8(); }

int32_t scores(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
               int32_t* s) {
  return base().scores(q, k, ldk, count, dk, q_zero, k_zero, s);
}

int64_t exp_row(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  return base().exp_row(s, n, logit, max_logit, e);
}

void probabilities(const int32_t* e, size_t n, int64_t sum, int32_t* p) { base().probabilities(e, n, sum, p); }

void weighted_sum(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc) {
  base().weighted_sum(p, v, ldv, count, dv, v_zero, acc);
}

void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y) {
  base().requantize(acc, n, output, y_zero, y);
}

constexpr KernelsI8 kKernelsI8{"template", simd_target, scores, exp_row, probabilities, weighted_sum, requantize};

}  // namespace
}  // namespace template_port

template <>
const KernelsI8* port_kernels_i8<Port::kTemplate>() {
  return &template_port::kKernelsI8;
}

}  // namespace tinyattn
