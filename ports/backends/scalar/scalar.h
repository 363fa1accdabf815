// The scalar port's kernels, exported so that a port may start from them:
// its table is scalar::table_f32("name") (or table_i8) with the entries it
// implements itself replaced (ports/backends/template, ports/backends/dsp).
// Sharing the functions, not wrapping them, keeps such a port's image as
// small as the scalar port's.
#pragma once

#include "tinyattn/kernels.h"
#include "tinyattn/kernels_i16.h"
#include "tinyattn/kernels_i8.h"

namespace tinyattn {
namespace scalar {

const char* simd_target();

namespace f32 {
void scores(const float* q, const float* k, size_t ldk, size_t count, size_t dk, float scale, float* s);
float row_max(const float* x, size_t n);
float exp_shift_sum(float* x, size_t n, float shift);
void weighted_sum(const float* p, const float* v, size_t ldv, size_t count, size_t dv, float a, float* y);
void axpy(float a, const float* x, float* y, size_t n);
void scale(float* x, size_t n, float a);
void exp(const float* x, float* out, size_t n);
void scores_block(const float* q, size_t ldq, size_t rows, const float* k, size_t ldk, size_t count, size_t dk,
                  float scale, float* s, size_t lds);
void weighted_sum_block(const float* p, size_t ldp, size_t rows, const float* v, size_t ldv, size_t count,
                        size_t dv, const float* a, float* y, size_t ldy);
}  // namespace f32

namespace i8 {
int32_t scores(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
               int32_t* s);
int64_t exp_row(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e);
void probabilities(const int32_t* e, size_t n, int64_t sum, int32_t* p);
void weighted_sum(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc);
void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y);
}  // namespace i8

// The scalar tables under another port's name.
constexpr KernelsF32 table_f32(const char* port) {
  KernelsF32 t{};
  t.port = port;
  t.simd_target = simd_target;
  t.scores = f32::scores;
  t.row_max = f32::row_max;
  t.exp_shift_sum = f32::exp_shift_sum;
  t.weighted_sum = f32::weighted_sum;
  t.axpy = f32::axpy;
  t.scale = f32::scale;
  t.exp = f32::exp;
  t.scores_block = f32::scores_block;
  t.weighted_sum_block = f32::weighted_sum_block;
  return t;
}
constexpr KernelsI8 table_i8(const char* port) {
  KernelsI8 t{};
  t.port = port;
  t.simd_target = simd_target;
  t.scores = i8::scores;
  t.exp_row = i8::exp_row;
  t.probabilities = i8::probabilities;
  t.weighted_sum = i8::weighted_sum;
  t.requantize = i8::requantize;
  return t;
}

namespace i16 {
int64_t scores(const int16_t* q, const int16_t* k, size_t ldk, size_t count, size_t dk, int64_t* s);
int64_t exp_row(const int64_t* s, size_t n, FixedMultiplier logit, int64_t max_score, int32_t* e);
void weighted_sum(const int32_t* p, const int16_t* v, size_t ldv, size_t count, size_t dv, int32_t* acc);
void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int16_t* y);
}  // namespace i16

// The int16 table (its probabilities are the int8 table's: the same Q0.15 step).
constexpr KernelsI16 table_i16(const char* port) {
  KernelsI16 t{};
  t.port = port;
  t.simd_target = simd_target;
  t.scores = i16::scores;
  t.exp_row = i16::exp_row;
  t.probabilities = i8::probabilities;
  t.weighted_sum = i16::weighted_sum;
  t.requantize = i16::requantize;
  return t;
}

const KernelsF32& kernels_f32();
const KernelsI8& kernels_i8();
const KernelsI16& kernels_i16();

}  // namespace scalar
}  // namespace tinyattn
