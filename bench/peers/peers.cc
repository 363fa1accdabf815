// The plain triple loop, Eigen 3.4 and tinyattn as bench peers.
#define EIGEN_DONT_PARALLELIZE  // one core, like every other peer
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>

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

// 64-byte aligned floats in a vector (rows of K^T and of the scores start
// on a cache line, as in the forward's workspace).
class AlignedFloats {
 public:
  explicit AlignedFloats(size_t n) : storage_(n + 16) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + (64 - at % 64) % 64 / sizeof(float);
  }
  float* data() { return data_; }

 private:
  std::vector<float> storage_;
  float* data_;
};

size_t round_up_16(size_t n) { return (n + 15) / 16 * 16; }

// The forward's two products alone, through the port's block primitives:
// per tile of at most kKeyTile keys (transposed here, once), every block of
// kBlockRows rows gets its scores from K^T and then its weighted sum of V.
// No softmax between them (the scores are the weights), and each tile's sum
// overwrites the last: the FLOPs of the forward without its max, exp, sums,
// rescaling and transposition. (With M <= kKeyTile the forward's order;
// above, the forward takes the rows in groups, each group over every tile.)
// One product alone (kScores: Q K^T; kValues: P V, on the weights of the
// last block's scores) splits the two.
class TinyattnProducts : public Forward {
 public:
  TinyattnProducts(const Problem& p, const tinyattn::KernelsF32& k, Products which)
      : p_(p), k_(k), which_(which), tile_(std::min(p.m, tinyattn::kKeyTile)), ldkt_(round_up_16(tile_)),
        tiles_((p.m + tile_ - 1) / tile_), kt_(tiles_ * p.dk * ldkt_), s_(tinyattn::kBlockRows * ldkt_) {
    y_.resize(p.n * p.dv);
    for (size_t t = 0; t < tiles_; ++t)
      for (size_t j = t * tile_; j < std::min(p.m, (t + 1) * tile_); ++j)
        for (size_t c = 0; c < p.dk; ++c) kt_.data()[(t * p.dk + c) * ldkt_ + j - t * tile_] = p.k[j * p.dk + c];
    k_.scores_block_transposed(p.q.data(), p.dk, kt_.data(), ldkt_, tile_, p.dk, p.scale, s_.data(), ldkt_);
  }
  void run() override {
    const Problem& p = p_;
    static constexpr float kOnes[tinyattn::kBlockRows] = {1.0f, 1.0f, 1.0f, 1.0f};
    static_assert(tinyattn::kBlockRows == 4, "kOnes lists kBlockRows ones");
    const bool scores = which_ != Products::kValues, values = which_ != Products::kScores;
    for (size_t t = 0; t < tiles_; ++t) {
      const size_t lo = t * tile_, count = std::min(p.m - lo, tile_);
      const float* kt = kt_.data() + t * p.dk * ldkt_;
      for (size_t i = 0; i + tinyattn::kBlockRows <= p.n; i += tinyattn::kBlockRows) {
        if (scores)
          k_.scores_block_transposed(&p.q[i * p.dk], p.dk, kt, ldkt_, count, p.dk, p.scale, s_.data(), ldkt_);
        if (values)
          k_.weighted_sum_block(s_.data(), ldkt_, tinyattn::kBlockRows, &p.v[lo * p.dv], p.dv, count, p.dv, kOnes,
                                &y_[i * p.dv], p.dv);
      }
    }
  }

 private:
  const Problem& p_;
  const tinyattn::KernelsF32& k_;
  Products which_;
  size_t tile_, ldkt_, tiles_;
  AlignedFloats kt_, s_;
};

// The softmax of the forward alone: for N rows of M scores, each row's max
// and exp(x - max) with their sum, in place, over one block of kBlockRows
// rows in L1 (as the forward's scores are when it exponentiates them; its
// fused kernel runs the same two passes four rows at a time). Repeated, the
// values stay in (0, 1].
class TinyattnSoftmax : public Forward {
 public:
  TinyattnSoftmax(const Problem& p, const tinyattn::KernelsF32& k)
      : p_(p), k_(k), lds_(round_up_16(p.m)), s_(tinyattn::kBlockRows * lds_), sums_(p.n) {
    for (size_t r = 0; r < tinyattn::kBlockRows; ++r)
      for (size_t j = 0; j < p.m; ++j) s_.data()[r * lds_ + j] = 8.0f * p.k[(r * p.m + j) % p.k.size()];
  }
  void run() override {
    for (size_t i = 0; i < p_.n; ++i) {
      float* row = s_.data() + i % tinyattn::kBlockRows * lds_;
      sums_[i] = k_.exp_shift_sum(row, p_.m, k_.row_max(row, p_.m));
    }
  }

