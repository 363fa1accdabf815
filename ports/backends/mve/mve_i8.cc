// The Helium (MVE) int8 kernels: the integers of the scalar table
// (scalar_i8.cc), computed sixteen int8, eight int16 or four int32 lanes at
// a time. By algorithm family:
//
//  - i8_scores-inl.h, scores: VMLADAVA.S8 dot products. Back-to-back keys of
//    Dk 8 to 32, 48 or 64 (the driver's layout) keep the query in registers as
//    sat8(q - zq), so a key costs one load and one VMLADAVA per 16 bytes and
//    four sums go to s (with the zk term) as one vector; the few lanes where
//    q - zq does not fit int8 are added afterwards, a byte gather of four
//    keys at a time. Other layouts: four keys per pass with the zero points
//    folded in algebraically. All of it is modular int32 arithmetic whose
//    final value fits, so it is exact.
//  - i8_softmax-inl.h, exp_row: apply(logit, s) - max_logit from the high
//    and low words of s m in int32 lanes, saturating where the difference is
//    below INT32_MIN (2^u is 0 there), fused with exp2_q30 in lanes: every
//    rounding_rshift of a product there has non-negative operands, so it is a
//    rounding doubling high multiply (VQRDMULH) of suitably pre-shifted
//    factors, and the final shift by n is VRSHL. The scalar 64-bit code only
//    for unusual plans.
//  - i8_softmax-inl.h, probabilities: a per-row 32-bit reciprocal (one
//    integer division) gives each quotient or one less (VMULH); the exact comparison
//    that decides is rewritten so that it runs in uint32 lanes.
//  - i8_weighted-inl.h, weighted_sum: int16 weights of up to 32 keys held in
//    registers against byte gathers of V's columns (VMLADAVA.S16), a column
//    at a time; rows with a weight of 2^15 use int32 accumulators over 16
//    columns (VMLA.S32). The zero point is -zv sum p, added once.
//  - i8_weighted-inl.h, requantize: VMULH gives the high word of acc * m,
//    VRSHL rounds it; with an odd multiplier (the power of two of m moved to
//    the shift) no product is an exact negative tie, otherwise the tie is
//    corrected.
//  - i8_tflite-inl.h, the TFLite mode's requantization, exp table and
//    softmax outputs: gemmlowp's SRDHM is VQRDMULH; the exp table of a head
//    computed at once, four entries at a time, and read by gathers.
// Loops run whole vectors unpredicated and finish with one tail-predicated
// step (vctp, zeroing loads, predicated stores), so nothing outside the given
// ranges is read or written (GCC 12 wraps every predicate of a predicated
// loop in extra VMRS/VMSR moves).
#include "mve.h"
#include "backends/int8_fixed.h"
#include "port.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)

#include <arm_mve.h>

namespace tinyattn {
namespace mve {

namespace {

const char* simd_target() { return "MVE"; }

// Lanes [0, n - i) of the next 16-byte or 4-word vector (n - i may exceed the vector).
inline mve_pred16_t tail8(size_t n, size_t i) { return vctp8q(static_cast<uint32_t>(n - i)); }
inline mve_pred16_t tail32(size_t n, size_t i) { return vctp32q(static_cast<uint32_t>(n - i)); }
inline uint32_t u32(int32_t x) { return static_cast<uint32_t>(x); }

// Four sums as one vector (lane moves: the two-lane VMOV Qd[2], Qd[0], Rt, Rt2
// is left out, as GCC and QEMU do not agree on which of its lanes Rt fills).
inline int32x4_t pack4(int32_t a, int32_t b, int32_t c, int32_t d) {
  int32x4_t v = vdupq_n_s32(a);
  v = vsetq_lane_s32(b, v, 1);
  v = vsetq_lane_s32(c, v, 2);
  return vsetq_lane_s32(d, v, 3);
}

}  // namespace

}  // namespace mve
}  // namespace tinyattn

#include "i8_scores-inl.h"
#include "i8_softmax-inl.h"
#include "i8_weighted-inl.h"
#include "i8_tflite-inl.h"

namespace tinyattn {
namespace mve {

namespace {

constexpr KernelsI8 make_table() {
  KernelsI8 t{};
  t.port = "mve";
  t.simd_target = simd_target;
  t.scores = scores;
  t.exp_row = exp_row;
  t.probabilities = probabilities;
  t.weighted_sum = weighted_sum;
  t.requantize = requantize;
  return t;
}
constexpr KernelsI8 kKernelsI8 = make_table();

// The TFLite mode's kernels (i8_tflite-inl.h), for tflite_kernels_i8.
constexpr KernelsI8Tflite kKernelsI8Tflite{scores, weighted_sum, tflite_requantize, tflite_exps, tflite_outputs};

}  // namespace

const KernelsI8& kernels_i8() { return kKernelsI8; }

}  // namespace mve

template <>
const KernelsI8* port_kernels_i8<Port::kMve>() {
  return &mve::kernels_i8();
}

template <>
const KernelsI8Tflite* port_tflite_kernels_i8<Port::kMve>() {
  return &mve::kKernelsI8Tflite;
}
}  // namespace tinyattn

#endif  // __ARM_FEATURE_MVE & 1
