// Test support shared by every suite and target: a deterministic RNG, a
// static arena for test tensors (no heap on boards), the ports under test,
// and framework-neutral property checks that return a Result instead of
// asserting, so the self-test and any runner can use them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tinyattn/attention.h"
#include "tinyattn/kernels.h"  // the ports under test are kernel tables (tinyattn::contract)

namespace tatest {

// SplitMix64: tiny, well distributed, identical on every target.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64();
  float uniform(float lo, float hi);
  float normal();  // Box-Muller, mean 0, sd 1
  void fill_uniform(float* x, size_t n, float lo, float hi);
  void fill_normal(float* x, size_t n, float sd = 1.0f);

 private:
  uint64_t state_;
};

// Bump allocator over a static buffer, reset by each Scope. Test tensors live
// here on every target so hosted and board runs behave identically.
class Arena {
 public:
  static void* allocate(size_t bytes);  // 64-byte aligned; nullptr when exhausted
  static size_t capacity();
  static size_t used();
  struct Scope {
    Scope();
    ~Scope();
    size_t mark;
  };
};

template <class T>
T* alloc(size_t n) {
  return static_cast<T*>(Arena::allocate(n * sizeof(T)));
}

// n elements with kGuard guard elements on each side, all set to `guard`
// first, so a kernel's write outside [0, n) shows in intact().
template <class T>
struct Guarded {
  static constexpr size_t kGuard = 16;
  T* base;
  size_t n;
  T guard;
  T* data() { return base + kGuard; }
  static Guarded make(size_t n, T guard) {
    Guarded g{alloc<T>(n + 2 * kGuard), n, guard};
    if (g.base)
      for (size_t i = 0; i < n + 2 * kGuard; ++i) g.base[i] = guard;
    return g;
  }
  bool intact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (base[i] != guard || base[kGuard + n + i] != guard) return false;
    return true;
  }
};

// Room for every port of tinyattn/port_list.h.
inline constexpr size_t kMaxPorts = sizeof tinyattn::kAllPorts / sizeof tinyattn::kAllPorts[0];

// The ports compiled into this build that this CPU can run, in list order
// (scalar first); `out` has room for all of them, so none is left out (the
// "ports" suite checks that this is every compiled port). Returns the count.
size_t ports_under_test(tinyattn::Port (&out)[kMaxPorts]);

struct Result {
  bool ok = true;
  double worst = 0.0;  // the largest deviation seen
  double bound = 0.0;  // what it was compared against
  size_t index = 0;    // where the worst deviation is
};

// |sum_j a[r][j] - 1| <= tol for every row r that has any nonzero weight;
// rows in `zero_rows_allowed` mode may instead be exactly all zero.
Result rows_sum_to_one(const float* a, size_t rows, size_t cols, double tol, bool zero_rows_allowed);
// a[x] >= 0 and finite.
Result nonnegative(const float* a, size_t n);
// Every y in [min_j v_j, max_j v_j] per coordinate (over the visible keys of
// each row, from the reference mask), within tol * (max|v| + 1).
Result in_value_hull(const tinyattn::Dims& d, const float* y, const float* v, const tinyattn::Mask& mask,
                     double tol);
// ||y_i|| <= max_j ||v_j|| * (1 + tol) over visible keys (the seed's bound).
Result norm_bound(const tinyattn::Dims& d, const float* y, const float* v, const tinyattn::Mask& mask,
                  double tol);
// |got - want| <= atol + rtol * |want| elementwise; NaN must match NaN.
Result close(const float* got, const double* want, size_t n, double atol, double rtol);
Result close(const float* got, const float* want, size_t n, double atol, double rtol);

// Data for one forward problem in the arena, filled from a seeded RNG.
struct Problem {
  tinyattn::Dims d;
  float *q, *k, *v, *y, *weights, *lse;
  double *y_ref, *weights_ref, *lse_ref;
  unsigned char* workspace;
  bool ok;  // false when the arena could not hold it
};
Problem make_problem(const tinyattn::Dims& d, uint64_t seed, float sd = 1.0f);
// Runs the reference into y_ref/weights_ref/lse_ref.
void run_reference(Problem& p, const tinyattn::Mask& mask, const tinyattn::Options& o = {});
// Runs forward() on a port into y/weights/lse (NaN-filled first). Without
// weights, forward() gets the smaller workspace and takes its tiled path when M
// is long (forward_uses_tiles).
// With Scratch::kTransposedKeys the workspace is the larger one, from the
// arena (the caller's Arena::Scope holds it).
tinyattn::Status run_port(Problem& p, tinyattn::Port port, const tinyattn::Mask& mask,
                          const tinyattn::Options& o = {}, bool with_weights = true,
                          tinyattn::Scratch scratch = tinyattn::Scratch::kMinimal);

// Tolerances of a port against the reference (fp32 path), as stated in the README:
//   weights: |a - a_ref| <= kWeightAtol + kWeightRtol * a_ref
//   outputs: |y - y_ref| <= kOutAtol * (max |v|) + kOutRtol * |y_ref|
inline constexpr double kWeightAtol = 2e-6;
inline constexpr double kWeightRtol = 2e-5;
inline constexpr double kOutAtol = 2e-5;
inline constexpr double kOutRtol = 2e-5;
// Row sums of A in fp32: |sum - 1| <= kRowSumTol (M up to a few thousand).
inline constexpr double kRowSumTol = 1e-5;

double max_abs(const float* x, size_t n);

}  // namespace tatest
