// The RISC-V Vector int8 kernels: the integers of the scalar table
// (scalar_i8.cc) in 32-bit lanes, vector-length agnostic. Exact integer sums
// do not depend on their order, so only the lanes differ; the fixed-point
// steps are reproduced operation for operation, their 64-bit quantities
// formed from 32-bit words (no 64-bit lanes: the Zve32 profiles build it).
//
//  - scores: the keys in the lanes (a strided byte load per column of K),
//    k - k_zero widened to 16 bits by vwsub, then (q - q_zero) k as a 16 x 16
//    -> 32-bit vwmacc with the query element as the scalar operand. Two
//    columns per pass: the 8-bit and 16-bit steps each take their own
//    vsetvli, and pairing them halves the switches.
//  - i8_softmax-inl.h, exp_row and probabilities: the logits from the two
//    words of s m and a carry, exp2_q30 with each rounding shift as vmulhu
//    of pre-shifted factors, the row's sum in per-lane carries; the
//    quotients as the reciprocal's estimate and the sign of a 64-bit
//    remainder test built from vmul/vmulhu words.
//  - weighted_sum: the columns of V in the lanes, v - v_zero widened by
//    vwsub, then p v by vwmaccus (p <= kProbOne = 2^15 fits an unsigned
//    halfword, not a signed one); zero weights skipped as in the scalar table.
//  - requantize: vmulh gives the high word of acc m, an add and a shift round
//    it; with an odd multiplier (the power of two of m moved to the shift) no
//    product is an exact negative tie, otherwise the tie is corrected.
// Rare parameters take the scalar code: logit shifts outside [8, 31] (the
// logits; the exp stays in lanes), sums outside the reciprocal's range (the
// division), output shifts up to 32.
#include "rvv.h"
#include "backends/scalar/scalar.h"
#include "port.h"

#if defined(TINYATTN_RVV_BUILT)

#include <riscv_vector.h>

#include <climits>

#include "i8_softmax-inl.h"

