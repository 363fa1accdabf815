// Fuzz target for the run-time API tinyattn::forward().
//
// Each input decodes to one call: shape (valid or not), every mask kind
// (including out-of-range enum values and huge strides), a scale of any bit
// pattern, any compiled or absent port, a workspace of any size, buffers at
// any offset (misaligned, overlapping each other) inside one pool, and tensor
// values drawn from ordinary numbers and from NaN/inf/FLT_MAX/subnormals.
//
// Invariants checked (a violation traps, which libFuzzer reports as a crash):
//  * the status is one forward() may return;
//  * a rejected call leaves the whole pool byte-identical;
//  * an accepted call writes only inside Y, weights, lse and the workspace;
//  * accepted calls give well-formed weight rows (NaN row, all-zero row with a
//    zero output, or weights in [0,1] summing to 1), exactly 0 on masked keys;
//  * with ordinary values, results agree with the reference.
// Built two ways: with libFuzzer (TINYATTN_FUZZ, clang) and as a replay
// program over the committed corpus (every host build, tests/fuzz/suite.cmake).
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "fuzz_input.h"
#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"

namespace {

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Status;

using tinyattn_fuzz::Bytes;

constexpr float kSpecials[] = {0.0f,    -0.0f,   1e-40f,   -1e-40f,  FLT_MIN,
                               1e18f,   -1e18f,  FLT_MAX,  -FLT_MAX, std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};

// Tensor values: a small-integer pattern from a seed, with specials sprinkled in when asked.
void fill(Bytes& in, float* x, size_t n, bool specials, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = static_cast<float>(static_cast<int>(s >> 24) - 128) / 32.0f;  // [-4, 4)
  }
  if (!specials) return;
  const size_t count = in.range(1, 4);
  for (size_t c = 0; c < count; ++c)
    x[in.range(0, n - 1)] = kSpecials[in.u8() % (sizeof kSpecials / sizeof kSpecials[0])];
}

struct Region {
  size_t off, bytes;
};

