#!/usr/bin/python3
"""Known-answer vectors for tinyattn's forward attention.

Writes tests/vectors/forward_vectors.h: for each case, the fp32 inputs (Q, K, V
and any mask arrays) and the float64 reference outputs Y, A (weights) and lse,
computed here in float64 straight from the definitions:

  s_ij = scale * <q_i, k_j> + bias_ij     (float64; scale is the fp32 value the
                                           library uses, 1/sqrt(Dk) rounded to fp32)
  s_ij = -inf where the mask hides key j  (lib/include/tinyattn/mask.h)
  A    = softmax over the row, Y = A V,   lse_i = log sum_j exp(s_ij)
  a row with no visible key: Y = 0, A = 0, lse = -inf
  a row with a NaN logit:    Y = NaN, A = NaN on keys with a logit != -inf, lse = NaN
  a row whose max is +inf:   the +inf logits share the weight equally, lse = +inf

This code shares nothing with lib/ref; the suite checks lib/ref against it too.
Dot products and sums are exactly rounded (math.fsum), exp and log are computed
in software (decimal), so the header is byte-identical on every machine (see ARITHMETIC).
Numbers are written as shortest round-trip decimals (exact for fp32 and fp64).

  /usr/bin/python3 tests/vectors/gen_vectors.py          # rewrite the header
  /usr/bin/python3 tests/vectors/gen_vectors.py --check  # exit 1 if it differs
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "gen"))
from exact_math import dot, exp, log  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUT = os.path.join(HERE, "forward_vectors.h")

UNBOUNDED = 2**31 - 1  # tinyattn::kUnbounded
ALL_KEYS = 2**32 - 1   # tinyattn::kAllKeys
CAUSAL = {"none": 0, "top_left": 1, "bottom_right": 2}
ALIGN = {"top_left": 0, "bottom_right": 1}


class Case:
    def __init__(self, name, seed, n, m, dk, dv, hq=1, hkv=1, causal="none", window=None,
                 kv_len=None, keep=None, keep_bits=False, bias=None, per_head=False, scale=None,
                 sd=1.0):
        self.name, self.seed = name, seed
        self.n, self.m, self.dk, self.dv, self.hq, self.hkv = n, m, dk, dv, hq, hkv
        self.causal = causal
        self.window = window            # (left, right, align) or None
        self.kv_len = kv_len            # None: all keys
        self.keep = keep                # None or a function(rng, heads, n, m) -> uint8 [heads, n, m]
        self.keep_bits = keep_bits      # store the keep mask bit-packed instead of as bytes
        self.bias = bias                # None or a function(rng, heads, n, m) -> float32 [heads, n, m]
        self.per_head = per_head        # element masks differ per query head (head_stride = N*M)
        self.scale = scale              # None: 1/sqrt(Dk) in fp32
        self.sd = sd                    # standard deviation of Q and K


def random_keep(empty_row=None, p=0.7):
    def make(rng, heads, n, m):
        keep = rng.random((heads, n, m)) < p
        # Any nonzero byte means attend, not only 1.
        vals = rng.integers(1, 256, size=(heads, n, m), dtype=np.uint8)
        out = np.where(keep, vals, 0).astype(np.uint8)
        if empty_row is not None:
            out[:, empty_row, :] = 0
        return out
    return make


def random_bias(neg_inf_every=None, empty_row=None, pos_inf=None, nan=None):
    def make(rng, heads, n, m):
        b = rng.uniform(-2.0, 2.0, size=(heads, n, m)).astype(np.float32)
        if neg_inf_every:
            b[:, :, ::neg_inf_every] = -np.inf
        if empty_row is not None:
            b[:, empty_row, :] = -np.inf
        if pos_inf is not None:
            row, cols = pos_inf
            b[:, row, :] = rng.uniform(-2.0, 2.0, size=(heads, m)).astype(np.float32)
            b[:, row, cols] = np.inf
        if nan is not None:
            row, col = nan
            b[:, row, :] = rng.uniform(-2.0, 2.0, size=(heads, m)).astype(np.float32)
            b[:, row, col] = np.nan
        return b
    return make


CASES = [
    Case("none_5x7", 101, 5, 7, 6, 3),
    Case("none_1x1", 102, 1, 1, 1, 1),
    Case("odd_17x33_dk33_dv7", 103, 17, 33, 33, 7),
    Case("odd_3x100_dk9_dv17", 104, 3, 100, 9, 17),
    Case("causal_tl_n_lt_m", 111, 4, 9, 5, 3, causal="top_left"),
    Case("causal_tl_n_eq_m", 112, 6, 6, 4, 4, causal="top_left"),
    Case("causal_tl_n_gt_m", 113, 9, 4, 3, 2, causal="top_left"),
    Case("causal_br_n_lt_m", 114, 4, 9, 5, 3, causal="bottom_right"),
    Case("causal_br_n_eq_m", 115, 6, 6, 4, 4, causal="bottom_right"),
    Case("causal_br_n_gt_m", 116, 9, 4, 3, 2, causal="bottom_right"),  # rows 0..4 see no key
    Case("window_tl_2_1", 121, 7, 11, 5, 4, window=(2, 1, "top_left")),
    Case("window_br_3_0", 122, 5, 12, 6, 3, window=(3, 0, "bottom_right")),
    Case("window_shifted_-2_4", 123, 6, 9, 3, 3, window=(-2, 4, "top_left")),
    Case("kv_len_0", 131, 3, 8, 4, 5, kv_len=0),
    Case("kv_len_5_of_8", 132, 4, 8, 4, 5, kv_len=5),
    Case("kv_len_m", 133, 4, 8, 4, 5, kv_len=8),
    Case("causal_window_padding", 134, 8, 13, 7, 5, causal="bottom_right",
         window=(2, UNBOUNDED, "bottom_right"), kv_len=11),
    Case("keep_bytes", 141, 6, 13, 5, 4, keep=random_keep(empty_row=2)),
    Case("keep_bits", 142, 6, 13, 5, 4, keep=random_keep(empty_row=3), keep_bits=True),
    Case("keep_bits_m17", 143, 5, 17, 8, 3, keep=random_keep(), keep_bits=True),
    Case("bias_neg_inf", 151, 5, 10, 6, 4, bias=random_bias(neg_inf_every=4)),
    Case("bias_fully_masked_row", 152, 4, 6, 8, 3, bias=random_bias(empty_row=1)),
    Case("bias_pos_inf_and_nan_rows", 153, 4, 7, 3, 2, bias=random_bias(pos_inf=(1, [2, 5]), nan=(3, 4))),
    Case("causal_keep_bias", 154, 7, 9, 4, 3, causal="top_left", keep=random_keep(), bias=random_bias()),
    Case("gqa_hq4_hkv2", 161, 5, 7, 6, 4, hq=4, hkv=2),
    Case("gqa_hq4_hkv2_causal_br", 162, 3, 8, 5, 3, hq=4, hkv=2, causal="bottom_right"),
    Case("gqa_per_head_keep", 163, 4, 6, 4, 2, hq=4, hkv=2, keep=random_keep(p=0.6), per_head=True),
    Case("mqa_hq3_hkv1", 164, 4, 9, 7, 5, hq=3, hkv=1),
    Case("mqa_per_head_bias", 165, 3, 5, 4, 3, hq=2, hkv=1, bias=random_bias(neg_inf_every=3), per_head=True),
    Case("custom_scale_0.3", 171, 6, 8, 5, 4, scale=0.3),
    Case("custom_scale_2_large_logits", 172, 5, 11, 16, 3, scale=2.0, sd=2.0),
    # M above the driver's key tile (256): forward() without weights takes the
    # online-softmax path over several tiles.
    Case("long_m300", 181, 2, 300, 4, 3),
    Case("long_m261_window_padding", 182, 3, 261, 3, 2, window=(200, UNBOUNDED, "bottom_right"), kv_len=259),
]


# --- the reference, from the definitions -------------------------------------

def visible(c, n, m):
    """[n, m] bool: the structured masks (causal, window, kv_len)."""
    i = np.arange(n)[:, None].astype(np.int64)
    j = np.arange(m)[None, :].astype(np.int64)
    vis = np.ones((n, m), dtype=bool)

    def diag(align):
        return i if align == "top_left" else i + m - n

    if c.causal != "none":
        vis &= j <= diag(c.causal)
    if c.window is not None:
        left, right, align = c.window
        p = diag(align)
        if left != UNBOUNDED:
            vis &= j >= p - left
        if right != UNBOUNDED:
            vis &= j <= p + right
    if c.kv_len is not None:
        vis &= j < c.kv_len
    return vis


# ARITHMETIC: dot products, exp and log come from tools/gen/exact_math.py (the
# same bits on every CPU); NumPy does only correctly rounded elementwise operations.


def reference(c, q, k, v, keep, bias, scale):
    """Float64 Y [hq,n,dv], A [hq,n,m], lse [hq,n]."""
    group = c.hq // c.hkv
    y = np.zeros((c.hq, c.n, c.dv))
    a = np.zeros((c.hq, c.n, c.m))
    lse = np.zeros((c.hq, c.n))
    base = visible(c, c.n, c.m)
    for h in range(c.hq):
        kv = h // group
        qh, kh = q[h].astype(np.float64), k[kv].astype(np.float64)
        vt = v[kv].astype(np.float64).T  # [dv, m]
        hm = h if c.per_head else 0
        vis = base.copy()
        if keep is not None:
            vis &= keep[hm] != 0
        for i in range(c.n):
            row = []
            for j in range(c.m):
                if not vis[i, j]:
                    row.append(-math.inf)
                    continue
                s = float(scale) * dot(qh[i], kh[j])
                if bias is not None:
                    s += float(bias[hm, i, j])
                row.append(s)
            if any(math.isnan(x) for x in row):
                y[h, i] = np.nan
                a[h, i] = [0.0 if x == -math.inf else math.nan for x in row]
                lse[h, i] = np.nan
                continue
            mx = max(row)  # exact: the same whatever the order
            if mx == -math.inf:
                lse[h, i] = -np.inf
                continue
            if mx == math.inf:
                hits = [1.0 if x == math.inf else 0.0 for x in row]
                total = math.fsum(hits)
                w = [x / total for x in hits]
                lse[h, i] = np.inf
            else:
                e = [exp(x - mx) for x in row]
                total = math.fsum(e)
                w = [x / total for x in e]
                lse[h, i] = mx + log(total)
            a[h, i] = w
            y[h, i] = [dot(w, vt[d]) for d in range(c.dv)]
    return y, a, lse


def pack_bits(keep, m):
    """[heads, n, m] -> [heads, n, ceil(m/8)], LSB first; unused bits set to 1
    (they must be ignored)."""
    heads, n, _ = keep.shape
    row_bytes = (m + 7) // 8
    out = np.zeros((heads, n, row_bytes), dtype=np.uint8)
    for j in range(row_bytes * 8):
        bit = (keep[:, :, j] != 0) if j < m else np.ones((heads, n), dtype=bool)
        out[:, :, j // 8] |= (bit.astype(np.uint8) << (j % 8))
    return out


# --- emission ----------------------------------------------------------------

def lit_f32(x):
    x = np.float32(x)
    if np.isnan(x):
        return "kNaNf"
    if np.isinf(x):
        return "kInff" if x > 0 else "-kInff"
    s = np.format_float_positional(x, unique=True, trim="-")
    e = np.format_float_scientific(x, unique=True, trim="-")
    s = e if len(e) < len(s) else s
    if "." not in s and "e" not in s:
        s += ".0"
    return s + "f"


def lit_f64(x):
    x = float(x)
    if np.isnan(x):
        return "kNaN"
    if np.isinf(x):
        return "kInf" if x > 0 else "-kInf"
    return repr(x)


def array(ctype, name, values, lit, per_line):
    vals = [lit(x) for x in np.asarray(values).ravel()]
    lines = [", ".join(vals[i:i + per_line]) for i in range(0, len(vals), per_line)]
    body = ",\n  ".join(lines)
    return f"static const {ctype} {name}[] = {{\n  {body}}};\n"


def generate():
    out = []
    out.append("""// Generated by tests/vectors/gen_vectors.py: do not edit; rerun the generator
