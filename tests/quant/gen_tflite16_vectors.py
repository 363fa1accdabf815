#!/usr/bin/python3
"""Golden vectors for tinyattn's int16 TFLite mode (Int16Mode::kTflite).

A model of the 16x8 graph a TensorFlow Lite Micro model of attention runs
(int16 activations, symmetric), written from the definitions of TFLite's
reference kernels (not from lib/src): BatchMatMul Q.K^T with int64 sums
requantized into an int16 score tensor, the int16 Softmax (output scale
1/32768, zero point 0) with its two 513-entry lookup tables, BatchMatMul P.V
requantized into Y. Masked keys have the int16 score -32768 and take part in
the softmax. Everything at run time is Python integers; the plan is TFLite's
Prepare() in Python floats (IEEE double, single correctly rounded operations)
and the lookup tables are TFLite's LUTPopulate<int16_t> in float32 (NumPy
float32 operations, exp correctly rounded), so the files are byte-identical
on every machine; keep it that way.

  gen_tflite16_vectors.py            rewrite tests/quant/golden_tflite_i16.h and
                                     lib/src/tflite_i16_luts.h (the tables the library uses)
  gen_tflite16_vectors.py --check    exit 1 if either committed file differs
  gen_tflite16_vectors.py --measure  print the error table of docs/quant.md
                                     (TFLite 16x8 mode against float64)
"""
import math
import os
import sys
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "golden_tflite_i16.h")
LUT_OUT = os.path.join(HERE, "..", "..", "lib", "src", "tflite_i16_luts.h")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import gen_quant_vectors as native  # noqa: E402  (masks, C output)
import gen_tflite_vectors as tfl  # noqa: E402  (gemmlowp's SRDHM and RDBPOT, MBQM, QuantizeMultiplier)

INT16_MIN, INT16_MAX = -32768, 32767
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
UINT32_MAX = 2**32 - 1
MAX_M = 65535
F32 = np.float32


def clamp(x, lo, hi):
    return max(lo, min(hi, x))


def wrap16(x):
    return ((x + 2**15) % 2**16) - 2**15


# --- the lookup tables (kernels/internal/common.h: LUTPopulate<int16_t>) ---------------------

def round_to_f32(fr):
    """The float32 nearest to a Fraction, ties to even."""
    c = F32(float(fr))
    best = None
    for cand in (np.nextafter(c, F32(-np.inf)), c, np.nextafter(c, F32(np.inf))):
        d = abs(Fraction(float(cand)) - fr)
        if best is None or d < best[0] or (d == best[0] and int(cand.view(np.int32)) % 2 == 0):
            best = (d, cand)
    return best[1]


def expf(x):
    """std::exp on a float, correctly rounded (60 decimal digits, then to float32)."""
    fr = Fraction(float(x))
    with localcontext() as ctx:
        ctx.prec = 60
        e = (Decimal(fr.numerator) / Decimal(fr.denominator)).exp()
    return round_to_f32(Fraction(e))


def recip(x):
    """The softmax's 1.0f / (1.0f + value)."""
    return F32(F32(1) / F32(F32(1) + x))


def tround(x):
    """TfLiteRound on a float: std::round, halves away from zero."""
    return F32(math.copysign(math.floor(abs(float(x)) + 0.5), float(x)))