bool inside(size_t byte, Region r) { return byte >= r.off && byte < r.off + r.bytes; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);

  // Shape: mostly small and valid; sometimes zero, oversized or indivisible heads.
  Dims d;
  d.n = in.range(1, 12);
  d.m = in.chance(24) ? in.range(257, 300) : in.range(1, 20);  // > kKeyTile: the tiled path
  d.dk = in.range(1, 20);
  d.dv = in.range(1, 12);
  d.hkv = in.range(1, 2);
  d.hq = d.hkv * in.range(1, 2);
  const uint8_t shape_fault = in.u8();
  if (shape_fault < 8) {
    size_t* dims[] = {&d.n, &d.m, &d.dk, &d.dv, &d.hq, &d.hkv};
    *dims[shape_fault % 6] = shape_fault & 1 ? 0 : tinyattn::kMaxDim + 1 + shape_fault;
  } else if (shape_fault < 12) {
    d.hq = 3;
    d.hkv = 2;
  }
  const bool dims_valid = tinyattn::validate(d) == Status::kOk;
  // Invalid dims are rejected before any tensor is touched: size the tensors
  // as if the dims were small, so the pool stays small.
  const Dims alloc_d = dims_valid ? d : Dims{2, 3, 2, 2, 1, 1};

  // Masks.
  Mask mask;
  mask.causal = static_cast<tinyattn::Causal>(in.u8() % 5);  // 4: out of range
  if (in.chance(96)) {
    const int32_t lo = -static_cast<int32_t>(alloc_d.m) - 3;
    mask.window.left = in.chance(32) ? tinyattn::kUnbounded
                                     : static_cast<int32_t>(in.range(0, alloc_d.m + 6)) + lo + static_cast<int32_t>(alloc_d.m);
    mask.window.right = in.chance(32) ? tinyattn::kUnbounded : static_cast<int32_t>(in.range(0, 2 * alloc_d.m + 6)) + lo;
    mask.window.align = static_cast<tinyattn::Align>(in.u8() % 4);  // 3: out of range
    if (in.chance(4)) mask.window.left = static_cast<int32_t>(in.u32());
  }
  if (in.chance(64)) mask.kv_len = static_cast<uint32_t>(in.range(0, alloc_d.m + 1));
  // Causal::kOffset / Align::kOffset diagonals, sometimes where nothing reads them (kBadMask).
  if (in.chance(64)) mask.offset = static_cast<int32_t>(in.range(0, 2 * alloc_d.m + 6)) - static_cast<int32_t>(alloc_d.m) - 3;
  const uint8_t element = in.u8();
  const bool want_keep = element & 1, want_bits = element & 2, want_bias = element & 4;
  const bool per_head = element & 8;
  if (per_head) mask.head_stride = alloc_d.n * alloc_d.m;
  // Beyond kMaxDim^2: always rejected (a smaller stride than the arrays hold
  // would be a caller lying about its buffers, not something to detect).
  // Saturated, not wrapped, where size_t has 32 bits (kMaxDim^2 is 2^32
  // there): a wrapped stride was small, accepted, and read past the harness's
  // mask buffers (found on ARMv7 as a Y that depended on earlier inputs).
  if (in.chance(3)) {
    const uint64_t beyond = uint64_t{tinyattn::kMaxDim} * tinyattn::kMaxDim + 1 + in.u8();
    mask.head_stride = beyond > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(beyond);
  }

  tinyattn::Options opt;
  const uint8_t scale_kind = in.u8();
  if (scale_kind < 64) opt.scale = in.any_float();
  else if (scale_kind < 96) opt.scale = kSpecials[scale_kind % (sizeof kSpecials / sizeof kSpecials[0])];
  opt.port = static_cast<tinyattn::Port>(in.u8() % 7);

  const bool with_weights = in.chance(160);
  const bool with_lse = in.chance(160);
  const bool specials = in.chance(64);

  // Layout: every buffer gets its own stretch of the pool, with gaps, unless
  // the input asks for it to be moved onto another buffer or off alignment.
  const size_t heads_mask = per_head ? alloc_d.hq : 1;
  const size_t mask_elems = (heads_mask - 1) * (alloc_d.n * alloc_d.m) + alloc_d.n * alloc_d.m;
  const size_t ws_need = tinyattn::forward_workspace_bytes(alloc_d, with_weights);
  size_t ws_bytes = ws_need;
  const uint8_t ws_kind = in.u8();
  if (ws_kind < 16) ws_bytes = ws_need - 1 - in.range(0, ws_need - 1);
  else if (ws_kind < 24) ws_bytes = ws_need + in.range(0, 256);

  enum { kQ, kK, kV, kY, kW, kL, kWs, kKeep, kBits, kBias, kCount };
  const size_t sizes[kCount] = {alloc_d.q_elems() * 4, alloc_d.k_elems() * 4, alloc_d.v_elems() * 4,
                                alloc_d.y_elems() * 4, alloc_d.weight_elems() * 4, alloc_d.lse_elems() * 4,
                                ws_bytes < ws_need ? ws_need : ws_bytes, mask_elems,
                                mask_elems,  // >= the bit rows (head stride in bytes, as for keep)
                                mask_elems * 4};
  Region at[kCount];
  size_t total = 0;
  for (int b = 0; b < kCount; ++b) {
    at[b] = {total, sizes[b]};
    total += (sizes[b] + 63) / 64 * 64 + 64;
  }
  // Moves: put buffer `b` at a byte offset inside buffer `onto`, or nudge it off alignment.
  const size_t moves = in.u8() % 4;
  for (size_t mv = 0; mv < moves; ++mv) {
    const int b = in.u8() % kCount;
    const int onto = in.u8() % kCount;
    if (in.chance(128)) at[b].off = at[onto].off + in.range(0, sizes[onto]);
    else at[b].off += in.range(1, 3);
    if (at[b].off + sizes[b] > total) at[b].off = total - sizes[b];  // stay in the pool
  }

  std::vector<unsigned char> pool(total), before(total);
  for (size_t x = 0; x < total; ++x) pool[x] = static_cast<unsigned char>(0xA5 ^ (x * 131));
  unsigned char* base = pool.data();
  auto ptr = [&](int b) { return base + at[b].off; };

  // Input values, written where the (possibly moved) input buffers now lie.
  const uint32_t seed = in.u32();
  std::vector<float> tmp;
  auto put = [&](int b, size_t n, bool sp, uint32_t sd) {
    tmp.assign(n, 0.0f);
    fill(in, tmp.data(), n, sp, sd);
    std::memcpy(ptr(b), tmp.data(), n * 4);
  };
  put(kQ, alloc_d.q_elems(), specials && in.chance(128), seed);
  put(kK, alloc_d.k_elems(), specials && in.chance(128), seed + 1);
  put(kV, alloc_d.v_elems(), specials && in.chance(128), seed + 2);
  put(kBias, mask_elems, specials && in.chance(128), seed + 3);
  for (size_t x = 0; x < sizes[kKeep]; ++x) ptr(kKeep)[x] = static_cast<unsigned char>((x * 7 + seed) % 5 != 0);
  for (size_t x = 0; x < sizes[kBits]; ++x) ptr(kBits)[x] = static_cast<unsigned char>(x * 37 + seed);

  tinyattn::ForwardIo io;
  io.q = reinterpret_cast<const float*>(ptr(kQ));
  io.k = reinterpret_cast<const float*>(ptr(kK));
  io.v = reinterpret_cast<const float*>(ptr(kV));
  io.y = reinterpret_cast<float*>(ptr(kY));
  io.weights = with_weights ? reinterpret_cast<float*>(ptr(kW)) : nullptr;
  io.lse = with_lse ? reinterpret_cast<float*>(ptr(kL)) : nullptr;
  if (want_keep) mask.keep = ptr(kKeep);
  if (want_bits) mask.keep_bits = ptr(kBits);
  if (want_bias) mask.bias = reinterpret_cast<const float*>(ptr(kBias));
  const uint8_t null_fault = in.u8();
  if (null_fault == 0) io.q = nullptr;
  if (null_fault == 1) io.k = nullptr;
  if (null_fault == 2) io.v = nullptr;
  if (null_fault == 3) io.y = nullptr;
  tinyattn::Workspace ws{null_fault == 4 ? nullptr : ptr(kWs), ws_bytes};

  std::memcpy(before.data(), base, total);
  const Status s = tinyattn::forward(d, io, ws, mask, opt);

  FUZZ_REQUIRE(static_cast<int>(s) < tinyattn::kStatusCount);
  FUZZ_REQUIRE(s != Status::kBadQuantization && s != Status::kUnsupported);
  if (s != Status::kOk) {
    FUZZ_REQUIRE(std::memcmp(before.data(), base, total) == 0);
    return 0;
  }
  FUZZ_REQUIRE(dims_valid);

  // Writes stayed inside the outputs and the workspace.
  Region written[4] = {at[kY], with_weights ? at[kW] : Region{0, 0}, with_lse ? at[kL] : Region{0, 0},
                       Region{at[kWs].off, ws_need}};
  for (size_t x = 0; x < total; ++x) {
    if (pool[x] == before[x]) continue;
    bool ok = false;
    for (const Region& r : written) ok = ok || inside(x, r);
    FUZZ_REQUIRE(ok);
  }

  // Weight rows are well formed, and masked keys (per the reference's own
  // definition of visibility) have weight exactly 0.
  const size_t rows = d.hq * d.n;
  if (with_weights) {
    for (size_t row = 0; row < rows; ++row) {
      const float* w = io.weights + row * d.m;
      bool any_nan = false, all_zero = true;
      double sum = 0.0;
      for (size_t j = 0; j < d.m; ++j) {
        if (std::isnan(w[j])) {
          any_nan = true;
        } else {
          FUZZ_REQUIRE(w[j] >= 0.0f && w[j] <= 1.0f);
          sum += w[j];
          all_zero = all_zero && w[j] == 0.0f;
        }
        if (!tinyattn::ref::visible(mask, d, row / d.n, row % d.n, j)) FUZZ_REQUIRE(w[j] == 0.0f);
      }
      if (any_nan) {
        for (size_t c = 0; c < d.dv; ++c) FUZZ_REQUIRE(std::isnan(io.y[row * d.dv + c]));
      } else if (all_zero) {
        for (size_t c = 0; c < d.dv; ++c) FUZZ_REQUIRE(io.y[row * d.dv + c] == 0.0f);
        if (with_lse) FUZZ_REQUIRE(io.lse[row] == -std::numeric_limits<float>::infinity());
      } else {
        FUZZ_REQUIRE(std::fabs(sum - 1.0) <= 1e-4);
      }
    }
  }

  // Ordinary values (no specials, a finite scale of moderate size): the
  // reference decides, with tolerances loose enough for any fp32 order.
  const float scale = tinyattn::effective_scale(d, opt);
  // Moved buffers may have overwritten inputs with arbitrary bytes: check.
  auto ordinary = [](const float* x, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if (!(std::fabs(x[i]) <= 4.0f)) return false;
    return true;
  };
  if (std::fabs(scale) <= 4.0f && ordinary(io.q, d.q_elems()) && ordinary(io.k, d.k_elems()) &&
      ordinary(io.v, d.v_elems()) && (!mask.bias || ordinary(mask.bias, mask_elems))) {
    std::vector<double> y_ref(d.y_elems()), w_ref(d.weight_elems()), l_ref(d.lse_elems());
    tinyattn::ref::forward(d, io.q, io.k, io.v, mask, scale, y_ref.data(), w_ref.data(), l_ref.data());
    for (size_t x = 0; x < d.y_elems(); ++x) FUZZ_REQUIRE(std::fabs(io.y[x] - y_ref[x]) <= 1e-3 * (4.0 + std::fabs(y_ref[x])));
    if (with_weights)
      for (size_t x = 0; x < d.weight_elems(); ++x) FUZZ_REQUIRE(std::fabs(io.weights[x] - w_ref[x]) <= 1e-3);
    if (with_lse)
      for (size_t x = 0; x < rows; ++x)
        FUZZ_REQUIRE(io.lse[x] == l_ref[x] || std::fabs(io.lse[x] - l_ref[x]) <= 1e-3 * (1.0 + std::fabs(l_ref[x])));
  }
  return 0;
}
