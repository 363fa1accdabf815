// The float forward paths one problem can run through: fp32 forward() and
// forward_f16() in each compute mode, all reading and writing a Problem's
// float tensors, so a test (or a fuzz target) compares them element for
// element and expects one non-finite contract of all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "support.h"
#include "tinyattn/attention.h"

namespace tatest {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

enum class FloatPath : uint8_t {
  kF32,        // forward()
  kF16Widen,   // forward_f16(), F16Compute::kWidenToF32
  kF16Native,  // forward_f16(), F16Compute::kNativeF16Products (kUnsupported where absent)
};
inline constexpr FloatPath kFloatPaths[] = {FloatPath::kF32, FloatPath::kF16Widen, FloatPath::kF16Native};

const char* path_name(FloatPath path);
// Whether this build and CPU run the path (the native fp16 products may not).
bool path_available(FloatPath path);
inline bool is_f16(FloatPath path) { return path != FloatPath::kF32; }

// Rounds each value to the nearest half and back: inputs the fp16 paths
// read exactly, so fp32 and fp16 see the same numbers.
void round_to_half(float* x, size_t n);
void round_inputs_to_half(Problem& p);

// Whether the path computes key tiles (online softmax) rather than whole rows.
bool path_uses_tiles(FloatPath path, const tinyattn::Dims& d, bool with_weights);

// Runs `path` on `port` into p.y, p.weights (with_weights) and p.lse, all
// NaN-filled first. The fp16 paths round Q, K and V to half (the caller's
// floats are left as they are) and widen their Y and weights back. Scratch
// comes from the arena (the caller's Arena::Scope holds it).
tinyattn::Status run_path(FloatPath path, Problem& p, tinyattn::Port port, const tinyattn::Mask& mask,
                          const tinyattn::Options& o = {}, bool with_weights = true);

// Every compiled port with every float path this build and CPU run.
struct PathRun {
  tinyattn::Port port;
  FloatPath path;
};
size_t path_runs_under_test(PathRun* out, size_t cap);
inline constexpr size_t kMaxPathRuns = 16;

// p's outputs against p.y_ref, p.lse_ref and (with_weights) p.weights_ref:
// NaN and +-inf exactly where the reference has them, finite values within
// the fp32 tolerances (support.h), plus the rounding of Y and the weights to
// fp16 on the fp16 paths and, for the native fp16 products, a loose 4e-3 for
// their logit error (inputs of a few units; f16_properties.cc has the bound).
struct Agreement {
  Result y, lse, weights;
  bool ok() const { return y.ok && lse.ok && weights.ok; }
};
Agreement against_reference(const Problem& p, FloatPath path, bool with_weights);

}  // namespace tatest
