#!/usr/bin/python3
"""Golden vectors for tinyattn's int8 TFLite mode (Int8Mode::kTflite).

A model of the int8 graph a TensorFlow Lite (Micro) model of attention runs,
written from the definitions of TFLite's reference kernels and gemmlowp's
fixed point (not from lib/src): BatchMatMul Q.K^T requantized into an int8
score tensor, the int8 reference Softmax (output scale 1/256, zero point
-128) with the softmax scale as its beta, BatchMatMul P.V requantized into Y.
Masked keys have the int8 score -128. Everything at run time is Python
integers (NumPy int64 for the exact dot products); the plan is TFLite's
Prepare() in Python floats (IEEE double, single correctly rounded operations),
so the file is byte-identical on every machine; keep it that way.

  gen_tflite_vectors.py            rewrite tests/quant/golden_tflite_i8.h
  gen_tflite_vectors.py --check    exit 1 if the committed file differs
  gen_tflite_vectors.py --measure  print the error table of docs/quant.md
                                   (TFLite mode and native mode against float64)
"""
import math
import os
import sys
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "golden_tflite_i8.h")
sys.path.insert(0, HERE)
import gen_quant_vectors as native  # noqa: E402  (masks, and the native mode for --measure)

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
UINT32_MAX = 2**32 - 1


def i32(x):
    """Asserts x is an int32 value: the model never relies on overflow except where it says so."""
    assert INT32_MIN <= x <= INT32_MAX, x
    return x


def wrap32(x):
    """Two's complement int32 wrap-around (TFLite's x * (1 << left_shift) where it overflows)."""
    return ((x + 2**31) % 2**32) - 2**31


# --- gemmlowp fixed point (fixedpoint/fixedpoint.h), int32 raw values -------------

