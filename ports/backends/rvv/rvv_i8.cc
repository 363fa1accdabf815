// The RISC-V Vector int8 kernels: the integers of the scalar table
// (scalar_i8.cc) with widening multiply-accumulates, vector-length agnostic.
// Exact integer sums do not depend on their order, so only the lanes differ.
//
//  - scores: the keys in the lanes (a strided byte load per column of K),
//    k - k_zero widened to 16 bits by vwsub, then (q - q_zero) k as a 16 x 16
//    -> 32-bit vwmacc with the query element as the scalar operand. Two
//    columns per pass: the 8-bit and 16-bit steps each take their own
//    vsetvli, and pairing them halves the switches.
//  - weighted_sum: the columns of V in the lanes, v - v_zero widened by
//    vwsub, then p v by vwmaccus (p <= kProbOne = 2^15 fits an unsigned
//    halfword, not a signed one); zero weights skipped as in the scalar table.
//  - exp_row, probabilities, requantize: the scalar table's. Their fixed-point
//    steps need 64-bit products, which the Zve32 profiles have no lanes for.
#include "rvv.h"
#include "backends/scalar/scalar.h"
#include "port.h"

#if defined(TINYATTN_RVV_BUILT)

#include <riscv_vector.h>

#include <climits>

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

constexpr KernelsI8 make_table() {
  KernelsI8 t = scalar::table_i8("rvv");
  t.simd_target = simd_target;
  t.scores = scores;
  t.weighted_sum = weighted_sum;
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
