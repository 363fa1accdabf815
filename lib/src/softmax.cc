// Row softmax and its vector-Jacobian product on a port's kernels, one row
// or many rows per call; every row through the row core's softmax_in_place
// (row_core.h), the forward's own row pass.
#include "tinyattn/softmax.h"

#include <cstdint>
#include <cstring>

#include "row_core.h"

namespace tinyattn {

namespace {

using detail::Extent;

// rows rows of n floats, row r at r * ld: its extent in bytes, or 0 where
// the shape is bad (rows == 0, n outside [1, kMaxDim], ld < n) or the extent
// would pass PTRDIFF_MAX bytes (no pointer into it could be formed).
size_t span_bytes(size_t rows, size_t n, size_t ld) {
  constexpr size_t kMaxFloats = static_cast<size_t>(PTRDIFF_MAX) / sizeof(float);
  if (rows == 0 || !dim_ok(n) || ld < n) return 0;
  if (rows - 1 > (kMaxFloats - n) / ld) return 0;  // (rows - 1) * ld + n > kMaxFloats
  return ((rows - 1) * ld + n) * sizeof(float);
}

// An output may be exactly an input (same start and, over several rows, the
// same row stride: each row is then read before it is written); any other
// overlap of the two extents would read values already overwritten.
bool partial_overlap(const float* in, size_t ld_in, const float* out, size_t ld_out, size_t rows, size_t bytes_in,
                     size_t bytes_out) {
  if (in == out && (ld_in == ld_out || rows == 1)) return false;
  return detail::overlaps(Extent{in, bytes_in}, Extent{out, bytes_out});
}

struct Matrix {
  const float* p;
  size_t ld;
};

// The checks of softmax_rows and softmax_vjp_rows, in softmax()'s order:
// null pointers, the shape (and the extents' size), alignment, overlaps of
// the output with each input, the port.
template <size_t kIn>
Status validate_rows(const Matrix (&in)[kIn], Matrix out, size_t rows, size_t n, Port port,
                     const KernelsF32** kernels) {
  bool missing = out.p == nullptr;
  for (const Matrix& m : in) missing |= m.p == nullptr;
  if (missing) return Status::kNullPointer;
  const size_t out_bytes = span_bytes(rows, n, out.ld);
  bool bad = out_bytes == 0;
  for (const Matrix& m : in) bad |= span_bytes(rows, n, m.ld) == 0;
  if (bad) return Status::kBadDimension;
  bool misaligned = !detail::aligned(out.p);
  for (const Matrix& m : in) misaligned |= !detail::aligned(m.p);
  if (misaligned) return Status::kMisaligned;
  for (const Matrix& m : in)
    if (partial_overlap(m.p, m.ld, out.p, out.ld, rows, span_bytes(rows, n, m.ld), out_bytes)) return Status::kAliasing;
  *kernels = kernels_f32(port);
  return *kernels ? Status::kOk : Status::kPortUnavailable;
}

}  // namespace

// softmax_rows(x, p, 1, n, n, n, port) with its checks for one row, in its
// order and with its statuses: one extent of n floats is non-empty and far
// below PTRDIFF_MAX bytes exactly when n is a valid dimension, and p == x is
// in place. The general checks (span_bytes' divisions, the extents three
// times over) and the loop over groups of rows weighed on every short row.
Status softmax(const float* x, float* p, size_t n, Port port) {
  static_assert(kMaxDim <= static_cast<size_t>(PTRDIFF_MAX) / sizeof(float), "a row's extent fits ptrdiff_t");
  if (x == nullptr || p == nullptr) return Status::kNullPointer;
  if (!dim_ok(n)) return Status::kBadDimension;
  if (!detail::aligned(x) || !detail::aligned(p)) return Status::kMisaligned;
  const size_t bytes = n * sizeof(float);
  if (x != p && detail::overlaps_nonempty(Extent{x, bytes}, Extent{p, bytes})) return Status::kAliasing;
  const KernelsF32* kp = kernels_f32(port);
  if (kp == nullptr) return Status::kPortUnavailable;
  // The C library's copy: an inline one in narrower stores than the kernel's
  // loads cost the loads their store forwarding (16 floats on AVX-512: 39 ns
  // a row, against 15).
  if (p != x) std::memcpy(p, x, n * sizeof(float));
  detail::softmax_row_in_place(*kp, p, n);
  return Status::kOk;
}

Status softmax_rows(const float* x, float* p, size_t rows, size_t n, size_t ld_x, size_t ld_p, Port port) {
  const KernelsF32* kp = nullptr;
  const Matrix in[] = {{x, ld_x}};
  if (Status s = validate_rows(in, Matrix{p, ld_p}, rows, n, port, &kp); s != Status::kOk) return s;
  if (p != x)
    for (size_t r = 0; r < rows; ++r) std::memcpy(p + r * ld_p, x + r * ld_x, n * sizeof(float));
  detail::softmax_rows_in_place(*kp, p, rows, n, ld_p);
  return Status::kOk;
}

Status softmax_vjp(const float* p, const float* dp, float* dx, size_t n, Port port) {
  return softmax_vjp_rows(p, dp, dx, 1, n, n, n, n, port);
}

Status softmax_vjp_rows(const float* p, const float* dp, float* dx, size_t rows, size_t n, size_t ld_p, size_t ld_dp,
                        size_t ld_dx, Port port) {
  const KernelsF32* kp = nullptr;
  const Matrix in[] = {{p, ld_p}, {dp, ld_dp}};
  if (Status s = validate_rows(in, Matrix{dx, ld_dx}, rows, n, port, &kp); s != Status::kOk) return s;
  for (size_t r = 0; r < rows; ++r) {
    const float* pr = p + r * ld_p;
    const float* dpr = dp + r * ld_dp;
    float* dxr = dx + r * ld_dx;
    float dot;
    kp->scores(pr, dpr, n, 1, n, 1.0f, &dot);  // <p, dp>, before dx may overwrite either
    for (size_t j = 0; j < n; ++j) dxr[j] = pr[j] * (dpr[j] - dot);
  }
  return Status::kOk;
}

}  // namespace tinyattn
