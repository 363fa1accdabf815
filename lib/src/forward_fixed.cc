// Attention<S>'s forward (attention.h): the checks a call can still fail
// once the shape is a type, then the validated forward.
#include "detail.h"
#include "tinyattn/attention.h"

namespace tinyattn {

namespace {

using detail::Tensor;

// A frame of its own, as forward()'s checks: the extent tables are not on
// the stack while the blocks run (the board stack bound, docs/hardening.md).
TINYATTN_NOINLINE Status check_fixed(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask,
                                     const Options& o, bool arrays_checked, Status arrays, const KernelsF32** kern) {
  using namespace detail;
  if (Status s = validate_call(d, mask, o, kern); s != Status::kOk) return s;
  constexpr size_t kF = sizeof(float);
  const Tensor outputs[] = {{io.y, d.y_elems() * kF, kF, true},
                            {io.weights, d.weight_elems() * kF, kF, false},
                            {io.lse, d.lse_elems() * kF, kF, false}};
  if (arrays_checked) {
    if (arrays != Status::kOk) return arrays;
    // Only a mask's arrays may overlap an output: the rest are typed arrays.
    if (has_element_masks(mask)) {
      const Tensor masks[] = {keep_tensor(mask, d), bias_tensor(mask, d)};
      if (Status s = check_memory(masks, outputs, ws, 0, 0); s != Status::kOk) return s;
    }
  } else {
    const Tensor inputs[] = {{io.q, d.q_elems() * kF, kF, true},
                             {io.k, d.k_elems() * kF, kF, true},
                             {io.v, d.v_elems() * kF, kF, true},
                             keep_tensor(mask, d),
                             bias_tensor(mask, d)};
    // The workspace is the object's own (no caller pointer reaches it) and
    // large enough for any call: only the callers' tensors are checked.
    if (Status s = validate_tensors(inputs, outputs, ws, 0, 0,
                                    !io.weights || fits_address_space(uint64_t{d.hq} * d.n * d.m));
        s != Status::kOk)
      return s;
  }
  return Status::kOk;
}

}  // namespace

Status detail::forward_fixed(const Dims& d, const ForwardIo& io, Workspace ws, const Mask& mask, const Options& o,
                             bool arrays_checked, Status arrays) {
  // The score output's checks and its pass are forward()'s (a rare request).
  if (io.scores) return forward(d, io, ws, mask, o);
  const KernelsF32* kern = nullptr;
  if (Status s = check_fixed(d, io, ws, mask, o, arrays_checked, arrays, &kern); s != Status::kOk) return s;
  forward_validated(*kern, d, io, ws, mask, effective_scale(d, o), softcap_of(o));
  return Status::kOk;
}

}  // namespace tinyattn
