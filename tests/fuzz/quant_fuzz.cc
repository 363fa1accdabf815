// Fuzz target for the int8 and int16 quantization parameters
// (tinyattn/quant.h, tinyattn/quant_i16.h): plan_int8() / plan_int16() with
// scales of any bit pattern, zero points of any value, per-tensor or
// per-head counts (right and wrong), softmax scales incl. non-finite;
// validate() on plans of arbitrary integers; and forward_i8() /
// forward_i16() with the resulting (or a raw) plan over small random shapes
// and every mask kind. Inputs starting with "I16:" take the int16 path.
//
// Invariants (a violation traps):
//  * statuses are ones these entry points document;
//  * a rejected plan_int8 leaves the plan array byte-identical; an accepted
//    one gives plans that validate() accepts, multipliers in [2^30, 2^31) and
//    shifts in [0, 62];
//  * a rejected forward_i8/i16 writes nothing; an accepted one writes only Y,
//    the weights and the workspace, with Q0.15 weights <= 1.0, each row
//    summing to 1.0 within the rounding (or to 0), exactly 0 on masked keys.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_input.h"
#include "tinyattn/quant.h"
#include "tinyattn/quant_i16.h"
#include "tinyattn/reference.h"
#include "tinyattn/tinyattn.h"

namespace {

using tinyattn::Dims;
using tinyattn::Mask;
using tinyattn::Status;

using tinyattn_fuzz::Bytes;

// Mostly sensible scales, sometimes any bit pattern.
float scale(Bytes& in) {
  if (in.chance(200))
    return std::ldexp(1.0f + static_cast<float>(in.u8()) / 256.0f, static_cast<int>(in.u8() % 24) - 16);
  return in.any_float();
}
int32_t zero_point(Bytes& in) {
  return in.chance(230) ? static_cast<int32_t>(in.u8()) - 128 : static_cast<int32_t>(in.u32());
}

constexpr size_t kMaxHeads = 4;

struct Params {
  float scale[kMaxHeads];
  int32_t zero[kMaxHeads];
  tinyattn::QuantParams p;
};

void make_params(Bytes& in, size_t heads, Params* out) {
  for (size_t h = 0; h < kMaxHeads; ++h) {
    out->scale[h] = scale(in);
    out->zero[h] = zero_point(in);
  }
  out->p.scale = in.chance(4) ? nullptr : out->scale;
  out->p.zero_point = in.chance(64) ? nullptr : out->zero;
  out->p.count = in.chance(16) ? in.range(0, kMaxHeads) : (in.chance(128) ? 1 : heads);
}

bool plan_ok(const tinyattn::Int8HeadPlan& p) {
  auto mult_ok = [](tinyattn::FixedMultiplier m) {
    return m.multiplier >= (int32_t{1} << 30) && m.shift >= 0 && m.shift <= 62;
  };
  return mult_ok(p.logit) && mult_ok(p.output) && tinyattn::validate(p) == Status::kOk;
}

// Each weight is rounded to nearest: a row sums to 1.0 within half a unit
// per key (or to 0 with no visible key), masked keys exactly 0.
void check_weights(const Dims& d, const Mask& mask, const uint16_t* weights) {
  for (size_t h = 0; h < d.hq; ++h)
    for (size_t i = 0; i < d.n; ++i) {
      uint32_t sum = 0;
      for (size_t j = 0; j < d.m; ++j) {
        const uint16_t w = weights[(h * d.n + i) * d.m + j];
        FUZZ_REQUIRE(w <= tinyattn::kProbOne);
        if (!tinyattn::ref::visible(mask, d, h, i, j)) FUZZ_REQUIRE(w == 0);
        sum += w;
      }
      const uint32_t slack = static_cast<uint32_t>(d.m + 1) / 2;
      FUZZ_REQUIRE(sum <= tinyattn::kProbOne + slack);
      FUZZ_REQUIRE(sum == 0 || sum + slack >= tinyattn::kProbOne);
    }
}

Dims fuzz_dims(Bytes& in, size_t big_dk) {
  Dims d;
  d.n = in.range(1, 6);
  d.m = in.range(1, 24);
  d.dk = in.chance(8) ? big_dk + 1 : in.range(1, 16);
  d.dv = in.range(1, 8);
  d.hkv = in.range(1, 2);
  d.hq = d.hkv * in.range(1, 2);
  return d;
}

Mask fuzz_mask(Bytes& in, const Dims& d, std::vector<uint8_t>& keep, std::vector<float>& bias, uint8_t* element) {
  Mask mask;
  mask.causal = static_cast<tinyattn::Causal>(in.u8() % 3);
  if (in.chance(64)) mask.kv_len = static_cast<uint32_t>(in.range(0, d.m));
  if (in.chance(64)) mask.window = {static_cast<int32_t>(in.range(0, 4)), static_cast<int32_t>(in.range(0, 4)),
                                    static_cast<tinyattn::Align>(in.u8() % 2)};
  keep.assign(d.n * d.m, 0);
  for (uint8_t& x : keep) x = in.chance(200);
  bias.assign(d.n * d.m, 0.0f);
  *element = in.u8();
  if (*element & 1) mask.keep = keep.data();
  if (*element & 2) mask.bias = bias.data();  // kUnsupported on the integer paths
  return mask;
}

// The int16 path: the same invariants, zero points must be 0.
int fuzz_int16(Bytes& in) {
  const Dims d = fuzz_dims(in, tinyattn::kMaxDkInt16);
  Params q, k, v, y;
  make_params(in, d.hq, &q);
  make_params(in, d.hkv, &k);
  make_params(in, d.hkv, &v);
  make_params(in, d.hq, &y);
  // Mostly symmetric (the only valid zero point), sometimes anything.
  for (Params* t : {&q, &k, &v, &y})
    if (in.chance(200)) t->p.zero_point = nullptr;
  tinyattn::Int16Scheme scheme;
  scheme.q = q.p;
  scheme.k = k.p;
  scheme.v = v.p;
  scheme.y = y.p;
  if (in.chance(96)) scheme.softmax_scale = scale(in);
  if (in.chance(8)) scheme.mode = static_cast<tinyattn::Int16Mode>(in.u8());
  tinyattn::Int16HeadPlan plans[kMaxHeads + 1];
  std::memset(static_cast<void*>(plans), 0x5A, sizeof plans);
  unsigned char before[sizeof plans];
  std::memcpy(before, plans, sizeof plans);
  const size_t capacity = in.chance(8) ? in.range(0, d.hq) : d.hq;
  const Status ps = tinyattn::plan_int16(d, scheme, plans, capacity);
  FUZZ_REQUIRE(ps == Status::kOk || ps == Status::kBadQuantization || ps == Status::kBadScale ||
               ps == Status::kNullPointer || ps == Status::kBadDimension || ps == Status::kBadHeads);
  if (ps != Status::kOk) {
    FUZZ_REQUIRE(std::memcmp(before, plans, sizeof plans) == 0);
  } else {
    for (size_t h = 0; h < d.hq; ++h) FUZZ_REQUIRE(tinyattn::validate(plans[h]) == Status::kOk);
    FUZZ_REQUIRE(std::memcmp(&plans[d.hq], &before[d.hq * sizeof plans[0]], sizeof plans[0]) == 0);
  }
  if (ps != Status::kOk || in.chance(32))
    for (size_t h = 0; h < d.hq; ++h) {
      plans[h].logit = {static_cast<int32_t>(in.u32()), static_cast<int32_t>(in.u8()) - 64};
      plans[h].output = {static_cast<int32_t>(in.u32()), static_cast<int32_t>(in.u8()) - 64};
      plans[h].mode = static_cast<tinyattn::Int16Mode>(in.chance(240) ? 0 : in.u8());
    }
  bool plan_valid = true;
  for (size_t h = 0; h < d.hq; ++h) plan_valid = plan_valid && tinyattn::validate(plans[h]) == Status::kOk;

  std::vector<uint8_t> keep;
  std::vector<float> bias;
  uint8_t element = 0;
  const Mask mask = fuzz_mask(in, d, keep, bias, &element);
  const bool dk_ok = d.dk <= tinyattn::kMaxDkInt16;
  const Dims a = dk_ok ? d : Dims{d.n, d.m, 1, d.dv, d.hq, d.hkv};
  std::vector<int16_t> qv(a.q_elems()), kv(a.k_elems()), vv(a.v_elems());
  // Extremes often: the products and sums at their bounds.
  auto value = [&in]() {
    return in.chance(64) ? static_cast<int16_t>(in.chance(128) ? -32768 : 32767) : static_cast<int16_t>(in.u32());
  };
  for (int16_t& x : qv) x = value();
  for (int16_t& x : kv) x = value();
  for (int16_t& x : vv) x = value();
  const size_t ws_need = tinyattn::forward_i16_workspace_bytes(a);
  const size_t ws_bytes = in.chance(16) ? in.range(0, ws_need) : ws_need;
  const size_t y_off = 0, w_off = a.y_elems() * 2 + 64, ws_off = w_off + a.weight_elems() * 2 + 64;
  const size_t total = ws_off + ws_need + 64;
  std::vector<unsigned char> pool(total, 0xA5), snapshot;
  tinyattn::ForwardIoI16 io;
  io.q = qv.data();
  io.k = kv.data();
  io.v = vv.data();
  io.y = reinterpret_cast<int16_t*>(pool.data() + y_off);
  const bool with_weights = in.chance(160);
  io.weights = with_weights ? reinterpret_cast<uint16_t*>(pool.data() + w_off) : nullptr;
  const tinyattn::Int16Plan plan{plans, in.chance(8) ? in.range(0, kMaxHeads) : d.hq};
  snapshot = pool;
  const Status fs = tinyattn::forward_i16(d, io, plan, {pool.data() + ws_off, ws_bytes}, mask);
  FUZZ_REQUIRE(static_cast<int>(fs) < tinyattn::kStatusCount);
  if (fs != Status::kOk) {
    FUZZ_REQUIRE(pool == snapshot);
    return 0;
  }
  FUZZ_REQUIRE(plan_valid && dk_ok && plan.count >= d.hq && !(element & 2));
  for (size_t x = 0; x < total; ++x) {
    const bool in_y = x >= y_off && x < y_off + d.y_elems() * 2;
    const bool in_w = with_weights && x >= w_off && x < w_off + d.weight_elems() * 2;
    const bool in_ws = x >= ws_off && x < ws_off + ws_need;
    FUZZ_REQUIRE(pool[x] == snapshot[x] || in_y || in_w || in_ws);
  }
  if (with_weights) check_weights(d, mask, io.weights);
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  // A tag no int8 input of the corpus starts with, so theirs keep their meaning.
  static constexpr char kInt16Tag[4] = {'I', '1', '6', ':'};
  if (size >= sizeof kInt16Tag && std::memcmp(data, kInt16Tag, sizeof kInt16Tag) == 0) {
    Bytes rest(data + sizeof kInt16Tag, size - sizeof kInt16Tag);
    return fuzz_int16(rest);
  }
  const Dims d = fuzz_dims(in, tinyattn::kMaxDkInt8);

  // 1. plan_int8 over arbitrary parameters.
  Params q, k, v, y;
  make_params(in, d.hq, &q);
  make_params(in, d.hkv, &k);
  make_params(in, d.hkv, &v);
  make_params(in, d.hq, &y);
  tinyattn::Int8Scheme scheme;
  scheme.q = q.p;
  scheme.k = k.p;
  scheme.v = v.p;
  scheme.y = y.p;
  if (in.chance(96)) scheme.softmax_scale = scale(in);
  tinyattn::Int8HeadPlan plans[kMaxHeads + 1];
  std::memset(static_cast<void*>(plans), 0x5A, sizeof plans);  // canary bytes, compared below
  unsigned char before[sizeof plans];
  std::memcpy(before, plans, sizeof plans);
  const size_t capacity = in.chance(8) ? in.range(0, d.hq) : d.hq;
  const Status ps = tinyattn::plan_int8(d, scheme, plans, capacity);
  FUZZ_REQUIRE(ps == Status::kOk || ps == Status::kBadQuantization || ps == Status::kBadScale ||
               ps == Status::kNullPointer || ps == Status::kBadDimension || ps == Status::kBadHeads ||
               ps == Status::kWorkspaceTooSmall || ps == Status::kUnsupported);
  if (ps != Status::kOk) {
    FUZZ_REQUIRE(std::memcmp(before, plans, sizeof plans) == 0);
  } else {
    for (size_t h = 0; h < d.hq; ++h) FUZZ_REQUIRE(plan_ok(plans[h]));
    FUZZ_REQUIRE(std::memcmp(&plans[d.hq], &before[d.hq * sizeof plans[0]], sizeof plans[0]) == 0);
  }

  // 2. A raw plan of arbitrary integers: validate() never crashes, and
  //    forward_i8 refuses what validate() refuses.
  const bool raw = ps != Status::kOk || in.chance(32);
  if (raw)
    for (size_t h = 0; h < d.hq; ++h) {
      plans[h].logit = {static_cast<int32_t>(in.u32()), static_cast<int32_t>(in.u8()) - 64};
      plans[h].output = {static_cast<int32_t>(in.u32()), static_cast<int32_t>(in.u8()) - 64};
      plans[h].q_zero = zero_point(in);
      plans[h].k_zero = zero_point(in);
      plans[h].v_zero = zero_point(in);
      plans[h].y_zero = zero_point(in);
      (void)tinyattn::validate(plans[h]);
    }
  bool plan_valid = true;
  for (size_t h = 0; h < d.hq; ++h) plan_valid = plan_valid && tinyattn::validate(plans[h]) == Status::kOk;

  // 3. forward_i8 with that plan.
  std::vector<uint8_t> keep;
  std::vector<float> bias;
  uint8_t element = 0;
  const Mask mask = fuzz_mask(in, d, keep, bias, &element);
  const bool dk_ok = d.dk <= tinyattn::kMaxDkInt8;
  const Dims a = dk_ok ? d : Dims{d.n, d.m, 1, d.dv, d.hq, d.hkv};  // buffers for a rejected Dk stay small

  std::vector<int8_t> qv(a.q_elems()), kv(a.k_elems()), vv(a.v_elems());
  for (int8_t& x : qv) x = static_cast<int8_t>(in.u8());
  for (int8_t& x : kv) x = static_cast<int8_t>(in.u8());
  for (int8_t& x : vv) x = static_cast<int8_t>(in.u8());
  const size_t ws_need = tinyattn::forward_i8_workspace_bytes(a);
  const size_t ws_bytes = in.chance(16) ? in.range(0, ws_need) : ws_need;
  // Outputs and workspace in one pool, with gaps, so stray writes are seen.
  const size_t y_off = 0, w_off = a.y_elems() + 64, ws_off = w_off + a.weight_elems() * 2 + 64;
  const size_t total = ws_off + ws_need + 64;
  std::vector<unsigned char> pool(total, 0xA5), snapshot;
  tinyattn::ForwardIoI8 io;
  io.q = qv.data();
  io.k = kv.data();
  io.v = vv.data();
  io.y = reinterpret_cast<int8_t*>(pool.data() + y_off);
  const bool with_weights = in.chance(160);
  io.weights = with_weights ? reinterpret_cast<uint16_t*>(pool.data() + w_off) : nullptr;
  const tinyattn::Int8Plan plan{plans, in.chance(8) ? in.range(0, kMaxHeads) : d.hq};
  snapshot = pool;
  const Status fs = tinyattn::forward_i8(d, io, plan, {pool.data() + ws_off, ws_bytes}, mask);
  FUZZ_REQUIRE(static_cast<int>(fs) < tinyattn::kStatusCount);
  if (fs != Status::kOk) {
    FUZZ_REQUIRE(pool == snapshot);
    return 0;
  }
  FUZZ_REQUIRE(plan_valid && dk_ok && plan.count >= d.hq && !(element & 2));
  for (size_t x = 0; x < total; ++x) {
    const bool in_y = x >= y_off && x < y_off + d.y_elems();
    const bool in_w = with_weights && x >= w_off && x < w_off + d.weight_elems() * 2;
    const bool in_ws = x >= ws_off && x < ws_off + ws_need;
    FUZZ_REQUIRE(pool[x] == snapshot[x] || in_y || in_w || in_ws);
  }
  if (with_weights) check_weights(d, mask, io.weights);
  return 0;
}
