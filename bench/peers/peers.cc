// The plain triple loop, Eigen 3.4 and tinyattn as bench peers.
#define EIGEN_DONT_PARALLELIZE  // one core, like every other peer
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "peers.h"
#include "tinyattn/attention.h"

namespace bench {

Problem::Problem(size_t n_, size_t m_, size_t dk_, size_t dv_)
    : n(n_), m(m_), dk(dk_), dv(dv_), scale(1.0f / std::sqrt(static_cast<float>(dk_))),
      q(n_ * dk_), k(m_ * dk_), v(m_ * dv_) {
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int32_t>(state >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
  };
  for (float& x : q) x = next();
  for (float& x : k) x = next();
  for (float& x : v) x = next();
}

namespace {

// Row by row, loops as written in a textbook; std::exp.
class TripleLoop : public Forward {
 public:
  explicit TripleLoop(const Problem& p) : p_(p), s_(p.m) { y_.resize(p.n * p.dv); }
  void run() override {
    const Problem& p = p_;
    for (size_t i = 0; i < p.n; ++i) {
      const float* qi = &p.q[i * p.dk];
      float mx = -INFINITY;
      for (size_t j = 0; j < p.m; ++j) {
        float acc = 0.0f;
        for (size_t c = 0; c < p.dk; ++c) acc += qi[c] * p.k[j * p.dk + c];
        s_[j] = acc * p.scale;
        mx = std::max(mx, s_[j]);
      }
      float sum = 0.0f;
      for (size_t j = 0; j < p.m; ++j) {
        s_[j] = std::exp(s_[j] - mx);
        sum += s_[j];
      }
      float* yi = &y_[i * p.dv];
      for (size_t c = 0; c < p.dv; ++c) yi[c] = 0.0f;
      for (size_t j = 0; j < p.m; ++j)
        for (size_t c = 0; c < p.dv; ++c) yi[c] += s_[j] * p.v[j * p.dv + c];
      for (size_t c = 0; c < p.dv; ++c) yi[c] /= sum;
    }
  }

 private:
  const Problem& p_;
  std::vector<float> s_;
};

// Eigen: two GEMMs around a vectorized row softmax.
class EigenPeer : public Forward {
  using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

 public:
  explicit EigenPeer(const Problem& p)
      : p_(p), s_(p.n, p.m), max_(p.n), sum_(p.n) {
    y_.resize(p.n * p.dv);
  }
  void run() override {
    const Problem& p = p_;
    Eigen::Map<const RowMat> q(p.q.data(), p.n, p.dk), k(p.k.data(), p.m, p.dk), v(p.v.data(), p.m, p.dv);
    Eigen::Map<RowMat> y(y_.data(), p.n, p.dv);
    s_.noalias() = q * k.transpose();
    s_ *= p.scale;
    max_ = s_.rowwise().maxCoeff();
    s_.colwise() -= max_;
    s_.array() = s_.array().exp();
    sum_ = s_.rowwise().sum();
    y.noalias() = s_ * v;
    y.array().colwise() /= sum_.array();
  }

 private:
  const Problem& p_;
  RowMat s_;
  Eigen::VectorXf max_, sum_;
};

class Tinyattn : public Forward {
 public:
  Tinyattn(const Problem& p, tinyattn::Port port, const tinyattn::Mask& mask, tinyattn::Scratch scratch)
      : p_(p), dims_{p.n, p.m, p.dk, p.dv, 1, 1}, ws_(tinyattn::forward_workspace_bytes(dims_, false, scratch)),
        mask_(mask) {
    y_.resize(p.n * p.dv);
    options_.port = port;
  }
  void run() override {
    const tinyattn::ForwardIo io{p_.q.data(), p_.k.data(), p_.v.data(), y_.data(), nullptr, nullptr};
    status_ = tinyattn::forward(dims_, io, {ws_.data(), ws_.size()}, mask_, options_);
  }
  tinyattn::Status status() const { return status_; }

 private:
  const Problem& p_;
  tinyattn::Dims dims_;
  std::vector<unsigned char> ws_;
  tinyattn::Mask mask_;
  tinyattn::Options options_;
  tinyattn::Status status_ = tinyattn::Status::kOk;
};

}  // namespace

std::unique_ptr<Forward> make_triple_loop(const Problem& p) { return std::make_unique<TripleLoop>(p); }
std::unique_ptr<Forward> make_eigen(const Problem& p) { return std::make_unique<EigenPeer>(p); }

std::unique_ptr<Forward> make_tinyattn(const Problem& p, tinyattn::Port port, const tinyattn::Mask& mask,
                                       tinyattn::Scratch scratch) {
  if (!tinyattn::kernels_f32(port)) return nullptr;
  auto t = std::make_unique<Tinyattn>(p, port, mask, scratch);
  t->run();
  if (t->status() != tinyattn::Status::kOk) return nullptr;
  return t;
}

void softmax_row_tinyattn(const tinyattn::KernelsF32& k, float* x, size_t n) {
  const float mx = k.row_max(x, n);
  const float sum = k.exp_shift_sum(x, n, mx);
  k.scale(x, n, 1.0f / sum);
}

}  // namespace bench
