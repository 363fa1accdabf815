// Row softmax and its vector-Jacobian product on a port's kernels.
#include "tinyattn/softmax.h"

#include <cstring>
#include <limits>

#include "detail.h"

namespace tinyattn {

namespace {

using detail::Extent;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Exact aliasing (in place) is fine for these elementwise passes; a shifted
// overlap would read values already overwritten.
bool partial_overlap(const float* a, const float* b, size_t n) {
  return a != b && detail::overlaps(Extent{a, n * sizeof(float)}, Extent{b, n * sizeof(float)});
}

Status validate_row(const float* in, float* out, size_t n, Port port, const KernelsF32** kernels) {
  if (!in || !out) return Status::kNullPointer;
  if (!dim_ok(n)) return Status::kBadDimension;
  if (!detail::aligned(in) || !detail::aligned(out)) return Status::kMisaligned;
  if (partial_overlap(in, out, n)) return Status::kAliasing;
  *kernels = kernels_f32(port);
  return *kernels ? Status::kOk : Status::kPortUnavailable;
}

}  // namespace

Status softmax(const float* x, float* p, size_t n, Port port) {
  const KernelsF32* kp = nullptr;
  if (Status s = validate_row(x, p, n, port, &kp); s != Status::kOk) return s;
  const KernelsF32& kern = *kp;
  if (p != x) std::memcpy(p, x, n * sizeof(float));
  const float max = kern.row_max(p, n);
  if (max == -kInf) {  // nothing to attend to: zeros, as a fully masked row
    for (size_t j = 0; j < n; ++j) p[j] = 0.0f;
    return Status::kOk;
  }
  if (max != max) {
    for (size_t j = 0; j < n; ++j) p[j] = max;
    return Status::kOk;
  }
  float sum;
  if (max == kInf) {  // the limit of softmax: +inf entries share the weight
    sum = 0.0f;
    for (size_t j = 0; j < n; ++j) {
      p[j] = p[j] == kInf ? 1.0f : 0.0f;
      sum += p[j];
    }
  } else {
    sum = kern.exp_shift_sum(p, n, max);
  }
  kern.scale(p, n, 1.0f / sum);
  return Status::kOk;
}

Status softmax_vjp(const float* p, const float* dp, float* dx, size_t n, Port port) {
  const KernelsF32* kp = nullptr;
  if (Status s = validate_row(p, dx, n, port, &kp); s != Status::kOk) return s;
  if (!dp) return Status::kNullPointer;
  if (!detail::aligned(dp)) return Status::kMisaligned;
  if (partial_overlap(dp, dx, n)) return Status::kAliasing;
  float dot;
  kp->scores(p, dp, n, 1, n, 1.0f, &dot);  // <p, dp>, before dx may overwrite either
  for (size_t j = 0; j < n; ++j) dx[j] = p[j] * (dp[j] - dot);
  return Status::kOk;
}

}  // namespace tinyattn