namespace tinyattn {
namespace rvv {
namespace {

int32_t scores(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
               int32_t* s) {
  const ptrdiff_t stride = static_cast<ptrdiff_t>(ldk);
  const int8_t kz = static_cast<int8_t>(k_zero);
  const size_t vlmax = __riscv_vsetvlmax_e32m8();
  vint32m8_t max = __riscv_vmv_v_x_i32m8(INT32_MIN, vlmax);
  for (size_t j = 0; j < count;) {
    const size_t vl = __riscv_vsetvl_e32m8(count - j);
    const int8_t* kc = k + j * ldk;
    vint32m8_t acc = __riscv_vmv_v_x_i32m8(0, vl);
    size_t c = 0;
    for (; c + 2 <= dk; c += 2) {
      const vint16m4_t k0 = __riscv_vwsub_vx_i16m4(__riscv_vlse8_v_i8m2(kc + c, stride, vl), kz, vl);
      const vint16m4_t k1 = __riscv_vwsub_vx_i16m4(__riscv_vlse8_v_i8m2(kc + c + 1, stride, vl), kz, vl);
      acc = __riscv_vwmacc_vx_i32m8(acc, static_cast<int16_t>(q[c] - q_zero), k0, vl);
      acc = __riscv_vwmacc_vx_i32m8(acc, static_cast<int16_t>(q[c + 1] - q_zero), k1, vl);
    }
    if (c < dk) {
      const vint16m4_t k0 = __riscv_vwsub_vx_i16m4(__riscv_vlse8_v_i8m2(kc + c, stride, vl), kz, vl);
      acc = __riscv_vwmacc_vx_i32m8(acc, static_cast<int16_t>(q[c] - q_zero), k0, vl);
    }
    __riscv_vse32_v_i32m8(s + j, acc, vl);
    max = __riscv_vmax_vv_i32m8_tu(max, max, acc, vl);
    j += vl;
  }
  return __riscv_vmv_x_s_i32m1_i32(__riscv_vredmax_vs_i32m8_i32m1(max, __riscv_vmv_s_x_i32m1(INT32_MIN, 1), vlmax));
}

void weighted_sum(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc) {
  const int8_t vz = static_cast<int8_t>(v_zero);
  for (size_t c = 0; c < dv;) {
    const size_t vl = __riscv_vsetvl_e32m8(dv - c);
    vint32m8_t a = __riscv_vmv_v_x_i32m8(0, vl);
    const int8_t* vj = v + c;
    for (size_t j = 0; j < count; ++j, vj += ldv) {
      const int32_t pj = p[j];
      if (pj == 0) continue;  // most keys of a peaked row: nothing to add
      const vint16m4_t x = __riscv_vwsub_vx_i16m4(__riscv_vle8_v_i8m2(vj, vl), vz, vl);
      a = __riscv_vwmaccus_vx_i32m8(a, static_cast<uint16_t>(pj), x, vl);
    }
    __riscv_vse32_v_i32m8(acc + c, a, vl);
    c += vl;
  }
}

// acc m with m = m' 2^t (m' odd) rounds as acc m' at shift - t (2^t divides
// the rounding constant too): with shift - t = 32 + k, k >= 1, the low word
// of acc m' is 0 only for acc = 0, so no negative product is an exact tie
// and the high word H gives the result as (H + 2^(k-1)) >> k; the zero point
// joins it as y_zero 2^k, which fits for k <= 23 (|H| < 2^30). Otherwise,
// for shift = 32 + k: (H + 2^(k-1) - [acc < 0 and low word 0]) >> k.
void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y) {
  const int t = __builtin_ctz(static_cast<uint32_t>(output.multiplier));
  const int32_t m_odd = output.multiplier >> t;
  const int32_t k = output.shift - t - 32;
  auto store = [y](size_t c, vint32m8_t r, size_t vl) {
    r = __riscv_vmin_vx_i32m8(__riscv_vmax_vx_i32m8(r, -128, vl), 127, vl);
    __riscv_vse8_v_i8m2(y + c, __riscv_vncvt_x_x_w_i8m2(__riscv_vncvt_x_x_w_i16m4(r, vl), vl), vl);
  };
  if (k >= 1 && k <= 23) {
    const int32_t bias = static_cast<int32_t>((static_cast<uint32_t>(y_zero) << k) + (uint32_t{1} << (k - 1)));
    for (size_t c = 0; c < n;) {
      const size_t vl = __riscv_vsetvl_e32m8(n - c);
      const vint32m8_t h = __riscv_vmulh_vx_i32m8(__riscv_vle32_v_i32m8(acc + c, vl), m_odd, vl);
      store(c, __riscv_vsra_vx_i32m8(__riscv_vadd_vx_i32m8(h, bias, vl), static_cast<size_t>(k), vl), vl);
      c += vl;
    }
    return;
  }
  if (output.shift <= 32) return scalar::i8::requantize(acc, n, output, y_zero, y);  // not at real scale ratios
  const int32_t m = output.multiplier;
  const size_t k1 = static_cast<size_t>(output.shift - 32);
  const int32_t half = int32_t{1} << (k1 - 1);
  for (size_t c = 0; c < n;) {
    const size_t vl = __riscv_vsetvl_e32m8(n - c);
    const vint32m8_t a = __riscv_vle32_v_i32m8(acc + c, vl);
    const vbool4_t tie = __riscv_vmand_mm_b4(__riscv_vmseq_vx_i32m8_b4(__riscv_vmul_vx_i32m8(a, m, vl), 0, vl),
                                             __riscv_vmslt_vx_i32m8_b4(a, 0, vl), vl);
    const vint32m8_t h = __riscv_vsbc_vxm_i32m8(__riscv_vmulh_vx_i32m8(a, m, vl), 0, tie, vl);
    // |h + 2^(k-1)| < 2^31; the zero point after the shift (|value| < 2^30).
    const vint32m8_t r = __riscv_vsra_vx_i32m8(__riscv_vadd_vx_i32m8(h, half, vl), k1, vl);
    store(c, __riscv_vadd_vx_i32m8(r, y_zero, vl), vl);
    c += vl;
  }
}

constexpr KernelsI8 make_table() {
  KernelsI8 t = scalar::table_i8("rvv");
  t.simd_target = simd_target;
  t.scores = scores;
  t.exp_row = exp_row;
  t.probabilities = probabilities;
  t.weighted_sum = weighted_sum;
  t.requantize = requantize;
  return t;
}
constexpr KernelsI8 kKernelsI8 = make_table();

}  // namespace

const KernelsI8& kernels_i8() { return kKernelsI8; }

}  // namespace rvv

template <>
const KernelsI8* port_kernels_i8<Port::kRvv>() {
  return &rvv::kernels_i8();
}
}  // namespace tinyattn

#endif  // TINYATTN_RVV_BUILT
