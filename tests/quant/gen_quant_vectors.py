#!/usr/bin/python3
"""Golden vectors for tinyattn's int8 path.

Implements the integer algorithm of docs/quant.md in NumPy (int64/uint64
arithmetic, the same operations in the same order as lib/src/forward_i8.cc)
and writes inputs, plans and the expected output bytes to golden_i8.h.
The arithmetic is integer, plus single correctly rounded float operations in
plan() (no BLAS, no CPU-dispatched float64 exp/log or sums), so the file is
byte-identical on every machine; keep it that way.

  gen_quant_vectors.py            rewrite tests/quant/golden_i8.h
  gen_quant_vectors.py --check    exit 1 if the committed file differs
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "golden_i8.h")

# --- the integer algorithm -------------------------------------------------

EXP2_TABLE = np.array([
    1073741824, 1097253708, 1121280436, 1145833280, 1170923762, 1196563654, 1222764986, 1249540052,
    1276901417, 1304861917, 1333434672, 1362633090, 1392470869, 1422962010, 1454120821, 1485961921,
    1518500250, 1551751076, 1585730000, 1620452965, 1655936265, 1692196547, 1729250827, 1767116489,
    1805811301, 1845353420, 1885761398, 1927054196, 1969251188, 2012372174, 2056437387, 2101467502],
    dtype=np.int64)
LN2_Q30 = 744261118
THIRD_Q30 = 357913941
ONE_Q30 = 1 << 30
LOG2E = 1.4426950408889634
FRAC = 26
INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1


def check_tables():
    """The constants are the rounded values of their definitions."""
    from decimal import Decimal, getcontext, ROUND_FLOOR
    getcontext().prec = 60
    two30 = Decimal(2) ** 30
    for i, t in enumerate(EXP2_TABLE):
        want = ((Decimal(2) ** (Decimal(i) / 32)) * two30 + Decimal("0.5")).to_integral_value(ROUND_FLOOR)
        assert int(want) == int(t), i
    assert int((Decimal(2).ln() * two30 + Decimal("0.5")).to_integral_value(ROUND_FLOOR)) == LN2_Q30
    assert int((two30 / 3 + Decimal("0.5")).to_integral_value(ROUND_FLOOR)) == THIRD_Q30


def rounding_rshift(x, s):
    """x * 2^-s, to nearest, ties away from zero (elementwise, int64 in and out)."""
    x = np.asarray(x, dtype=np.int64)
    s = int(s)
    if s <= 0:
        return x
    half = np.uint64(1 << (s - 1))
    mag = np.where(x >= 0, x, -(x + 1)).astype(np.uint64) + np.where(x >= 0, 0, 1).astype(np.uint64)
    r = ((mag + half) >> np.uint64(s)).astype(np.int64)
    return np.where(x >= 0, r, -r)


def apply(mult, x):
    m, s = mult
    return rounding_rshift(np.asarray(x, dtype=np.int64) * np.int64(m), s)


def exp2_q30(u):
    u = np.asarray(u, dtype=np.int64)
    out = np.zeros(u.shape, dtype=np.int64)
    for idx, uu in np.ndenumerate(u):
        uu = int(uu)
        if uu >= 0:
            out[idx] = ONE_Q30
            continue
        nu = -uu
        n = (nu + (1 << FRAC) - 1) >> FRAC
        if n > 62:
            continue
        f = (n << FRAC) - nu
        i, r = f >> 21, f & ((1 << 21) - 1)
        z = int(rounding_rshift(r * LN2_Q30, FRAC))
        t = ONE_Q30 + int(rounding_rshift(z * THIRD_Q30, 30))
        t = ONE_Q30 + int(rounding_rshift(z * t, 31))
        t = ONE_Q30 + int(rounding_rshift(z * t, 30))
        val = int(rounding_rshift(int(EXP2_TABLE[i]) * t, 30))
        out[idx] = int(rounding_rshift(val, n))
    return out


def make_multiplier(real):
    assert math.isfinite(real) and real > 0
    f, e = math.frexp(real)
    m = math.floor(f * 2147483648.0 + 0.5)
    if m == 1 << 31:
        m >>= 1
        e += 1
    shift = 31 - e
    assert 0 <= shift <= 62, real
    return (m, shift)


MIN_LOGIT_SHIFT = 2


def plan(c):
    d = c["dims"]
    n, m, dk, dv, hq, hkv = d
    if c["softmax_scale"] is None:
        ss = np.float32(1.0) / np.sqrt(np.float32(dk))
    else:
        ss = np.float32(c["softmax_scale"])
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
        logit = float(ss) * sq * sk * LOG2E * 67108864.0
        output = sv / (sy * 32768.0)
        lm = make_multiplier(logit)
        assert lm[1] >= MIN_LOGIT_SHIFT
        bm, zb = (0, 0), 0
        if c.get("bias"):
            sb, zb = pick("bias", h)
            bm = make_multiplier(sb * LOG2E * 67108864.0)
        plans.append((lm, make_multiplier(output), bm, zq, zk, zv, zy, zb))
    return plans


def key_range(mask, i, n, m):
    lo, hi = 0, m
    causal = mask.get("causal", 0)  # 0 none, 1 top-left, 2 bottom-right
    if causal:
        p = i if causal == 1 else i + m - n
        hi = min(hi, p + 1)
    left, right, align = mask.get("window", (INT32_MAX, INT32_MAX, 0))
    if left != INT32_MAX or right != INT32_MAX:
        p = i if align == 0 else i + m - n
        if left != INT32_MAX:
            lo = max(lo, p - left)
        if right != INT32_MAX:
            hi = min(hi, p + right + 1)
    kv_len = mask.get("kv_len", UINT32_MAX)
    if kv_len != UINT32_MAX:
        hi = min(hi, kv_len)
    lo = max(lo, 0)
    hi = max(hi, lo)
    return lo, hi


def kept(c, h, i, j):
    mask = c["mask"]
    kind = mask.get("keep_kind", 0)
    if kind == 0:
        return True
    n, m = c["dims"][0], c["dims"][1]
    off = h * mask.get("head_stride", 0)
    keep = mask["keep"]
    if kind == 1:
        return keep[off + i * m + j] != 0
    row = off + i * ((m + 7) // 8)
    return (keep[row + (j >> 3)] >> (j & 7)) & 1


def forward(c, plans):
    n, m, dk, dv, hq, hkv = c["dims"]
    q = c["q_data"].astype(np.int64).reshape(hq, n, dk)
    k = c["k_data"].astype(np.int64).reshape(hkv, m, dk)
    v = c["v_data"].astype(np.int64).reshape(hkv, m, dv)
    y = np.zeros((hq, n, dv), dtype=np.int64)
    w = np.zeros((hq, n, m), dtype=np.int64)
    bias = c.get("bias_data")
    stride = c["mask"].get("head_stride", 0)
    for h in range(hq):
        (lm, om, bm, zq, zk, zv, zy, zb) = plans[h]
        kv = h // (hq // hkv)
        for i in range(n):
            lo, hi = key_range(c["mask"], i, n, m)
            js = [j for j in range(lo, hi) if kept(c, h, i, j)]
            if not js:
                y[h, i, :] = zy
                continue
            js = np.array(js)
            s = ((q[h, i] - zq)[None, :] * (k[kv, js] - zk)).sum(axis=1)
            assert np.all(np.abs(s) < 2**31)
            logit = apply(lm, s)
            if bias is not None:
                b = bias[h * stride + i * m + js].astype(np.int64)
                logit = logit + apply(bm, b - zb)
            e = exp2_q30(logit - logit.max())
            total = int(e.sum())
            p = (e * 32768 + total // 2) // total
            w[h, i, js] = p
            acc = (p[:, None] * (v[kv, js] - zv)).sum(axis=0)
            y[h, i] = np.clip(zy + apply(om, acc), -128, 127)
    return y.astype(np.int8).ravel(), w.astype(np.uint16).ravel()


# --- the cases ---------------------------------------------------------------

def make_cases():
    cases = []

    def case(name, dims, scales, zps, seed, softmax_scale=0.25, mask=None, fill=None, per_head=False, bias=None):
        n, m, dk, dv, hq, hkv = dims
        rng = np.random.default_rng(seed)
        c = {"name": name, "dims": dims, "softmax_scale": softmax_scale, "mask": mask or {}}
        heads = {"q": hq, "k": hkv, "v": hkv, "y": hq}
        for t in "qkvy":
            cnt = heads[t] if per_head else 1
            sc = [float(np.float32(scales[t] * (1.0 + 0.25 * h))) for h in range(cnt)]
            zp = [int(zps[t] - 3 * h) if zps[t] else 0 for h in range(cnt)]
            c[t] = (sc, zp)
        sizes = {"q": hq * n * dk, "k": hkv * m * dk, "v": hkv * m * dv}
        for t in "qkv":
            c[t + "_data"] = rng.integers(-128, 128, size=sizes[t]).astype(np.int8)
        if bias:  # (scale, zero point, per head) of an int8 additive bias [hq or 1][n][m]
            sb, zb, bias_per_head = bias
            cnt = hq if bias_per_head else 1
            c["bias"] = ([float(np.float32(sb * (1.0 + 0.5 * h))) for h in range(cnt)], [zb + h for h in range(cnt)])
            c["bias_data"] = rng.integers(-128, 128, size=cnt * n * m).astype(np.int8)
            if bias_per_head:
                c["mask"]["head_stride"] = n * m
        if fill:
            fill(c, rng)
        cases.append(c)

    s0 = {"q": 0.02, "k": 0.03, "v": 0.05, "y": 0.05}
    z0 = {"q": 0, "k": 0, "v": 0, "y": 0}
    z1 = {"q": 5, "k": -7, "v": 11, "y": -4}
    case("basic", (4, 6, 8, 5, 1, 1), s0, z0, 1)
    case("zero points, per head, GQA", (3, 7, 9, 4, 4, 2), s0, z1, 2, per_head=True)
    case("causal top-left", (5, 5, 8, 6, 2, 2), s0, z1, 3, mask={"causal": 1})
    case("causal bottom-right", (3, 8, 8, 6, 2, 1), s0, z1, 4, mask={"causal": 2})
    case("window and kv_len", (6, 9, 7, 5, 1, 1), s0, z0, 5,
         mask={"window": (1, 2, 1), "kv_len": 7})
    def keep_bytes(c, rng):
        n, m, _, _, hq, _ = c["dims"]
        keep = (rng.random(hq * n * m) < 0.6).astype(np.uint8)
        keep[1 * m:2 * m] = 0  # row 1 of head 0 sees nothing
        c["mask"]["keep"] = keep
    case("keep bytes per head, a fully masked row", (4, 10, 8, 6, 2, 2), s0, z1, 6,
         mask={"keep_kind": 1, "head_stride": 4 * 10}, fill=keep_bytes)
    def keep_bits(c, rng):
        n, m = c["dims"][0], c["dims"][1]
        c["mask"]["keep"] = rng.integers(0, 256, size=n * ((m + 7) // 8)).astype(np.uint8)
    case("keep bits", (5, 13, 6, 4, 2, 1), s0, z0, 7, mask={"keep_kind": 2}, fill=keep_bits)
    case("large logits (peaked softmax)", (4, 9, 16, 5, 1, 1),
         {"q": 0.5, "k": 0.5, "v": 0.05, "y": 0.03}, z0, 8)
    def equal_keys(c, rng):
        c["k_data"][:] = np.tile(c["k_data"][:8], 6)
    case("all-equal logits", (3, 6, 8, 4, 1, 1), s0, z1, 9, fill=equal_keys)
    case("saturating output", (4, 8, 8, 6, 1, 1), {"q": 0.02, "k": 0.03, "v": 0.5, "y": 0.01}, z1, 10)
    def extremes(c, rng):
        for t in "qkv":
            c[t + "_data"][:] = np.where(rng.random(c[t + "_data"].size) < 0.5, -128, 127)
    case("extreme inputs with opposite zero points", (3, 5, 12, 4, 1, 1),
         {"q": 0.02, "k": 0.03, "v": 0.05, "y": 0.05}, {"q": 127, "k": -128, "v": 127, "y": 0}, 11,
         fill=extremes)
    case("default softmax scale", (2, 5, 10, 3, 1, 1), s0, z1, 12, softmax_scale=None)
    case("long row", (2, 100, 16, 8, 1, 1), {"q": 0.01, "k": 0.01, "v": 0.05, "y": 0.02}, z0, 13)
    case("single element", (1, 1, 1, 1, 1, 1), s0, z1, 14)
    case("int8 bias, per tensor", (4, 9, 8, 5, 1, 1), s0, z1, 15, bias=(0.05, 3, False))
    def alibi(c, rng):  # a linear position bias, steeper per head, under a causal mask
        n, m, _, _, hq, _ = c["dims"]
        b = np.zeros((hq, n, m), dtype=np.int64)
        for h in range(hq):
            for i in range(n):
                b[h, i] = np.clip(-(h + 1) * np.abs(i + m - n - np.arange(m)), -128, 127)
        c["bias_data"] = b.astype(np.int8).ravel()
    case("int8 bias per head (ALiBi-like), causal, GQA", (5, 8, 8, 4, 4, 2), s0, z1, 16,
         mask={"causal": 2}, bias=(0.25, 0, True), fill=alibi)
    def bias_bits(c, rng):
        n, m = c["dims"][0], c["dims"][1]
        c["mask"]["keep"] = rng.integers(0, 256, size=n * ((m + 7) // 8)).astype(np.uint8)
    case("int8 bias with keep bits, large bias scale", (3, 11, 6, 4, 1, 1), s0, z0, 17,
         mask={"keep_kind": 2}, bias=(1.0, -10, False), fill=bias_bits)
    return cases


# --- output ------------------------------------------------------------------

def c_array(ctype, name, values, per_line=24):
    vals = [str(int(x)) for x in np.asarray(values).ravel()]
    lines = [", ".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line)]
    body = ",\n    ".join(lines) if lines else "0"
    return f"static const {ctype} {name}[] = {{\n    {body}}};\n"


def c_floats(name, values):
    body = ", ".join(float(np.float32(x)).hex() + "f" for x in values)
    return f"static const float {name}[] = {{{body}}};\n"


def render(cases):
    out = ["// Generated by tests/quant/gen_quant_vectors.py (NumPy, int64 arithmetic); do not edit.",
           "// Inputs, plans and expected output bytes of tinyattn's int8 path.",
           "#pragma once", "", "#include <cstddef>", "#include <cstdint>", "", "namespace golden_i8 {", ""]
    table = []
    for idx, c in enumerate(cases):
        n, m, dk, dv, hq, hkv = c["dims"]
        plans = plan(c)
        y, w = forward(c, plans)
        p = f"c{idx}_"
        for t in "qkvy":
            out.append(c_floats(p + t + "_scale", c[t][0]))
            out.append(c_array("int32_t", p + t + "_zero", c[t][1]))
        for t in "qkv":
            out.append(c_array("int8_t", p + t, c[t + "_data"]))
        flat = []
        for (lm, om, bm, zq, zk, zv, zy, zb) in plans:
            flat += [lm[0], lm[1], om[0], om[1], bm[0], bm[1], zq, zk, zv, zy, zb]
        out.append(c_array("int32_t", p + "plan", flat, per_line=11))
        bias_ptr, bias_scale, bias_zero, bias_count = "nullptr", "nullptr", "nullptr", 0
        if c.get("bias"):
            out.append(c_floats(p + "bias_scale", c["bias"][0]))
            out.append(c_array("int32_t", p + "bias_zero", c["bias"][1]))
            out.append(c_array("int8_t", p + "bias", c["bias_data"]))
            bias_ptr, bias_scale, bias_zero = p + "bias", p + "bias_scale", p + "bias_zero"
            bias_count = len(c["bias"][0])
        out.append(c_array("int8_t", p + "y", y))
        out.append(c_array("uint16_t", p + "weights", w))
        mask = c["mask"]
        keep = "nullptr"
        if mask.get("keep_kind", 0):
            out.append(c_array("uint8_t", p + "keep", mask["keep"]))
            keep = p + "keep"
        left, right, align = mask.get("window", (INT32_MAX, INT32_MAX, 0))
        ss = c["softmax_scale"]
        table.append(
            f"    {{\"{c['name']}\", {{{n}, {m}, {dk}, {dv}, {hq}, {hkv}}}, {0 if ss is None else 1}, "
            f"{float(np.float32(ss if ss is not None else 0)).hex()}f,\n"
            f"     {{{p}q_scale, {p}k_scale, {p}v_scale, {p}y_scale}},\n"
            f"     {{{p}q_zero, {p}k_zero, {p}v_zero, {p}y_zero}},\n"
            f"     {{{len(c['q'][0])}, {len(c['k'][0])}, {len(c['v'][0])}, {len(c['y'][0])}}},\n"
            f"     {mask.get('causal', 0)}, {left}, {right}, {align}, {mask.get('kv_len', UINT32_MAX)}u, "
            f"{mask.get('keep_kind', 0)}, {keep}, {mask.get('head_stride', 0)},\n"
            f"     {p}q, {p}k, {p}v, {bias_ptr}, {bias_scale}, {bias_zero}, {bias_count},\n"
            f"     {p}plan, {p}y, {p}weights}},")
    out += ["struct Case {",
            "  const char* name;",
            "  size_t dims[6];  // n, m, dk, dv, hq, hkv",
            "  int has_softmax_scale;",
            "  float softmax_scale;",
            "  const float* scale[4];       // q, k, v, y",
            "  const int32_t* zero[4];",
            "  size_t count[4];",
            "  int causal;                  // 0 none, 1 top-left, 2 bottom-right",
            "  int32_t window_left, window_right;",
            "  int window_align;            // 0 top-left, 1 bottom-right",
            "  uint32_t kv_len;",
            "  int keep_kind;               // 0 none, 1 bytes, 2 bits",
            "  const uint8_t* keep;",
            "  size_t head_stride;",
            "  const int8_t *q, *k, *v;",
            "  const int8_t* bias;          // int8 additive bias, or nullptr",
            "  const float* bias_scale;",
            "  const int32_t* bias_zero;",
            "  size_t bias_count;",
            "  const int32_t* plan;         // per query head: logit m, s, output m, s, bias m, s, zq, zk, zv, zy, zb",
            "  const int8_t* y;",
            "  const uint16_t* weights;",
            "};", "",
            "static const Case kCases[] = {"] + table + ["};", "", "}  // namespace golden_i8", ""]
    return "\n".join(out)


def main():
    check_tables()
    text = render(make_cases())
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            committed = f.read()
        if committed != text:
            print("golden_i8.h differs from what gen_quant_vectors.py generates", file=sys.stderr)
            return 1
        print("golden_i8.h matches the generator")
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
