#!/usr/bin/env python3
"""Generates lib/src/selftest_i8_vectors.h: the int8 self-test's vectors.

Inputs, an offline plan (integers: the self-test never calls plan_int8, which
uses floating point) and the expected output bytes and Q0.15 weights of
forward_i8 for a few mask kinds, plus exp2_q30 known answers. Every expected
value comes from the NumPy model of the int8 spec in
tests/quant/gen_quant_vectors.py (integer arithmetic, the same operations in the
same order as lib/src/forward_i8.cc), so the header is byte-identical on every
machine. CRC-32s of the stored arrays and of exp2_q30's table let the
self-test report a flipped bit.

    /usr/bin/python3 tools/gen/selftest_i8_vectors.py           # rewrite the header
    /usr/bin/python3 tools/gen/selftest_i8_vectors.py --check   # fail if it differs
"""
import argparse
import pathlib
import sys
import zlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "quant"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gen_quant_vectors as spec  # noqa: E402
import selftest_vectors  # noqa: E402  (write_or_check, crc_bytes)

OUT = ROOT / "lib" / "src" / "selftest_i8_vectors.h"

# Odd sizes, as the fp32 self-test: Dk = 17 leaves a tail on every vector
# width; N < M makes bottom-right causal differ from top-left.
N, M, DK, DV, HQ, HKV = 4, 9, 17, 6, 2, 1
SCALES = {"q": [0.02, 0.025], "k": [0.03], "v": [0.05], "y": [0.04, 0.06]}
ZEROS = {"q": [3, -2], "k": [-5], "v": [7], "y": [-2, 4]}
BIAS = ([0.25], [3])
FULLY_MASKED_ROW = 2

# name, title, kind, query heads. kinds mirror CaseKind in the header.
CASES = [
    ("i8_kat_plain", "known answer: no mask", "kPlain", 1),
    ("i8_kat_causal", "known answer: causal, bottom-right", "kCausalBottomRight", 1),
    ("i8_kat_keep_bits", "known answer: keep bits, a fully masked row", "kKeepBits", 1),
    ("i8_kat_bias", "known answer: int8 additive bias", "kBias", 1),
    ("i8_kat_gqa", "known answer: grouped query, 2:1 heads", "kPlain", HQ),
]

# exp2_q30 known answers: 0, tiny and large negative logits, every table
# index with a nonzero polynomial remainder, and the flush to 0 (n > 62).
ONE = 1 << spec.FRAC
EXP2_U = [0, -1, -(1 << 20) - 12345, -ONE, -ONE // 2, -3 * ONE - 777777, -20 * ONE + 4242,
          -62 * ONE, -62 * ONE - 1, -(1 << 40)] + [-(i << 21) - 1000 * i - 1 for i in range(1, 32, 3)]


def make_inputs():
    rng = np.random.default_rng(20261204)
    q = rng.integers(-128, 128, size=HQ * N * DK).astype(np.int8)
    k = rng.integers(-128, 128, size=HKV * M * DK).astype(np.int8)
    v = rng.integers(-128, 128, size=HKV * M * DV).astype(np.int8)
    bias = rng.integers(-128, 128, size=N * M).astype(np.int8)
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
    return q, k, v, bias, keep_bits


def model_case(hq, q, k, v):
    """The dictionary gen_quant_vectors.py's plan() and forward() take."""
    c = {"dims": (N, M, DK, DV, hq, HKV), "softmax_scale": None, "mask": {}}
    for t in "qkvy":
        cnt = hq if t in "qy" else HKV
        c[t] = ([float(np.float32(s)) for s in SCALES[t][:cnt]], ZEROS[t][:cnt])
    c["bias"] = ([float(np.float32(s)) for s in BIAS[0]], BIAS[1])
    c["q_data"], c["k_data"], c["v_data"] = q[:hq * N * DK], k, v
    return c


def fmt(values, per_line, indent="    "):
    vals = [str(int(x)) for x in np.asarray(values).ravel()]
    return "\n".join(indent + ", ".join(vals[i:i + per_line]) + "," for i in range(0, len(vals), per_line))


