#include "tinyattn/reference.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace tinyattn {
namespace ref {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Diagonal key position of query i, as a signed number.
int64_t diag(Align a, int32_t offset, size_t i, size_t n, size_t m) {
  if (a == Align::kOffset) return static_cast<int64_t>(i) + offset;
  return a == Align::kTopLeft ? static_cast<int64_t>(i)
                              : static_cast<int64_t>(i) + static_cast<int64_t>(m) - static_cast<int64_t>(n);
}

struct RowStats {
  double max;  // of visible logits; -inf if none visible
  double sum;  // sum exp(s - max), or count of +inf logits when max is +inf
  bool nan;
};

RowStats row_stats(const Dims& d, const float* q, const float* k, const Mask& mask, double scale, size_t h,
                   size_t i, double softcap) {
  RowStats st{-kInf, 0.0, false};
  for (size_t j = 0; j < d.m; ++j) {
    const double s = logit(d, q, k, mask, scale, h, i, j, softcap);
    if (std::isnan(s)) st.nan = true;
    else if (s > st.max) st.max = s;
  }
  if (st.nan || st.max == -kInf) return st;
  for (size_t j = 0; j < d.m; ++j) {
    const double s = logit(d, q, k, mask, scale, h, i, j, softcap);
    st.sum += st.max == kInf ? (s == kInf ? 1.0 : 0.0) : std::exp(s - st.max);
  }
  return st;
}

double weight(const RowStats& st, double s) {
  if (st.max == kInf) return s == kInf ? 1.0 / st.sum : 0.0;
  return std::exp(s - st.max) / st.sum;
}
}  // namespace

bool visible(const Mask& mask, const Dims& d, size_t h, size_t i, size_t j) {
  const int64_t jj = static_cast<int64_t>(j);
  if (mask.causal == Causal::kTopLeft && jj > diag(Align::kTopLeft, 0, i, d.n, d.m)) return false;
  if (mask.causal == Causal::kBottomRight && jj > diag(Align::kBottomRight, 0, i, d.n, d.m)) return false;
  if (mask.causal == Causal::kOffset && jj > static_cast<int64_t>(i) + mask.offset) return false;
  const Window& w = mask.window;
  const int64_t p = diag(w.align, mask.offset, i, d.n, d.m);
  if (w.left != kUnbounded && jj < p - w.left) return false;
  if (w.right != kUnbounded && jj > p + w.right) return false;
  if (mask.kv_len != kAllKeys && j >= mask.kv_len) return false;
  const size_t off = h * mask.head_stride;
  if (mask.keep && mask.keep[off + i * d.m + j] == 0) return false;
  if (mask.keep_bits) {
    const uint8_t byte = mask.keep_bits[off + i * keep_bits_row_bytes(d.m) + j / 8];
    if (((byte >> (j % 8)) & 1u) == 0) return false;
  }
  return true;
}

double score(const Dims& d, const float* q, const float* k, double scale, size_t h, size_t i, size_t j) {
  const size_t kvh = h / (d.hq / d.hkv);
  const float* qi = q + (h * d.n + i) * d.dk;
  const float* kj = k + (kvh * d.m + j) * d.dk;
  double dot = 0.0;
  for (size_t c = 0; c < d.dk; ++c) dot += static_cast<double>(qi[c]) * static_cast<double>(kj[c]);
  double s = scale * dot;
  // The logit is an fp32 value (docs/hardening.md, the overflow rule): beyond
  // fp32's range it is +-inf, as every port's, not a large double.
  if (std::isfinite(s) && std::isinf(static_cast<float>(s))) s = static_cast<float>(s);
  return s;
}

double logit(const Dims& d, const float* q, const float* k, const Mask& mask, double scale, size_t h,
             size_t i, size_t j, double softcap) {
  if (!visible(mask, d, h, i, j)) return -kInf;
  double s = score(d, q, k, scale, h, i, j);
  if (softcap > 0.0) s = softcap * std::tanh(s / softcap);
  if (mask.bias) s += static_cast<double>(mask.bias[h * mask.head_stride + i * d.m + j]);
  return s;
}