def lut_populate(input_scale, input_zero_point, output_scale, output_zero_point, transform, ulp=0):
    """detail::LUTPopulateInt16<float>: every operation one float32 rounding, in the source's order.
    ulp moves each transform result by that many float32 steps (the robustness check below)."""
    def f(x):
        v = transform(x)
        for _ in range(abs(ulp)):
            v = np.nextafter(v, F32(np.inf) if ulp > 0 else F32(-np.inf))
        return v
    input_min = F32(input_scale * F32(INT16_MIN - input_zero_point))
    input_max = F32(input_scale * F32(INT16_MAX - input_zero_point))
    output_min = F32(output_scale * F32(INT16_MIN - output_zero_point))
    output_max = F32(output_scale * F32(INT16_MAX - output_zero_point))
    nb_steps = 512
    step = F32(F32(input_max - input_min) / F32(nb_steps))
    half_step = F32(step / F32(2))
    output_scaling_inv = F32(F32(65536) / F32(output_max - output_min))
    lut = []
    for i in range(nb_steps):
        x = F32(input_min + F32(F32(i) * step))
        val = f(x)
        val_midpoint = f(F32(x + half_step))
        val_next = f(F32(input_min + F32(F32(i + 1) * step)))
        sample_val = tround(F32(val * output_scaling_inv))
        midpoint_interp_val = tround(F32(F32(F32(val_next * output_scaling_inv) +
                                             tround(F32(val * output_scaling_inv))) / F32(2)))
        midpoint_val = tround(F32(val_midpoint * output_scaling_inv))
        midpoint_err = F32(midpoint_interp_val - midpoint_val)
        bias = tround(F32(midpoint_err / F32(2)))
        lut.append(int(clamp(F32(sample_val - bias), F32(INT16_MIN), F32(INT16_MAX))))
    lut.append(int(clamp(tround(F32(f(input_max) * output_scaling_inv)), F32(INT16_MIN), F32(INT16_MAX))))
    return lut


def softmax_luts(ulp=0):
    """TFLite Micro's softmax Prepare for int16 input: exp on [-10, 0] and 1/(1+x) on [0, 1],
    both into [-1, 1) as int16 (range = 65535, an int32 converted to float in the divisions)."""
    rng = F32(65535)
    exp_lut = lut_populate(F32(F32(10) / rng), INT16_MAX, F32(F32(2) / rng), 0, expf, ulp)
    recip_lut = lut_populate(F32(F32(1) / rng), INT16_MIN, F32(F32(2) / rng), 0, recip, ulp)
    return exp_lut, recip_lut


EXP_LUT, RECIP_LUT = softmax_luts()


def check_luts():
    """The tables do not depend on the float details a device's build may differ in."""
    assert len(EXP_LUT) == len(RECIP_LUT) == 513
    # exp off by one float32 ulp either way (a libm's expf that is not correctly
    # rounded) gives the same table; 1/(1+x) is IEEE division and addition.
    for ulp in (-1, 1):
        assert softmax_luts(ulp)[0] == EXP_LUT
    assert all(a <= b for a, b in zip(EXP_LUT, EXP_LUT[1:])) and EXP_LUT[0] > 0 and EXP_LUT[-1] == INT16_MAX
    assert all(a >= b for a, b in zip(RECIP_LUT, RECIP_LUT[1:])) and RECIP_LUT[0] == INT16_MAX
    assert RECIP_LUT[-1] == 16384


def lut_lookup(value, lut):
    """LUTLookup(int16_t, const int16_t*): the top 9 bits index, the low 7 interpolate."""
    index = 256 + (value >> 7)
    assert 0 <= index < 512
    offset = value & 0x7f
    base = lut[index]
    slope = wrap16(lut[index + 1] - lut[index])
    delta = (slope * offset + 64) >> 7
    return wrap16(base + delta)


# --- TFLite's integer kernels ----------------------------------------------------------

TIES = {"requantize_negative": 0, "softmax_output": 0}  # exact halves met (make_cases asserts both)


def mbqm64(x, mult):
    """MultiplyByQuantizedMultiplier(int64_t x, ...): the multiplier rounded to 16 bits, one
    rounding shift, the int64 result converted to int32 (wrapping, as the hardware does)."""
    m, shift = mult
    assert -(1 << 47) <= x < (1 << 47) and -31 <= shift <= 7
    reduced = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    total_shift = 15 - shift
    TIES["requantize_negative"] += x < 0 and (x * reduced) % (1 << total_shift) == 1 << (total_shift - 1)
    return tfl.wrap32((x * reduced + (1 << (total_shift - 1))) >> total_shift)


def count_leading_zeros32(x):
    assert 0 < x <= UINT32_MAX
    return 32 - x.bit_length()


