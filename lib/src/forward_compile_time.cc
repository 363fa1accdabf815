// Attention<S>'s forward on its std::arrays (attention.h), the compile-time
// entry: the checks a call can still fail once the shape and the arrays are
// types, then the call's plan (plan.h).
#include "forward_core.h"
#include "tinyattn/attention.h"

namespace tinyattn {

namespace {

using detail::Tensor;

// A frame of its own, as forward()'s checks: the extent tables are not on
// the stack while the blocks run (the board stack bound, docs/hardening.md).
// `table`: the port's table (kernels_f32(o.port) or the default port's).
TINYATTN_NOINLINE Status check_compile_time_call(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                                     const Options& o, Status arrays, const KernelsF32* table,
                                     const KernelsF32** kern) {
  using namespace detail;
  if (Status s = validate_call_on(d, mask, o, table, kern); s != Status::kOk) return s;
  if (arrays != Status::kOk) return arrays;
  // Only a mask's arrays may overlap an output: the rest are typed arrays.
  if (!has_element_masks(mask)) return Status::kOk;
  constexpr size_t kF = sizeof(float);
  const Tensor outputs[] = {{io.y, d.y_elems() * kF, kF, true},
                            {io.weights, d.weight_elems() * kF, kF, false},
                            {io.lse, d.lse_elems() * kF, kF, false}};
  const Tensor masks[] = {keep_tensor(mask, d), bias_tensor(mask, d)};
  return check_memory(masks, outputs, ws, 0, 0);
}

}  // namespace

namespace {

// The checks on `table`, then the plan: the plain call's where it is one.
template <bool kKeyTiles>
Status run_compile_time(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, const Options& o, Status arrays,
                 const KernelsF32* table, int extent) {
  using namespace detail;
  const KernelsF32* kern = table;
  const bool plain = plain_call(mask, o);
  if (!plain) {
    if (Status s = check_compile_time_call(d, io, ws, mask, o, arrays, table, &kern); s != Status::kOk) return s;
  } else {
    // The usual call: nothing to check but the port, then the arrays
    // (check_compile_time_call's order, without its frame), and every row sees every key.
    if (table == nullptr) return Status::kPortUnavailable;
    if (arrays != Status::kOk) return arrays;
  }
  if (plain && io.weights == nullptr) {
    run_plain<kKeyTiles>(*kern, d, io, ws, effective_scale(d, o), extent);
    return Status::kOk;
  }
  run_checked<kKeyTiles>(*kern, d, io, ws, mask, o, extent);
  return Status::kOk;
}

}  // namespace

template <bool kKeyTiles>
Status detail::forward_compile_time(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, const Options& o,
                             Status arrays, int extent) {
  return run_compile_time<kKeyTiles>(d, io, ws, mask, o, arrays, kernels_f32(o.port), extent);
}

template <bool kKeyTiles>
Status detail::forward_compile_time_default_port(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                                          Status arrays, int extent) {
  return run_compile_time<kKeyTiles>(d, io, ws, mask, Options{}, arrays, default_kernels_f32(), extent);
}

template <bool kKeyTiles>
Status detail::forward_plain_default_port(const Dims& d, const float* q, const float* k, const float* v, float* y,
                                          float scale, Workspace ws, Status arrays, int extent) {
  using namespace detail;
  const KernelsF32* kern = default_kernels_f32();
  if (kern == nullptr) return Status::kPortUnavailable;  // check_compile_time_call's order
  if (arrays != Status::kOk) return arrays;
  run_plain<kKeyTiles>(*kern, d, ForwardIo{q, k, v, y, nullptr, nullptr}, ws, scale, extent);
  return Status::kOk;
}

template <int kExtent>
Status detail::forward_plain_extent(const Dims& d, const float* q, const float* k, const float* v, float* y,
                                    float scale, Workspace ws, Status arrays) {
  using namespace detail;
  const KernelsF32* kern = default_kernels_f32_extent<kExtent>();
  if (kern == nullptr) return Status::kPortUnavailable;
  if (arrays != Status::kOk) return arrays;
  run_plain<false>(*kern, d, ForwardIo{q, k, v, y, nullptr, nullptr}, ws, scale, kExtent);
  return Status::kOk;
}

template Status detail::forward_compile_time<true>(const Dims&, const ForwardIo&, Workspace, const Mask&, const Options&,
                                            Status, int);
template Status detail::forward_compile_time<false>(const Dims&, const ForwardIo&, Workspace, const Mask&, const Options&,
                                             Status, int);
template Status detail::forward_compile_time_default_port<true>(const Dims&, const ForwardIo&, Workspace, const Mask&,
                                                         Status, int);
template Status detail::forward_compile_time_default_port<false>(const Dims&, const ForwardIo&, Workspace, const Mask&,
                                                          Status, int);
template Status detail::forward_plain_default_port<true>(const Dims&, const float*, const float*, const float*, float*,
                                                         float, Workspace, Status, int);
template Status detail::forward_plain_default_port<false>(const Dims&, const float*, const float*, const float*,
                                                          float*, float, Workspace, Status, int);

#define TINYATTN_PLAIN_EXTENT(extent)                                                                          \
  template Status detail::forward_plain_extent<extent>(const Dims&, const float*, const float*, const float*, float*, \
                                                       float, Workspace, Status);
TINYATTN_PLAIN_EXTENT(0)
TINYATTN_PLAIN_EXTENT(5)
TINYATTN_PLAIN_EXTENT(10)
TINYATTN_PLAIN_EXTENT(15)
#undef TINYATTN_PLAIN_EXTENT

}  // namespace tinyattn