void forward(const Dims& d, const float* q, const float* k, const float* v, const Mask& mask, double scale,
             double* y, double* weights, double* lse, double softcap) {
  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kvh = h / (d.hq / d.hkv);
    for (size_t i = 0; i < d.n; ++i) {
      const size_t row = h * d.n + i;
      const RowStats st = row_stats(d, q, k, mask, scale, h, i, softcap);
      double* yi = y + row * d.dv;
      for (size_t c = 0; c < d.dv; ++c) yi[c] = st.nan ? kNaN : 0.0;
      if (lse) lse[row] = st.nan ? kNaN : st.max == -kInf ? -kInf : st.max == kInf ? kInf : st.max + std::log(st.sum);
      for (size_t j = 0; j < d.m; ++j) {
        const double s = logit(d, q, k, mask, scale, h, i, j, softcap);
        double a = 0.0;
        if (st.nan) a = s == -kInf ? 0.0 : kNaN;
        else if (st.max != -kInf) a = weight(st, s);
        if (weights) weights[row * d.m + j] = a;
        if (st.nan || a == 0.0) continue;
        const float* vj = v + (kvh * d.m + j) * d.dv;
        for (size_t c = 0; c < d.dv; ++c) yi[c] += a * static_cast<double>(vj[c]);
      }
    }
  }
}

void backward(const Dims& d, const float* q, const float* k, const float* v, const float* dy, const Mask& mask,
              double scale, double* dq, double* dk, double* dv, double* ds, double softcap) {
  for (size_t x = 0; x < d.q_elems(); ++x) dq[x] = 0.0;
  for (size_t x = 0; x < d.k_elems(); ++x) dk[x] = 0.0;
  for (size_t x = 0; x < d.v_elems(); ++x) dv[x] = 0.0;
  if (ds)
    for (size_t x = 0; x < d.weight_elems(); ++x) ds[x] = 0.0;
  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kvh = h / (d.hq / d.hkv);
    for (size_t i = 0; i < d.n; ++i) {
      const size_t row = h * d.n + i;
      const RowStats st = row_stats(d, q, k, mask, scale, h, i, softcap);
      if (st.max == -kInf) continue;  // no visible key: zero gradients
      const float* dyi = dy + row * d.dv;
      const float* qi = q + row * d.dk;
      if (st.nan) {  // a NaN logit: its row's dQ and the rows of every key it sees
        for (size_t c = 0; c < d.dk; ++c) dq[row * d.dk + c] = kNaN;
        for (size_t j = 0; j < d.m; ++j) {
          if (!visible(mask, d, h, i, j)) continue;
          if (ds) ds[row * d.m + j] = kNaN;
          for (size_t c = 0; c < d.dk; ++c) dk[(kvh * d.m + j) * d.dk + c] = kNaN;
          for (size_t c = 0; c < d.dv; ++c) dv[(kvh * d.m + j) * d.dv + c] = kNaN;
        }
        continue;
      }
      // With +inf logits A is the forward's limit (they share the weight) and
      // the same formulas give the limit of the gradient.
      // rowsum(Abar o A), from the definition (not the dY.Y identity)
      double dot_sum = 0.0;
      for (size_t j = 0; j < d.m; ++j) {
        const double a = weight(st, logit(d, q, k, mask, scale, h, i, j, softcap));
        if (a == 0.0) continue;
        const float* vj = v + (kvh * d.m + j) * d.dv;
        double abar = 0.0;
        for (size_t c = 0; c < d.dv; ++c) abar += static_cast<double>(dyi[c]) * vj[c];
        dot_sum += abar * a;
      }
      for (size_t j = 0; j < d.m; ++j) {
        const double a = weight(st, logit(d, q, k, mask, scale, h, i, j, softcap));
        if (a == 0.0) continue;
        const float* vj = v + (kvh * d.m + j) * d.dv;
        const float* kj = k + (kvh * d.m + j) * d.dk;
        double abar = 0.0;
        for (size_t c = 0; c < d.dv; ++c) abar += static_cast<double>(dyi[c]) * vj[c];
        const double dsij = a * (abar - dot_sum);
        if (ds) ds[row * d.m + j] = dsij;
        double du = dsij;  // dL/dU, through the cap's tanh
        if (softcap > 0.0) {
          const double th = std::tanh(score(d, q, k, scale, h, i, j) / softcap);
          du *= 1.0 - th * th;
        }
        for (size_t c = 0; c < d.dv; ++c) dv[(kvh * d.m + j) * d.dv + c] += a * dyi[c];
        for (size_t c = 0; c < d.dk; ++c) {
          dq[row * d.dk + c] += scale * du * kj[c];
          dk[(kvh * d.m + j) * d.dk + c] += scale * du * qi[c];
        }
      }
    }
  }
}

}  // namespace ref
}  // namespace tinyattn
