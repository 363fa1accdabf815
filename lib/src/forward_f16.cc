// The fp16 forward driver: the shared row core (row_core.h) on rows widened
// from fp16 into the workspace, a tile of keys at a time, with the same port
// kernels. Results are rounded to fp16 only when stored.
// With F16Compute::kNativeF16Products the scores and P V come from the native
// fp16 kernels (f16_native.h) reading the halves in place; the softmax stays
// on the port's fp32 kernels.
#include "tinyattn/forward_f16.h"
#include "f16_native.h"
#include "row_core.h"

namespace tinyattn {

namespace {

using detail::Tensor;
using Row = detail::RowOf<half>;

Status validate_forward_f16(const Dims& d, const ForwardIoF16& io, Workspace ws, const Mask& mask, const Options& o,
                            const KernelsF32** kernels) {
  if (Status s = detail::validate_common(d, mask, o, kernels); s != Status::kOk) return s;
  const Tensor inputs[] = {{io.q, d.q_elems() * sizeof(half), alignof(half), true},
                           {io.k, d.k_elems() * sizeof(half), alignof(half), true},
                           {io.v, d.v_elems() * sizeof(half), alignof(half), true},
                           detail::keep_tensor(mask, d),
                           detail::bias_tensor(mask, d)};
  const Tensor outputs[] = {{io.y, d.y_elems() * sizeof(half), alignof(half), true},
                            {io.weights, d.weight_elems() * sizeof(half), alignof(half), false},
                            {io.lse, d.lse_elems() * sizeof(float), alignof(float), false}};
  return detail::validate_tensors(inputs, outputs, ws, forward_f16_workspace_bytes(d, io.weights != nullptr), ws.bytes,
                                  io.weights == nullptr || fits_address_space(uint64_t{d.hq} * d.n * d.m));
}

// The workspace carved into its fp32 arrays (sizes as forward_f16_workspace_bytes).
struct F16Scratch {
  float *s, *q, *tile, *acc, *part;
};

F16Scratch carve(const Dims& d, Workspace ws, bool tiled) {
  float* base = detail::workspace_floats(ws);
  auto floats = [](size_t n) { return align_up(n * sizeof(float), kWorkspaceAlign) / sizeof(float); };
  F16Scratch sc{};
  sc.s = base;
  sc.q = sc.s + floats(tiled ? kF16KeyTile : d.m);
  sc.tile = sc.q + floats(d.dk);
  sc.acc = sc.tile + floats(f16_key_tile(d) * (d.dk > d.dv ? d.dk : d.dv));
  sc.part = sc.acc + floats(d.dv);
  return sc;
}

// The row core's source for fp16 tensors: K and V tiles widened into the
// scratch (or read in place by the native kernels).
class F16Rows {
 public:
  F16Rows(const detail::RowContext& c, const detail::KernelsF16Native* native, const F16Scratch& sc)
      : c_(c), native_(native), sc_(sc) {}
  const detail::RowContext& ctx() const { return c_; }
  size_t plain_tile() const { return f16_key_tile(c_.d); }
  size_t online_tile() const { return kF16KeyTile; }
  void begin_row(const Row& row) const {
    if (!native_) to_float(row.q, sc_.q, c_.d.dk);
  }
  void scores(const Row& row, size_t off, size_t n, float* s) const {
    const size_t dk = c_.d.dk;
    if (native_) return native_->scores(row.q, row.k + off * dk, dk, n, dk, c_.scale, s);
    to_float(row.k + off * dk, sc_.tile, n * dk);
    c_.kern.scores(sc_.q, sc_.tile, dk, n, dk, c_.scale, s);
  }
  void values(const Row& row, size_t off, size_t n, const float* p, float a, float* out) const {
    const size_t dv = c_.d.dv;
    if (native_) return native_->weighted_sum(p, row.v + off * dv, dv, n, dv, a, out);
    to_float(row.v + off * dv, sc_.tile, n * dv);
    c_.kern.weighted_sum(p, sc_.tile, dv, n, dv, a, out);
  }
  float* output(const Row&, float* acc) const { return acc; }

 private:
  const detail::RowContext& c_;
  const detail::KernelsF16Native* native_;  // null: widen to fp32
  F16Scratch sc_;
};

}  // namespace

Status forward_f16(const Dims& d, const ForwardIoF16& io, Workspace ws, const Mask& mask, const OptionsF16& o) {
  const KernelsF32* kp = nullptr;
  if (Status s = validate_forward_f16(d, io, ws, mask, o, &kp); s != Status::kOk) return s;
  const detail::KernelsF16Native* native = nullptr;
  if (o.compute == F16Compute::kNativeF16Products) {
    native = detail::f16_native_kernels();
    if (!native) return Status::kUnsupported;  // no fp16 arithmetic in this build or CPU
  } else if (o.compute != F16Compute::kWidenToF32) {
    return Status::kUnsupported;
  }
  const bool tiled = forward_f16_uses_tiles(d, io.weights != nullptr);
  const detail::RowContext c{d, *kp, mask, effective_scale(d, o), detail::has_element_masks(mask),
                             detail::softcap_of(o)};
  const F16Scratch sc = carve(d, ws, tiled);
  const F16Rows src(c, native, sc);

  for (size_t h = 0; h < d.hq; ++h) {
    const size_t kv_head = h / d.group();
    for (size_t i = 0; i < d.n; ++i) {
      const size_t idx = h * d.n + i;
      const KeyRange r = key_range(mask, i, d.n, d.m);
      const Row row{io.q + idx * d.dk,
                    io.k + (kv_head * d.m + r.lo) * d.dk,
                    io.v + (kv_head * d.m + r.lo) * d.dv,
                    io.y + idx * d.dv,
                    io.weights ? io.weights + idx * d.m : nullptr,
                    io.lse ? io.lse + idx : nullptr,
                    r,
                    h,
                    i};
      if (row.weights) {  // keys outside the range never get weight
        detail::fill_with(row.weights, r.lo, 0.0f);
        detail::fill_with(row.weights + r.hi, d.m - r.hi, 0.0f);
      }
      if (r.empty())
        detail::finish_empty(row, d.dv);
      else if (tiled)
        detail::tiled_row(src, row, sc.s, sc.acc, sc.part);
      else
        detail::plain_row(src, row, sc.s, sc.acc, sc.part);
    }
  }
  return Status::kOk;
}

}  // namespace tinyattn
