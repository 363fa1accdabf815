#!/usr/bin/env python3
"""Generates lib/src/selftest_i16_vectors.h: the int16 self-test's vectors.

Inputs, an offline plan (integers: the self-test never calls plan_int16, which
uses floating point) and the expected output values and Q0.15 weights of
forward_i16 for a few mask kinds, plus apply_wide and exp2_q30 known answers.
Every expected value comes from the model of the int16 spec below
(tinyattn/quant_i16.h, docs/quant.md "int16"): Python integers, the same
operations in the same order as lib/src/forward_i16.cc, so the header is
byte-identical on every machine. The softmax's integer steps (exp2_q30, the
Q0.15 probabilities) are the int8 path's, from tests/quant/gen_quant_vectors.py.
CRC-32s of the stored arrays and of exp2_q30's table let the self-test report
a flipped bit. tests/tool/tool_cases.py runs `tinyattn run --dtype i16`
against plan_int16() and forward_i16() here.

    /usr/bin/python3 tools/gen/selftest_i16_vectors.py           # rewrite the header
    /usr/bin/python3 tools/gen/selftest_i16_vectors.py --check   # fail if it differs
"""
import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "quant"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gen_quant_vectors as spec8  # noqa: E402  (exp2_q30's table and constants, make_multiplier, masks)
import selftest_i8_vectors  # noqa: E402  (the exp2_q30 known-answer points)
import selftest_vectors  # noqa: E402  (write_or_check, crc_bytes)

OUT = ROOT / "lib" / "src" / "selftest_i16_vectors.h"

# --- the int16 spec, in Python integers ---------------------------------------

FRAC = spec8.FRAC
WIDE_CAP = 1 << 62
PROB_ONE = 32768
LOG2E = spec8.LOG2E
MAX_DK = 32768
MAX_M = 65535


def rounding_rshift(x, s):
    """x * 2^-s to nearest, ties away from zero."""
    if s <= 0:
        return x
    half = 1 << (s - 1)
    return (x + half) >> s if x >= 0 else -((-x + half) >> s)


def apply(mult, x):
    m, s = mult
    return rounding_rshift(x * m, s)


def apply_wide(mult, x):
    """round(x * m * 2^-s) for x >= 0, exact, saturating at 2^62."""
    m, s = mult
    assert x >= 0
    half = (1 << (s - 1)) if s > 0 else 0
    return min((x * m + half) >> s, WIDE_CAP)


def exp2_q30(u):
    """2^(u / 2^26) in Q1.30 for u <= 0 (1 << 30 for u >= 0): the int8 path's."""
    if u >= 0:
        return spec8.ONE_Q30
    nu = -u
    n = (nu + (1 << FRAC) - 1) >> FRAC
    if n > 62:
        return 0
    f = (n << FRAC) - nu
    i, r = f >> 21, f & ((1 << 21) - 1)
    z = rounding_rshift(r * spec8.LN2_Q30, FRAC)
    t = spec8.ONE_Q30 + rounding_rshift(z * spec8.THIRD_Q30, 30)
    t = spec8.ONE_Q30 + rounding_rshift(z * t, 31)
    t = spec8.ONE_Q30 + rounding_rshift(z * t, 30)
    val = rounding_rshift(int(spec8.EXP2_TABLE[i]) * t, 30)
    return rounding_rshift(val, n)


def plan(c):
    """plan_int16: per query head (logit, output) multipliers. c as gen_quant_vectors'
    cases: dims, softmax_scale (None: 1/sqrt(Dk) in float32), "q".."y": (scales, zero points)."""
    n, m, dk, dv, hq, hkv = c["dims"]
    if c["softmax_scale"] is None:
        ss = np.float32(1.0) / np.sqrt(np.float32(dk))
    else:
        ss = np.float32(c["softmax_scale"])
    plans = []
    for h in range(hq):
        kv = h // (hq // hkv)

        def scale(t, head):
            sc, zp = c[t]
            i = 0 if len(sc) == 1 else head
            assert not zp or zp[i] == 0, "int16 tensors are symmetric"
            return float(np.float32(sc[i]))
        sq, sk, sv, sy = scale("q", h), scale("k", kv), scale("v", kv), scale("y", h)
        # The evaluation order of plan_int16 (double, left to right).
        logit = float(ss) * sq * sk * LOG2E * 67108864.0
        output = sv / (sy * 32768.0)
        plans.append((spec8.make_multiplier(logit), spec8.make_multiplier(output)))
    return plans


