// NumPy's legacy global generator (np.random.seed / randn / normal /
// random_sample), reproduced bit for bit so the demo prints the seed
// notebook's exact numbers:
//  * np.random.seed(int) is MT19937's init_genrand (mt[0] = seed,
//    mt[i] = 1812433253 * (mt[i-1] ^ (mt[i-1] >> 30)) + i), and clears the
//    cached Gaussian;
//  * random_sample() is a 53-bit double from two draws: (a >> 5, b >> 6);
//  * randn() / normal() use the legacy Marsaglia polar method, which returns
//    f * x2 and caches f * x1 for the next call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tinyattn_demo {

class RandomState {
 public:
  explicit RandomState(uint32_t seed) { seed_with(seed); }
  void seed_with(uint32_t seed);  // np.random.seed(seed)

  uint32_t next_u32();            // one MT19937 output
  double random_sample();         // np.random.random_sample(): [0, 1)
  double gauss();                 // np.random.randn(): one standard normal
  double normal(double loc, double scale) { return loc + scale * gauss(); }

  // np.random.normal(loc, scale, n) / np.random.randn(n), C order.
  std::vector<double> normal(double loc, double scale, size_t n);
  std::vector<double> randn(size_t n) { return normal(0.0, 1.0, n); }

 private:
  void twist();
  uint32_t mt_[624];
  int pos_ = 624;
  bool has_gauss_ = false;
  double cached_gauss_ = 0.0;
};

}  // namespace tinyattn_demo
