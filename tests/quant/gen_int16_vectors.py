#!/usr/bin/python3
"""Golden vectors for tinyattn's int16 path.

An independent model of the spec in lib/include/tinyattn/quant_i16.h: the plan
is make_multiplier() of lib/src/forward_i8.cc on doubles formed in the same
order as plan_int16() in lib/src/forward_i16.cc (from the float32 scales C++
sees); the forward pass is Python integer arithmetic (exact scores, the 96-bit
apply_wide as one exact product, exp2_q30 and the Q0.15 probabilities of the
int8 path, taken from gen_quant_vectors.py). It writes inputs, plans and the
expected outputs and weights to golden_i16.h. Only integer arithmetic and single
correctly rounded float operations decide the data (math.log2 only picks where
a search starts), so the file is byte-identical on every machine; keep it that
way.

  gen_int16_vectors.py            rewrite tests/quant/golden_i16.h
  gen_int16_vectors.py --check    exit 1 if the committed file differs
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "golden_i16.h")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import gen_quant_vectors as i8  # noqa: E402  (exp2_q30, make_multiplier, masks, C output)

INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
WIDE_CAP = 1 << 62
MAX_DK = 32768
MAX_M = 65535

# --- the integer algorithm -------------------------------------------------


def apply_wide(mult, x):
    """min(round(x * m * 2^-shift), 2^62) for x >= 0, ties up: one exact product."""
    m, shift = mult
    assert x >= 0
    half = (1 << (shift - 1)) if shift > 0 else 0
    return min((x * m + half) >> shift, WIDE_CAP)


def apply_wide_floor(mult, x):
    """apply_wide rounding down: a variant the golden data must tell apart (make_cases)."""
    m, shift = mult
    return min((x * m) >> shift, WIDE_CAP)


def apply_wide_ceil(mult, x):
    """apply_wide rounding up: another such variant."""
    m, shift = mult
    return min(-((-x * m) >> shift), WIDE_CAP)


def rounding_apply(mult, x):
    """apply() of quant.h: round(x * m * 2^-shift), ties away from zero."""
    m, shift = mult
    p = x * m
    if shift <= 0:
        return p
    half = 1 << (shift - 1)
    return (p + half) >> shift if p >= 0 else -((-p + half) >> shift)


def plan(c):
    """plan_int16: per query head ((logit m, s), (output m, s))."""
    n, m, dk, dv, hq, hkv = c["dims"]
    if c["softmax_scale"] is None:
        ss = np.float32(1.0) / np.sqrt(np.float32(dk))  # 1.0f / std::sqrt(float(dk))
    else:
        ss = np.float32(c["softmax_scale"])
    assert ss > 0
    plans = []
    for h in range(hq):
        kv = h // (hq // hkv)

        def pick(t, head):
            sc = c[t]
            return float(np.float32(sc[0 if len(sc) == 1 else head]))
        sq, sk, sv, sy = pick("q", h), pick("k", kv), pick("v", kv), pick("y", h)
        logit = float(ss) * sq * sk * i8.LOG2E * 67108864.0  # 2^26, left to right as C++
        output = sv / (sy * 32768.0)
        plans.append((i8.make_multiplier(logit), i8.make_multiplier(output)))
    return plans


def exp2(u):
    return int(i8.exp2_q30(np.array([u], dtype=np.int64))[0])


class Stats:
    """What the cases exercise (asserted in make_cases, so a change of a case cannot drop it)."""
    def __init__(self):
        self.shifts = set()
        self.saturated = 0
        self.empty_rows = 0
        self.clamped = 0
        self.zero_weights = 0


def forward(c, plans, stats, wide=apply_wide, du=0):
    """y and the weights; wide and du (added to u_j below the maximum) only for the variants
    make_cases checks."""
    n, m, dk, dv, hq, hkv = c["dims"]
    assert dk <= MAX_DK and m <= MAX_M
    q = [int(x) for x in c["q_data"]]
    k = [int(x) for x in c["k_data"]]
    v = [int(x) for x in c["v_data"]]
    y = [0] * (hq * n * dv)
    w = [0] * (hq * n * m)
    for h in range(hq):
        lm, om = plans[h]
        stats.shifts.add(lm[1])
        kv = h // (hq // hkv)
        for i in range(n):
            row = h * n + i
            lo, hi = i8.key_range(c["mask"], i, n, m)
            js = [j for j in range(lo, hi) if i8.kept(c, h, i, j)]
            if not js:  # no visible key: y = 0, weights 0
                stats.empty_rows += 1
                continue
            qi = q[row * dk:(row + 1) * dk]
            s = {}
            for j in js:
                kj = k[(kv * m + j) * dk:(kv * m + j + 1) * dk]
                s[j] = sum(a * b for a, b in zip(qi, kj))
                assert abs(s[j]) <= (1 << 30) * dk
            mx = max(s.values())
            e = {}
            for j in js:
                u = wide(lm, mx - s[j])
                stats.saturated += u == WIDE_CAP
                e[j] = exp2(-u + (du if s[j] < mx else 0))
            total = sum(e.values())
            for j in js:
                p = (e[j] * 32768 + total // 2) // total
                stats.zero_weights += p == 0
                w[row * m + j] = p
            for col in range(dv):
                acc = sum(w[row * m + j] * v[(kv * m + j) * dv + col] for j in js)
                assert -2**31 <= acc < 2**31
                out = rounding_apply(om, acc)
                stats.clamped += out < -32768 or out > 32767
                y[row * dv + col] = min(max(out, -32768), 32767)
    return np.array(y, dtype=np.int16), np.array(w, dtype=np.uint16)


# --- the cases ---------------------------------------------------------------

def make_cases():
    cases = []

    def case(name, dims, scales, seed, softmax_scale=None, mask=None, fill=None, per_head=False):
        n, m, dk, dv, hq, hkv = dims
        rng = np.random.default_rng(seed)
        c = {"name": name, "dims": dims, "softmax_scale": softmax_scale, "mask": mask or {}}
        heads = {"q": hq, "k": hkv, "v": hkv, "y": hq}
        for t in "qkvy":
            cnt = heads[t] if per_head else 1
            c[t] = [float(np.float32(scales[t] * (1.0 + 0.25 * h))) for h in range(cnt)]
        sizes = {"q": hq * n * dk, "k": hkv * m * dk, "v": hkv * m * dv}
        for t in "qkv":
            c[t + "_data"] = rng.integers(-32768, 32768, size=sizes[t]).astype(np.int16)
        if fill:
            fill(c, rng)
        cases.append(c)

    # Logits of a few units over the int16 range: flat enough for many non-zero weights.
    s0 = {"q": 5e-5, "k": 1e-4, "v": 3e-4, "y": 2.5e-4}

    def extremes(c, rng):  # the ends of the range, -32768 included, and some zeros
        pick = np.array([-32768, 32767, -32767, 0, -32768], dtype=np.int16)
        for t in "qkv":
            c[t + "_data"][:] = pick[rng.integers(0, len(pick), size=c[t + "_data"].size)]

    case("basic", (4, 6, 8, 5, 1, 1), s0, 1)
    case("odd shapes: Dk 13, Dv 7", (3, 11, 13, 7, 1, 1), s0, 2)
    case("Dk 1, Dv 1", (5, 9, 1, 1, 1, 1), {"q": 3e-3, "k": 2e-3, "v": 3e-4, "y": 2e-4}, 3)
    case("GQA, per-head scales", (3, 7, 9, 4, 4, 2), s0, 4, per_head=True)
    case("full range, -32768", (3, 6, 12, 5, 1, 1), s0, 5, fill=extremes)
    case("causal top-left", (5, 5, 8, 6, 2, 2), s0, 6, mask={"causal": 1})
    case("causal bottom-right, GQA, per head", (3, 8, 7, 6, 4, 2), s0, 7, mask={"causal": 2}, per_head=True)
    case("window and kv_len", (6, 9, 7, 5, 1, 1), s0, 8, mask={"window": (1, 2, 1), "kv_len": 7})

    def keep_bytes(c, rng):
        n, m, _, _, hq, _ = c["dims"]
        keep = (rng.random(hq * n * m) < 0.6).astype(np.uint8)
        keep[1 * m:2 * m] = 0  # row 1 of head 0 sees nothing
        c["mask"]["keep"] = keep
    case("keep bytes per head, a row with no visible key", (4, 10, 8, 6, 2, 2), s0, 9,
         mask={"keep_kind": 1, "head_stride": 4 * 10}, fill=keep_bytes)

    def keep_bits(c, rng):
        n, m = c["dims"][0], c["dims"][1]
        c["mask"]["keep"] = rng.integers(0, 256, size=n * ((m + 7) // 8)).astype(np.uint8)
    case("keep bits, window", (5, 13, 6, 4, 2, 1), s0, 10,
         mask={"keep_kind": 2, "window": (4, 4, 0)}, fill=keep_bits)
    case("explicit softmax scale", (3, 7, 8, 5, 1, 1), s0, 11, softmax_scale=0.0625)
    # A logit multiplier of ~34 (shift 25 < 32): a peaked softmax, apply_wide's shift < 32 branch.
    case("logit shift < 32 (large scales)", (4, 8, 8, 6, 1, 1), {"q": 1e-3, "k": 1e-3, "v": 3e-4, "y": 2.5e-4}, 12)
    # A logit multiplier of ~1.4e-4 (shift 43 > 32): a flat softmax, apply_wide's shift >= 32 branch.
    case("logit shift > 32 (small scales)", (4, 8, 8, 6, 1, 1), {"q": 2e-6, "k": 2e-6, "v": 3e-4, "y": 2.5e-4}, 13)
    case("Dk 256, wide scores", (2, 6, 256, 5, 1, 1), {"q": 1e-5, "k": 1e-5, "v": 3e-4, "y": 2.5e-4}, 14)
    # A logit multiplier of 16 log2(e) 2^26 ~ 2^30.5 (shift 0) on score differences up to
    # 2^39: apply_wide saturates at 2^62.
    case("Dk 256, saturating logit differences", (2, 5, 256, 4, 1, 1), {"q": 1.0, "k": 1.0, "v": 3e-4, "y": 2.5e-4},
         15, softmax_scale=16.0, fill=extremes)

    def equal_keys(c, rng):
        c["k_data"][:] = np.tile(c["k_data"][:8], 6)
    case("all-equal logits", (3, 6, 8, 4, 1, 1), s0, 16, fill=equal_keys)
    case("saturating output", (4, 8, 8, 6, 1, 1), {"q": 5e-5, "k": 1e-4, "v": 3e-3, "y": 1e-4}, 17)
    case("long row", (2, 64, 8, 4, 1, 1), {"q": 1e-5, "k": 1e-5, "v": 3e-4, "y": 2.5e-4}, 18)
    case("single element", (1, 1, 1, 1, 1, 1), s0, 19)

    # Two keys whose score difference x puts u_1 next to a step of p_1 (at p_1 = 10923, e_1 ~ 2^29):
    # in row 0 moving u_1 up by one unit (2^-26) changes the weights, in row 1 moving it down does.
    # Row 0's x is the smallest that rounds to its u_1, so rounding down moves u_1 up; row 1's is the
    # largest, so rounding up moves it down: the weights pin u, apply_wide's rounding and exp2_q30
    # to the last unit.
    def at_a_step(c, rng):
        lm = plan(c)[0][0]

        def p1(u):
            e1 = exp2(u)
            total = (1 << 30) + e1
            return (e1 * 32768 + total // 2) // total
        step = 10923
        u0 = round(math.log2((step - 0.5) / (32768.5 - step)) * 2**26)  # a start only: one step in reach
        ua = next(u for u in range(u0 - 20, u0 + 20) if p1(u) != p1(u + 1))
        q = []
        w, half = -ua, 1 << (lm[1] - 1)
        x0 = -(-((2 * w - 1) * half) // lm[0])  # ceil((w - 1/2) 2^shift / m)
        x1 = ((2 * w - 1) * half - 1) // lm[0]  # the largest x with x m < (w - 1 + 1/2) 2^shift
        assert apply_wide(lm, x0) == w and apply_wide_floor(lm, x0) == w - 1
        assert apply_wide(lm, x1) == w - 1 and apply_wide_ceil(lm, x1) == w
        for x in (x0, x1):
            q += [x // 32768, x % 32768]  # x = q . (k_0 - k_1) = 32768 q_0 + q_1
        c["q_data"][:] = q
        c["k_data"][:] = [16384, 1, -16384, 0]
        c["v_data"][:] = [32767, -32768]
    case("weights at a step of p (u to the last unit)", (2, 2, 2, 1, 1, 1), s0, 20, fill=at_a_step)
    c = cases[-1]
    want = forward(c, plan(c), Stats())
    for wide, du in ((apply_wide_floor, 0), (apply_wide_ceil, 0), (apply_wide, 1), (apply_wide, -1)):
        got = forward(c, plan(c), Stats(), wide, du)
        assert not np.array_equal(got[1], want[1]), (wide.__name__, du)
    return cases


# --- output ------------------------------------------------------------------

def render(cases):
    out = ["// Generated by tests/quant/gen_int16_vectors.py (Python integers); do not edit.",
           "// Inputs, plans and expected outputs of tinyattn's int16 path.",
           "#pragma once", "", "#include <cstddef>", "#include <cstdint>", "", "namespace golden_i16 {", ""]
    table = []
    stats = Stats()
    for idx, c in enumerate(cases):
        n, m, dk, dv, hq, hkv = c["dims"]
        plans = plan(c)
        y, w = forward(c, plans, stats)
        p = f"c{idx}_"
        for t in "qkvy":
            out.append(i8.c_floats(p + t + "_scale", c[t]))
        for t in "qkv":
            out.append(i8.c_array("int16_t", p + t, c[t + "_data"], per_line=16))
        flat = []
        for (lm, om) in plans:
            flat += [lm[0], lm[1], om[0], om[1]]
        out.append(i8.c_array("int32_t", p + "plan", flat, per_line=4))
        out.append(i8.c_array("int16_t", p + "y", y, per_line=16))
        out.append(i8.c_array("uint16_t", p + "weights", w, per_line=16))
        mask = c["mask"]
        keep = "nullptr"
        if mask.get("keep_kind", 0):
            out.append(i8.c_array("uint8_t", p + "keep", mask["keep"]))
            keep = p + "keep"
        left, right, align = mask.get("window", (INT32_MAX, INT32_MAX, 0))
        ss = c["softmax_scale"]
        table.append(
            f"    {{\"{c['name']}\", {{{n}, {m}, {dk}, {dv}, {hq}, {hkv}}}, {0 if ss is None else 1}, "
            f"{float(np.float32(ss if ss is not None else 0)).hex()}f,\n"
            f"     {{{p}q_scale, {p}k_scale, {p}v_scale, {p}y_scale}},\n"
            f"     {{{len(c['q'])}, {len(c['k'])}, {len(c['v'])}, {len(c['y'])}}},\n"
            f"     {mask.get('causal', 0)}, {left}, {right}, {align}, {mask.get('kv_len', UINT32_MAX)}u, "
            f"{mask.get('keep_kind', 0)}, {keep}, {mask.get('head_stride', 0)},\n"
            f"     {p}q, {p}k, {p}v, {p}plan, {p}y, {p}weights}},")
    # Every branch the cases exist for.
    assert min(stats.shifts) < 32 < max(stats.shifts), stats.shifts
    assert stats.saturated > 0 and stats.empty_rows > 0 and stats.clamped > 0 and stats.zero_weights > 0
    assert any(np.any(c[t + "_data"] == -32768) for c in cases for t in "qkv")
    out += ["struct Case {",
            "  const char* name;",
            "  size_t dims[6];  // n, m, dk, dv, hq, hkv",
            "  int has_softmax_scale;",
            "  float softmax_scale;",
            "  const float* scale[4];       // q, k, v, y (zero points are 0)",
            "  size_t count[4];",
            "  int causal;                  // 0 none, 1 top-left, 2 bottom-right",
            "  int32_t window_left, window_right;",
            "  int window_align;            // 0 top-left, 1 bottom-right",
            "  uint32_t kv_len;",
            "  int keep_kind;               // 0 none, 1 bytes, 2 bits",
            "  const uint8_t* keep;",
            "  size_t head_stride;",
            "  const int16_t *q, *k, *v;",
            "  const int32_t* plan;         // per query head: logit multiplier, shift, output multiplier, shift",
            "  const int16_t* y;",
            "  const uint16_t* weights;",
            "};", "",
            "static const Case kCases[] = {"] + table + ["};", "", "}  // namespace golden_i16", ""]
    return "\n".join(out)


def main():
    i8.check_tables()
    text = render(make_cases())
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            committed = f.read()
        if committed != text:
            print("golden_i16.h differs from what gen_int16_vectors.py generates", file=sys.stderr)
            return 1
        print("golden_i16.h matches the generator")
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    print("wrote", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
