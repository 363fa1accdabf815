#!/usr/bin/env python3
"""Generates lib/src/selftest_vectors.h: the self-test's known-answer vectors.

The expected outputs are computed here in float64 from the exact fp32 inputs,
straight from the definitions (softmax(scale * Q K^T + mask) V), independently
of the C++ reference, with exactly rounded dot products and sums (math.fsum)
and exp/log computed in software (decimal), so the header is byte-identical on every machine
(see attention()). The exp coefficient bit patterns are read from
lib/contract/include/tinyattn/exp.h so the self-test can detect a corrupted table.

    /usr/bin/python3 tools/gen/selftest_vectors.py           # rewrite the header
    /usr/bin/python3 tools/gen/selftest_vectors.py --check   # fail if it differs
"""
import argparse
import math
import pathlib
import re
import struct
import sys
import zlib

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from exact_math import dot, exp, log, tanh  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "lib" / "src" / "selftest_vectors.h"
EXP_H = ROOT / "lib" / "contract" / "include" / "tinyattn" / "exp.h"

# Odd sizes on purpose: Dk = 17 leaves a tail on every vector width from 4 to
# 16 lanes; N < M makes the two causal alignments differ.
N, M, DK, DV, HQ, HKV = 4, 9, 17, 6, 2, 1
INPUT_SCALE = 1.0 / 32.0
BIAS_SCALE = 1.0 / 8.0
BIAS_NEG_INF = -128
# The kSoftcapBias case's softcap: small enough to bend these logits.
SOFTCAP = 0.5

# name, kind, a, b, query heads. kinds mirror CaseKind in the header.
CASES = [
    ("kat_plain", "kPlain", 0, 0, 1, "no mask"),
    ("kat_causal_top_left", "kCausalTopLeft", 0, 0, 1, "causal, top-left"),
    ("kat_causal_bottom_right", "kCausalBottomRight", 0, 0, 1, "causal, bottom-right"),
    ("kat_window_top_left", "kWindowTopLeft", 1, 2, 1, "window (1, 2), top-left"),
    ("kat_window_bottom_right", "kWindowBottomRight", 3, 0, 1, "window (3, 0), bottom-right"),
    ("kat_kv_len", "kKvLen", 6, 0, 1, "kv_len 6 of 9"),
    # ONNX Attention's causal rule over a partly filled cache: the 4 queries are
    # the last of 7 valid keys of 9 (offset 3; bottom-right would give 5).
    ("kat_causal_cache", "kCausalCache", 7, 0, 1, "causal over 7 valid keys of 9"),
    ("kat_keep_bytes", "kKeepBytes", 0, 0, 1, "keep bytes"),
    ("kat_keep_bits", "kKeepBits", 0, 0, 1, "keep bits"),
    ("kat_bias", "kBias", 0, 0, 1, "additive bias with -inf"),
    ("kat_gqa", "kPlain", 0, 0, 2, "grouped query, 2:1 heads"),
    # Capped before the bias is added (ONNX Attention's order): the -inf keys stay masked.
    ("kat_softcap_bias", "kSoftcapBias", 0, 0, 1, "softcap then additive bias"),
    # Column 0 of Q, K, V (Dk = Dv = 1, scale 1); the self-test repeats every
    # key until M exceeds one key tile, which gives the same Y and lse + ln(repeats)
    # through forward()'s online-softmax path.
    ("kat_tiled", "kTiled", 0, 0, 1, "online softmax, M > key tile"),
]


def hexf(x, suffix):
    h = float.hex(float(x))
    if "." in h:
        mant, exp = h.split("p")
        mant = mant.rstrip("0").rstrip(".")
        h = mant + "p" + exp
    return h + suffix


def f32(x):
    x = float(np.float32(x))
    if x == float("-inf"):
        return "-kInf"
    return hexf(x, "f")


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def exp_coefficients():
    text = EXP_H.read_text()
    block = re.search(r"kExpCoefficients\{(.*?)\};", text, re.S).group(1)
    vals = [float.fromhex(t[:-1]) for t in re.findall(r"-?0x[0-9A-Fa-f.]+p[+-]?\d+f", block)]
    if len(vals) != 11:
        sys.exit(f"expected 11 coefficients in {EXP_H}, found {len(vals)}")
    for v in vals:
        if float(np.float32(v)) != v:
            sys.exit(f"coefficient {v!r} is not exact in fp32")
    return [f32_bits(v) for v in vals]


def visible(kind, a, i, j, keep):
    if kind == "kCausalTopLeft":
        return j <= i
    if kind == "kCausalBottomRight":
        return j <= i + M - N
    if kind == "kWindowTopLeft":
        return i - a <= j <= i + CASES_B[kind]
    if kind == "kWindowBottomRight":
        p = i + M - N
        return p - a <= j <= p + CASES_B[kind]
    if kind == "kKvLen":
        return j < a
    if kind == "kCausalCache":
        return j <= i + a - N and j < a
    if kind in ("kKeepBytes", "kKeepBits"):
        return keep[i, j]
    return True


CASES_B = {kind: b for _, kind, _, b, _, _ in CASES}