 private:
  const Problem& p_;
  const tinyattn::KernelsF32& k_;
  size_t lds_;
  AlignedFloats s_;
  std::vector<float> sums_;
};

class TinyattnBlocks : public Forward {
 public:
  // step: rows per call where whole (the driver's rule for the fixed-extent
  // entries: several blocks where the port takes them, lib/src/forward_core.h).
  TinyattnBlocks(const Problem& p, bool (*attend)(const tinyattn::AttendBlock&), size_t step)
      : p_(p), attend_(attend), step_(step), lds_(round_up_16(p.m)), s_(tinyattn::kBlockRows * lds_) {
    y_.resize(p.n * p.dv);
  }
  void run() override {
    const Problem& p = p_;
    float max[tinyattn::kFixedRowsAtOnce], sum[tinyattn::kFixedRowsAtOnce];
    for (size_t i = 0, rows = 0; i < p.n; i += rows) {
      const size_t left = p.n - i;
      rows = left >= step_ ? step_ : std::min(left, tinyattn::kBlockRows);
      tinyattn::AttendBlock b;  // every field set below
      b.q = &p.q[i * p.dk];
      b.ldq = p.dk;
      b.rows = rows;
      b.k = p.k.data();
      b.ldk = p.dk;
      b.v = p.v.data();
      b.ldv = p.dv;
      b.count = p.m;
      b.dk = p.dk;
      b.dv = p.dv;
      b.scale = p.scale;
      b.s = s_.data();
      b.lds = lds_;
      b.y = &y_[i * p.dv];
      b.ldy = p.dv;
      b.max = max;
      b.sum = sum;
      b.own = nullptr;
      b.kt = nullptr;
      b.ldkt = 0;
      ok_ &= attend_(b);
    }
  }
  bool ok() const { return ok_; }

 private:
  const Problem& p_;
  bool (*attend_)(const tinyattn::AttendBlock&);
  size_t step_;
  size_t lds_;
  AlignedFloats s_;
  bool ok_ = true;
};

}  // namespace

std::unique_ptr<Forward> make_tinyattn_blocks(const Problem& p, tinyattn::Port port, bool fixed) {
  const tinyattn::KernelsF32* k = tinyattn::kernels_f32(port);
  if (!k || !k->attend_block) return nullptr;
  bool (*attend)(const tinyattn::AttendBlock&) = k->attend_block;
  size_t step = tinyattn::kBlockRows;
  if (fixed) {
    const int e = tinyattn::detail::fixed_extent(p.dk, p.dv);
    if (e < 0 || !k->attend_fixed || !k->attend_fixed[e]) return nullptr;
    attend = k->attend_fixed[e];
    if (p.m <= k->fixed_multi_block_keys) step = tinyattn::kFixedRowsAtOnce;
  }
  auto b = std::make_unique<TinyattnBlocks>(p, attend, step);
  b->run();
  if (!b->ok()) return nullptr;  // a block the kernel declines: not this bench's inputs
  return b;
}

std::unique_ptr<Forward> make_tinyattn_products(const Problem& p, tinyattn::Port port, Products which) {
  const tinyattn::KernelsF32* k = tinyattn::kernels_f32(port);
  if (!k || !k->scores_block_transposed || !k->weighted_sum_block || p.n % tinyattn::kBlockRows != 0) return nullptr;
  return std::make_unique<TinyattnProducts>(p, *k, which);
}

std::unique_ptr<Forward> make_tinyattn_softmax(const Problem& p, tinyattn::Port port) {
  const tinyattn::KernelsF32* k = tinyattn::kernels_f32(port);
  if (!k) return nullptr;
  return std::make_unique<TinyattnSoftmax>(p, *k);
}

std::unique_ptr<Forward> make_triple_loop(const Problem& p) { return std::make_unique<TripleLoop>(p); }
std::unique_ptr<Forward> make_eigen(const Problem& p) { return std::make_unique<EigenPeer>(p); }