def softmax_int16(row, beta):
    """reference_ops::SoftmaxInt16, one row: outputs in [0, 32767] (scale 1/32768)."""
    max_in_row = max([INT16_MIN] + list(row))
    exps = []
    for x in row:
        input_diff = x - max_in_row                                   # [-65535, 0]
        scaled_diff = tfl.multiply_by_quantized_multiplier(input_diff, beta)
        sym_scaled_diff = clamp(tfl.wrap32(scaled_diff + 32767), INT16_MIN, INT16_MAX)
        exps.append(lut_lookup(sym_scaled_diff, EXP_LUT))
    sum_of_exps = tfl.i32(sum(exps))                                  # Q16.15
    headroom_plus_one = count_leading_zeros32(sum_of_exps)
    shifted_sum = ((sum_of_exps << (headroom_plus_one - 1)) + (1 << 13)) >> 14
    sym_shifted_sum = clamp(shifted_sum - ((1 << 15) + (1 << 16)), INT16_MIN, INT16_MAX)
    reciprocal_scale = lut_lookup(sym_shifted_sum, RECIP_LUT)
    right_shift = 31 - headroom_plus_one
    TIES["softmax_output"] += sum((e * reciprocal_scale) % (1 << right_shift) == 1 << (right_shift - 1) for e in exps)
    out = [clamp((e * reciprocal_scale + (1 << (right_shift - 1))) >> right_shift, 0, INT16_MAX) for e in exps]
    return out


# --- TFLite's Prepare(): the plan ------------------------------------------------------

def plan(c):
    n, m, dk, dv, hq, hkv = c["dims"]
    if c["softmax_scale"] is None:
        beta = float(F32(1.0) / np.sqrt(F32(dk)))
    else:
        beta = float(F32(c["softmax_scale"]))
    plans = []
    for h in range(hq):
        kv = h // (hq // hkv)

        def pick(t, head):
            sc = c[t]
            return float(F32(sc[0 if len(sc) == 1 else head]))
        sq, sk, sv, sy, ss = pick("q", h), pick("k", kv), pick("v", kv), pick("y", h), pick("scores", h)
        scores = tfl.quantize_multiplier(sq * sk / ss)                       # GetQuantizedConvolutionMultipler
        beta_mult = tfl.quantize_multiplier(ss * beta / (10.0 / 65535.0))   # softmax_common.cc, int16 input
        output = tfl.quantize_multiplier(float(F32(1.0 / 32768)) * sv / sy)
        assert -31 <= scores[1] <= 7 and -31 <= output[1] <= 7 and -31 <= beta_mult[1] <= 30
        plans.append(dict(scores=scores, beta=beta_mult, output=output))
    return plans


def plan_fields(p):
    """Int16HeadPlan's fields in order: the native multipliers 0, mode 1, then the TFLite ones."""
    return [0, 0, 0, 0, 1, p["scores"][0], p["scores"][1], p["beta"][0], p["beta"][1], p["output"][0],
            p["output"][1]]


# --- the graph ---------------------------------------------------------------------------

class Stats:
    """What the cases exercise (asserted in make_cases)."""
    def __init__(self):
        self.past_contract = 0   # rows whose weights sum past KernelsI16::weighted_sum's bound
        self.masked = 0          # masked keys (score -32768)
        self.empty_rows = 0      # rows with no visible key
        self.clamped_scores = 0
        self.clamped_y = 0
        self.exp_floor = 0       # keys whose scaled difference is below -10 (the table's first entry)
        self.wrapped = 0         # keys whose difference times 2^shift wrapped in int32 (scaled above 0)


