// Attention<S>'s calls into the library (tinyattn/attention.h). Not API:
// installed only because the class template, compiled in the user's code,
// calls these. Their definitions are in lib/src/forward_compile_time.cc.
#pragma once

#include <cstddef>

#include "tinyattn/mask.h"
#include "tinyattn/shape.h"
#include "tinyattn/status.h"

namespace tinyattn {

struct ForwardIo;
struct Options;
struct Workspace;

namespace detail {

// sqrt(a) in double for a >= 1, at compile time: Newton's steps from above,
// which decrease until they reach the root's last bits.
constexpr double sqrt_from_above(double a) {
  double x = a;
  for (int step = 0; step < 64; ++step) {
    const double next = 0.5 * (x + a / x);
    if (!(next < x)) break;
    x = next;
  }
  return x;
}
// effective_scale's default, 1/sqrt(Dk), as a constant expression: the
// root rounded to float, then 1.0f / it, the library's two roundings.
// tests/api/api.cc holds it to effective_scale() for every Dk on every
// target; Attention<S>'s plain call passes it, so its shape costs no sqrt.
constexpr float default_scale_of(size_t dk) {
  return 1.0f / static_cast<float>(sqrt_from_above(static_cast<double>(dk)));
}

// Attention<S>'s forward on its std::arrays: forward() without what S and
// the object settle at compile time (the dims, the arrays' sizes and
// alignment, the workspace, which no caller pointer reaches). It checks what
// a call can change -- the mask, the scale, the port, the mask's arrays
// against the outputs -- returns `arrays`, the fault the caller found in its
// arrays (kOk if none), where forward() would, and runs the call's plan
// (lib/src/plan.h). kKeyTiles: whether the key-tiled routes are linked in
// (false when S's rows fit one tile), so an image holds only the code its
// shapes run. extent: fixed_extent(S's Dk, Dv) (tinyattn/tiling.h), chosen
// at compile time.
template <bool kKeyTiles>
Status forward_compile_time(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, const Options& o,
                            Status arrays, int extent);
extern template Status forward_compile_time<true>(const Dims&, const ForwardIo&, Workspace, const Mask&,
                                                  const Options&, Status, int);
extern template Status forward_compile_time<false>(const Dims&, const ForwardIo&, Workspace, const Mask&,
                                                   const Options&, Status, int);
// forward_compile_time() with default Options on the build's default port,
// bound at compile time (default_kernels_f32): an image whose Attention<S>
// calls pass no Options links no other port's kernels.
template <bool kKeyTiles>
Status forward_compile_time_default_port(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                                         Status arrays, int extent);
extern template Status forward_compile_time_default_port<true>(const Dims&, const ForwardIo&, Workspace, const Mask&,
                                                               Status, int);
extern template Status forward_compile_time_default_port<false>(const Dims&, const ForwardIo&, Workspace,
                                                                const Mask&, Status, int);
// The plain call, attn(q, k, v, y): no mask, weights, lse or Options, on the
// default port. The tensors come as pointers, in registers: at the small
// shapes a block is bound by its chain of latencies, and every pointer a
// layer stores and the next reloads delays the first block's loads (this
// entry took the call from 138.5 to 130 ns at (8,8,16,16) on AVX-512).
// scale: default_scale_of(d.dk), computed at compile time.
template <bool kKeyTiles>
Status forward_plain_default_port(const Dims& d, const float* q, const float* k, const float* v, float* y,
                                  float scale, Workspace ws, Status arrays, int extent);
extern template Status forward_plain_default_port<true>(const Dims&, const float*, const float*, const float*, float*,
                                                        float, Workspace, Status, int);
extern template Status forward_plain_default_port<false>(const Dims&, const float*, const float*, const float*,
                                                         float*, float, Workspace, Status, int);
// The plain call of a shape with Dk = Dv of the fixed extents (kExtent =
// fixed_extent(Dk, Dv): 0, 5, 10 or 15), N a multiple of kBlockRows, within
// one key tile and too few rows for the transposed keys: forward_plain_default_port on the table
// default_kernels_f32_extent<kExtent>() (tinyattn/kernels.h), so an image of
// such a shape links that extent's fused kernel and not the default port's
// other kernels.
template <int kExtent>
Status forward_plain_extent(const Dims& d, const float* q, const float* k, const float* v, float* y, float scale,
                            Workspace ws, Status arrays);
extern template Status forward_plain_extent<0>(const Dims&, const float*, const float*, const float*, float*, float,
                                               Workspace, Status);
extern template Status forward_plain_extent<5>(const Dims&, const float*, const float*, const float*, float*, float,
                                               Workspace, Status);
extern template Status forward_plain_extent<10>(const Dims&, const float*, const float*, const float*, float*, float,
                                                Workspace, Status);
extern template Status forward_plain_extent<15>(const Dims&, const float*, const float*, const float*, float*, float,
                                                Workspace, Status);

}  // namespace detail
}  // namespace tinyattn
