// Forward attention implementations the bench compares, all computing
//   Y = softmax(scale * Q K^T) V   (fp32, row-major Q[N][Dk] K[M][Dk] V[M][Dv])
// for one fixed shape; construction does everything that can be done once.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "timing.h"
#include "tinyattn/attention.h"
#include "tinyattn/kernels.h"
#include "tinyattn/mask.h"

namespace bench {

struct Problem {
  size_t n, m, dk, dv;
  float scale;
  std::vector<float> q, k, v;
  Problem(size_t n_, size_t m_, size_t dk_, size_t dv_);
  double flops() const { return 2.0 * n * m * (dk + dv); }
};

class Forward {
 public:
  virtual ~Forward() = default;
  virtual void run() = 0;
  const std::vector<float>& y() const { return y_; }

 protected:
  std::vector<float> y_;
};

std::unique_ptr<Forward> make_triple_loop(const Problem& p);
std::unique_ptr<Forward> make_eigen(const Problem& p);
std::unique_ptr<Forward> make_onednn(const Problem& p);  // one thread, oneDNN's own ISA
// null if the port is not built
// forward() without weights, in a workspace of the given kind (tinyattn::Scratch;
// the default one unless told).
std::unique_ptr<Forward> make_tinyattn(const Problem& p, tinyattn::Port port, const tinyattn::Mask& mask = {},
                                       tinyattn::Scratch scratch = tinyattn::kDefaultScratch);

// The same through the compile-time API, Attention<Shape<...>>, at the
// shapes it is instantiated for, (8,8,16,16) and (16,16,32,32); null at others.
std::unique_ptr<Forward> make_tinyattn_fixed(const Problem& p, tinyattn::Port port);
// forward() on copies of the arrays placed `offset` floats past a cache line.
std::unique_ptr<Forward> make_tinyattn_placed(const Problem& p, tinyattn::Port port, size_t offset);

// The parts of a forward timed alone, for the bound on its share of the
// peak: the two products without the softmax between them (oneDNN's matmuls;
// a port's block products over the keys transposed once at construction,
// null where the port has no scores_block_transposed), and the softmax of
// N rows of M scores without the products (the row max and exp-and-sum the
// forward runs, on a block of rows in L1; its 1/sum is a factor of the
// second product).
// kScores or kValues: one of the two alone, for how the products split.
enum class Products { kBoth, kScores, kValues };
std::unique_ptr<Forward> make_onednn_products(const Problem& p);
std::unique_ptr<Forward> make_tinyattn_products(const Problem& p, tinyattn::Port port,
                                                Products which = Products::kBoth);
std::unique_ptr<Forward> make_tinyattn_softmax(const Problem& p, tinyattn::Port port);
// The port's fused block kernel alone over every block of rows, as the
// forward's driver calls it but without the argument checks and the
// driver's loops around it: what a call costs beyond them. Null where the
// port has no attend_block. fixed: its attend_fixed entry for the problem's
// Dk and Dv instead (null where it has none), given several blocks per call
// where the port takes them, as the driver does.
std::unique_ptr<Forward> make_tinyattn_blocks(const Problem& p, tinyattn::Port port, bool fixed = false);

// An AVX2 CPU on this one (peers_bench --avx2-cpu): oneDNN's ISA capped at
// AVX2, before any primitive is created (false where oneDNN refuses), and
// the FMA peak and the softmax forms limited to AVX2 (the caller forces
// Highway's target).
bool limit_onednn_to_avx2();
void limit_fma_peak_to_avx2();
// Whether the CPU has AVX-512F and the bench is not limited to AVX2.
bool avx512_in_use();

// fp32 FMA peak of one core at the widest vectors it has (AVX-512 where the
// CPU has it and the bench is not limited to AVX2, else AVX2), GFLOP/s:
// every "% of peak" is of this one.
double fma_peak_gflops(const TimingConfig& cfg);
// Its lanes per FMA: 16 (AVX-512) or 8 (AVX2).
int fma_peak_lanes();
// The loop that measures it, and its FLOPs: sampled in the same rounds as
// what is set against the peak, whose share is then that of the same
// moments (this VM's speed moves by a tenth and more within minutes).
void fma_peak_loop();
double fma_peak_loop_flops();
// The 8-lane AVX2 peak, for reference beside it.
double fma_peak_256_gflops(const TimingConfig& cfg);

// One softmax row in place with glibc's vectorized expf (libmvec): the
// reference point the issue states the softmax goal against.
void softmax_row_libmvec(float* x, size_t n);
// The same calling _ZGVdN8v_expf directly on AVX2 vectors.
void softmax_row_libmvec_direct(float* x, size_t n);
// Its exp pass alone: x[j] = exp(x[j] - shift), their sum (n a multiple of 16).
float exp_shift_sum_libmvec_direct(float* x, size_t n, float shift);
// The same three with the 16-lane _ZGVeN16v_expf, at AVX-512 (n a multiple
// of 32 for the exp pass); callable only where libmvec512_available().
bool libmvec512_available();
void softmax_row_libmvec512(float* x, size_t n);
void softmax_row_libmvec512_direct(float* x, size_t n);
float exp_shift_sum_libmvec512_direct(float* x, size_t n, float shift);
// Eigen 3.4's row softmax (an Array's maxCoeff, exp, sum, product).
void softmax_row_eigen(float* x, size_t n);
// The same built for AVX-512 (16-lane packets); callable only where eigen512_available().
bool eigen512_available();
void softmax_row_eigen512(float* x, size_t n);

}  // namespace bench