def forward(c, plans, stats):
    n, m, dk, dv, hq, hkv = c["dims"]
    assert m <= MAX_M
    q = [int(x) for x in c["q_data"]]
    k = [int(x) for x in c["k_data"]]
    v = [int(x) for x in c["v_data"]]
    y = [0] * (hq * n * dv)
    w = [0] * (hq * n * m)
    for h in range(hq):
        p = plans[h]
        kv = h // (hq // hkv)
        for i in range(n):
            row = h * n + i
            lo, hi = native.key_range(c["mask"], i, n, m)
            qi = q[row * dk:(row + 1) * dk]
            scores = []
            visible = [lo <= j < hi and native.kept(c, h, i, j) for j in range(m)]
            stats.empty_rows += not any(visible)
            for j in range(m):
                if visible[j]:
                    kj = k[(kv * m + j) * dk:(kv * m + j + 1) * dk]
                    acc = sum(a * b for a, b in zip(qi, kj))                 # int64
                    s = mbqm64(acc, p["scores"])
                    stats.clamped_scores += not INT16_MIN <= s <= INT16_MAX
                    scores.append(clamp(s, INT16_MIN, INT16_MAX))
                else:
                    scores.append(INT16_MIN)  # a large negative mask added, saturated
                    stats.masked += 1
            mx = max(scores)
            for s in scores:
                scaled = tfl.multiply_by_quantized_multiplier(s - mx, p["beta"])
                stats.exp_floor += scaled + 32767 < INT16_MIN
                stats.wrapped += scaled > 0
            probs = softmax_int16(scores, p["beta"])
            stats.past_contract += sum(probs) > 32768 + m // 2
            for j in range(m):
                w[row * m + j] = probs[j]
            for col in range(dv):
                acc = sum(probs[j] * v[(kv * m + j) * dv + col] for j in range(m))  # int64
                yc = mbqm64(acc, p["output"])
                stats.clamped_y += not INT16_MIN <= yc <= INT16_MAX
                y[row * dv + col] = clamp(yc, INT16_MIN, INT16_MAX)
    return y, w


# --- the cases -----------------------------------------------------------------------------

def calibrate(c, per_head):
    """Scales as a converter calibrates them on the case's own data: symmetric, max / 32767 for
    the score tensor (visible scores only) and for Y (float attention of the dequantized inputs)."""
    n, m, dk, dv, hq, hkv = c["dims"]
    beta = float(F32(1.0) / np.sqrt(F32(dk))) if c["softmax_scale"] is None else float(F32(c["softmax_scale"]))
    q = c["q_data"].astype(np.int64).reshape(hq, n, dk)
    k = c["k_data"].astype(np.int64).reshape(hkv, m, dk)
    v = c["v_data"].astype(np.float64).reshape(hkv, m, dv)
    smax, ymax = [], []
    for h in range(hq):
        kv = h // (hq // hkv)
        sq, sk, sv = (float(F32(c[t][0 if len(c[t]) == 1 else hh])) for t, hh in (("q", h), ("k", kv), ("v", kv)))
        raw = (q[h] @ k[kv].T).astype(np.float64) * sq * sk
        vis = np.array([[native.key_range(c["mask"], i, n, m)[0] <= j < native.key_range(c["mask"], i, n, m)[1]
                         and native.kept(c, h, i, j) for j in range(m)] for i in range(n)])
        smax.append(np.abs(raw[vis]).max() if vis.any() else 1.0)
        logits = np.where(vis, raw * beta, -np.inf)
        rows = vis.any(axis=1)
        a = np.zeros_like(raw)
        a[rows] = np.exp(logits[rows] - logits[rows].max(axis=1, keepdims=True))
        a[rows] /= a[rows].sum(axis=1, keepdims=True)
        ymax.append(np.abs(a @ (v[kv] * sv)).max())
    if per_head:
        c["scores"] = [float(F32(x / 32767)) for x in smax]
        c["y"] = [float(F32(x / 32767)) for x in ymax]
    else:
        c["scores"] = [float(F32(max(smax) / 32767))]
        c["y"] = [float(F32(max(ymax) / 32767))]


