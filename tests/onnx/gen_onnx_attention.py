#!/usr/bin/python3
"""ONNX Attention cases for `tinyattn run`, from the operator's definition.

Writes tests/onnx/cases/: per case a folder of .npy inputs (ONNX's Q, K, V,
attn_mask, past_key, past_value) and expected outputs (Y, present_key,
present_value, qk_matmul_output), and manifest.json: per case the ONNX
attributes, the `tinyattn run` arguments that express it and the tolerances.
tests/onnx/onnx_cases.py runs every case through the tool. The same cases
go into tests/onnx/cases/onnx_cases.h (inputs, the mask already broadcast to
a per-head additive bias, expected Y and qk_matmul_output), which the
`onnx_library` suite runs through the library on every target.

The expected outputs follow ONNX Attention (opset 23, the definition as its
reference implementation onnx/reference/ops/op_attention.py now computes it),
written here from that definition and sharing nothing with the tool:

  scale   default 1/sqrt(head_size); the logits are scale * Q K^T
  present past_key / past_value joined before K / V on the sequence axis (T = P + M)
  softcap c > 0: logits -> c * tanh(logits / c), before the mask is added
  attn_mask  broadcast to [B, Hq, N, T]; a last axis shorter than T is padded with
          -inf (false); bool: true = attend (0), false = -inf; float: added
  is_causal  query i sees key j iff j <= i + offset: offset = past length with
          past_key, nonpad_kv_seqlen[b] - N without it (external cache), else 0
  nonpad_kv_seqlen  keys j >= nonpad_kv_seqlen[b] are masked
  GQA     query head h reads KV head h // (Hq / Hkv)
  qk_matmul_output  mode 0 and 1: the logits after softcap (the scaled Q K^T
          without one); mode 2: after softcap and the mask; mode 3: the softmax
  a row whose bias is -inf everywhere (no attendable key): softmax and Y are 0

Where the attribute's text reads otherwise (mode 0 "the output of qk matmul"
with a softcap, mode 1 "includes the addition of the attention mask" without
one) the case also stores that reading (expected `scores_text`) and the tool
stage that gives it: both are checked, so the difference stays in view.

Arithmetic is float64 with exactly rounded dot products and sums and exp/tanh
in software (tools/gen/exact_math.py): the files are the same on every machine.
fp16 cases hold float16 inputs; their expected values are the exact math on
those halves.

  /usr/bin/python3 tests/onnx/gen_onnx_attention.py          # rewrite tests/onnx/cases
  /usr/bin/python3 tests/onnx/gen_onnx_attention.py --check  # regenerate in a temp dir, exit 1 if anything differs
"""
import argparse
import json
import math
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "gen"))
from exact_math import dot, exp, fsum, tanh  # noqa: E402

CASES_DIR = os.path.join(HERE, "cases")
F16_ULP = 2.0 ** -11
F16_MIN_SUB = 2.0 ** -25
# docs/core.md's fp32 bound (2e-5 max|v| + 2e-5 |y|) and docs/quant.md's fp16 one (plus the half rounding of the result).
TOL = {
    "f32": {"y_vmax": 2e-5, "y_rel": 2e-5, "y_abs": 0.0, "a_abs": 2e-6, "a_rel": 2e-5, "s_abs": 1e-5, "s_rel": 1e-5},
    "f16": {"y_vmax": 2e-5 * (1 + F16_ULP), "y_rel": 2e-5 + F16_ULP, "y_abs": F16_MIN_SUB,
            "a_abs": 2e-6 + F16_MIN_SUB, "a_rel": 2e-5 + F16_ULP},
}