def attention(q, k, v, kind, a, hq, keep, bias, scale):
    """float64 softmax(scale q k^T + mask) v per query head; empty rows -> 0, lse -inf.
    kSoftcapBias: softmax(c tanh(scale q k^T / c) + bias) v, c = SOFTCAP.

    NumPy does only correctly rounded elementwise operations here: its @ goes to
    BLAS (CPU-dependent kernels and summation order) and its float64 exp/log and
    some reductions are dispatched per CPU, so sums use math.fsum and exp/log the
    decimal module, which give the same bits on every machine."""
    ys, lses = [], []
    group = hq // HKV
    for h in range(hq):
        kh, vt = k[h // group].astype(np.float64), v[h // group].astype(np.float64).T
        qh = q[h].astype(np.float64)
        for i in range(N):
            row = []
            for j in range(M):
                s = -math.inf if not visible(kind, a, i, j, keep) else scale * dot(qh[i], kh[j])
                if kind == "kSoftcapBias":
                    s = SOFTCAP * tanh(s / SOFTCAP)
                if kind in ("kBias", "kSoftcapBias"):
                    s += float(bias[i, j])
                row.append(s)
            mx = max(row)  # exact: the same whatever the order
            if mx == -math.inf:
                ys.append(np.zeros(DV))
                lses.append(-math.inf)
                continue
            e = [exp(x - mx) for x in row]
            total = math.fsum(e)
            w = [x / total for x in e]
            ys.append(np.array([dot(w, vt[d]) for d in range(vt.shape[0])]))
            lses.append(mx + log(total))
    return np.array(ys), np.array(lses)


def crc_bytes(parts):
    crc = 0
    for p in parts:
        crc = zlib.crc32(p, crc)
    return crc & 0xFFFFFFFF


def fmt_list(values, per_line, indent="    "):
    lines = []
    for i in range(0, len(values), per_line):
        lines.append(indent + ", ".join(values[i:i + per_line]) + ",")
    return "\n".join(lines)


def generate():
    rng = np.random.default_rng(20261202)
    q8 = rng.integers(-48, 49, size=(HQ, N, DK), dtype=np.int8)
    k8 = rng.integers(-48, 49, size=(HKV, M, DK), dtype=np.int8)
    v8 = rng.integers(-64, 65, size=(HKV, M, DV), dtype=np.int8)
    keep = rng.random((N, M)) < 0.6
    keep[2, :] = False  # a fully masked row
    for i in (0, 1, 3):
        keep[i, rng.integers(0, M)] = True
    row_bytes = (M + 7) // 8
    keep_bits = np.zeros((N, row_bytes), dtype=np.uint8)
    for i in range(N):
        for j in range(M):
            if keep[i, j]:
                keep_bits[i, j // 8] |= 1 << (j % 8)
    bias8 = rng.integers(-24, 25, size=(N, M), dtype=np.int8)
    bias8[0, 1] = bias8[1, 4] = bias8[3, 0] = BIAS_NEG_INF
    bias = np.where(bias8 == BIAS_NEG_INF, -np.inf, bias8.astype(np.float64) * BIAS_SCALE)

    q = q8.astype(np.float32) * np.float32(INPUT_SCALE)
    k = k8.astype(np.float32) * np.float32(INPUT_SCALE)
    v = v8.astype(np.float32) * np.float32(INPUT_SCALE)
    # The scale the library uses by default: 1/sqrt(Dk) rounded to fp32.
    scale = float(np.float32(1.0) / np.sqrt(np.float32(DK)))

    ys, lses, case_rows = [], [], []
    for name, kind, a, b, hq, title in CASES:
        if kind == "kTiled":
            y, lse = attention(q[:, :, :1], k[:, :, :1], v[:, :, :1], "kPlain", a, hq, keep, bias, 1.0)
        else:
            y, lse = attention(q, k, v, kind, a, hq, keep, bias, scale)
        case_rows.append((name, title, kind, a, b, hq, sum(len(x) for x in ys), sum(len(x) for x in lses)))
        ys.append(y.reshape(-1).astype(np.float32))
        lses.append(lse.astype(np.float32))
    y_all = np.concatenate(ys)
    lse_all = np.concatenate(lses)

    # Softmax-range spot points: spread over [-87.3, 0] plus both ends and
    # points near the range-reduction boundaries (+-ln2/2 around multiples of ln 2).
    xs = list(np.linspace(-87.0, -0.01, 24))
    xs += [-87.33, -86.64, -0.3465736, -0.3465737, -1.0397208, -0.6931472, -1e-6, 0.0]
    exp_x = np.array(xs, dtype=np.float32)
    exp_y = np.array([exp(float(x)) for x in exp_x])

    coeff_bits = exp_coefficients()
    crc = crc_bytes([
        q8.tobytes(), k8.tobytes(), v8.tobytes(), keep_bits.tobytes(), bias8.tobytes(),
        y_all.astype("<f4").tobytes(), lse_all.astype("<f4").tobytes(),
        exp_x.astype("<f4").tobytes(), exp_y.astype("<f8").tobytes(),
        np.array(coeff_bits, dtype="<u4").tobytes(),
    ])

    ints = lambda arr: [str(int(x)) for x in arr.reshape(-1)]
    out = []
    out.append("// Generated by tools/gen/selftest_vectors.py -- do not edit; rerun the generator.")
    out.append("// Known-answer vectors of the power-on self-test (lib/src/selftest.cc).")
    out.append("#pragma once\n")
    out.append("#include <cstddef>\n#include <cstdint>\n")
    out.append("namespace tinyattn {\nnamespace selftest_data {\n")
    out.append(f"inline constexpr size_t kN = {N}, kM = {M}, kDk = {DK}, kDv = {DV}, kHq = {HQ}, kHkv = {HKV};")
    out.append(f"inline constexpr float kInputScale = {hexf(INPUT_SCALE, 'f')};  // inputs are int8 * this")
    out.append(f"inline constexpr float kBiasScale = {hexf(BIAS_SCALE, 'f')};    // bias is int8 * this")
    out.append(f"inline constexpr int8_t kBiasNegInf = {BIAS_NEG_INF};            // stands for -inf")
    out.append(f"inline constexpr float kSoftcap = {hexf(SOFTCAP, 'f')};       // Options::softcap of kSoftcapBias")
    out.append("inline constexpr float kInf = __builtin_huge_valf();\n")
    out.append(f"inline constexpr int8_t kQ[{q8.size}] = {{\n{fmt_list(ints(q8), 17)}\n}};")
    out.append(f"inline constexpr int8_t kK[{k8.size}] = {{\n{fmt_list(ints(k8), 17)}\n}};")
    out.append(f"inline constexpr int8_t kV[{v8.size}] = {{\n{fmt_list(ints(v8), 6)}\n}};")
    out.append(f"inline constexpr uint8_t kKeepMaskBits[{keep_bits.size}] = {{\n{fmt_list(ints(keep_bits), row_bytes)}\n}};")
    out.append(f"inline constexpr int8_t kBiasValues[{bias8.size}] = {{\n{fmt_list(ints(bias8), M)}\n}};\n")
    out.append("enum class CaseKind : uint8_t {\n  kPlain, kCausalTopLeft, kCausalBottomRight, kWindowTopLeft,\n"
               "  kWindowBottomRight, kKvLen, kKeepBytes, kKeepBits, kBias, kTiled, kSoftcapBias,\n"
               "  kCausalCache,\n};\n")
    out.append("struct Case {\n  const char* name;\n  const char* title;  // for the properties table\n  CaseKind kind;\n  int32_t a, b;   // window left/right, or kv_len (kKvLen, kCausalCache)\n"
               "  size_t hq;       // query heads (1, or kHq for grouped-query)\n"
               "  size_t y_offset; // into kExpectedY\n  size_t lse_offset;\n};\n")
    out.append(f"inline constexpr Case kCases[{len(CASES)}] = {{")
    for name, title, kind, a, b, hq, yo, lo in case_rows:
        out.append(f'    {{"{name}", "known answer: {title}", CaseKind::{kind}, {a}, {b}, {hq}, {yo}, {lo}}},')
    out.append("};\n")
    out.append(f"inline constexpr float kExpectedY[{y_all.size}] = {{\n{fmt_list([f32(x) for x in y_all], 4)}\n}};")
    out.append(f"inline constexpr float kExpectedLse[{lse_all.size}] = {{\n{fmt_list([f32(x) for x in lse_all], 4)}\n}};\n")
    out.append(f"inline constexpr float kExpX[{exp_x.size}] = {{\n{fmt_list([f32(x) for x in exp_x], 4)}\n}};")
    out.append(f"inline constexpr double kExpY[{exp_y.size}] = {{\n{fmt_list([hexf(x, '') for x in exp_y], 3)}\n}};\n")
    out.append("// kExpCoefficients (lib/contract/include/tinyattn/exp.h) as IEEE-754 bit patterns.")
    out.append(f"inline constexpr uint32_t kExpCoefficientBits[{len(coeff_bits)}] = {{\n"
               f"{fmt_list([f'0x{b:08X}u' for b in coeff_bits], 4)}\n}};\n")
    out.append("// CRC-32 (IEEE, reflected) of every array above, little-endian, in declaration order.")
    out.append(f"inline constexpr uint32_t kCrc32 = 0x{crc:08X}u;\n")
    out.append("}  // namespace selftest_data\n}  // namespace tinyattn")
    return "\n".join(out) + "\n"


def write_or_check(out, text, check, script):
    """Rewrites `out` with `text`, or with `check` only compares: 1 if it differs."""
    if check:
        if not out.exists() or out.read_text() != text:
            print(f"{out.relative_to(ROOT)} is out of date: rerun {pathlib.Path(script).name}", file=sys.stderr)
            return 1
        print(f"{out.relative_to(ROOT)} is up to date")
        return 0
    out.write_text(text)
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed header differs")
    return write_or_check(OUT, generate(), ap.parse_args().check, __file__)


if __name__ == "__main__":
    sys.exit(main())