def forward(c, plans):
    """forward_i16: Y (int16) and the Q0.15 weights (uint16), flat. c: dims, q/k/v_data
    and a mask dict as gen_quant_vectors' (causal, window, kv_len, keep_kind, keep, head_stride)."""
    n, m, dk, dv, hq, hkv = c["dims"]
    assert dk <= MAX_DK and m <= MAX_M
    q = [int(x) for x in np.asarray(c["q_data"]).ravel()]
    k = [int(x) for x in np.asarray(c["k_data"]).ravel()]
    v = [int(x) for x in np.asarray(c["v_data"]).ravel()]
    y = np.zeros(hq * n * dv, dtype=np.int64)
    w = np.zeros(hq * n * m, dtype=np.int64)
    for h in range(hq):
        logit, output = plans[h]
        kv = h // (hq // hkv)
        for i in range(n):
            lo, hi = spec8.key_range(c["mask"], i, n, m)
            js = [j for j in range(lo, hi) if spec8.kept(c, h, i, j)]
            if not js:
                continue  # no visible key: Y and the weights stay 0
            qi = q[(h * n + i) * dk:(h * n + i + 1) * dk]
            s = {}
            for j in js:
                kj = k[(kv * m + j) * dk:(kv * m + j + 1) * dk]
                s[j] = sum(a * b for a, b in zip(qi, kj))
            top = max(s.values())
            e = {j: exp2_q30(-apply_wide(logit, top - s[j])) for j in js}
            total = sum(e.values())
            p = {j: (e[j] * PROB_ONE + total // 2) // total for j in js}
            for j in js:
                w[(h * n + i) * m + j] = p[j]
            for col in range(dv):
                acc = sum(p[j] * v[(kv * m + j) * dv + col] for j in js)
                assert -(1 << 31) <= acc < (1 << 31)
                y[(h * n + i) * dv + col] = min(max(apply(output, acc), -32768), 32767)
    return y.astype(np.int16), w.astype(np.uint16)


# --- the self-test's vectors ----------------------------------------------------

# The int8 self-test's shape: Dk = 17 leaves a tail on every vector width;
# N < M makes bottom-right causal differ from top-left.
N, M, DK, DV, HQ, HKV = 4, 9, 17, 6, 2, 1
# Head 0: logits of a few units; head 1: Q's scale 8 times larger, a peaked
# softmax, and an output scale that saturates some values.
SCALES = {"q": [1.0 / 16000, 1.0 / 2000], "k": [1.0 / 16000], "v": [1.0 / 8192], "y": [1.0 / 8192, 1.0 / 12000]}
FULLY_MASKED_ROW = 2
WINDOW, KV_LEN = (1, 2), 7

# name, title, kind, query heads. kinds mirror CaseKind in the header.
CASES = [
    ("i16_kat_plain", "known answer: no mask", "kPlain", 1),
    ("i16_kat_causal", "known answer: causal, bottom-right", "kCausalBottomRight", 1),
    ("i16_kat_keep_bits", "known answer: keep bits, a fully masked row", "kKeepBits", 1),
    ("i16_kat_window", "known answer: window (1, 2), kv_len 7", "kWindowKvLen", 1),
    ("i16_kat_gqa", "known answer: grouped query 2:1, peaked head", "kPlain", HQ),
]


def wide_points(rng):
    """apply_wide known answers: (multiplier, shift, x). Both halves of its
    product, shifts below, at and above 32, ties, the 2^62 saturation on
    either side, x up to INT64_MAX."""
    m_max, m_min = (1 << 31) - 1, 1 << 30
    pts = [(m_min, 0, 0), (m_max, 0, 1), (m_max, 0, 1 << 31), (m_max, 0, (1 << 31) + 2),
           (m_min + 1, 1, 1 << 47), (m_min, 31, 3), (m_min, 32, 2), (m_min, 32, 1), (m_min, 33, 6),
           (0x5A827999, 33, 1 << 45), (0x40003039, 39, (1 << 45) - 12345), (m_max, 62, 1 << 47),
           (m_max, 62, 1), (m_max, 31, 1 << 47), (m_max, 16, 1 << 47), (m_max, 17, 1 << 47),
           (m_min, 30, (1 << 62) - 1), (m_min, 62, (1 << 63) - 1), (m_max, 32, (1 << 63) - 1),
           (0x6A09E668, 20, (1 << 41) + 777)]
    for _ in range(8):
        pts.append((int(rng.integers(m_min, m_max + 1)), int(rng.integers(0, 63)), int(rng.integers(0, 1 << 47))))
    return pts


def make_inputs():
    rng = np.random.default_rng(20261216)
    q = rng.integers(-32768, 32768, size=HQ * N * DK).astype(np.int16)
    k = rng.integers(-32768, 32768, size=HKV * M * DK).astype(np.int16)
    v = rng.integers(-32768, 32768, size=HKV * M * DV).astype(np.int16)
    # The extremes: the largest products (2^30), both ends of V, and a row
    # (head 0, query 3) whose scores span +-17 * 2^30: keys 8 and 7 at the
    # top and the bottom, so its logit differences need apply_wide's 96 bits.
    q[:3] = [-32768, -32768, 32767]
    k[:3] = [-32768, 32767, 32767]
    v[:4] = [-32768, 32767, -32768, 32767]
    q[3 * DK:4 * DK] = -32768
    k[8 * DK:9 * DK] = -32768
    k[7 * DK:8 * DK] = 32767
    keep = rng.random((N, M)) < 0.6
    keep[FULLY_MASKED_ROW, :] = False
    for i in range(N):
        if i != FULLY_MASKED_ROW:
            keep[i, rng.integers(0, M)] = True
    row_bytes = (M + 7) // 8
    keep_bits = np.zeros(N * row_bytes, dtype=np.uint8)
    for i in range(N):
        for j in range(M):
            if keep[i, j]:
                keep_bits[i * row_bytes + j // 8] |= 1 << (j % 8)
    return q, k, v, keep_bits, wide_points(rng)


def model_case(hq, q, k, v):
    c = {"dims": (N, M, DK, DV, hq, HKV), "softmax_scale": None, "mask": {}}
    for t in "qkvy":
        cnt = hq if t in "qy" else HKV
        c[t] = ([float(np.float32(s)) for s in SCALES[t][:cnt]], [0] * cnt)
    c["q_data"], c["k_data"], c["v_data"] = q[:hq * N * DK], k, v
    return c


def fmt(values, per_line, indent="    "):
    vals = [str(int(x)) for x in np.asarray(values).ravel()]
    return "\n".join(indent + ", ".join(vals[i:i + per_line]) + "," for i in range(0, len(vals), per_line))


def generate():
    spec8.check_tables()
    q, k, v, keep_bits, wide = make_inputs()
    plans = plan(model_case(HQ, q, k, v))
    plan_arr = np.array([x for (lm, om) in plans for x in (lm[0], lm[1], om[0], om[1], 0)], dtype=np.int32)

    ys, ws, rows = [], [], []
    for name, title, kind, hq in CASES:
        c = model_case(hq, q, k, v)
        if kind == "kCausalBottomRight":
            c["mask"] = {"causal": 2}
        elif kind == "kKeepBits":
            c["mask"] = {"keep_kind": 2, "keep": keep_bits}
        elif kind == "kWindowKvLen":
            c["mask"] = {"window": (WINDOW[0], WINDOW[1], 0), "kv_len": KV_LEN}
        y, w = forward(c, plans[:hq])
        rows.append((name, title, kind, hq, sum(x.size for x in ys), sum(x.size for x in ws)))
        ys.append(y)
        ws.append(w)
    y_all = np.concatenate(ys).astype(np.int16)
    w_all = np.concatenate(ws).astype(np.uint16)

    wide_mul = np.array([x for (m, s, _) in wide for x in (m, s)], dtype=np.int32)
    wide_x = np.array([x for (_, _, x) in wide], dtype=np.int64)
    wide_e = np.array([apply_wide((m, s), x) for (m, s, x) in wide], dtype=np.int64)
    exp_u = np.array(selftest_i8_vectors.EXP2_U, dtype=np.int64)
    exp_e = np.array([exp2_q30(int(u)) for u in exp_u], dtype=np.int32)
    assert np.array_equal(exp_e, spec8.exp2_q30(exp_u).astype(np.int32))  # the int8 model agrees

    vectors_crc = selftest_vectors.crc_bytes([
        q.astype("<i2").tobytes(), k.astype("<i2").tobytes(), v.astype("<i2").tobytes(), keep_bits.tobytes(),
        plan_arr.astype("<i4").tobytes(), y_all.astype("<i2").tobytes(), w_all.astype("<u2").tobytes(),
        wide_mul.astype("<i4").tobytes(), wide_x.astype("<i8").tobytes(), wide_e.astype("<i8").tobytes(),
        exp_u.astype("<i8").tobytes(), exp_e.astype("<i4").tobytes()])
    table_crc = selftest_vectors.crc_bytes([spec8.EXP2_TABLE.astype("<i8").tobytes()])

    out = ["// Generated by tools/gen/selftest_i16_vectors.py -- do not edit; rerun the generator.",
           "// Vectors of the int16 power-on self-test (lib/src/selftest_int16.cc): integers only,",
           "// expected values from the generator's model of the int16 spec (Python integers).",
           "#pragma once\n",
           "#include <cstddef>\n#include <cstdint>\n",
           "namespace tinyattn {\nnamespace selftest_i16_data {\n",
           f"inline constexpr size_t kN = {N}, kM = {M}, kDk = {DK}, kDv = {DV}, kHq = {HQ}, kHkv = {HKV};",
           f"inline constexpr size_t kFullyMaskedRow = {FULLY_MASKED_ROW};  // of kKeepMaskBits",
           f"inline constexpr int32_t kWindowLeft = {WINDOW[0]}, kWindowRight = {WINDOW[1]};  // kWindowKvLen, top-left",
           f"inline constexpr uint32_t kKvLen = {KV_LEN};\n",
           f"inline constexpr int16_t kQ[{q.size}] = {{\n{fmt(q, DK)}\n}};",
           f"inline constexpr int16_t kK[{k.size}] = {{\n{fmt(k, DK)}\n}};",
           f"inline constexpr int16_t kV[{v.size}] = {{\n{fmt(v, DV)}\n}};",
           f"inline constexpr uint8_t kKeepMaskBits[{keep_bits.size}] = {{\n{fmt(keep_bits, keep_bits.size)}\n}};\n",
           "// Per query head: logit multiplier, shift; output multiplier, shift; mode",
           "// (Int16HeadPlan's order).",
           f"inline constexpr int32_t kPlan[{plan_arr.size}] = {{\n{fmt(plan_arr, 5)}\n}};\n",
           "enum class CaseKind : uint8_t { kPlain, kCausalBottomRight, kKeepBits, kWindowKvLen };\n",
           "struct Case {\n  const char *name, *title;  // id, and the table's property column\n  CaseKind kind;\n"
           "  size_t hq, y_offset, w_offset;  // query heads (1 or kHq); offsets into kExpectedY, kExpectedWeights\n};\n",
           f"inline constexpr Case kCases[{len(CASES)}] = {{"]
    for name, title, kind, hq, yo, wo in rows:
        out.append(f'    {{"{name}", "{title}", CaseKind::{kind}, {hq}, {yo}, {wo}}},')
    out += ["};\n",
            f"inline constexpr int16_t kExpectedY[{y_all.size}] = {{\n{fmt(y_all, DV)}\n}};",
            f"inline constexpr uint16_t kExpectedWeights[{w_all.size}] = {{\n{fmt(w_all, M)}\n}};\n",
            "// apply_wide known answers: (multiplier, shift) pairs, x, and the result.",
            f"inline constexpr int32_t kWideMultiplier[{wide_mul.size}] = {{\n{fmt(wide_mul, 8)}\n}};",
            f"inline constexpr int64_t kWideX[{wide_x.size}] = {{\n{fmt(wide_x, 4)}\n}};",
            f"inline constexpr int64_t kWideExpected[{wide_e.size}] = {{\n{fmt(wide_e, 4)}\n}};\n",
            "// exp2_q30(u) known answers (u: base-2 logits with 26 fraction bits), the int8 self-test's points.",
            f"inline constexpr int64_t kExp2U[{exp_u.size}] = {{\n{fmt(exp_u, 4)}\n}};",
            f"inline constexpr int32_t kExp2Expected[{exp_e.size}] = {{\n{fmt(exp_e, 6)}\n}};\n",
            "// CRC-32 (IEEE, reflected) of every array above, little-endian, in declaration order.",
            f"inline constexpr uint32_t kCrc32 = 0x{vectors_crc:08X}u;",
            "// CRC-32 of exp2_q30's table (2^(i/32) in Q1.30, 32 int64, little-endian).",
            f"inline constexpr uint32_t kExp2TableCrc32 = 0x{table_crc:08X}u;\n",
            "}  // namespace selftest_i16_data\n}  // namespace tinyattn"]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed header differs")
    return selftest_vectors.write_or_check(OUT, generate(), ap.parse_args().check, __file__)


if __name__ == "__main__":
    sys.exit(main())