def generate():
    spec.check_tables()
    q, k, v, bias, keep_bits = make_inputs()
    plans = spec.plan(model_case(HQ, q, k, v))
    plan_flat = []
    for (lm, om, bm, zq, zk, zv, zy, zb) in plans:
        plan_flat += [lm[0], lm[1], om[0], om[1], bm[0], bm[1], zq, zk, zv, zy, zb]
    plan_arr = np.array(plan_flat, dtype=np.int32)

    ys, ws, rows = [], [], []
    for name, title, kind, hq in CASES:
        c = model_case(hq, q, k, v)
        if kind == "kCausalBottomRight":
            c["mask"] = {"causal": 2}
        elif kind == "kKeepBits":
            c["mask"] = {"keep_kind": 2, "keep": keep_bits}
        elif kind == "kBias":
            c["bias_data"] = bias
        y, w = spec.forward(c, plans[:hq])
        rows.append((name, title, kind, hq, sum(x.size for x in ys), sum(x.size for x in ws)))
        ys.append(y)
        ws.append(w)
    y_all = np.concatenate(ys).astype(np.int8)
    w_all = np.concatenate(ws).astype(np.uint16)
    exp_u = np.array(EXP2_U, dtype=np.int64)
    exp_e = spec.exp2_q30(exp_u).astype(np.int32)

    vectors_crc = selftest_vectors.crc_bytes([q.tobytes(), k.tobytes(), v.tobytes(), keep_bits.tobytes(), bias.tobytes(),
                       plan_arr.astype("<i4").tobytes(), y_all.tobytes(), w_all.astype("<u2").tobytes(),
                       exp_u.astype("<i8").tobytes(), exp_e.astype("<i4").tobytes()])
    table_crc = selftest_vectors.crc_bytes([spec.EXP2_TABLE.astype("<i8").tobytes()])

    out = ["// Generated by tools/gen/selftest_i8_vectors.py -- do not edit; rerun the generator.",
           "// Vectors of the int8 power-on self-test (lib/src/selftest_int8.cc): integers only,",
           "// expected values from tests/quant/gen_quant_vectors.py's model of the int8 spec.",
           "#pragma once\n",
           "#include <cstddef>\n#include <cstdint>\n",
           "namespace tinyattn {\nnamespace selftest_i8_data {\n",
           f"inline constexpr size_t kN = {N}, kM = {M}, kDk = {DK}, kDv = {DV}, kHq = {HQ}, kHkv = {HKV};",
           f"inline constexpr size_t kFullyMaskedRow = {FULLY_MASKED_ROW};  // of kKeepMaskBits\n",
           f"inline constexpr int8_t kQ[{q.size}] = {{\n{fmt(q, 17)}\n}};",
           f"inline constexpr int8_t kK[{k.size}] = {{\n{fmt(k, 17)}\n}};",
           f"inline constexpr int8_t kV[{v.size}] = {{\n{fmt(v, 6)}\n}};",
           f"inline constexpr uint8_t kKeepMaskBits[{keep_bits.size}] = {{\n{fmt(keep_bits, keep_bits.size)}\n}};",
           f"inline constexpr int8_t kBiasValues[{bias.size}] = {{\n{fmt(bias, M)}\n}};\n",
           "// Per query head: logit multiplier, shift; output multiplier, shift; bias",
           "// multiplier, shift; zero points of Q, K, V, Y and the bias (Int8HeadPlan's order).",
           f"inline constexpr int32_t kPlan[{plan_arr.size}] = {{\n{fmt(plan_arr, 11)}\n}};\n",
           "enum class CaseKind : uint8_t { kPlain, kCausalBottomRight, kKeepBits, kBias };\n",
           "struct Case {\n  const char *name, *title;  // id, and the table's property column\n  CaseKind kind;\n"
           "  size_t hq, y_offset, w_offset;  // query heads (1 or kHq); offsets into kExpectedY, kExpectedWeights\n};\n",
           f"inline constexpr Case kCases[{len(CASES)}] = {{"]
    for name, title, kind, hq, yo, wo in rows:
        out.append(f'    {{"{name}", "{title}", CaseKind::{kind}, {hq}, {yo}, {wo}}},')
    out += ["};\n",
            f"inline constexpr int8_t kExpectedY[{y_all.size}] = {{\n{fmt(y_all, DV)}\n}};",
            f"inline constexpr uint16_t kExpectedWeights[{w_all.size}] = {{\n{fmt(w_all, M)}\n}};\n",
            "// exp2_q30(u) known answers (u: base-2 logits with 26 fraction bits).",
            f"inline constexpr int64_t kExp2U[{exp_u.size}] = {{\n{fmt(exp_u, 4)}\n}};",
            f"inline constexpr int32_t kExp2Expected[{exp_e.size}] = {{\n{fmt(exp_e, 6)}\n}};\n",
            "// CRC-32 (IEEE, reflected) of every array above, little-endian, in declaration order.",
            f"inline constexpr uint32_t kCrc32 = 0x{vectors_crc:08X}u;",
            "// CRC-32 of exp2_q30's table (2^(i/32) in Q1.30, 32 int64, little-endian).",
            f"inline constexpr uint32_t kExp2TableCrc32 = 0x{table_crc:08X}u;\n",
            "}  // namespace selftest_i8_data\n}  // namespace tinyattn"]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed header differs")
    return selftest_vectors.write_or_check(OUT, generate(), ap.parse_args().check, __file__)


if __name__ == "__main__":
    sys.exit(main())