def make_cases():
    cases = []

    def case(name, dims, seed, scales=None, softmax_scale=0.25, mask=None, fill=None, per_head=False,
             lo=-32768, hi=32768):
        """scales: q, k, v (and y, scores: else calibrated on the data)."""
        n, m, dk, dv, hq, hkv = dims
        rng = np.random.default_rng(seed)
        c = {"name": name, "dims": dims, "softmax_scale": softmax_scale, "mask": mask or {}}
        scales = scales or {"q": 0.05 / 256, "k": 0.04 / 256, "v": 0.05 / 256}
        heads = {"q": hq, "k": hkv, "v": hkv, "y": hq, "scores": hq}
        for t in ("q", "k", "v", "y", "scores"):
            if t in scales:
                c[t] = [float(F32(scales[t] * (1.0 + 0.25 * hh))) for hh in range(heads[t] if per_head else 1)]
        sizes = {"q": hq * n * dk, "k": hkv * m * dk, "v": hkv * m * dv}
        for t in "qkv":
            c[t + "_data"] = rng.integers(lo, hi, size=sizes[t]).astype(np.int16)
        if fill:
            fill(c, rng)
        if "scores" not in c:
            calibrate(c, per_head)
        cases.append(c)
        return c

    case("odd Dk and Dv", (4, 6, 7, 5, 1, 1), 1, lo=-12000, hi=12000)
    case("GQA (Hq 4, Hkv 2), per-head scales", (3, 7, 9, 3, 4, 2), 2, per_head=True, lo=-9000, hi=9000)
    case("causal bottom-right, GQA", (5, 8, 8, 6, 4, 2), 3, mask={"causal": 2}, lo=-15000, hi=15000)
    case("causal top-left, per head", (4, 4, 5, 4, 2, 2), 4, mask={"causal": 1}, per_head=True)

    def keep_bytes(c, rng):
        n, m, _, _, hq, _ = c["dims"]
        keep = (rng.random(hq * n * m) < 0.6).astype(np.uint8)
        keep[1 * m:2 * m] = 0  # row 1 of head 0 sees nothing: every score -32768, a uniform softmax
        c["mask"]["keep"] = keep
    case("keep bytes per head, a fully masked row", (4, 10, 8, 6, 2, 2), 5,
         mask={"keep_kind": 1, "head_stride": 4 * 10}, fill=keep_bytes, lo=-20000, hi=20000)

    def keep_bits(c, rng):
        n, m = c["dims"][0], c["dims"][1]
        c["mask"]["keep"] = rng.integers(0, 256, size=n * ((m + 7) // 8)).astype(np.uint8)
    case("keep bits", (5, 13, 6, 4, 2, 1), 6, mask={"keep_kind": 2}, fill=keep_bits, lo=-20000, hi=20000)
    case("window and kv_len", (6, 9, 7, 5, 1, 1), 7, mask={"window": (1, 2, 1), "kv_len": 7}, lo=-20000, hi=20000)

    def extremes(c, rng):
        for t in "qkv":
            c[t + "_data"][:] = np.where(rng.random(c[t + "_data"].size) < 0.5, INT16_MIN, INT16_MAX)
    case("full-range values (int16 extremes, Dk 64)", (3, 5, 64, 4, 1, 1), 8, fill=extremes)
    # a coarse score tensor: scaled differences below -10 land on the exp table's first entry
    case("peaked rows (scores scale coarse, beta 4)", (3, 12, 16, 5, 1, 1), 9, softmax_scale=4.0,
         scales={"q": 1e-3, "k": 1e-3, "v": 1e-4, "y": 1e-4, "scores": 0.5})
    case("saturating scores and output", (4, 8, 8, 6, 1, 1), 10,
         scales={"q": 1e-3, "k": 1e-3, "v": 1e-3, "y": 1e-5, "scores": 2e-3}, lo=-30000, hi=30000)
    # sq * sk / s_scores = 12.5: QuantizeMultiplier's shift 4, a left shift in the int64 requantization
    case("score multiplier above 1", (3, 6, 3, 4, 1, 1), 11,
         scales={"q": 0.01, "k": 0.01, "v": 0.05, "y": 0.04, "scores": 8e-6}, lo=-40, hi=41)
    # s_scores * beta / (10 / 65535) = 4.9: the softmax's MBQM shifts left
    case("softmax multiplier with a left shift", (2, 7, 6, 4, 1, 1), 12, softmax_scale=0.5,
         scales={"q": 1e-3, "k": 1e-3, "v": 1e-3, "y": 1e-3, "scores": 1.5e-3}, lo=-300, hi=300)
    # s_scores * beta / (10 / 65535) = 65535: shift 16, so differences of 32768 score steps
    # or more wrap in int32 (TFLite's x * (1 << 16) on hardware) and clamp at either end
    def wrapping(c, rng):
        c["q_data"][:] = 1
        c["k_data"][:] = [30000, -30000, 10000, -5000, 29999, -32768]
    case("softmax multiplier 2^16 (a left shift that wraps)", (1, 6, 1, 3, 1, 1), 19, softmax_scale=16.0,
         scales={"q": 0.625, "k": 1.0, "v": 0.01, "y": 0.01, "scores": 0.625}, fill=wrapping)
    case("default softmax scale", (2, 5, 10, 3, 1, 1), 13, softmax_scale=None, lo=-20000, hi=20000)
    case("long row", (2, 300, 16, 8, 1, 1), 14, lo=-20000, hi=20000)

    def equal_keys(c, rng):
        c["k_data"][:] = np.tile(c["k_data"][:4], 600)
    case("600 equal keys", (1, 600, 4, 3, 1, 1), 15, fill=equal_keys)

    # Two keys, the second d score steps below the first: scores are q * k exactly (score
    # multiplier 1) and the softmax multiplier is about 1 (scaled difference about -d). The
    # first d whose row has the property is searched.
    def two_keys(wanted):
        def fill(c, rng):
            beta = plan(c)[0]["beta"]
            d = next(d for d in range(1, 65536) if wanted(d, beta))
            c["q_data"][:] = 1
            c["k_data"][:] = [0, -d]
        return fill
    two = dict(softmax_scale=0.625, scales={"q": 2**-6, "k": 2**-6, "v": 0.01, "y": 0.01, "scores": 2**-12})
    # weights summing to more than 32768 + M/2: past KernelsI16::weighted_sum's contract,
    # so the forward takes its int64 P.V loop
    case("two keys whose weights sum past 32768 + M/2", (1, 2, 1, 3, 1, 1), 16, **two,
         fill=two_keys(lambda d, beta: sum(softmax_int16([0, -d], beta)) > 32768 + 1))

    def output_tie(d, beta):
        before = TIES["softmax_output"]
        softmax_int16([0, -d], beta)
        return TIES["softmax_output"] > before
    case("a softmax output exactly halfway (rounded up)", (1, 2, 1, 3, 1, 1), 18, **two, fill=two_keys(output_tie))
    case("single element", (1, 1, 1, 1, 1, 1), 17)
    return cases


# --- output --------------------------------------------------------------------------------

def render(cases):
    out = ["// Generated by tests/quant/gen_tflite16_vectors.py (Python integers); do not edit.",
           "// Inputs, plans and expected outputs of tinyattn's int16 TFLite mode.",
           "#pragma once", "", "#include <cstddef>", "#include <cstdint>", "", "namespace golden_tflite_i16 {", ""]
    table = []
    stats = Stats()
    for k in TIES:
        TIES[k] = 0
    for idx, c in enumerate(cases):
        n, m, dk, dv, hq, hkv = c["dims"]
        plans = plan(c)
        y, w = forward(c, plans, stats)
        p = f"c{idx}_"
        for t in ("q", "k", "v", "y", "scores"):
            out.append(native.c_floats(p + t + "_scale", c[t]))
        for t in "qkv":
            out.append(native.c_array("int16_t", p + t, c[t + "_data"], per_line=16))
        flat = []
        for pl in plans:
            flat += plan_fields(pl)
        out.append(native.c_array("int32_t", p + "plan", flat, per_line=11))
        out.append(native.c_array("int16_t", p + "y", y, per_line=16))
        out.append(native.c_array("uint16_t", p + "weights", w, per_line=16))
        mask = c["mask"]
        keep = "nullptr"
        if mask.get("keep_kind", 0):
            out.append(native.c_array("uint8_t", p + "keep", mask["keep"]))
            keep = p + "keep"
        left, right, align = mask.get("window", (native.INT32_MAX, native.INT32_MAX, 0))
        ss = c["softmax_scale"]
        table.append(
            f"    {{\"{c['name']}\", {{{n}, {m}, {dk}, {dv}, {hq}, {hkv}}}, {0 if ss is None else 1}, "
            f"{float(F32(ss if ss is not None else 0)).hex()}f,\n"
            f"     {{{p}q_scale, {p}k_scale, {p}v_scale, {p}y_scale, {p}scores_scale}},\n"
            f"     {{{len(c['q'])}, {len(c['k'])}, {len(c['v'])}, {len(c['y'])}, {len(c['scores'])}}},\n"
            f"     {mask.get('causal', 0)}, {left}, {right}, {align}, {mask.get('kv_len', UINT32_MAX)}u, "
            f"{mask.get('keep_kind', 0)}, {keep}, {mask.get('head_stride', 0)},\n"
            f"     {p}q, {p}k, {p}v, {p}plan, {p}y, {p}weights}},")
    # Each case is there for something; a change of the data must not drop it.
    assert stats.past_contract >= 1, "no row takes the int64 P.V loop"
    assert stats.empty_rows >= 1 and stats.masked > 0
    assert stats.clamped_scores > 0 and stats.clamped_y > 0 and stats.exp_floor > 0 and stats.wrapped > 0
    assert TIES["requantize_negative"] > 0 and TIES["softmax_output"] > 0, TIES
    out += ["struct Case {",
            "  const char* name;",
            "  size_t dims[6];  // n, m, dk, dv, hq, hkv",
            "  int has_softmax_scale;",
            "  float softmax_scale;",
            "  const float* scale[5];       // q, k, v, y, scores",
            "  size_t count[5];",
            "  int causal;                  // 0 none, 1 top-left, 2 bottom-right",
            "  int32_t window_left, window_right;",
            "  int window_align;            // 0 top-left, 1 bottom-right",
            "  uint32_t kv_len;",
            "  int keep_kind;               // 0 none, 1 bytes, 2 bits",
            "  const uint8_t* keep;",
            "  size_t head_stride;",
            "  const int16_t *q, *k, *v;",
            "  const int32_t* plan;         // per query head: Int16HeadPlan's 11 fields in order",
            "  const int16_t* y;",
            "  const uint16_t* weights;     // the int16 softmax output, in [0, 32767]",
            "};", "",
            "static const Case kCases[] = {"] + table + ["};", "", "}  // namespace golden_tflite_i16", ""]
    return "\n".join(out)


def render_luts():
    def table(name, lut, what):
        rows = [", ".join(f"{x}" for x in lut[i:i + 16]) for i in range(0, len(lut), 16)]
        body = ",\n    ".join(rows)
        return f"// {what}\ninline constexpr int16_t {name}[kTflite16LutSize] = {{\n    {body}}};\n"
    out = ["// Generated by tests/quant/gen_tflite16_vectors.py; do not edit.",
           "// The two tables TFLite Micro's int16 Softmax fills in its Prepare()",
           "// (LUTPopulate<int16_t> in float: 512 samples of the function, each",
           "// biased by half the interpolation error at the midpoint, and the end",
           "// value), computed once here so devices need no exp at run time.",
           "// Int16Mode::kTflite reads them with TFLite's LUTLookup.",
           "#pragma once", "", "#include <cstddef>", "#include <cstdint>", "",
           "namespace tinyattn::tflite_ops {", "",
           "inline constexpr size_t kTflite16LutSize = 513;", "",
           table("kTflite16ExpLut", EXP_LUT, "exp(x) for x = -10 + 10 i / 512 (the scaled score difference), Q0.15."),
           table("kTflite16OneOverOnePlusXLut", RECIP_LUT, "1 / (1 + x) for x = i / 512, Q0.15."),
           "}  // namespace tinyattn::tflite_ops", ""]
    return "\n".join(out)


# --- TFLite Micro's own int16 softmax tests -------------------------------------------------

def check_tflm_softmax_tests():
    """softmax_test.cc of TFLite Micro: input scale 0.1, beta 1, output 1/32768; the int16
    outputs must be within its tolerances of the float goldens (1 for 1-D and 2-D, 7 for 3-D)."""
    rows_1d = [[1.0, 2.0, 3.0, 4.0, 5.0], [-1.0, -2.0, -3.0, -4.0, -5.0]]
    rows_3d = [[3, 6, -5, 4, -9], [-10, -10, -8, 2, 2], [8, -5, -8, 5, -6], [-8, 6, 1, -10, -8],
               [7, 6, -10, -4, -5], [2, 7, 9, -9, 7], [-4, -2, 8, 2, 2], [3, 6, 6, 2, 4],
               [9, 7, -7, 0, 4], [-3, 8, 8, -3, -4], [-9, -9, 4, -8, -1], [-10, -2, 6, -7, 0]]
    beta = tfl.quantize_multiplier(float(F32(0.1)) * 1.0 / (10.0 / 65535.0))
    for rows, tol in ((rows_1d, 1), (rows_3d, 7)):
        for r in rows:
            x = [int(round(v / float(F32(0.1)))) for v in r]
            e = np.exp(np.array(r, dtype=np.float64) - max(r))
            gold = [int(round(g * 32768)) for g in e / e.sum()]
            got = softmax_int16(x, beta)
            assert all(abs(a - b) <= tol for a, b in zip(got, gold)), (r, got, gold)


# --- error against float64 (docs/quant.md) ----------------------------------------------------

def measure():
    """TFLite 16x8 mode and the native int16 mode against float64 attention of the dequantized
    int16 inputs."""
    import gen_int16_vectors as native16  # noqa: E402  (the native int16 model, for comparison)
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
            s = float(F32(np.abs(x).max() / 32767))
            return s, np.clip(np.round(x / s), -32767, 32767).astype(np.int16)
        sq, q16 = quant(qf)
        sk, k16 = quant(kf)
        sv, v16 = quant(vf)
        beta = float(F32(1.0) / np.sqrt(F32(dk)))
        raw = (q16.astype(np.int64) @ k16.astype(np.int64).T).astype(np.float64) * sq * sk
        mask = {"causal": cfg["causal"]} if cfg["causal"] else {}
        vis = np.array([[native.key_range(mask, i, n, m)[0] <= j < native.key_range(mask, i, n, m)[1]
                         for j in range(m)] for i in range(n)])
        logits = np.where(vis, raw * beta, -np.inf)
        a = np.exp(logits - logits.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        y_true = a @ (v16.astype(np.float64) * sv)
        sy = float(F32(np.abs(y_true).max() / 32767))
        ss = float(F32(np.abs(raw[vis]).max() / 32767))
        c = {"dims": (n, m, dk, dv, 1, 1), "softmax_scale": beta, "mask": mask, "q_data": q16.ravel(),
             "k_data": k16.ravel(), "v_data": v16.ravel(), "q": [sq], "k": [sk], "v": [sv], "y": [sy],
             "scores": [ss]}
        yt, wt = forward(c, plan(c), Stats())
        yn, wn = native16.forward(c, native16.plan(c), native16.Stats())
        for mode, y, w in (("native", yn, wn), ("TFLite", yt, wt)):
            err = np.abs(np.array(y, dtype=np.float64).reshape(n, dv) - y_true / sy)
            werr = np.abs(np.array(w, dtype=np.float64).reshape(n, m) / 32768.0 - a).max()
            print(f"| {label} ({n}, {m}, {dk}, {dv}) | {mode} | {err.max():.2f} | {err.mean():.2f} | {werr:.2e} |")


def main():
    check_luts()
    check_tflm_softmax_tests()
    if "--measure" in sys.argv[1:]:
        measure()
        return 0
    outputs = ((OUT, render(make_cases())), (LUT_OUT, render_luts()))
    if "--check" in sys.argv[1:]:
        bad = 0
        for path, text in outputs:
            with open(path) as f:
                if f.read() != text:
                    print(f"{os.path.basename(path)} differs from what gen_tflite16_vectors.py generates",
                          file=sys.stderr)
                    bad = 1
        if not bad:
            print("golden_tflite_i16.h and tflite_i16_luts.h match the generator")
        return bad
    for path, text in outputs:
        with open(path, "w") as f:
            f.write(text)
        print("wrote", os.path.normpath(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
