#include "random_state.h"

#include <cmath>

namespace tinyattn_demo {

void RandomState::seed_with(uint32_t seed) {
  mt_[0] = seed;
  for (uint32_t i = 1; i < 624; ++i) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
  pos_ = 624;
  has_gauss_ = false;
  cached_gauss_ = 0.0;
}

void RandomState::twist() {
  constexpr uint32_t kUpper = 0x80000000u, kLower = 0x7fffffffu, kMatrixA = 0x9908b0dfu;
  for (int i = 0; i < 624; ++i) {
    const uint32_t y = (mt_[i] & kUpper) | (mt_[(i + 1) % 624] & kLower);
    mt_[i] = mt_[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
  }
  pos_ = 0;
}

uint32_t RandomState::next_u32() {
  if (pos_ >= 624) twist();
  uint32_t y = mt_[pos_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

double RandomState::random_sample() {
  const uint32_t a = next_u32() >> 5, b = next_u32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double RandomState::gauss() {
  if (has_gauss_) {
    has_gauss_ = false;
    return cached_gauss_;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * random_sample() - 1.0;
    x2 = 2.0 * random_sample() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  cached_gauss_ = f * x1;
  has_gauss_ = true;
  return f * x2;
}

std::vector<double> RandomState::normal(double loc, double scale, size_t n) {
  std::vector<double> out(n);
  for (double& x : out) x = normal(loc, scale);
  return out;
}

}  // namespace tinyattn_demo