// (/usr/bin/python3 tests/vectors/gen_vectors.py). ctest checks it is current.
// Inputs are fp32, reference outputs float64 (from the definitions, exactly rounded sums).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace tinyattn_vectors {

constexpr float kInff = std::numeric_limits<float>::infinity();
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ForwardVector {
  const char* name;
  size_t n, m, dk, dv, hq, hkv;
  uint8_t causal;             // 0 none, 1 top-left, 2 bottom-right (tinyattn::Causal)
  int32_t window_left, window_right;
  uint8_t window_align;       // 0 top-left, 1 bottom-right (tinyattn::Align)
  uint32_t kv_len;            // 0xFFFFFFFF: all keys
  const uint8_t* keep;        // bytes [heads][N][M] or null
  const uint8_t* keep_bits;   // bits [heads][N][ceil(M/8)] or null
  const float* bias;          // [heads][N][M] or null
  size_t head_stride;         // elements between heads of keep/keep_bits/bias; 0: broadcast
  bool has_scale;
  float scale;                // used when has_scale
  float effective_scale;      // the scale the reference used
  const float *q, *k, *v;     // [Hq][N][Dk], [Hkv][M][Dk], [Hkv][M][Dv]
  const double *y, *a, *lse;  // [Hq][N][Dv], [Hq][N][M], [Hq][N]
};