def onnx_attention(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, scale=None,
                   is_causal=False, softcap=0.0, qk_matmul_output_mode=0):
    """ONNX Attention on 4-D inputs in exact float64. Returns Y, present_key,
    present_value, qk_matmul_output and the attribute-text reading of the
    latter (None where it agrees)."""
    B, Hq, N, Dk = Q.shape
    _, Hkv, M, _ = K.shape
    present_key = K if past_key is None else np.concatenate((past_key, K), axis=2)
    present_value = V if past_value is None else np.concatenate((past_value, V), axis=2)
    T = present_key.shape[2]
    s = 1.0 / math.sqrt(Dk) if scale is None else float(np.float32(scale))
    # The additive bias, [B, Hq, N, T].
    bias = np.zeros((B, Hq, N, T))
    if attn_mask is not None:
        m = attn_mask
        pad = T - m.shape[-1]
        if pad > 0:
            m = np.concatenate((m, np.full(m.shape[:-1] + (pad,), False if m.dtype == bool else -np.inf, m.dtype)), -1)
        add = np.where(m, 0.0, -np.inf) if m.dtype == bool else m.astype(np.float64)
        bias = bias + np.broadcast_to(add, (B, Hq, N, T))
    i = np.arange(N)[:, None]
    j = np.arange(T)[None, :]
    for b in range(B):
        if is_causal:
            offset = past_key.shape[2] if past_key is not None else (
                int(nonpad_kv_seqlen[b]) - N if nonpad_kv_seqlen is not None else 0)
            bias[b] = np.where(j <= i + offset, bias[b], -np.inf)
        if nonpad_kv_seqlen is not None:
            bias[b] = np.where(j < int(nonpad_kv_seqlen[b]), bias[b], -np.inf)
    kq = present_key.astype(np.float64)
    vq = present_value.astype(np.float64)
    qq = Q.astype(np.float64)
    group = Hq // Hkv
    raw = np.zeros((B, Hq, N, T))
    for b in range(B):
        for h in range(Hq):
            for r in range(N):
                for c in range(T):
                    raw[b, h, r, c] = s * dot(qq[b, h, r], kq[b, h // group, c])
    capped = raw if not softcap else np.vectorize(lambda x: softcap * tanh(x / softcap))(raw)
    logits = capped + bias
    probs = np.zeros_like(logits)
    Y = np.zeros((B, Hq, N, V.shape[3]))
    for b in range(B):
        for h in range(Hq):
            for r in range(N):
                if np.isneginf(bias[b, h, r]).all():
                    continue  # no attendable key: softmax 0, Y 0
                row = logits[b, h, r]
                mx = max(row)
                e = [exp(x - mx) for x in row]
                total = math.fsum(e)
                probs[b, h, r] = [x / total for x in e]
                Y[b, h, r] = [dot(probs[b, h, r], vq[b, h // group, :, d]) for d in range(V.shape[3])]
    qk = {0: capped, 1: capped, 2: logits, 3: probs}[qk_matmul_output_mode]
    text = None
    if qk_matmul_output_mode == 0 and softcap:
        text = raw  # "the output of qk matmul"
    if qk_matmul_output_mode == 1 and not softcap and attn_mask is not None:
        text = raw + bias  # "includes the addition of the attention mask"
    return Y, present_key, present_value, qk, text


def rnd(rng, *shape, sd=1.0):
    return (rng.standard_normal(shape) * sd).astype(np.float32)


# Each case: name, kinds, seed, (B, Hq, Hkv, N, M, Dk, Dv), and its ONNX attributes and optional inputs.
def case_list():
    c = []

    def add(name, kinds, seed, dims, dtype="f32", past=0, mask=None, q_sd=1.0, **attrs):
        c.append(dict(name=name, kinds=kinds, seed=seed, dims=dims, dtype=dtype, past=past, mask=mask, q_sd=q_sd,
                      attrs=attrs))

    add("plain", ["plain", "batch"], 1, (2, 3, 3, 4, 6, 8, 8), qk_matmul_output_mode=3)
    add("gqa", ["gqa", "batch"], 2, (2, 4, 2, 3, 5, 8, 6), qk_matmul_output_mode=3)
    add("mqa_scaled", ["gqa", "scale"], 3, (1, 3, 1, 3, 5, 8, 4), scale=0.1)
    add("batch3_float_mask_4d", ["batch", "float_mask"], 4, (3, 2, 2, 3, 4, 4, 4), mask=("float", (3, 2, 3, 4)))
    add("softcap", ["softcap"], 5, (2, 2, 2, 3, 5, 8, 4), q_sd=3.0, softcap=1.5)
    add("softcap_gqa_causal", ["softcap", "gqa", "causal"], 6, (1, 4, 2, 4, 4, 8, 4), q_sd=3.0, softcap=1.5,
        is_causal=1)
    add("softcap_float_mask", ["softcap", "float_mask"], 7, (2, 2, 2, 3, 5, 8, 4), q_sd=3.0, softcap=1.5,
        mask=("float", (3, 5)))
    add("softcap_bool_mask_causal", ["softcap", "bool_mask", "causal"], 8, (2, 2, 1, 4, 4, 8, 4), q_sd=3.0,
        softcap=1.5, is_causal=1, mask=("bool", (2, 1, 4, 4)))
    add("mode0", ["qk_mode"], 9, (1, 2, 2, 3, 4, 8, 4), qk_matmul_output_mode=0)
    add("mode0_softcap", ["qk_mode", "softcap", "text_reading"], 10, (1, 2, 2, 3, 4, 8, 4), q_sd=3.0, softcap=1.5,
        qk_matmul_output_mode=0)
    add("mode1_softcap_mask", ["qk_mode", "softcap", "float_mask"], 11, (1, 2, 2, 3, 4, 8, 4), q_sd=3.0, softcap=1.5,
        mask=("float", (3, 4)), qk_matmul_output_mode=1)
    add("mode1_mask", ["qk_mode", "float_mask", "text_reading"], 12, (1, 2, 2, 3, 4, 8, 4), mask=("float", (3, 4)),
        qk_matmul_output_mode=1)
    add("mode2_softcap_mask_causal", ["qk_mode", "softcap", "bool_mask", "causal"], 13, (2, 2, 1, 3, 5, 8, 4),
        q_sd=3.0, softcap=1.5, is_causal=1, mask=("bool", (2, 2, 3, 5)), qk_matmul_output_mode=2)
    add("mode3_gqa_float_mask", ["qk_mode", "gqa", "float_mask"], 14, (2, 4, 2, 3, 4, 8, 4),
        mask=("float", (1, 1, 3, 4)), qk_matmul_output_mode=3)
    add("past_causal", ["past", "causal", "batch"], 15, (2, 2, 2, 3, 3, 8, 4), past=4, is_causal=1)
    add("past_gqa_causal_mode2", ["past", "gqa", "causal", "qk_mode"], 16, (2, 4, 2, 3, 2, 8, 6), past=5,
        is_causal=1, qk_matmul_output_mode=2)
    add("past_decode_softcap", ["past", "causal", "softcap"], 17, (2, 2, 1, 1, 1, 8, 4), past=6, q_sd=3.0,
        softcap=1.5, is_causal=1, qk_matmul_output_mode=3)
    add("past_float_mask_causal", ["past", "float_mask", "causal"], 18, (1, 2, 2, 3, 3, 4, 4), past=3, is_causal=1,
        mask=("float", (1, 2, 3, 6)))
    add("past_short_mask", ["past", "bool_mask", "mask_padding"], 19, (2, 2, 2, 2, 2, 4, 4), past=3,
        mask=("bool", (2, 1, 2, 4)))
    add("external_cache_causal", ["external_cache", "causal", "batch"], 20, (2, 2, 2, 3, 8, 8, 4), is_causal=1,
        nonpad_kv_seqlen=[6, 3], qk_matmul_output_mode=3)
    add("external_cache_short", ["external_cache", "causal", "fully_masked"], 21, (2, 2, 1, 3, 6, 4, 4), is_causal=1,
        nonpad_kv_seqlen=[1, 5], qk_matmul_output_mode=3)
    add("fully_masked_bool", ["fully_masked", "bool_mask", "batch"], 22, (2, 2, 2, 3, 5, 4, 4),
        mask=("bool_empty_row", (2, 1, 3, 5)), qk_matmul_output_mode=3)
    add("fully_masked_float", ["fully_masked", "float_mask", "qk_mode"], 23, (1, 2, 2, 3, 4, 4, 4),
        mask=("float_empty_row", (3, 4)), qk_matmul_output_mode=2)
    add("mask_rows_broadcast", ["bool_mask", "batch"], 24, (2, 2, 2, 3, 5, 4, 4), mask=("bool", (2, 1, 1, 5)))
    add("mask_3d_heads", ["float_mask"], 25, (1, 3, 3, 2, 4, 4, 4), mask=("float", (3, 2, 4)))
    add("mask_per_head_bool", ["bool_mask", "batch"], 26, (2, 2, 1, 3, 4, 4, 4), mask=("bool", (2, 2, 3, 4)))
    add("f16_plain", ["fp16", "batch"], 27, (2, 2, 2, 3, 5, 8, 8), dtype="f16", qk_matmul_output_mode=3)
    add("f16_gqa_past_causal", ["fp16", "gqa", "past", "causal"], 28, (2, 4, 2, 2, 2, 8, 4), dtype="f16", past=4,
        is_causal=1)
    add("f16_softcap_bool_mask", ["fp16", "softcap", "bool_mask", "fully_masked"], 29, (1, 2, 2, 3, 5, 8, 4),
        dtype="f16", q_sd=3.0, softcap=1.5, mask=("bool_empty_row", (3, 5)), qk_matmul_output_mode=3)
    add("f16_float_mask_external", ["fp16", "float_mask", "external_cache", "causal"], 30, (2, 2, 2, 2, 6, 8, 4),
        dtype="f16", mask=("float", (2, 1, 2, 6)), is_causal=1, nonpad_kv_seqlen=[4, 6])
    return c


def make_mask(rng, kind, shape):
    if kind.startswith("bool"):
        m = rng.random(shape) < 0.7
        m[..., 0] = True  # keep rows non-empty unless asked
        if kind == "bool_empty_row":
            m[..., 1, :] = False
        return m
    m = (rng.standard_normal(shape) * 0.5).astype(np.float32)
    m[rng.random(shape) < 0.15] = -np.inf
    m[..., 0] = 0.0
    if kind == "float_empty_row":
        m[..., 1, :] = -np.inf
    return m


def generate(out_dir):
    entries = []
    manifest = {"definition": "ONNX Attention opset 23 (onnx/reference/ops/op_attention.py's computation)",
                "tolerances": TOL, "cases": []}
    for spec in case_list():
        rng = np.random.default_rng(20261204 + spec["seed"])
        B, Hq, Hkv, N, M, Dk, Dv = spec["dims"]
        dt = np.float16 if spec["dtype"] == "f16" else np.float32
        a = dict(spec["attrs"])
        P = spec["past"]
        arrays = {"q": rnd(rng, B, Hq, N, Dk, sd=spec["q_sd"]).astype(dt), "k": rnd(rng, B, Hkv, M, Dk).astype(dt),
                  "v": rnd(rng, B, Hkv, M, Dv).astype(dt)}
        if P:
            arrays["past_k"] = rnd(rng, B, Hkv, P, Dk).astype(dt)
            arrays["past_v"] = rnd(rng, B, Hkv, P, Dv).astype(dt)
        if spec["mask"]:
            m = make_mask(rng, *spec["mask"])
            arrays["mask"] = m if m.dtype == bool else m.astype(dt)
        nonpad = a.pop("nonpad_kv_seqlen", None)
        mode = a.get("qk_matmul_output_mode", 0)
        y, pk, pv, qk, text = onnx_attention(
            arrays["q"], arrays["k"], arrays["v"], attn_mask=arrays.get("mask"), past_key=arrays.get("past_k"),
            past_value=arrays.get("past_v"), nonpad_kv_seqlen=None if nonpad is None else np.array(nonpad),
            scale=a.get("scale"), is_causal=bool(a.get("is_causal")), softcap=a.get("softcap", 0.0),
            qk_matmul_output_mode=mode)
        expected = {"y": y}
        if P:
            expected["present_k"], expected["present_v"] = pk, pv
        args = ["--q", "{q}", "--k", "{k}", "--v", "{v}", "--out", "{out_y}"]
        if spec["dtype"] == "f16":
            args += ["--dtype", "f16"]
        if P:
            args += ["--past-k", "{past_k}", "--past-v", "{past_v}", "--present-k", "{out_present_k}",
                     "--present-v", "{out_present_v}"]
        if "mask" in arrays:
            args += ["--mask", "{mask}"]
        if a.get("is_causal"):
            args += ["--causal", "onnx"]
        if nonpad is not None:
            args += ["--kv-len", ",".join(str(x) for x in nonpad)]
        if "scale" in a:
            args += ["--scale", repr(a["scale"])]
        if "softcap" in a:
            args += ["--softcap", repr(a["softcap"])]
        if Hq != Hkv:
            args += ["--heads", f"{Hq},{Hkv}"]
        stage = None
        text_stage = None
        if mode == 3:
            expected["weights"] = qk
            args += ["--weights", "{out_weights}"]
        elif "qk_matmul_output_mode" in a:
            expected["scores"] = qk
            stage = {0: "softcapped" if a.get("softcap") else "scaled", 1: "softcapped", 2: "masked"}[mode]
            args += ["--scores", "{out_scores}", "--score-stage", stage]
            if text is not None:
                expected["scores_text"] = text
                text_stage = "scaled" if mode == 0 else "masked"
        folder = os.path.join(out_dir, spec["name"])
        os.makedirs(folder)
        for key, arr in {**arrays, **expected}.items():
            np.save(os.path.join(folder, key + ".npy"), arr)
        entry = {"name": spec["name"], "kinds": spec["kinds"], "dtype": spec["dtype"],
                 "shape": {"B": B, "Hq": Hq, "Hkv": Hkv, "N": N, "M": M, "P": P, "Dk": Dk, "Dv": Dv},
                 "onnx_attributes": a, "onnx_inputs": sorted(arrays) + (["nonpad_kv_seqlen"] if nonpad else []),
                 "nonpad_kv_seqlen": nonpad, "tool_args": args, "expected": sorted(expected)}
        if text_stage:
            entry["text_reading"] = {"stage": text_stage, "note": (
                "the attribute text calls mode 0 'the output of qk matmul': without the softcap, --score-stage scaled"
                if mode == 0 else
                "the attribute text says mode 1 'includes the addition of the attention mask': --score-stage masked")}
        manifest["cases"].append(entry)
        entries.append((spec, arrays, expected, a, nonpad, None if "qk_matmul_output_mode" not in a else mode))
    write_header(out_dir, entries)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


def c_floats(values):
    """float32 values as C++ initializers (shortest round-trip text, -inf named)."""
    out = []
    for x in np.asarray(values, dtype=np.float32).ravel():
        if np.isneginf(x):
            out.append("-kInf")
        elif np.isfinite(x):
            out.append(repr(float(x)) + "f")
        else:
            raise ValueError(f"no C form for {x} in a case")
    return out


def c_array(name, ctype, items, per_line=8):
    lines = [f"const {ctype} {name}[{len(items)}] = {{"]
    for i in range(0, len(items), per_line):
        lines.append("    " + ", ".join(items[i:i + per_line]) + ",")
    lines.append("};")
    return lines


def write_header(out_dir, entries):
    """onnx_cases.h: every case for the library suite (tests/onnx/onnx_library.cc)."""
    h = ["// Generated by tests/onnx/gen_onnx_attention.py (--check keeps it current); do not edit.",
         "// ONNX Attention (opset 23) cases: inputs, attn_mask broadcast to an additive bias",
         "// [B][Hq][N][T] (bool: 0 or -inf; padding of a short mask: -inf), expected Y and",
         "// qk_matmul_output (float64 rounded to float). fp16 inputs are stored as their",
         "// binary16 bits.",
         "#pragma once", "", "#include <cstddef>", "#include <cstdint>", "#include <limits>", "",
         "namespace onnx_cases {", "",
         "constexpr float kInf = std::numeric_limits<float>::infinity();", "",
         "struct Case {",
         "  const char* name;",
         "  bool f16;                   // inputs and outputs are binary16 (the *_bits arrays)",
         "  size_t b, hq, hkv, n, m, p, dk, dv;  // P: past length; T = P + M",
         "  bool is_causal;",
         "  float softcap;              // 0: none",
         "  float scale;                // 0: default 1/sqrt(Dk)",
         "  int mode;                   // qk_matmul_output_mode, -1: not requested",
         "  const int32_t* nonpad;      // [B] nonpad_kv_seqlen, or null",
         "  const float *q, *k, *v, *past_k, *past_v;  // [B][H][S][D] (f32 cases)",
         "  const uint16_t *q_bits, *k_bits, *v_bits, *past_k_bits, *past_v_bits;  // (f16 cases)",
         "  const float* bias;          // [B][Hq][N][T], or null",
         "  const float* y;             // [B][Hq][N][Dv]",
         "  const float* qk;            // [B][Hq][N][T] at `mode`, or null",
         "};", ""]
    table = []
    for e in entries:
        spec, arrays, expected, a, nonpad, mode = e
        name = spec["name"]
        B, Hq, Hkv, N, M, Dk, Dv = spec["dims"]
        P = spec["past"]
        T = P + M
        f16 = spec["dtype"] == "f16"
        ptr = {}
        for key in ("q", "k", "v", "past_k", "past_v"):
            if key not in arrays:
                ptr[key] = ptr[key + "_bits"] = "nullptr"
                continue
            ident = f"{name}_{key}"
            if f16:
                h += c_array(ident, "uint16_t", [str(int(x)) for x in arrays[key].view(np.uint16).ravel()], 12)
                ptr[key], ptr[key + "_bits"] = "nullptr", ident
            else:
                h += c_array(ident, "float", c_floats(arrays[key]))
                ptr[key], ptr[key + "_bits"] = ident, "nullptr"
        bias = "nullptr"
        if "mask" in arrays:
            m = arrays["mask"]
            pad = T - m.shape[-1]
            if pad > 0:
                m = np.concatenate((m, np.full(m.shape[:-1] + (pad,), False if m.dtype == bool else -np.inf, m.dtype)), -1)
            add = np.where(m, 0.0, -np.inf) if m.dtype == bool else m.astype(np.float64)
            h += c_array(f"{name}_bias", "float", c_floats(np.broadcast_to(add, (B, Hq, N, T))))
            bias = f"{name}_bias"
        h += c_array(f"{name}_y", "float", c_floats(expected["y"]))
        qk = "nullptr"
        if mode is not None:
            h += c_array(f"{name}_qk", "float", c_floats(expected["weights" if mode == 3 else "scores"]))
            qk = f"{name}_qk"
        np_ptr = "nullptr"
        if nonpad is not None:
            h += c_array(f"{name}_nonpad", "int32_t", [str(x) for x in nonpad])
            np_ptr = f"{name}_nonpad"
        h.append("")
        table.append(f"    {{\"{name}\", {'true' if f16 else 'false'}, {B}, {Hq}, {Hkv}, {N}, {M}, {P}, {Dk}, {Dv}, "
                     f"{'true' if a.get('is_causal') else 'false'}, {c_floats([a.get('softcap', 0.0)])[0]}, "
                     f"{c_floats([a.get('scale', 0.0)])[0]}, {-1 if mode is None else mode}, {np_ptr}, "
                     f"{ptr['q']}, {ptr['k']}, {ptr['v']}, {ptr['past_k']}, {ptr['past_v']}, "
                     f"{ptr['q_bits']}, {ptr['k_bits']}, {ptr['v_bits']}, {ptr['past_k_bits']}, {ptr['past_v_bits']}, "
                     f"{bias}, {name}_y, {qk}}},")
    h += [f"const Case kCases[{len(table)}] = {{"] + table + ["};", "", "}  // namespace onnx_cases", ""]
    with open(os.path.join(out_dir, "onnx_cases.h"), "w") as f:
        f.write("\n".join(h))


def same_tree(a, b):
    """Differences between two generated trees (the same arrays bit for bit, the same manifest text)."""
    problems = []
    files = lambda root: sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
    fa, fb = files(a), files(b)
    if fa != fb:
        problems.append(f"file lists differ: {sorted(set(fa) ^ set(fb))}")
    for rel in sorted(set(fa) & set(fb)):
        pa, pb = os.path.join(a, rel), os.path.join(b, rel)
        if rel.endswith(".npy"):
            x, y = np.load(pa), np.load(pb)
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                problems.append(f"{rel} differs")
        elif open(pa, "rb").read() != open(pb, "rb").read():
            problems.append(f"{rel} differs")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="regenerate in a temp dir and compare, write nothing")
    args = ap.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = os.path.join(tmp, "cases")
            os.makedirs(fresh)
            generate(fresh)
            problems = same_tree(CASES_DIR, fresh) if os.path.isdir(CASES_DIR) else ["tests/onnx/cases is missing"]
        for p in problems:
            print(f"stale: {p}")
        print("tests/onnx/cases is " + ("stale: run tests/onnx/gen_onnx_attention.py" if problems else "current"))
        return 1 if problems else 0
    if os.path.isdir(CASES_DIR):
        shutil.rmtree(CASES_DIR)
    os.makedirs(CASES_DIR)
    generate(CASES_DIR)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(CASES_DIR) for f in fs)
    print(f"wrote {len(case_list())} cases to tests/onnx/cases ({total} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