namespace {
// forward() on copies of the problem's arrays placed `offset` floats past a
// cache line (0: on one; 4: 16 bytes past, what malloc often gives).
class TinyattnPlaced : public Forward {
 public:
  TinyattnPlaced(const Problem& p, tinyattn::Port port, size_t offset)
      : dims_{p.n, p.m, p.dk, p.dv, 1, 1},
        ws_(tinyattn::forward_workspace_bytes(dims_, false)),
        q_(p.q.size() + offset),
        k_(p.k.size() + offset),
        v_(p.v.size() + offset),
        out_(p.n * p.dv + offset),
        offset_(offset) {
    std::copy(p.q.begin(), p.q.end(), q_.data() + offset);
    std::copy(p.k.begin(), p.k.end(), k_.data() + offset);
    std::copy(p.v.begin(), p.v.end(), v_.data() + offset);
    y_.resize(p.n * p.dv);
    options_.port = port;
  }
  void run() override {
    const tinyattn::ForwardIo io{q_.data() + offset_, k_.data() + offset_, v_.data() + offset_,
                                 out_.data() + offset_, nullptr, nullptr};
    status_ = tinyattn::forward(dims_, io, {ws_.data(), ws_.size()}, {}, options_);
  }
  void finish() { std::copy(out_.data() + offset_, out_.data() + offset_ + y_.size(), y_.begin()); }
  tinyattn::Status status() const { return status_; }

 private:
  tinyattn::Dims dims_;
  std::vector<unsigned char> ws_;
  AlignedFloats q_, k_, v_, out_;
  size_t offset_;
  tinyattn::Options options_;
  tinyattn::Status status_ = tinyattn::Status::kOk;
};
}  // namespace

std::unique_ptr<Forward> make_tinyattn_placed(const Problem& p, tinyattn::Port port, size_t offset) {
  if (!tinyattn::kernels_f32(port)) return nullptr;
  auto t = std::make_unique<TinyattnPlaced>(p, port, offset);
  t->run();
  if (t->status() != tinyattn::Status::kOk) return nullptr;
  t->finish();
  return t;
}

std::unique_ptr<Forward> make_tinyattn(const Problem& p, tinyattn::Port port, const tinyattn::Mask& mask,
                                       tinyattn::Scratch scratch) {
  if (!tinyattn::kernels_f32(port)) return nullptr;
  auto t = std::make_unique<Tinyattn>(p, port, mask, scratch);
  t->run();
  if (t->status() != tinyattn::Status::kOk) return nullptr;
  return t;
}

namespace {
// The compile-time API, Attention<S>, on the problem's arrays copied into
// its own std::array types. The default port's row calls it as a user
// would, attn(q, k, v, y); the other ports' through Options::port.
template <class S>
class TinyattnFixed : public Forward {
 public:
  TinyattnFixed(const Problem& p, tinyattn::Port port) {
    std::copy(p.q.begin(), p.q.end(), q_.begin());
    std::copy(p.k.begin(), p.k.end(), k_.begin());
    std::copy(p.v.begin(), p.v.end(), v_.begin());
    y_.resize(p.n * p.dv);
    options_.port = port;
    default_call_ = tinyattn::kernels_f32(port) == tinyattn::kernels_f32(tinyattn::Port::kDefault);
  }
  void run() override {
    status_ = default_call_ ? attn_(q_, k_, v_, out_) : attn_(q_, k_, v_, out_, {}, nullptr, options_);
    keep(out_[0]);
  }
  void finish() { std::copy(out_.begin(), out_.end(), y_.begin()); }
  tinyattn::Status status() const { return status_; }

 private:
  using A = tinyattn::Attention<S>;
  A attn_;
  typename A::Q q_;
  typename A::K k_;
  typename A::V v_;
  typename A::Y out_;
  tinyattn::Options options_;
  bool default_call_ = false;
  tinyattn::Status status_ = tinyattn::Status::kOk;
};

template <class S>
std::unique_ptr<Forward> fixed_if(const Problem& p, tinyattn::Port port) {
  if (p.n != S::kN || p.m != S::kM || p.dk != S::kDk || p.dv != S::kDv) return nullptr;
  auto t = std::make_unique<TinyattnFixed<S>>(p, port);
  t->run();
  if (t->status() != tinyattn::Status::kOk) return nullptr;
  t->finish();
  return t;
}
}  // namespace

std::unique_ptr<Forward> make_tinyattn_fixed(const Problem& p, tinyattn::Port port) {
  if (!tinyattn::kernels_f32(port)) return nullptr;
  if (auto t = fixed_if<tinyattn::Shape<8, 8, 16, 16>>(p, port)) return t;
  return fixed_if<tinyattn::Shape<16, 16, 32, 32>>(p, port);
}

void softmax_row_eigen(float* x, size_t n) {
  Eigen::Map<Eigen::ArrayXf> row(x, static_cast<Eigen::Index>(n));
  row = (row - row.maxCoeff()).exp();
  row *= 1.0f / row.sum();
}

}  // namespace bench
