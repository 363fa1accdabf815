// Problem dimensions: run-time (Dims) and compile-time (Shape<...>).
//
// Tensor layouts are dense, row-major, heads outermost:
//   Q[Hq][N][Dk]   K[Hkv][M][Dk]   V[Hkv][M][Dv]   Y[Hq][N][Dv]
//   weights A[Hq][N][M]            log-sum-exp L[Hq][N]
// Query head h reads KV head h / (Hq / Hkv) (grouped-query attention, as
// PyTorch's enable_gqa): Hkv == Hq is multi-head, Hkv == 1 multi-query.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/status.h"

namespace tinyattn {

// Upper bound on any single dimension. It keeps every size product used by the
// library (at most Hq*N*M with three factors <= 2^16, checked below) inside
// 64 bits and rejects garbage sizes from corrupted configuration early.
inline constexpr size_t kMaxDim = size_t{1} << 16;

struct Dims {
  size_t n = 0;    // query rows
  size_t m = 0;    // key/value rows
  size_t dk = 0;   // query/key width
  size_t dv = 0;   // value/output width
  size_t hq = 1;   // query heads
  size_t hkv = 1;  // key/value heads

  constexpr size_t q_elems() const { return hq * n * dk; }
  constexpr size_t k_elems() const { return hkv * m * dk; }
  constexpr size_t v_elems() const { return hkv * m * dv; }
  constexpr size_t y_elems() const { return hq * n * dv; }
  constexpr size_t weight_elems() const { return hq * n * m; }
  constexpr size_t lse_elems() const { return hq * n; }
  constexpr size_t group() const { return hkv == 0 ? 0 : hq / hkv; }
  // FLOPs of one forward pass as bench/ counts them: 2*N*M*Dk + 2*N*M*Dv per head.
  constexpr double flops() const {
    return 2.0 * static_cast<double>(hq) * static_cast<double>(n) * static_cast<double>(m) *
           static_cast<double>(dk + dv);
  }
};

constexpr bool dim_ok(size_t x) { return x >= 1 && x <= kMaxDim; }

// True when `elems` floats can be one array on this target (32-bit targets
// cannot address every shape the dimension limits allow).
constexpr bool fits_address_space(uint64_t elems) {
  return elems <= static_cast<uint64_t>(PTRDIFF_MAX) / sizeof(float);
}

constexpr Status validate(const Dims& d) {
  if (!dim_ok(d.n) || !dim_ok(d.m) || !dim_ok(d.dk) || !dim_ok(d.dv)) return Status::kBadDimension;
  if (d.hq == 0 || d.hkv == 0 || d.hq > kMaxDim || d.hkv > kMaxDim) return Status::kBadHeads;
  if (d.hq % d.hkv != 0) return Status::kBadHeads;
  // Every tensor must be addressable: with each factor <= 2^16 the products
  // are < 2^48, which always fits a 64-bit size_t but not a 32-bit one.
  if (!fits_address_space(uint64_t{d.hq} * d.n * d.dk) || !fits_address_space(uint64_t{d.hkv} * d.m * d.dk) ||
      !fits_address_space(uint64_t{d.hkv} * d.m * d.dv) || !fits_address_space(uint64_t{d.hq} * d.n * d.dv))
    return Status::kBadDimension;
  return Status::kOk;
}

// Compile-time shape. Invalid shapes fail to compile with a readable message.
template <size_t N, size_t M, size_t Dk, size_t Dv, size_t Hq = 1, size_t Hkv = 1>
struct Shape {
  static_assert(N >= 1 && N <= kMaxDim, "tinyattn::Shape: N (query rows) must be in [1, kMaxDim]");
  static_assert(M >= 1 && M <= kMaxDim, "tinyattn::Shape: M (key rows) must be in [1, kMaxDim]");
  static_assert(Dk >= 1 && Dk <= kMaxDim, "tinyattn::Shape: Dk must be in [1, kMaxDim]");
  static_assert(Dv >= 1 && Dv <= kMaxDim, "tinyattn::Shape: Dv must be in [1, kMaxDim]");
  static_assert(Hq >= 1 && Hkv >= 1, "tinyattn::Shape: head counts must be >= 1");
  static_assert(Hq % Hkv == 0, "tinyattn::Shape: Hq must be a multiple of Hkv (grouped-query attention)");

  static constexpr Dims dims{N, M, Dk, Dv, Hq, Hkv};
  static constexpr size_t kN = N, kM = M, kDk = Dk, kDv = Dv, kHq = Hq, kHkv = Hkv;
};

}  // namespace tinyattn