""")
    entries = []
    for idx, c in enumerate(CASES):
        rng = np.random.default_rng(c.seed)
        q = (rng.standard_normal((c.hq, c.n, c.dk)) * c.sd).astype(np.float32)
        k = (rng.standard_normal((c.hkv, c.m, c.dk)) * c.sd).astype(np.float32)
        v = rng.standard_normal((c.hkv, c.m, c.dv)).astype(np.float32)
        heads = c.hq if c.per_head else 1
        keep = c.keep(rng, heads, c.n, c.m) if c.keep else None
        bias = c.bias(rng, heads, c.n, c.m) if c.bias else None
        scale = np.float32(c.scale) if c.scale is not None else np.float32(1) / np.sqrt(np.float32(c.dk))
        y, a, lse = reference(c, q, k, v, keep, bias, scale)

        p = f"kV{idx}_"
        out.append(f"// {c.name}\n")
        out.append(array("float", p + "q", q, lit_f32, 8))
        out.append(array("float", p + "k", k, lit_f32, 8))
        out.append(array("float", p + "v", v, lit_f32, 8))
        keep_ref = bits_ref = bias_ref = "nullptr"
        if keep is not None:
            if c.keep_bits:
                out.append(array("uint8_t", p + "keep_bits", pack_bits(keep, c.m), str, 16))
                bits_ref = p + "keep_bits"
            else:
                out.append(array("uint8_t", p + "keep", keep, str, 16))
                keep_ref = p + "keep"
        if bias is not None:
            out.append(array("float", p + "bias", bias, lit_f32, 8))
            bias_ref = p + "bias"
        out.append(array("double", p + "y", y, lit_f64, 4))
        out.append(array("double", p + "a", a, lit_f64, 4))
        out.append(array("double", p + "lse", lse, lit_f64, 4))
        out.append("\n")

        if c.window is None:
            wl, wr, wa = UNBOUNDED, UNBOUNDED, 0
        else:
            wl, wr, wa = c.window[0], c.window[1], ALIGN[c.window[2]]
        stride = 0
        if c.per_head:
            stride = c.n * ((c.m + 7) // 8 if c.keep_bits else c.m)
        kv_len = ALL_KEYS if c.kv_len is None else c.kv_len
        entries.append(
            f'  {{"{c.name}", {c.n}, {c.m}, {c.dk}, {c.dv}, {c.hq}, {c.hkv}, {CAUSAL[c.causal]}, '
            f"{wl}, {wr}, {wa}, {kv_len}u, {keep_ref}, {bits_ref}, {bias_ref}, {stride}, "
            f"{'true' if c.scale is not None else 'false'}, {lit_f32(c.scale if c.scale is not None else 0)}, "
            f"{lit_f32(scale)}, {p}q, {p}k, {p}v, {p}y, {p}a, {p}lse}},\n")

    out.append("static const ForwardVector kForwardVectors[] = {\n")
    out.extend(entries)
    out.append("};\n\n")
    out.append("constexpr size_t kForwardVectorCount = sizeof kForwardVectors / sizeof kForwardVectors[0];\n\n")
    out.append("}  // namespace tinyattn_vectors\n")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed header, write nothing")
    ap.add_argument("--output", default=OUTPUT)
    args = ap.parse_args()
    text = generate()
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as f:
                current = f.read()
        except OSError as e:
            print(f"gen_vectors: cannot read {args.output}: {e}", file=sys.stderr)
            return 1
        if current != text:
            print(f"gen_vectors: {args.output} is stale; rerun tests/vectors/gen_vectors.py", file=sys.stderr)
            return 1
        print(f"gen_vectors: {args.output} is current ({len(CASES)} cases, {len(text)} bytes)")
        return 0
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"gen_vectors: wrote {args.output} ({len(CASES)} cases, {len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
