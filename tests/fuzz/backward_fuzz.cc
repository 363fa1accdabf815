// Fuzz target for backward(): random small shapes and masks, both modes (and
// invalid mode values), weights and lse from a real forward() call (sometimes
// corrupted), values with NaN/inf/FLT_MAX, workspaces of any size, buffers
// moved onto each other or off alignment, null pointers.
//
// Invariants (a violation traps):
//  * the status is one backward() may return;
//  * a rejected call leaves the whole pool byte-identical;
//  * an accepted call writes only dQ, dK, dV, dS and the workspace, and dS is
//    exactly 0 on masked keys (for weights/lse that forward() produced);
//  * with ordinary values and untouched forward outputs, the gradients agree
//    with ref::backward.
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "fuzz_input.h"
#include "tinyattn/backward.h"
#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"

namespace {

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Status;

using tinyattn_fuzz::Bytes;


constexpr float kSpecials[] = {0.0f, 1e-40f, 1e18f, -1e18f, FLT_MAX, -FLT_MAX,
                               std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};

void fill(Bytes& in, float* x, size_t n, bool specials, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 7;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = static_cast<float>(static_cast<int>(s >> 24) - 128) / 64.0f;  // [-2, 2)
  }
  if (!specials) return;
  const size_t count = in.range(1, 3);
  for (size_t c = 0; c < count; ++c)
    x[in.range(0, n - 1)] = kSpecials[in.u8() % (sizeof kSpecials / sizeof kSpecials[0])];
}

struct Region {
  size_t off, bytes;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  Dims d;
  d.n = in.range(1, 8);
  d.m = in.chance(16) ? in.range(257, 280) : in.range(1, 16);  // > kKeyTile: tiled dQ
  d.dk = in.range(1, 12);
  d.dv = in.range(1, 8);
  d.hkv = in.range(1, 2);
  d.hq = d.hkv * in.range(1, 2);

  Mask mask;
  mask.causal = static_cast<tinyattn::Causal>(in.u8() % 3);
  if (in.chance(64)) mask.kv_len = static_cast<uint32_t>(in.range(0, d.m));
  if (in.chance(64))
    mask.window = {static_cast<int32_t>(in.range(0, 5)), static_cast<int32_t>(in.range(0, 5)),
                   static_cast<tinyattn::Align>(in.u8() % 2)};
  const uint8_t element = in.u8();
  tinyattn::Options opt;
  if (in.chance(32)) opt.scale = static_cast<float>(static_cast<int>(in.u8()) - 128) / 16.0f;
  const uint8_t mode_byte = in.u8();
  const auto mode = static_cast<tinyattn::BackwardMode>(mode_byte < 250 ? mode_byte % 2 : mode_byte);
  const bool specials = in.chance(48);

  enum { kQ, kK, kV, kDy, kY, kW, kL, kDq, kDk, kDv, kDs, kWs, kKeep, kBias, kCount };
  const size_t ws_need = tinyattn::backward_workspace_bytes(d, tinyattn::BackwardMode::kRecompute);
  size_t ws_bytes = ws_need;
  if (in.chance(16)) ws_bytes = in.range(0, ws_need);
  const size_t sizes[kCount] = {d.q_elems() * 4, d.k_elems() * 4, d.v_elems() * 4, d.y_elems() * 4,
                                d.y_elems() * 4, d.weight_elems() * 4, d.lse_elems() * 4, d.q_elems() * 4,
                                d.k_elems() * 4, d.v_elems() * 4, d.weight_elems() * 4, ws_need,
                                d.n * d.m, d.n * d.m * 4};
  Region at[kCount];
  size_t total = 0;
  for (int b = 0; b < kCount; ++b) {
    at[b] = {total, sizes[b]};
    total += (sizes[b] + 63) / 64 * 64 + 64;
  }
  std::vector<unsigned char> pool(total), before;
  for (size_t x = 0; x < total; ++x) pool[x] = static_cast<unsigned char>(0x5A ^ (x * 29));
  auto fp = [&](int b) { return reinterpret_cast<float*>(pool.data() + at[b].off); };