def srdhm(a, b):
    """SaturatingRoundingDoublingHighMul: nudge, then C++ division (toward zero) by 2^31."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    v = ab + nudge
    q = abs(v) // 2**31
    return i32(q if v >= 0 else -q)


def rounding_divide_by_pot(x, exponent):
    """RoundingDivideByPOT: mask, remainder, threshold (Python's >> is arithmetic)."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def saturating_multiply_by_pot(x, exponent):
    """SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0."""
    threshold = (1 << (31 - exponent)) - 1
    if x > threshold:
        return INT32_MAX
    if x < -threshold:
        return INT32_MIN
    return i32(x * (1 << exponent))


def rounding_half_sum(a, b):
    s = a + b
    sign = 1 if s >= 0 else -1
    v = s + sign
    return i32(abs(v) // 2 if v >= 0 else -(abs(v) // 2))


def exp_on_interval_between_negative_one_quarter_and_0_excl(a):
    constant_term = 1895147668       # exp(-1/8), Q0.31
    constant_1_over_3 = 715827883    # 1/3, Q0.31
    x = i32(a + (1 << 28))           # a + 1/8
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    t = rounding_divide_by_pot(i32(srdhm(i32(x4_over_4 + x3), constant_1_over_3) + x2), 1)
    return i32(constant_term + srdhm(constant_term, i32(x + t)))


BARREL = [(-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401),
          (4, 242)]


def exp_on_negative_values(a, integer_bits=5):
    """exp(a) in Q0.31 for a <= 0 in Q(integer_bits).(31 - integer_bits)."""
    frac = 31 - integer_bits
    one_quarter = 1 << (frac - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_multiply_by_pot(a_mod_quarter_minus_one_quarter, integer_bits))
    remainder = i32(a_mod_quarter_minus_one_quarter - a)
    for exponent, multiplier in BARREL:
        if integer_bits > exponent and remainder & (1 << (frac + exponent)):
            result = srdhm(result, multiplier)
    assert integer_bits <= 5  # no clamp below -32 in this format
    return INT32_MAX if a == 0 else result


def one_over_one_plus_x_for_x_in_0_1(a):
    half_denominator = rounding_half_sum(a, INT32_MAX)  # F0::One() is the largest raw value
    x = i32(1515870810 + srdhm(half_denominator, -1010580540))  # 48/17 - 32/17 d, Q2.29
    for _ in range(3):
        one_minus = i32((1 << 29) - srdhm(half_denominator, x))
        x = i32(x + saturating_multiply_by_pot(srdhm(x, one_minus), 2))
    return saturating_multiply_by_pot(x, 1)


# --- TFLite (kernels/internal/common.h, reference/softmax.h) ----------------

def multiply_by_quantized_multiplier(x, mult):
    m, shift = mult
    left, right = max(shift, 0), max(-shift, 0)
    return rounding_divide_by_pot(srdhm(wrap32(x * (1 << left)), m), right)


def get_reciprocal(x, integer_bits):
    headroom_plus_one = 32 - x.bit_length()  # CountLeadingZeros
    num_bits_over_unit = integer_bits - headroom_plus_one
    shifted_sum_minus_one = ((x << headroom_plus_one) & UINT32_MAX) - (1 << 31)
    return one_over_one_plus_x_for_x_in_0_1(i32(shifted_sum_minus_one)), num_bits_over_unit


def softmax_int8(row, beta_mult, diff_min):
    """reference_ops::Softmax<int8_t, int8_t>, one row."""
    m, left_shift = beta_mult
    max_in_row = max([-128] + list(row))
    total = 0
    for x in row:
        diff = x - max_in_row
        if diff >= diff_min:
            scaled = srdhm(i32(diff * (1 << left_shift)), m)  # MultiplyByQuantizedMultiplierGreaterThanOne
            total = i32(total + rounding_divide_by_pot(exp_on_negative_values(scaled), 12))
    shifted_scale, num_bits_over_unit = get_reciprocal(total, 12)
    # TFLite's reference checks exponent <= 31; beyond it (exp sums >= 512) this
    # model takes RoundingDivideByPOT's exact value (0), as tinyattn does.
    exponent = num_bits_over_unit + 31 - 8
    out = []
    for x in row:
        diff = x - max_in_row
        if diff >= diff_min:
            scaled = srdhm(i32(diff * (1 << left_shift)), m)
            unsat = rounding_divide_by_pot(srdhm(shifted_scale, exp_on_negative_values(scaled)), exponent)
            out.append(max(-128, min(127, unsat - 128)))
        else:
            out.append(-128)
    return out


# --- TFLite's Prepare(): the plan ------------------------------------------------

def quantize_multiplier(real):
    """tflite::QuantizeMultiplier: frexp, TfLiteRound (half away from zero), 2^31 carried."""
    assert real > 0
    q, shift = math.frexp(real)
    r = Fraction(q) * 2**31
    q_fixed = math.floor(r + Fraction(1, 2))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    assert shift >= -31
    return (q_fixed, shift)


def plan(c):
    n, m, dk, dv, hq, hkv = c["dims"]
    if c["softmax_scale"] is None:
        beta = float(np.float32(1.0) / np.sqrt(np.float32(dk)))
    else:
        beta = float(np.float32(c["softmax_scale"]))
    plans = []
    for h in range(hq):
        kv = h // (hq // hkv)

        def pick(t, head):
            sc, zp = c[t]
            i = 0 if len(sc) == 1 else head
            return float(np.float32(sc[i])), int(zp[i])
        sq, zq = pick("q", h)
        sk, zk = pick("k", kv)
        sv, zv = pick("v", kv)
        sy, zy = pick("y", h)
        ss, zs = pick("scores", h)
        scores = quantize_multiplier(sq * sk / ss)                      # GetQuantizedConvolutionMultipler
        output = quantize_multiplier(float(np.float32(1.0 / 256)) * sv / sy)
        beta_real = min(beta * ss * (1 << (31 - 5)), (1 << 31) - 1.0)   # PreprocessSoftmaxScaling
        assert beta_real > 1.0
        beta_mult = quantize_multiplier(beta_real)
        assert beta_mult[1] >= 0
        diff_min = -int(math.floor(1.0 * ((1 << 5) - 1) * (1 << (31 - 5)) / (1 << beta_mult[1])))
        for mult in (scores, output):
            assert -31 <= mult[1] <= 30
        plans.append(dict(zq=zq, zk=zk, zv=zv, zy=zy, scores=scores, zs=zs, beta=beta_mult, diff_min=diff_min,
                          output=output))
    return plans


def plan_fields(p):
    """Int8HeadPlan's fields in order: the native ones 0, mode 1, then TfliteParams."""
    return [0, 0, 0, 0, 0, 0, p["zq"], p["zk"], p["zv"], p["zy"], 0, 1,
            p["scores"][0], p["scores"][1], p["zs"], p["beta"][0], p["beta"][1], p["diff_min"],
            p["output"][0], p["output"][1]]


# --- the graph ---------------------------------------------------------------------

def forward(c, plans):
    n, m, dk, dv, hq, hkv = c["dims"]
    q = c["q_data"].astype(np.int64).reshape(hq, n, dk)
    k = c["k_data"].astype(np.int64).reshape(hkv, m, dk)
    v = c["v_data"].astype(np.int64).reshape(hkv, m, dv)
    y = np.zeros((hq, n, dv), dtype=np.int64)
    w = np.zeros((hq, n, m), dtype=np.int64)
    for h in range(hq):
        p = plans[h]
        kv = h // (hq // hkv)
        for i in range(n):
            lo, hi = native.key_range(c["mask"], i, n, m)
            scores = []
            for j in range(m):
                if lo <= j < hi and native.kept(c, h, i, j):
                    acc = int(((q[h, i] - p["zq"]) * (k[kv, j] - p["zk"])).sum())
                    s = multiply_by_quantized_multiplier(acc, p["scores"]) + p["zs"]
                    scores.append(max(-128, min(127, s)))
                else:
                    scores.append(-128)  # a large negative mask added, saturated
            probs = softmax_int8(scores, p["beta"], p["diff_min"])
            for j in range(m):
                w[h, i, j] = probs[j] + 128
            for col in range(dv):
                acc = sum((probs[j] + 128) * (int(v[kv, j, col]) - p["zv"]) for j in range(m))
                y[h, i, col] = max(-128, min(127, multiply_by_quantized_multiplier(i32(acc), p["output"]) + p["zy"]))
    return y.astype(np.int8).ravel(), w.astype(np.uint16).ravel()


# --- the cases ---------------------------------------------------------------------

def make_cases():
    cases = []

    def case(name, dims, scales, zps, seed, softmax_scale=0.25, mask=None, fill=None, per_head=False, lo=-128,
             hi=128):
        n, m, dk, dv, hq, hkv = dims
        rng = np.random.default_rng(seed)
        c = {"name": name, "dims": dims, "softmax_scale": softmax_scale, "mask": mask or {}}
        heads = {"q": hq, "k": hkv, "v": hkv, "y": hq, "scores": hq}
        for t in ("q", "k", "v", "y", "scores"):
            cnt = heads[t] if per_head else 1
            c[t] = ([float(np.float32(scales[t] * (1.0 + 0.25 * hh))) for hh in range(cnt)],
                    [int(zps[t] - 3 * hh) if zps[t] else 0 for hh in range(cnt)])
        sizes = {"q": hq * n * dk, "k": hkv * m * dk, "v": hkv * m * dv}
        for t in "qkv":
            c[t + "_data"] = rng.integers(lo, hi, size=sizes[t]).astype(np.int8)
        if fill:
            fill(c, rng)
        cases.append(c)

    s0 = {"q": 0.05, "k": 0.05, "v": 0.05, "y": 0.04, "scores": 0.3}
    z0 = {"q": 0, "k": 0, "v": 0, "y": 0, "scores": 0}
    z1 = {"q": 5, "k": -7, "v": 11, "y": -4, "scores": 9}
    case("zero points, odd Dk and Dv", (4, 6, 7, 5, 1, 1), s0, z1, 1)
    case("GQA (Hq 4, Hkv 2), per-head scales and zero points", (3, 7, 9, 3, 4, 2), s0, z1, 2, per_head=True)
    case("causal bottom-right, GQA", (5, 8, 8, 6, 4, 2), s0, z1, 3, mask={"causal": 2})
    case("causal top-left, per head", (4, 4, 5, 4, 2, 2), s0, z0, 4, mask={"causal": 1}, per_head=True)

    def keep_bytes(c, rng):
        n, m, _, _, hq, _ = c["dims"]
        keep = (rng.random(hq * n * m) < 0.6).astype(np.uint8)
        keep[1 * m:2 * m] = 0  # row 1 of head 0 sees nothing: every score -128, a uniform softmax
        c["mask"]["keep"] = keep
    case("keep bytes per head, a fully masked row", (4, 10, 8, 6, 2, 2), s0, z1, 5,
         mask={"keep_kind": 1, "head_stride": 4 * 10}, fill=keep_bytes)

    def keep_bits(c, rng):
        n, m = c["dims"][0], c["dims"][1]
        c["mask"]["keep"] = rng.integers(0, 256, size=n * ((m + 7) // 8)).astype(np.uint8)
    case("keep bits", (5, 13, 6, 4, 2, 1), s0, z0, 6, mask={"keep_kind": 2}, fill=keep_bits)
    case("window and kv_len", (6, 9, 7, 5, 1, 1), s0, z1, 7, mask={"window": (1, 2, 1), "kv_len": 7})
    # beta * s_scores * 2^26 = 2^23: input_left_shift 24, diff_min -124, so the
    # keys more than 124 score steps below a row's maximum are cut
    case("diff_min cuts keys", (4, 12, 16, 5, 1, 1), {"q": 0.05, "k": 0.05, "v": 0.05, "y": 0.04, "scores": 0.5},
         z1, 8, softmax_scale=0.25)
    # beta * s_scores * 2^26 above 2^31 - 1: the multiplier is capped, diff_min 0
    case("beta capped (peaked softmax)", (3, 7, 8, 4, 1, 1), {"q": 0.05, "k": 0.05, "v": 0.05, "y": 0.04,
                                                              "scores": 16.0}, z0, 9, softmax_scale=4.0)
    case("saturating scores and output", (4, 8, 8, 6, 1, 1), {"q": 0.05, "k": 0.05, "v": 0.5, "y": 0.01,
                                                              "scores": 0.02}, z1, 10)
    # sq * sk / s_scores = 2.5: QuantizeMultiplier's shift 2, a left shift
    case("score multiplier above 1", (3, 6, 3, 4, 1, 1), {"q": 0.01, "k": 0.01, "v": 0.05, "y": 0.04,
                                                          "scores": 4e-5}, z0, 11, lo=-6, hi=7)

    def extremes(c, rng):
        for t in "qkv":
            c[t + "_data"][:] = np.where(rng.random(c[t + "_data"].size) < 0.5, -128, 127)
    case("extreme inputs with opposite zero points", (3, 5, 12, 4, 1, 1), s0,
         {"q": 127, "k": -128, "v": 127, "y": 0, "scores": -128}, 12, fill=extremes)
    case("default softmax scale", (2, 5, 10, 3, 1, 1), {**s0, "scores": 0.05}, z1, 13, softmax_scale=None)
    case("long row", (2, 300, 16, 8, 1, 1), {"q": 0.02, "k": 0.02, "v": 0.05, "y": 0.02, "scores": 0.05}, z0, 14)

    def equal_keys(c, rng):
        c["k_data"][:] = np.tile(c["k_data"][:4], 600)
    # 600 equal scores: the exp sum is 600 >= 512, past the exponent TFLite's
    # reference checks; every weight rounds to 0 (y = zy)
    case("600 equal keys (exp sum past 512)", (1, 600, 4, 3, 1, 1), s0, z1, 15, fill=equal_keys)
    case("single element", (1, 1, 1, 1, 1, 1), s0, z1, 16)
    return cases


# --- output ------------------------------------------------------------------------

def render(cases):
    out = ["// Generated by tests/quant/gen_tflite_vectors.py (Python integers); do not edit.",
           "// Inputs, plans and expected output bytes of tinyattn's int8 TFLite mode.",
           "#pragma once", "", "#include <cstddef>", "#include <cstdint>", "", "namespace golden_tflite_i8 {", ""]
    table = []
    for idx, c in enumerate(cases):
        n, m, dk, dv, hq, hkv = c["dims"]
        plans = plan(c)
        y, w = forward(c, plans)
        p = f"c{idx}_"
        for t in ("q", "k", "v", "y", "scores"):
            out.append(native.c_floats(p + t + "_scale", c[t][0]))
            out.append(native.c_array("int32_t", p + t + "_zero", c[t][1]))
        for t in "qkv":
            out.append(native.c_array("int8_t", p + t, c[t + "_data"]))
        flat = []
        for pl in plans:
            flat += plan_fields(pl)
        out.append(native.c_array("int32_t", p + "plan", flat, per_line=20))
        out.append(native.c_array("int8_t", p + "y", y))
        out.append(native.c_array("uint16_t", p + "weights", w))
        mask = c["mask"]
        keep = "nullptr"
        if mask.get("keep_kind", 0):
            out.append(native.c_array("uint8_t", p + "keep", mask["keep"]))
            keep = p + "keep"
        left, right, align = mask.get("window", (native.INT32_MAX, native.INT32_MAX, 0))
        ss = c["softmax_scale"]
        table.append(
            f"    {{\"{c['name']}\", {{{n}, {m}, {dk}, {dv}, {hq}, {hkv}}}, {0 if ss is None else 1}, "
            f"{float(np.float32(ss if ss is not None else 0)).hex()}f,\n"
            f"     {{{p}q_scale, {p}k_scale, {p}v_scale, {p}y_scale, {p}scores_scale}},\n"
            f"     {{{p}q_zero, {p}k_zero, {p}v_zero, {p}y_zero, {p}scores_zero}},\n"
            f"     {{{len(c['q'][0])}, {len(c['k'][0])}, {len(c['v'][0])}, {len(c['y'][0])}, "
            f"{len(c['scores'][0])}}},\n"
            f"     {mask.get('causal', 0)}, {left}, {right}, {align}, {mask.get('kv_len', UINT32_MAX)}u, "
            f"{mask.get('keep_kind', 0)}, {keep}, {mask.get('head_stride', 0)},\n"
            f"     {p}q, {p}k, {p}v, {p}plan, {p}y, {p}weights}},")
    out += ["struct Case {",
            "  const char* name;",
            "  size_t dims[6];  // n, m, dk, dv, hq, hkv",
            "  int has_softmax_scale;",
            "  float softmax_scale;",
            "  const float* scale[5];       // q, k, v, y, scores",
            "  const int32_t* zero[5];",
            "  size_t count[5];",
            "  int causal;                  // 0 none, 1 top-left, 2 bottom-right",
            "  int32_t window_left, window_right;",
            "  int window_align;            // 0 top-left, 1 bottom-right",
            "  uint32_t kv_len;",
            "  int keep_kind;               // 0 none, 1 bytes, 2 bits",
            "  const uint8_t* keep;",
            "  size_t head_stride;",
            "  const int8_t *q, *k, *v;",
            "  const int32_t* plan;         // per query head: Int8HeadPlan's 20 fields in order",
            "  const int8_t* y;",
            "  const uint16_t* weights;     // softmax output + 128",
            "};", "",
            "static const Case kCases[] = {"] + table + ["};", "", "}  // namespace golden_tflite_i8", ""]
    return "\n".join(out)


# --- error against float64 (docs/quant.md) ----------------------------------------

def measure():
    """TFLite mode and native mode against float64 attention of the dequantized int8 inputs."""
    configs = [
        ("N(0,1), no mask", dict(n=16, m=32, dk=32, dv=32, sd=1.0, causal=0)),
        ("N(0,1), causal", dict(n=16, m=32, dk=32, dv=32, sd=1.0, causal=2)),
        ("N(0,2^2) (peaked rows)", dict(n=16, m=32, dk=32, dv=32, sd=2.0, causal=0)),
        ("N(0,1), M = 256", dict(n=4, m=256, dk=64, dv=32, sd=1.0, causal=0)),
    ]
    print("| inputs (N, M, Dk, Dv) | mode | max Y error (LSB) | mean Y error (LSB) | max weight error |")
    print("|---|---|---:|---:|---:|")
    for label, cfg in configs:
        n, m, dk, dv, sd = cfg["n"], cfg["m"], cfg["dk"], cfg["dv"], cfg["sd"]
        rng = np.random.default_rng(7)
        qf, kf, vf = (rng.normal(0, sd, size=(x, d)) for x, d in ((n, dk), (m, dk), (m, dv)))

        def quant(x):
            s = float(np.float32(np.abs(x).max() / 127))
            return s, np.clip(np.round(x / s), -127, 127).astype(np.int8)
        sq, q8 = quant(qf)
        sk, k8 = quant(kf)
        sv, v8 = quant(vf)
        beta = float(np.float32(1.0) / np.sqrt(np.float32(dk)))
        raw = (q8.astype(np.int64) @ k8.astype(np.int64).T).astype(np.float64) * sq * sk  # Q.K^T, dequantized
        mask = {"causal": cfg["causal"]} if cfg["causal"] else {}
        vis = np.array([[native.key_range(mask, i, n, m)[0] <= j < native.key_range(mask, i, n, m)[1]
                         for j in range(m)] for i in range(n)])
        logits = np.where(vis, raw * beta, -np.inf)
        a = np.exp(logits - logits.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        y_true = a @ (v8.astype(np.float64) * sv)
        sy = float(np.float32(np.abs(y_true).max() / 127))
        ss = float(np.float32(np.abs(raw[vis]).max() / 127))  # the score tensor's calibration
        c = {"dims": (n, m, dk, dv, 1, 1), "softmax_scale": beta, "mask": mask, "q_data": q8.ravel(),
             "k_data": k8.ravel(), "v_data": v8.ravel()}
        for t, s in (("q", sq), ("k", sk), ("v", sv), ("y", sy), ("scores", ss)):
            c[t] = ([s], [0])
        yt, wt = forward(c, plan(c))
        yn, wn = native.forward(c, native.plan(c))
        for mode, y, w, unit in (("native", yn, wn, 32768.0), ("TFLite", yt, wt, 256.0)):
            err = np.abs(y.astype(np.float64).reshape(n, dv) - y_true / sy)
            aerr = np.abs(w.astype(np.float64).reshape(n, m) / unit - a).max()
            print(f"| {label} ({n}, {m}, {dk}, {dv}) | {mode} | {err.max():.3f} | {err.mean():.3f} | {aerr:.2e} |")


def main():
    if "--measure" in sys.argv[1:]:
        measure()
        return 0
    text = render(make_cases())
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            committed = f.read()
        if committed != text:
            print("golden_tflite_i8.h differs from what gen_tflite_vectors.py generates", file=sys.stderr)
            return 1
        print("golden_tflite_i8.h matches the generator")
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