  // Inputs and a real forward pass for weights, lse and y.
  const uint32_t seed = in.u32();
  fill(in, fp(kQ), d.q_elems(), specials && in.chance(128), seed);
  fill(in, fp(kK), d.k_elems(), specials && in.chance(128), seed + 1);
  fill(in, fp(kV), d.v_elems(), specials && in.chance(128), seed + 2);
  fill(in, fp(kDy), d.y_elems(), specials && in.chance(128), seed + 3);
  fill(in, fp(kBias), d.n * d.m, specials && in.chance(128), seed + 4);
  unsigned char* keep = pool.data() + at[kKeep].off;
  for (size_t x = 0; x < d.n * d.m; ++x) keep[x] = static_cast<unsigned char>((x * 5 + seed) % 4 != 0);
  if (element & 1) mask.keep = keep;
  if (element & 2) mask.bias = fp(kBias);
  std::vector<float> fws(tinyattn::forward_workspace_bytes(d) / 4 + 16);
  if (tinyattn::forward(d, {fp(kQ), fp(kK), fp(kV), fp(kY), fp(kW), fp(kL)},
                        {fws.data(), tinyattn::forward_workspace_bytes(d)}, mask, opt) != Status::kOk)
    return 0;
  const bool corrupted = in.chance(24);
  if (corrupted) {  // a caller handing backward() weights/lse that no forward() produced
    fp(kW)[in.range(0, d.weight_elems() - 1)] = kSpecials[in.u8() % 9];
    fp(kL)[in.range(0, d.lse_elems() - 1)] = kSpecials[in.u8() % 9];
  }

  // Moves: buffer b onto buffer `onto`, or off alignment.
  const size_t moves = in.u8() % 4;
  for (size_t mv = 0; mv < moves; ++mv) {
    const int b = in.u8() % kCount;
    const int onto = in.u8() % kCount;
    if (b == kKeep || b == kBias) continue;  // the mask is part of the forward call above
    if (in.chance(128)) at[b].off = at[onto].off + in.range(0, sizes[onto]);
    else at[b].off += in.range(1, 3);
    if (at[b].off + sizes[b] > total) at[b].off = total - sizes[b];
  }
  tinyattn::BackwardIo io{fp(kQ), fp(kK), fp(kV), fp(kDy), fp(kW), fp(kL), in.chance(128) ? fp(kY) : nullptr,
                          fp(kDq), fp(kDk), fp(kDv), in.chance(160) ? fp(kDs) : nullptr};
  const uint8_t null_fault = in.u8();
  if (null_fault == 0) io.q = nullptr;
  if (null_fault == 1) io.dy = nullptr;
  if (null_fault == 2) io.dk = nullptr;
  if (null_fault == 3) io.weights = nullptr;
  if (null_fault == 4) io.lse = nullptr;
  tinyattn::Workspace ws{null_fault == 5 ? nullptr : pool.data() + at[kWs].off, ws_bytes};

  before = pool;
  const Status s = tinyattn::backward(d, mode, io, ws, mask, opt);
  FUZZ_REQUIRE(static_cast<int>(s) < tinyattn::kStatusCount && s != Status::kBadQuantization);
  if (s != Status::kOk) {
    FUZZ_REQUIRE(pool == before);
    return 0;
  }
  const Region written[] = {at[kDq], at[kDk], at[kDv], io.ds ? at[kDs] : Region{0, 0}, {at[kWs].off, ws_bytes}};
  for (size_t x = 0; x < total; ++x) {
    if (pool[x] == before[x]) continue;
    bool ok = false;
    for (const Region& r : written) ok = ok || (x >= r.off && x < r.off + r.bytes);
    FUZZ_REQUIRE(ok);
  }
  // Only for weights/lse that forward() produced and that no move pointed
  // elsewhere: backward() takes A from them as given, so a corrupted weight on
  // a masked key yields a nonzero dS there (garbage in, garbage out; still no
  // crash and no stray write).
  if (io.ds && !corrupted && moves == 0)
    for (size_t h = 0; h < d.hq; ++h)
      for (size_t i = 0; i < d.n; ++i)
        for (size_t j = 0; j < d.m; ++j)
          if (!tinyattn::ref::visible(mask, d, h, i, j)) FUZZ_REQUIRE(io.ds[(h * d.n + i) * d.m + j] == 0.0f);

  // Ordinary values, untouched forward outputs, no buffers moved: the reference decides.
  if (!specials && !corrupted && moves == 0) {
    std::vector<double> dq(d.q_elems()), dk(d.k_elems()), dv(d.v_elems());
    tinyattn::ref::backward(d, io.q, io.k, io.v, io.dy, mask, tinyattn::effective_scale(d, opt), dq.data(),
                            dk.data(), dv.data());
    auto near = [](const float* got, const std::vector<double>& want) {
      double scale = 1.0;
      for (double w : want) scale = std::fmax(scale, std::fabs(w));
      for (size_t x = 0; x < want.size(); ++x)
        if (!(std::fabs(got[x] - want[x]) <= 1e-3 * scale)) return false;
      return true;
    };
    FUZZ_REQUIRE(near(io.dq, dq) && near(io.dk, dk) && near(io.dv, dv));
  }
  return 0;
}
