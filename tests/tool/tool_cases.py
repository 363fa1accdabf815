#!/usr/bin/env python3
"""Tests of `tinyattn run` and `decode` against NumPy, and of the .npy error handling.

    tool_cases.py TINYATTN WORKDIR run        # generated cases vs a float64 reference
                                              # (--dtype i8: byte for byte vs tests/quant/gen_quant_vectors.py,
                                              # --int8-mode tflite vs tests/quant/gen_tflite_vectors.py,
                                              # --dtype i16 vs tools/gen/selftest_i16_vectors.py,
                                              # --int16-mode tflite vs tests/quant/gen_tflite16_vectors.py)
    tool_cases.py TINYATTN WORKDIR decode     # KV cache decodes (storage, sinks, RoPE) vs the same reference
    tool_cases.py TINYATTN WORKDIR malformed  # broken files and arguments: clean one-line errors

Cases and their expected outputs are generated into WORKDIR (the build tree)
from a fixed seed; nothing here is committed data. The float64 reference does its
dot products and sums exactly rounded (math.fsum) and its exp in software (decimal), so the
expected values and the errors reported are the same on every machine (see dot()).
"""
import io
import math
import os
import pathlib
import resource
import signal
import subprocess
import sys

import numpy as np

# The NumPy model of the int8 path (plan and forward, bit-exact), shared with the golden vectors.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "quant"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "gen"))
# The Hugging Face RoPE formula in float64, shared with the RoPE golden vectors.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "rope"))
import gen_quant_vectors as quant  # noqa: E402
import gen_tflite_vectors as tflite  # noqa: E402  (the TFLite mode's model: plan() and forward())
import gen_rope_vectors as rope_ref  # noqa: E402
import selftest_i16_vectors as i16  # noqa: E402  (the int16 spec's model: plan() and forward())
import gen_tflite16_vectors as tflite16  # noqa: E402  (the int16 TFLite mode's model: plan() and forward())
from exact_math import dot, exp, tanh  # noqa: E402

TOOL, WORK, MODE = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
WORK.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261202)
failures = []


def save(name, arr, version=None):
    path = WORK / name
    with open(path, "wb") as f:
        if version is None:
            np.save(f, arr)
        else:
            np.lib.format.write_array(f, arr, version=version)
    return str(path)


def tool(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=120)


# The float64 reference: NumPy does only correctly rounded elementwise operations;
# dot products and exp come from tools/gen/exact_math.py (the same bits on every CPU).


def reference(q, k, v, keep=None, bias=None, causal=None, window=None, kv_len=None, scale=None, softcap=None,
              offset=0, stages=None):
    """float64 attention with the library's semantics (fully masked rows -> 0).
    stages: a dict that receives the logits [Hq, N, M] at "scaled", "softcapped" and "masked".
    softcap c: each scaled logit becomes c*tanh(s/c) before the bias is added (ONNX Attention)."""
    q3 = q if q.ndim == 3 else q[None]
    k3 = k if k.ndim == 3 else k[None]
    v3 = v if v.ndim == 3 else v[None]
    hq, n, dk = q3.shape
    hkv, m, _ = k3.shape
    dv = v3.shape[2]
    s = scale if scale is not None else float(np.float32(1) / np.sqrt(np.float32(dk)))
    ys, ws = [], []
    i = np.arange(n)[:, None]
    j = np.arange(m)[None, :]
    vis = np.ones((n, m), bool)
    if causal == "top-left":
        vis &= j <= i
    if causal == "bottom-right":
        vis &= j <= i + m - n
    if causal == "offset":
        vis &= j <= i + offset
    if window is not None:
        left, right, align = window
        p = i if align == "top-left" else i + offset if align == "offset" else i + m - n
        vis &= (j >= p - left) & (j <= p + right)
    if kv_len is not None:
        vis &= j < kv_len
    for h in range(hq):
        g = h // (hq // hkv)
        qh, kh, vt = q3[h].astype(np.float64), k3[g].astype(np.float64), v3[g].astype(np.float64).T
        visible = vis.copy()
        if keep is not None:
            visible &= (keep if keep.ndim == 2 else keep[h]).astype(bool)
        bh = None if bias is None else (bias if bias.ndim == 2 else bias[h]).astype(np.float64)
        a = np.zeros((n, m))
        y = np.zeros((n, dv))
        if stages is not None:
            raw = np.array([[s * dot(qh[r], kh[c]) for c in range(m)] for r in range(n)])
            capped = raw if softcap is None else np.array([[softcap * tanh(x / softcap) for x in row] for row in raw])
            masked = np.where(visible, capped + (0.0 if bh is None else bh), -np.inf)
            for key, val in (("scaled", raw), ("softcapped", capped), ("masked", masked)):
                stages.setdefault(key, []).append(val)
        for r in range(n):
            row = []
            for c in range(m):
                x = s * dot(qh[r], kh[c]) if visible[r, c] else -math.inf
                if visible[r, c] and softcap is not None:
                    x = softcap * tanh(x / softcap)
                if visible[r, c] and bh is not None:
                    x += float(bh[r, c])
                row.append(x)
            mx = max(row)  # exact: the same whatever the order
            if not math.isfinite(mx) or any(math.isnan(x) for x in row):
                continue  # no visible key (or a +inf or NaN logit): Y = 0, A = 0
            e = [exp(x - mx) for x in row]
            total = math.fsum(e)
            a[r] = [x / total for x in e]
            y[r] = [dot(a[r], vt[d]) for d in range(dv)]
        ys.append(y)
        ws.append(a)
    y, w = np.array(ys), np.array(ws)
    return (y, w) if q.ndim == 3 else (y[0], w[0])


def check_run(name, arrays, flags, ref_kwargs, version=None, dtype=np.float32, weights=True):
    q, k, v = (a.astype(dtype) for a in arrays)
    args = ["run", "--q", save(f"{name}_q.npy", q, version), "--k", save(f"{name}_k.npy", k, version),
            "--v", save(f"{name}_v.npy", v, version), "--out", str(WORK / f"{name}_y.npy"), *flags]
    if weights:
        args += ["--weights", str(WORK / f"{name}_a.npy")]
    r = tool(*args)
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        return
    y_ref, a_ref = reference(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), **ref_kwargs)
    y = np.load(WORK / f"{name}_y.npy")
    a = np.load(WORK / f"{name}_a.npy") if weights else a_ref
    if y.shape != y_ref.shape or a.shape != a_ref.shape:
        failures.append(f"{name}: shapes {y.shape}/{a.shape}, expected {y_ref.shape}/{a_ref.shape}")
        return
    vmax = float(np.abs(v.astype(np.float64)).max())
    y_err = np.abs(y - y_ref) - (2e-5 * vmax + 2e-5 * np.abs(y_ref))
    a_err = np.abs(a - a_ref) - (2e-6 + 2e-5 * a_ref)
    if y_err.max() > 0 or a_err.max() > 0:
        failures.append(f"{name}: Y off by {np.abs(y - y_ref).max():.3g}, A off by {np.abs(a - a_ref).max():.3g}")
    elif (a_ref == 0).any() and (a[a_ref == 0] != 0).any():
        failures.append(f"{name}: masked weights are not exactly 0")
    else:
        print(f"ok   {name}: Y max error {np.abs(y - y_ref).max():.2e}")


def check_scores(name, arrays, flags, ref_kwargs):
    """--scores at every stage against the reference's logits: -inf exactly where masked."""
    q, k, v = (a.astype(np.float32) for a in arrays)
    args = ["run", "--q", save(f"{name}_q.npy", q), "--k", save(f"{name}_k.npy", k), "--v", save(f"{name}_v.npy", v),
            "--out", str(WORK / f"{name}_y.npy"), *flags]
    stages = {}
    reference(q, k, v, stages=stages, **ref_kwargs)
    for stage, want in stages.items():
        want = np.array(want) if q.ndim == 3 else np.array(want)[0]
        out = WORK / f"{name}_{stage}.npy"
        r = tool(*args, "--scores", str(out), "--score-stage", stage)
        if r.returncode != 0:
            failures.append(f"{name}/{stage}: exit {r.returncode}: {r.stderr.strip()}")
            continue
        got = np.load(out).astype(np.float64)
        inf = np.isinf(want)
        if got.shape != want.shape or not np.array_equal(got[inf], want[inf]):
            failures.append(f"{name}/{stage}: shape {got.shape} or masked entries differ from the reference")
            continue
        err = np.abs(got[~inf] - want[~inf]) - (1e-5 + 1e-5 * np.abs(want[~inf]))
        if err.size and err.max() > 0:
            failures.append(f"{name}/{stage}: off by {np.abs(got[~inf] - want[~inf]).max():.3g}")
        else:
            print(f"ok   {name}/{stage}: {int(inf.sum())} masked entries")


F16_ULP = 2.0 ** -11
F16_MIN_SUB = 2.0 ** -25
worst = {"f16_y": 0.0, "f16_a": 0.0, "i8_y_lsb": 0.0, "i8_p_lsb": 0.0, "i16_y_lsb": 0.0, "i16_p_lsb": 0.0}


def check_f16(name, arrays, flags, ref_kwargs, weights=True, inputs=np.float16):
    """--dtype f16 against float64 on the fp16 inputs, within docs/quant.md's fp16 bounds.

    inputs=np.float32 writes float32 files: the tool must round them to the same
    halves as NumPy (to nearest even), so Y and A must equal the fp16-input run bit for bit."""
    # Through float32 first, so both file kinds hold the same halves (no double-rounding difference).
    q, k, v = (a.astype(np.float32).astype(inputs) for a in arrays)
    out = lambda suffix: str(WORK / f"{name}_{suffix}.npy")
    args = ["run", "--dtype", "f16", "--q", save(f"{name}_q.npy", q), "--k", save(f"{name}_k.npy", k),
            "--v", save(f"{name}_v.npy", v), "--out", out("y"), *flags]
    if weights:
        args += ["--weights", out("a")]
    r = tool(*args)
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        return None
    qh, kh, vh = (a.astype(np.float32).astype(np.float16) for a in arrays)
    y_ref, a_ref = reference(qh.astype(np.float64), kh.astype(np.float64), vh.astype(np.float64), **ref_kwargs)
    y = np.load(out("y"))
    a = np.load(out("a")) if weights else None
    if y.dtype != np.float16 or (weights and a.dtype != np.float16):
        failures.append(f"{name}: outputs are {y.dtype}/{None if a is None else a.dtype}, expected float16")
        return None
    if y.shape != y_ref.shape or (weights and a.shape != a_ref.shape):
        failures.append(f"{name}: shapes {y.shape}, expected {y_ref.shape}")
        return None
    vmax = float(np.abs(vh.astype(np.float64)).max())
    yd = np.abs(y.astype(np.float64) - y_ref)
    y_bound = 2e-5 * vmax * (1 + F16_ULP) + F16_MIN_SUB + (2e-5 + F16_ULP) * np.abs(y_ref)
    problems = []
    if (yd > y_bound).any():
        problems.append(f"Y off by {yd.max():.3g} (bound {y_bound[yd > y_bound].min():.3g})")
    worst["f16_y"] = max(worst["f16_y"], yd.max() / vmax)
    if weights:
        ad = np.abs(a.astype(np.float64) - a_ref)
        a_bound = 2e-6 + F16_MIN_SUB + (2e-5 + F16_ULP) * a_ref
        if (ad > a_bound).any():
            problems.append(f"A off by {ad.max():.3g}")
        if (a_ref == 0).any() and (a[a_ref == 0] != 0).any():
            problems.append("masked weights are not exactly 0")
        worst["f16_a"] = max(worst["f16_a"], ad.max())
    if problems:
        failures.append(f"{name}: {', '.join(problems)}")
        return None
    print(f"ok   {name}: Y max error {yd.max():.2e} (max|v| {vmax:.2f})")
    return y, a


def qspec_text(qp, bias=None):
    parts = [f"{t}=" + "/".join(f"{s!r}:{z}" for s, z in zip(*qp[t])) for t in "qkvy"]
    if bias is not None:
        parts.append("b=" + "/".join(f"{s!r}:{z}" for s, z in zip(*bias)))
    return ",".join(parts)


def check_i8(name, dims, qp, flags, mask=None, softmax_scale=None, weights=True, bias=None, qparams_file=False):
    """--dtype i8: Y and the Q0.15 weights byte for byte against gen_quant_vectors.py's
    plan() and forward(); Y also within docs/quant.md's bound of the float64 softmax."""
    n, m, dk, dv, hq, hkv = dims
    data = {t: rng.integers(-128, 128, size=shape).astype(np.int8)
            for t, shape in (("q", (hq, n, dk)), ("k", (hkv, m, dk)), ("v", (hkv, m, dv)))}
    three_d = hq > 1 or hkv > 1
    files = {t: save(f"{name}_{t}.npy", a if three_d else a[0]) for t, a in data.items()}
    c = {"dims": dims, "softmax_scale": softmax_scale, "mask": dict(mask or {}),
         **{t: qp[t] for t in "qkvy"}, **{t + "_data": data[t].ravel() for t in "qkv"}}
    spec = qspec_text(qp, bias[0] if bias else None)
    if bias:
        c["bias"], c["bias_data"] = bias[0], bias[1].ravel()
        if bias[1].ndim == 3:
            c["mask"]["head_stride"] = n * m
        flags = [*flags, "--bias", save(f"{name}_b.npy", bias[1])]
    if qparams_file:
        spec = write(f"{name}_qparams.txt", spec.replace(",", "\n").encode() + b"\n")
    out = lambda suffix: str(WORK / f"{name}_{suffix}.npy")
    args = ["run", "--dtype", "i8", "--qparams", spec, "--q", files["q"], "--k", files["k"], "--v", files["v"],
            "--out", out("y"), *flags]
    if weights:
        args += ["--weights", out("a")]
    r = tool(*args)
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        return
    y_exp, w_exp = quant.forward(c, quant.plan(c))
    y = np.load(out("y"))
    problems = []
    if y.dtype != np.int8 or y.size != y_exp.size:
        failures.append(f"{name}: Y is {y.dtype} {y.shape}")
        return
    if not np.array_equal(y.ravel(), y_exp):
        problems.append(f"{int((y.ravel() != y_exp).sum())} Y bytes differ from gen_quant_vectors.forward")
    if weights:
        a = np.load(out("a"))
        if a.dtype != np.uint16 or not np.array_equal(a.ravel(), w_exp):
            problems.append(f"weights ({a.dtype}) differ from gen_quant_vectors.forward")
    # The float view: dequantize, float64 softmax, requantize without rounding.
    per = lambda t, h: (float(np.float32(qp[t][0][h if len(qp[t][0]) > 1 else 0])), qp[t][1][h if len(qp[t][1]) > 1 else 0])
    group = hq // hkv
    ss = float(np.float32(1) / np.sqrt(np.float32(dk))) if softmax_scale is None else float(np.float32(softmax_scale))
    y3 = y.reshape(hq, n, dv).astype(np.float64)
    for h in range(hq):
        g = h // group
        (sq, zq), (sk, zk), (sv, zv), (sy, zy) = per("q", h), per("k", g), per("v", g), per("y", h)
        qf = (data["q"][h].astype(np.float64) - zq) * sq
        kf = (data["k"][g].astype(np.float64) - zk) * sk
        vc = data["v"][g].astype(np.float64) - zv
        kw = {"scale": ss}
        if "causal_name" in (mask or {}):
            kw["causal"] = mask["causal_name"]
        if "window_ref" in (mask or {}):
            kw["window"] = mask["window_ref"]
        if "kv_len" in (mask or {}):
            kw["kv_len"] = mask["kv_len"]
        if (mask or {}).get("keep_kind") == 1:
            keep = mask["keep"].reshape(-1, n, m)
            kw["keep"] = keep[h if mask.get("head_stride") else 0]
        if bias:
            bs, bz = (float(np.float32(bias[0][0][h if len(bias[0][0]) > 1 else 0])),
                               bias[0][1][h if len(bias[0][1]) > 1 else 0])
            b = bias[1] if bias[1].ndim == 2 else bias[1][h]
            kw["bias"] = (b.astype(np.float64) - bz) * bs
        t_real, a_ref = reference(qf, kf, vc, **kw)  # in units of (v - zv)
        t = np.clip(zy + (sv / sy) * t_real, -128, 127)
        bound = 0.5 + (sv / sy) * (0.505 / 32768) * np.abs(vc).sum(axis=0)[None, :]
        err = np.abs(y3[h] - t)
        worst["i8_y_lsb"] = max(worst["i8_y_lsb"], err.max())
        if (err > bound).any():
            problems.append(f"head {h}: Y {err.max():.3f} LSB from the float64 softmax (bound {bound.min():.3f})")
        if weights:
            pd = np.abs(a.reshape(hq, n, m)[h].astype(np.float64) - 32768 * a_ref)
            worst["i8_p_lsb"] = max(worst["i8_p_lsb"], pd.max())
            if pd.max() > 0.505:
                problems.append(f"head {h}: probabilities {pd.max():.3f} LSB from the float64 softmax")
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}")
    else:
        print(f"ok   {name}: Y and A byte-identical to gen_quant_vectors.forward")


def check_i16(name, dims, qp, flags, mask=None, softmax_scale=None, weights=True, qparams_file=False, data=None,
              dtype="i16"):
    """--dtype i16: Y and the Q0.15 weights value for value against plan() and forward() of
    tools/gen/selftest_i16_vectors.py (the int16 spec in Python integers); Y also within
    docs/quant.md's bound of the float64 softmax."""
    n, m, dk, dv, hq, hkv = dims
    if data is None:
        data = {t: rng.integers(-32768, 32768, size=shape).astype(np.int16)
                for t, shape in (("q", (hq, n, dk)), ("k", (hkv, m, dk)), ("v", (hkv, m, dv)))}
    three_d = hq > 1 or hkv > 1
    files = {t: save(f"{name}_{t}.npy", a if three_d else a[0]) for t, a in data.items()}
    c = {"dims": dims, "softmax_scale": softmax_scale, "mask": dict(mask or {}),
         **{t: qp[t] for t in "qkvy"}, **{t + "_data": data[t].ravel() for t in "qkv"}}
    spec = qspec_text(qp)
    if qparams_file:
        spec = write(f"{name}_qparams.txt", spec.replace(",", "\n").encode() + b"\n")
    out = lambda suffix: str(WORK / f"{name}_{suffix}.npy")
    args = ["run", "--dtype", dtype, "--qparams", spec, "--q", files["q"], "--k", files["k"], "--v", files["v"],
            "--out", out("y"), *flags]
    if weights:
        args += ["--weights", out("a")]
    r = tool(*args)
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        return
    y_exp, w_exp = i16.forward(c, i16.plan(c))
    y = np.load(out("y"))
    problems = []
    if y.dtype != np.int16 or y.size != y_exp.size:
        failures.append(f"{name}: Y is {y.dtype} {y.shape}")
        return
    if not np.array_equal(y.ravel(), y_exp):
        problems.append(f"{int((y.ravel() != y_exp).sum())} Y values differ from selftest_i16_vectors.forward")
    if weights:
        a = np.load(out("a"))
        if a.dtype != np.uint16 or not np.array_equal(a.ravel(), w_exp):
            problems.append(f"weights ({a.dtype}) differ from selftest_i16_vectors.forward")
    # The float view: dequantize, float64 softmax, requantize without rounding.
    per = lambda t, h: float(np.float32(qp[t][0][h if len(qp[t][0]) > 1 else 0]))
    group = hq // hkv
    ss = float(np.float32(1) / np.sqrt(np.float32(dk))) if softmax_scale is None else float(np.float32(softmax_scale))
    y3 = y.reshape(hq, n, dv).astype(np.float64)
    for h in range(hq):
        g = h // group
        sq, sk, sv, sy = per("q", h), per("k", g), per("v", g), per("y", h)
        qf = data["q"][h].astype(np.float64) * sq
        kf = data["k"][g].astype(np.float64) * sk
        vc = data["v"][g].astype(np.float64)
        kw = {"scale": ss}
        if "causal_name" in (mask or {}):
            kw["causal"] = mask["causal_name"]
        if "window_ref" in (mask or {}):
            kw["window"] = mask["window_ref"]
        if "kv_len" in (mask or {}):
            kw["kv_len"] = mask["kv_len"]
        if (mask or {}).get("keep_kind") == 1:
            keep = mask["keep"].reshape(-1, n, m)
            kw["keep"] = keep[h if mask.get("head_stride") else 0]
        t_real, a_ref = reference(qf, kf, vc, **kw)  # in units of V's integers
        t = np.clip((sv / sy) * t_real, -32768, 32767)
        bound = 0.5 + (sv / sy) * (0.505 / 32768) * np.abs(vc).sum(axis=0)[None, :]
        err = np.abs(y3[h] - t)
        worst["i16_y_lsb"] = max(worst["i16_y_lsb"], err.max())
        if (err > bound).any():
            problems.append(f"head {h}: Y {err.max():.3f} LSB from the float64 softmax (bound {bound.min():.3f})")
        if weights:
            pd = np.abs(a.reshape(hq, n, m)[h].astype(np.float64) - 32768 * a_ref)
            worst["i16_p_lsb"] = max(worst["i16_p_lsb"], pd.max())
            if pd.max() > 0.505:
                problems.append(f"head {h}: probabilities {pd.max():.3f} LSB from the float64 softmax")
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}")
    else:
        print(f"ok   {name}: Y and A identical to selftest_i16_vectors.forward")


def check_tflite(name, dims, qp, flags, mask=None, softmax_scale=None, weights=True, qparams_file=False):
    """--dtype i8 --int8-mode tflite: Y and the weights (the softmax tensor + 128, uint16) byte
    for byte against gen_tflite_vectors.py's plan() and forward(). qp holds s= as "scores"."""
    n, m, dk, dv, hq, hkv = dims
    data = {t: rng.integers(-128, 128, size=shape).astype(np.int8)
            for t, shape in (("q", (hq, n, dk)), ("k", (hkv, m, dk)), ("v", (hkv, m, dv)))}
    three_d = hq > 1 or hkv > 1
    files = {t: save(f"{name}_{t}.npy", a if three_d else a[0]) for t, a in data.items()}
    c = {"dims": dims, "softmax_scale": softmax_scale, "mask": dict(mask or {}),
         **{t: qp[t] for t in ("q", "k", "v", "y", "scores")}, **{t + "_data": data[t].ravel() for t in "qkv"}}
    spec = qspec_text(qp) + ",s=" + "/".join(f"{sc!r}:{z}" for sc, z in zip(*qp["scores"]))
    if qparams_file:
        spec = write(f"{name}_qparams.txt", spec.replace(",", "\n").encode() + b"\n")
    out = lambda suffix: str(WORK / f"{name}_{suffix}.npy")
    args = ["run", "--dtype", "i8", "--int8-mode", "tflite", "--qparams", spec, "--q", files["q"], "--k", files["k"],
            "--v", files["v"], "--out", out("y"), *flags]
    if weights:
        args += ["--weights", out("a")]
    r = tool(*args)
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        return
    y_exp, w_exp = tflite.forward(c, tflite.plan(c))
    y = np.load(out("y"))
    problems = []
    if y.dtype != np.int8 or y.shape != ((hq, n, dv) if three_d else (n, dv)):
        failures.append(f"{name}: Y is {y.dtype} {y.shape}")
        return
    if not np.array_equal(y.ravel(), y_exp):
        problems.append(f"{int((y.ravel() != y_exp).sum())} Y bytes differ from gen_tflite_vectors.forward")
    if weights:
        a = np.load(out("a"))
        if a.dtype != np.uint16 or a.size != w_exp.size or not np.array_equal(a.ravel(), w_exp):
            problems.append(f"weights ({a.dtype} {a.shape}) differ from gen_tflite_vectors.forward")
        elif a.max() > 255:
            problems.append("a weight above 255 (the softmax tensor + 128)")
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}")
    else:
        print(f"ok   {name}: Y and A byte-identical to gen_tflite_vectors.forward")


def check_tflite16(name, dims, qp, flags, mask=None, softmax_scale=None, weights=True):
    """--dtype i16 --int16-mode tflite: Y and the weights (the int16 softmax tensor) value for
    value against gen_tflite16_vectors.py's plan() and forward(). qp holds s= as "scores"."""
    n, m, dk, dv, hq, hkv = dims
    data = {t: rng.integers(-32768, 32768, size=shape).astype(np.int16)
            for t, shape in (("q", (hq, n, dk)), ("k", (hkv, m, dk)), ("v", (hkv, m, dv)))}
    three_d = hq > 1 or hkv > 1
    files = {t: save(f"{name}_{t}.npy", a if three_d else a[0]) for t, a in data.items()}
    c = {"dims": dims, "softmax_scale": softmax_scale, "mask": dict(mask or {}),
         **{t: list(qp[t][0]) for t in ("q", "k", "v", "y", "scores")}, **{t + "_data": data[t].ravel() for t in "qkv"}}
    spec = qspec_text(qp) + ",s=" + "/".join(f"{sc!r}" for sc in qp["scores"][0])
    out = lambda suffix: str(WORK / f"{name}_{suffix}.npy")
    args = ["run", "--dtype", "i16", "--int16-mode", "tflite", "--qparams", spec, "--q", files["q"], "--k",
            files["k"], "--v", files["v"], "--out", out("y"), *flags]
    if weights:
        args += ["--weights", out("a")]
    r = tool(*args)
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        return
    y_exp, w_exp = tflite16.forward(c, tflite16.plan(c), tflite16.Stats())
    y = np.load(out("y"))
    problems = []
    if y.dtype != np.int16 or y.shape != ((hq, n, dv) if three_d else (n, dv)):
        failures.append(f"{name}: Y is {y.dtype} {y.shape}")
        return
    if not np.array_equal(y.ravel(), np.array(y_exp)):
        problems.append(f"{int((y.ravel() != np.array(y_exp)).sum())} Y values differ from gen_tflite16_vectors.forward")
    if weights:
        a = np.load(out("a"))
        if a.dtype != np.uint16 or a.size != len(w_exp) or not np.array_equal(a.ravel(), np.array(w_exp)):
            problems.append(f"weights ({a.dtype} {a.shape}) differ from gen_tflite16_vectors.forward")
        elif a.max() > 32767:
            problems.append("a weight above 32767 (the int16 softmax tensor)")
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}")
    else:
        print(f"ok   {name}: Y and A identical to gen_tflite16_vectors.forward")


def run_cases():
    r = lambda *shape: rng.standard_normal(shape)
    check_run("plain_2d", (r(5, 16), r(7, 16), r(7, 8)), [], {})
    check_run("gqa_3d", (r(4, 6, 8), r(2, 9, 8), r(2, 9, 5)), ["--heads", "4,2"], {})
    check_run("causal_tl", (r(4, 8), r(9, 8), r(9, 3)), ["--causal", "top-left"], {"causal": "top-left"})
    check_run("causal_br", (r(4, 8), r(9, 8), r(9, 3)), ["--causal", "bottom-right"], {"causal": "bottom-right"})
    check_run("window", (r(6, 8), r(6, 8), r(6, 4)), ["--window", "2,1"], {"window": (2, 1, "top-left")})
    check_run("window_br", (r(3, 8), r(7, 8), r(7, 4)), ["--window", "3,0,bottom-right"],
              {"window": (3, 0, "bottom-right")})
    check_run("kv_len", (r(3, 5), r(8, 5), r(8, 2)), ["--kv-len", "4"], {"kv_len": 4})
    # ONNX's causal rule over a cache of 7 valid keys in a buffer of 10: offset 7 - 3.
    check_run("causal_cache", (r(3, 8), r(10, 8), r(10, 4)), ["--causal", "offset", "--offset", "4", "--kv-len", "7"],
              {"causal": "offset", "offset": 4, "kv_len": 7})
    check_run("window_offset", (r(2, 5, 8), r(2, 9, 8), r(2, 9, 3)), ["--window", "2,0,offset", "--offset", "-1"],
              {"window": (2, 0, "offset"), "offset": -1})
    keep = rng.random((5, 7)) < 0.6
    keep[1] = False  # a fully masked row
    check_run("mask_b1", (r(5, 16), r(7, 16), r(7, 8)), ["--mask", save("mask_b1.npy", keep)], {"keep": keep})
    keep3 = (rng.random((2, 5, 7)) < 0.7).astype(np.uint8)
    check_run("mask_u1_heads", (r(2, 5, 16), r(2, 7, 16), r(2, 7, 8)), ["--mask", save("mask_u1.npy", keep3)],
              {"keep": keep3})
    bias = (rng.standard_normal((4, 6)) * 0.5).astype(np.float32)
    bias[0, 2] = bias[3, 0] = -np.inf
    check_run("bias_scale", (r(4, 8), r(6, 8), r(6, 3)), ["--bias", save("bias.npy", bias), "--scale", "0.3"],
              {"bias": bias, "scale": float(np.float32(0.3))})
    check_run("mask_and_causal", (r(5, 16), r(7, 16), r(7, 8)),
              ["--mask", save("mask_b1b.npy", keep), "--causal", "bottom-right"], {"keep": keep, "causal": "bottom-right"})
    cap = float(np.float32(0.75))
    check_run("softcap", (r(5, 16) * 2, r(7, 16), r(7, 8)), ["--softcap", "0.75"], {"softcap": cap})
    check_run("softcap_bias_causal_gqa", (r(4, 4, 8) * 2, r(2, 6, 8), r(2, 6, 5)),
              ["--softcap", "0.75", "--bias", save("bias_cap.npy", bias), "--causal", "top-left", "--heads", "4,2"],
              {"softcap": cap, "bias": bias, "causal": "top-left"})
    check_run("softcap_long_keys_tiled", (r(2, 3, 16) * 2, r(1, 700, 16), r(1, 700, 8)), ["--softcap", "0.75"],
              {"softcap": cap}, weights=False)
    check_scores("scores_plain", (r(5, 16) * 2, r(7, 16), r(7, 8)), [], {})
    check_scores("scores_softcap_bias_cache_gqa", (r(4, 4, 8) * 2, r(2, 6, 8), r(2, 6, 5)),
                 ["--softcap", "0.75", "--bias", save("bias_scores.npy", bias), "--causal", "offset", "--offset", "1",
                  "--kv-len", "5", "--heads", "4,2"],
                 {"softcap": cap, "bias": bias, "causal": "offset", "offset": 1, "kv_len": 5})
    check_run("float16", (r(5, 16), r(7, 16), r(7, 8)), [], {}, dtype=np.float16)
    check_run("format_2_0", (r(3, 4), r(5, 4), r(5, 2)), [], {}, version=(2, 0))
    check_run("format_3_0", (r(3, 4), r(5, 4), r(5, 2)), [], {}, version=(3, 0))
    # Longer than one key tile and no weights requested: the online-softmax path.
    check_run("long_keys_tiled", (r(2, 3, 16), r(1, 700, 16), r(1, 700, 8)), ["--causal", "bottom-right"],
              {"causal": "bottom-right"}, weights=False)

    # --dtype f16
    check_f16("f16_plain", (r(5, 16), r(7, 16), r(7, 8) * 3), [], {})
    check_f16("f16_gqa_causal", (r(4, 6, 8), r(2, 9, 8), r(2, 9, 5)), ["--heads", "4,2", "--causal", "bottom-right"],
              {"causal": "bottom-right"})
    keep46 = rng.random((4, 6)) < 0.7
    keep46[2] = False  # a fully masked row
    check_f16("f16_mask_bias_scale", (r(4, 8), r(6, 8), r(6, 3)),
              ["--mask", save("f16_keep.npy", keep46), "--bias", save("bias.npy", bias), "--scale", "0.3"],
              {"keep": keep46, "bias": bias, "scale": float(np.float32(0.3))})
    check_f16("f16_softcap_bias", (r(4, 8) * 2, r(6, 8), r(6, 3)), ["--softcap", "0.75", "--bias", save("bias.npy", bias)],
              {"softcap": float(np.float32(0.75)), "bias": bias})
    check_f16("f16_window_kvlen", (r(6, 8), r(6, 8), r(6, 4)), ["--window", "2,1", "--kv-len", "5"],
              {"window": (2, 1, "top-left"), "kv_len": 5})
    check_f16("f16_long_keys_tiled", (r(2, 3, 16), r(1, 700, 16), r(1, 700, 8)), ["--causal", "top-left"],
              {"causal": "top-left"}, weights=False)
    arrays = (r(5, 16) * 4, r(7, 16), r(7, 8))
    from_f16 = check_f16("f16_inputs", arrays, [], {})
    from_f32 = check_f16("f16_from_f32_inputs", arrays, [], {}, inputs=np.float32)
    if from_f16 and from_f32 and not (np.array_equal(from_f16[0].view(np.uint16), from_f32[0].view(np.uint16)) and
                                      np.array_equal(from_f16[1].view(np.uint16), from_f32[1].view(np.uint16))):
        failures.append("f16_from_f32_inputs: float32 inputs are not rounded to the halves NumPy gives")

    # --dtype i8
    pt = lambda s, z=0: ([s], [z])
    base = {"q": pt(0.02), "k": pt(0.03), "v": pt(0.05), "y": pt(0.05)}
    zps = {"q": pt(0.02, 5), "k": pt(0.03, -7), "v": pt(0.05, 11), "y": pt(0.05, -4)}
    check_i8("i8_plain", (4, 6, 8, 5, 1, 1), base, ["--scale", "0.25"], softmax_scale=0.25)
    check_i8("i8_default_scale_zero_points", (5, 9, 16, 6, 1, 1), zps, [])
    per_head = {"q": ([0.02, 0.025, 0.03, 0.035], [5, 2, -1, -4]), "k": ([0.03, 0.0375], [-7, -10]),
                "v": ([0.05, 0.0625], [11, 8]), "y": ([0.05, 0.06, 0.07, 0.08], [-4, -7, -10, -13])}
    # The int8 kernels of each port give the same bytes (lengths past a vector).
    for port in ("scalar", "highway"):
        check_i8(f"i8_port_{port}", (9, 40, 33, 20, 2, 1), zps, ["--heads", "2,1", "--port", port])
    check_i8("i8_per_head_gqa", (3, 7, 9, 4, 4, 2), per_head, ["--heads", "4,2", "--scale", "0.25"], softmax_scale=0.25)
    check_i8("i8_causal_br", (3, 8, 8, 6, 2, 1), zps, ["--causal", "bottom-right"],
             mask={"causal": 2, "causal_name": "bottom-right"})
    check_i8("i8_window_kvlen", (6, 9, 7, 5, 1, 1), base, ["--window", "1,2", "--kv-len", "7"],
             mask={"window": (1, 2, 0), "window_ref": (1, 2, "top-left"), "kv_len": 7})
    keep8 = (rng.random((2, 4, 10)) < 0.6)
    keep8[0, 1] = False  # a fully masked row
    check_i8("i8_keep_per_head", (4, 10, 8, 6, 2, 2), zps, ["--mask", save("i8_keep.npy", keep8)],
             mask={"keep_kind": 1, "keep": keep8.astype(np.uint8).ravel(), "head_stride": 40})
    b8 = rng.integers(-128, 128, size=(2, 4, 6)).astype(np.int8)
    check_i8("i8_bias_per_head", (4, 6, 8, 5, 2, 2), base, ["--causal", "top-left"],
             mask={"causal": 1, "causal_name": "top-left"}, bias=(([0.02, 0.03], [1, 2]), b8))
    check_i8("i8_qparams_file_100_keys", (2, 100, 32, 8, 1, 1), zps, [], weights=False, qparams_file=True)
    # --dtype i16: symmetric scales (Z = 0, given or not), no bias
    b16 = {"q": pt(6e-5), "k": pt(7e-5), "v": pt(1.2e-4), "y": pt(1.5e-4)}
    z16 = {t: (qs, [0]) for t, (qs, _) in b16.items()}
    check_i16("i16_plain", (4, 6, 8, 5, 1, 1), b16, ["--scale", "0.25"], softmax_scale=0.25)
    check_i16("i16_default_scale_zero_points_given", (5, 9, 16, 6, 1, 1), z16, [])
    check_i16("i16_dtype_named_int16", (4, 6, 8, 5, 1, 1), b16, [], dtype="int16")  # the .npy type's name
    # Every port's int16 table gives the same values (lengths past a vector).
    for port in ("scalar", "highway"):
        check_i16(f"i16_port_{port}", (9, 40, 33, 20, 2, 1), b16, ["--heads", "2,1", "--port", port])
    ph16 = {"q": ([6e-5, 8e-5, 5e-5, 1e-4], [0] * 4), "k": ([7e-5, 5e-5], [0, 0]), "v": ([1.2e-4, 9e-5], [0, 0]),
            "y": ([1.5e-4, 1.2e-4, 1e-4, 2e-4], [0] * 4)}
    check_i16("i16_per_head_gqa", (3, 7, 9, 4, 4, 2), ph16, ["--heads", "4,2", "--scale", "0.25"], softmax_scale=0.25)
    check_i16("i16_causal_br", (3, 8, 8, 6, 2, 1), b16, ["--causal", "bottom-right"],
              mask={"causal": 2, "causal_name": "bottom-right"})
    check_i16("i16_window_kvlen", (6, 9, 7, 5, 1, 1), b16, ["--window", "1,2", "--kv-len", "7"],
              mask={"window": (1, 2, 0), "window_ref": (1, 2, "top-left"), "kv_len": 7})
    check_i16("i16_keep_per_head", (4, 10, 8, 6, 2, 2), b16, ["--mask", save("i8_keep.npy", keep8)],
              mask={"keep_kind": 1, "keep": keep8.astype(np.uint8).ravel(), "head_stride": 40})
    check_i16("i16_qparams_file_100_keys", (2, 100, 32, 8, 1, 1), b16, [], weights=False, qparams_file=True)
    # Only the extremes: scores of +-2^30 Dk (a peaked softmax) and a saturating output.
    ext = {t: np.where(rng.random(shape) < 0.5, -32768, 32767).astype(np.int16)
           for t, shape in (("q", (1, 3, 24)), ("k", (1, 7, 24)), ("v", (1, 7, 4)))}
    check_i16("i16_extremes_saturating", (3, 7, 24, 4, 1, 1),
              {"q": pt(1e-3), "k": pt(1e-3), "v": pt(1e-3), "y": pt(2e-4)}, [], data=ext)
    # --int16-mode tflite: s= is the int16 score tensor's scale; --scale is the softmax's beta
    t16 = {**b16, "scores": pt(1.5e-3)}
    check_tflite16("i16_tfl_plain", (4, 6, 8, 5, 1, 1), t16, ["--scale", "0.25"], softmax_scale=0.25)
    check_tflite16("i16_tfl_default_beta", (5, 9, 16, 6, 1, 1), {**t16, "scores": pt(2e-3)}, [])
    for port in ("scalar", "highway"):
        check_tflite16(f"i16_tfl_port_{port}", (9, 40, 33, 20, 2, 1), {**t16, "scores": pt(4e-3)},
                       ["--heads", "2,1", "--port", port])
    check_tflite16("i16_tfl_per_head_gqa", (3, 7, 9, 4, 4, 2), {**ph16, "scores": ([1.5e-3, 2e-3, 1e-3, 2.5e-3], [0] * 4)},
                   ["--heads", "4,2", "--scale", "0.25"], softmax_scale=0.25)
    check_tflite16("i16_tfl_causal_br", (3, 8, 8, 6, 2, 1), t16, ["--causal", "bottom-right"], mask={"causal": 2})
    check_tflite16("i16_tfl_keep_per_head", (4, 10, 8, 6, 2, 2), t16, ["--mask", save("i8_keep.npy", keep8)],
                   mask={"keep_kind": 1, "keep": keep8.astype(np.uint8).ravel(), "head_stride": 40})
    # --int8-mode tflite: s= is the int8 score tensor's quantization; --scale is the softmax's beta
    tbase = {**base, "scores": pt(0.3)}
    tzps = {**zps, "scores": pt(0.3, 9)}
    check_tflite("tfl_plain", (4, 6, 8, 5, 1, 1), tbase, ["--scale", "0.25"], softmax_scale=0.25)
    check_tflite("tfl_default_scale_zero_points", (5, 9, 16, 6, 1, 1), {**tzps, "scores": pt(0.05, -3)}, [])
    for port in ("scalar", "highway"):
        check_tflite(f"tfl_port_{port}", (9, 40, 33, 20, 2, 1), tzps, ["--heads", "2,1", "--port", port])
    check_tflite("tfl_per_head_gqa", (3, 7, 9, 4, 4, 2), {**per_head, "scores": ([0.3, 0.35, 0.25, 0.4], [9, 6, 0, -3])},
                 ["--heads", "4,2", "--scale", "0.25"], softmax_scale=0.25)
    check_tflite("tfl_causal_br", (3, 8, 8, 6, 2, 1), tzps, ["--causal", "bottom-right"], mask={"causal": 2})
    check_tflite("tfl_window_kvlen", (6, 9, 7, 5, 1, 1), tbase, ["--window", "1,2", "--kv-len", "7"],
                 mask={"window": (1, 2, 0), "kv_len": 7})
    check_tflite("tfl_keep_per_head", (4, 10, 8, 6, 2, 2), tzps, ["--mask", save("i8_keep.npy", keep8)],
                 mask={"keep_kind": 1, "keep": keep8.astype(np.uint8).ravel(), "head_stride": 40})
    check_tflite("tfl_qparams_file_300_keys", (2, 300, 16, 8, 1, 1),
                 {"q": pt(0.02), "k": pt(0.02), "v": pt(0.05), "y": pt(0.02), "scores": pt(0.05)}, [],
                 qparams_file=True)
    # --past-k/--past-v on 3-D (f32) and 4-D int8 runs: the same outputs as K and V joined by hand,
    # the present files equal to that join; a float --mask is the same as --bias.
    def same_as_joined(name, dtype, arrays, past, flags):
        q, k, v = arrays
        pk, pv = past
        files = {t: save(f"{name}_{t}.npy", a) for t, a in (("q", q), ("k", k), ("v", v), ("pk", pk), ("pv", pv),
                                                            ("jk", np.concatenate((pk, k), -2)),
                                                            ("jv", np.concatenate((pv, v), -2)))}
        out = lambda t: str(WORK / f"{name}_{t}.npy")
        r1 = tool("run", "--dtype", dtype, "--q", files["q"], "--k", files["k"], "--v", files["v"], "--past-k",
                  files["pk"], "--past-v", files["pv"], "--present-k", out("present_k"), "--present-v",
                  out("present_v"), "--out", out("y1"), "--weights", out("a1"), *flags)
        r2 = tool("run", "--dtype", dtype, "--q", files["q"], "--k", files["jk"], "--v", files["jv"], "--out", out("y2"),
                  "--weights", out("a2"), *flags)
        if r1.returncode or r2.returncode:
            failures.append(f"{name}: exit {r1.returncode}/{r2.returncode}: {r1.stderr.strip()} {r2.stderr.strip()}")
            return
        same = lambda a, b: np.load(out(a)).tobytes() == np.load(out(b)).tobytes()
        joined = lambda t: np.load(files["j" + t]).tobytes() == np.load(out("present_" + t)).tobytes()
        if not (same("y1", "y2") and same("a1", "a2") and joined("k") and joined("v")):
            failures.append(f"{name}: a run with a past differs from the run over the joined keys")
        else:
            print(f"ok   {name}: the past run equals the joined one, present = past + new")

    same_as_joined("past_3d_f32", "f32", (r(2, 3, 8).astype(np.float32), r(1, 4, 8).astype(np.float32),
                                          r(1, 4, 5).astype(np.float32)),
                   (r(1, 5, 8).astype(np.float32), r(1, 5, 5).astype(np.float32)), ["--causal", "bottom-right"])
    i8 = lambda *shape: rng.integers(-128, 128, size=shape).astype(np.int8)
    same_as_joined("past_4d_i8", "i8", (i8(2, 2, 3, 8), i8(2, 1, 2, 8), i8(2, 1, 2, 4)), (i8(2, 1, 4, 8), i8(2, 1, 4, 4)),
                   ["--qparams", "q=0.02,k=0.03,v=0.05,y=0.05", "--causal", "bottom-right"])
    s16 = lambda *shape: rng.integers(-32768, 32768, size=shape).astype(np.int16)
    same_as_joined("past_4d_i16", "i16", (s16(2, 2, 3, 8), s16(2, 1, 2, 8), s16(2, 1, 2, 4)),
                   (s16(2, 1, 4, 8), s16(2, 1, 4, 4)), ["--qparams", "q=6e-5,k=7e-5,v=1.2e-4,y=1.5e-4", "--causal",
                                                        "bottom-right"])
    fm = (rng.standard_normal((5, 7)) * 0.5).astype(np.float32)
    fm[2, 3] = -np.inf
    fq, fk, fv = (save(f"fmask_{t}.npy", a.astype(np.float32)) for t, a in (("q", r(5, 16)), ("k", r(7, 16)),
                                                                            ("v", r(7, 8))))
    fmask = save("fmask.npy", fm)
    r1 = tool("run", "--q", fq, "--k", fk, "--v", fv, "--mask", fmask, "--out", str(WORK / "fmask_y1.npy"))
    r2 = tool("run", "--q", fq, "--k", fk, "--v", fv, "--bias", fmask, "--out", str(WORK / "fmask_y2.npy"))
    if r1.returncode or r2.returncode or \
            np.load(WORK / "fmask_y1.npy").tobytes() != np.load(WORK / "fmask_y2.npy").tobytes():
        failures.append("float_mask_is_bias: a float --mask differs from the same --bias")
    else:
        print("ok   float_mask_is_bias: a float --mask gives the bytes of the same --bias")
    print(f"worst: f16 max|y - y_ref|/max|v| = {worst['f16_y']:.2e}, f16 max|a - a_ref| = {worst['f16_a']:.2e}, "
          f"i8 Y {worst['i8_y_lsb']:.3f} LSB and probabilities {worst['i8_p_lsb']:.3f} LSB, "
          f"i16 Y {worst['i16_y_lsb']:.3f} LSB and probabilities {worst['i16_p_lsb']:.3f} LSB from the float64 softmax")


def raw_npy(header, payload=b"", version=(1, 0), magic=b"\x93NUMPY"):
    h = header.encode()
    h += b" " * ((64 - (len(magic) + 4 + len(h) + 1) % 64) % 64) + b"\n"
    size = len(h).to_bytes(2 if version[0] == 1 else 4, "little")
    return magic + bytes(version) + size + h + payload


def expect_error(name, args, needle, code=None):
    r = tool(*args)
    lines = r.stderr.strip().splitlines()
    problems = []
    if r.returncode <= 0:
        problems.append(f"exit status {r.returncode}")
    if code is not None and r.returncode != code:
        problems.append(f"exit status {r.returncode}, expected {code}")
    if not lines or not lines[0].startswith("tinyattn: error:"):
        problems.append("no 'tinyattn: error:' line")
    if needle not in r.stderr:
        problems.append(f"message lacks '{needle}'")
    if r.stdout:
        problems.append("wrote to stdout")
    if problems:
        failures.append(f"{name}: {', '.join(problems)}: {r.stderr.strip()!r}")
    else:
        print(f"ok   {name}: {lines[0]}")


def write(name, data):
    path = WORK / name
    path.write_bytes(data)
    return str(path)


SENTINEL = b"not overwritten\n"
# The output destinations of the checks below, in a folder of their own: `run` mode may be
# writing (and leaving temporaries in) WORK at the same time.
OUT = WORK / "outputs"


def sentinel(name):
    """An existing destination: a failing run must leave these bytes."""
    OUT.mkdir(exist_ok=True)
    path = OUT / name
    path.write_bytes(SENTINEL)
    return str(path)


def temporaries():
    return sorted(p.name for p in OUT.glob(".tinyattn-*"))


def expect_untouched(name, args, needle, code, files):
    """expect_error, and every file in `files` keeps its bytes (or stays absent), no temporary left behind."""
    before = {f: pathlib.Path(f).read_bytes() if pathlib.Path(f).is_file() else None for f in files}
    expect_error(name, args, needle, code=code)
    changed = [f for f, b in before.items()
               if (pathlib.Path(f).read_bytes() if pathlib.Path(f).is_file() else None) != b]
    if changed or temporaries():
        failures.append(f"{name}: changed {[pathlib.Path(f).name for f in changed]}, temporaries {temporaries()}")


# Every option that takes a value, with one valid value (for the command lines below).
RUN_VALUES = ["--q", "--k", "--v", "--out", "--weights", "--mask", "--bias", "--causal", "--window", "--kv-len",
              "--scale", "--softcap", "--offset", "--scores", "--score-stage", "--heads", "--past-k", "--past-v",
              "--present-k", "--present-v", "--dtype", "--port", "--qparams", "--int8-mode", "--int16-mode"]


def empty_values(good_q, good_k, good_v):
    """An empty value is refused, never taken as "absent": '--causal "$ALIGN"' with ALIGN unset
    must not run without the causal mask."""
    y = sentinel("e_y.npy")
    base = ["run", "--q", good_q, "--k", good_k, "--v", good_v, "--out", y]
    for flag in RUN_VALUES:
        if flag in base:  # a required one: its value emptied
            i = base.index(flag)
            args = [*base[:i + 1], "", *base[i + 2:]]
        else:
            args = [*base, flag, ""]
        expect_untouched(f"empty{flag}", args, f"{flag} has an empty value", 2, [y])
    plan = ["plan", "--dk", "8", "--qparams", "q=0.02,k=0.03,v=0.05,y=0.05", "--out", y]
    for flag in ("--dk", "--qparams", "--heads", "--scale", "--name", "--lang", "--out", "--int8-mode", "--dtype",
                 "--int16-mode"):
        if flag in plan:
            i = plan.index(flag)
            args = [*plan[:i + 1], "", *plan[i + 2:]]
        else:
            args = [*plan, flag, ""]
        expect_untouched(f"plan_empty{flag}", args, f"{flag} has an empty value", 2, [y])
    for flag in ("--port", "--format"):
        expect_error(f"selftest_empty{flag}", ["selftest", flag, ""], f"{flag} has an empty value", code=2)
    expect_error("demo_empty--svg", ["demo", "--no-color", "--svg", ""], "--svg has an empty value", code=2)
    expect_untouched("option_twice", [*base, "--causal", "top-left", "--causal", "bottom-right"], "given twice", 2,
                     [y])


def all_or_none(good_q, good_k, good_v):
    """The outputs are written all or none: an output that cannot be written leaves every
    destination as it was (here existing files), and no temporary file behind."""
    outs = {t: sentinel(f"w_{t}.npy") for t in ("y", "a", "s", "pk", "pv")}
    folder = OUT / "w_folder.npy"
    folder.mkdir(exist_ok=True)
    missing = str(OUT / "no_such_dir" / "x.npy")
    base = ["run", "--q", good_q, "--k", good_k, "--v", good_v, "--out", outs["y"]]
    full = [*base, "--weights", outs["a"], "--scores", outs["s"], "--present-k", outs["pk"], "--present-v", outs["pv"]]
    for name, args, needle in [
        ("weights_missing_folder", [*base, "--weights", missing], "does not exist"),
        ("weights_is_folder", [*base, "--weights", str(folder)], "is a folder"),
        ("weights_trailing_slash", [*base, "--weights", str(OUT) + "/"], "names a folder"),
        ("scores_missing_folder", [*base, "--weights", outs["a"], "--scores", missing], "does not exist"),
        ("present_k_is_folder", [*full[:-4], "--present-k", str(folder), "--present-v", outs["pv"]], "is a folder"),
        ("present_v_missing_folder", [*full[:-2], "--present-v", missing], "does not exist"),
        ("out_under_a_file", [*full[:-2], "--present-v", outs["a"] + "/x.npy"], "is not a folder"),
        ("out_is_a_device", [*base, "--weights", "/dev/null"], "not a regular file"),
    ]:
        expect_untouched(name, args, needle, 2, list(outs.values()))
    expect_untouched("present_v_folder_not_writable", [*full[:-2], "--present-v", "/proc/self/pv.npy"],
                     "not writable", 2, list(outs.values()))
    # Failures past the checks. A file size limit of 300 bytes (SIGXFSZ ignored, so write()
    # fails with EFBIG): Y and the weights fit, the present keys do not.
    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))
    before = {f: pathlib.Path(f).read_bytes() for f in outs.values()}
    r = subprocess.run([TOOL, *full], capture_output=True, text=True, timeout=120, preexec_fn=small_files)
    changed = [pathlib.Path(f).name for f, b in before.items() if pathlib.Path(f).read_bytes() != b]
    if r.returncode != 1 or "write failed" not in r.stderr or changed or temporaries():
        failures.append(f"write_fails_late: exit {r.returncode}, changed {changed}, temporaries {temporaries()}: "
                        f"{r.stderr.strip()!r}")
    else:
        print(f"ok   write_fails_late: {r.stderr.strip()}; no destination changed")
    # The library refuses batch element 1 of 2, after element 0 was computed.
    q4 = save("w_q4.npy", rng.standard_normal((2, 2, 3, 16)).astype(np.float32))
    k4 = save("w_k4.npy", rng.standard_normal((2, 1, 4, 16)).astype(np.float32))
    v4 = save("w_v4.npy", rng.standard_normal((2, 1, 4, 8)).astype(np.float32))
    expect_untouched("library_refuses_batch_element_1",
                     ["run", "--q", q4, "--k", k4, "--v", v4, "--out", outs["y"], "--weights", outs["a"],
                      "--kv-len", "4,2", "--causal", "offset", "--offset", "1"], "batch element 1", 1,
                     list(outs.values()))
    r = tool(*full)
    written = {t: np.load(f) for t, f in outs.items()} if r.returncode == 0 else {}
    if r.returncode != 0 or temporaries() or written["y"].shape != (5, 8) or written["a"].shape != (5, 7) or \
            written["s"].shape != (5, 7) or written["pk"].shape != (7, 16) or written["pv"].shape != (7, 8):
        failures.append(f"all_outputs_written: exit {r.returncode}, temporaries {temporaries()}: {r.stderr.strip()}")
    else:
        print("ok   all_outputs_written: Y, weights, scores, present K and V replaced, no temporary left")


def same_file(good_q, good_k, good_v):
    """Two outputs naming one file, or an output naming an input, are refused whatever the spelling."""
    sub = OUT / "s_sub"
    sub.mkdir(exist_ok=True)
    y = sentinel("s_y.npy")
    link = OUT / "s_link.npy"
    hard = OUT / "s_hard.npy"
    for p in (link, hard):
        if p.exists() or p.is_symlink():
            p.unlink()
    link.symlink_to(y)
    hard.hardlink_to(y)
    fresh = str(OUT / "s_new.npy")  # absent: only the spelling can tell
    pathlib.Path(fresh).unlink(missing_ok=True)
    base = ["run", "--q", good_q, "--k", good_k, "--v", good_v]
    rel = pathlib.Path(y).name
    spellings = [("same", y, y), ("dot_slash", y, f"{OUT}/./{rel}"), ("dot_dot", y, f"{sub}/../{rel}"),
                 ("double_slash", y, f"{OUT}//{rel}"), ("symlink", y, str(link)), ("hard_link", y, str(hard)),
                 ("absent_dot_dot", fresh, f"{sub}/../s_new.npy")]
    for name, a, b in spellings:
        expect_untouched(f"same_output_{name}", [*base, "--out", a, "--weights", b], "name the same file", 2,
                         [y, fresh])
    expect_untouched("same_scores_present", [*base, "--out", y, "--scores", fresh, "--present-k", fresh,
                                             "--present-v", str(OUT / "s_pv.npy")], "name the same file", 2, [y, fresh])
    for name, args in [("out_is_q", [*base, "--out", good_q]),
                       ("weights_is_k", [*base, "--out", y, "--weights", f"{WORK}/./{pathlib.Path(good_k).name}"]),
                       ("present_v_is_v", [*base, "--out", y, "--present-k", fresh, "--present-v", good_v]),
                       ("out_is_mask", [*base, "--out", str(link), "--mask", y])]:
        expect_untouched(name, args, "would overwrite the input", 2, [y, good_q, good_k, good_v])
    qp = sentinel("s_qparams.txt")
    pathlib.Path(qp).write_bytes(b"q=0.02 k=0.03 v=0.05 y=0.05\n")
    expect_untouched("plan_out_is_qparams", ["plan", "--dk", "8", "--qparams", qp, "--out", qp],
                     "would overwrite the input", 2, [qp])


def bounded_reads(good_k, good_v, good):
    """The prefix and header are read and checked before the payload: a stream that is not
    a .npy file fails after its first bytes, and a regular file's size is checked against
    the header before anything is read for the payload."""
    y = sentinel("b_y.npy")
    base = ["--k", good_k, "--v", good_v, "--out", y]
    expect_untouched("dev_zero", ["run", "--q", "/dev/zero", *base], "bad magic", 1, [y])
    # A pipe that sends a bad magic and stays open: a reader that wants the whole file waits forever.
    fifo = WORK / "b_fifo"
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)  # Linux: opens without waiting for the reader, and keeps the pipe open
    try:
        os.write(fd, b"not a .npy file at all\n")
        try:
            r = subprocess.run([TOOL, "run", "--q", str(fifo), *base], capture_output=True, text=True, timeout=20)
            ok = r.returncode == 1 and "bad magic" in r.stderr
            why = f"exit {r.returncode}: {r.stderr.strip()!r}"
        except subprocess.TimeoutExpired:
            ok, why = False, "still reading after 20 s"
    finally:
        os.close(fd)
        fifo.unlink()
    if ok:
        print("ok   open_pipe_bad_magic: refused after the prefix")
    else:
        failures.append(f"open_pipe_bad_magic: {why}")
    # 1.5 GB, sparse: a valid header for (5, 16) then far too many bytes; only the size is needed to refuse.
    big = WORK / "b_sparse.npy"
    with open(big, "wb") as f:
        f.write(good)
        f.truncate(1536 * 1024 * 1024)
    try:
        expect_untouched("sparse_oversized", ["run", "--q", str(big), *base],
                         f"{1536 * 1024 * 1024 - len(good)} unexpected bytes after the data of shape (5, 16)", 1, [y])
    finally:
        big.unlink()


def options_before_files(good_k, good_v):
    """Options and output paths are judged before any file is read: the unreadable --q is never reached."""
    y = sentinel("o_y.npy")
    base = ["run", "--q", str(WORK / "o_missing.npy"), "--k", good_k, "--v", good_v, "--out", y]
    for name, extra, needle in [("heads_syntax", ["--heads", "2"], "--heads"),
                                ("kv_len_syntax", ["--kv-len", "x"], "--kv-len"),
                                ("weights_path", ["--weights", str(OUT / "no_such_dir" / "a.npy")], "does not exist")]:
        expect_untouched(f"before_files_{name}", [*base, *extra], needle, 2, [y])


def malformed():
    q = rng.standard_normal((5, 16)).astype(np.float32)
    k = rng.standard_normal((7, 16)).astype(np.float32)
    v = rng.standard_normal((7, 8)).astype(np.float32)
    good_q, good_k, good_v = save("m_q.npy", q), save("m_k.npy", k), save("m_v.npy", v)
    buf = io.BytesIO()
    np.save(buf, q)
    good = buf.getvalue()

    def run_with_q(path):
        return ["run", "--q", path, "--k", good_k, "--v", good_v, "--out", str(WORK / "m_y.npy")]

    f32 = "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 16), }"
    cases = [
        ("truncated_data", write("t1.npy", good[:-10]), "truncated data"),
        ("truncated_header", write("t2.npy", good[:40]), "truncated header"),
        ("truncated_magic", write("t3.npy", good[:8]), "truncated header"),
        ("empty_file", write("t4.npy", b""), "bad magic"),
        ("bad_magic", write("t5.npy", b"\x93NUMPX" + good[6:]), "bad magic"),
        ("text_file", write("t6.npy", b"q,k,v\n1,2,3\n" * 4), "bad magic"),
        ("fortran_order", save("t7.npy", np.asfortranarray(q)), "fortran_order"),
        ("big_endian", save("t8.npy", q.astype(">f4")), "big-endian"),
        ("float64", save("t9.npy", q.astype(np.float64)), "unsupported dtype '<f8'"),
        ("int8_for_f32", save("t10.npy", (q * 10).astype(np.int8)), "must be float32 or float16"),
        ("absurd_shape", write("t11.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }")),
         "exceeds the limit"),
        ("huge_shape_tiny_file", write("t12.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536, 65536), }", b"\0" * 64)),
         "more than 1 GiB"),
        ("huge_header_len", write("t13.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f" + b" " * 100), "header length"),
        ("unknown_key", write("t14.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (5, 16), 'x': 1, }", good[128:])),
         "unknown key"),
        ("missing_key", write("t15.npy", raw_npy("{'descr': '<f4', 'shape': (5, 16), }", good[128:])), "lacks"),
        ("not_a_dict", write("t16.npy", raw_npy("[1, 2, 3]", good[128:])), "not a dict"),
        ("negative_dim", write("t17.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-5, 16), }")),
         "non-negative integer"),
        ("zero_dim", write("t18.npy", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 16), }")), "empty array"),
        ("trailing_bytes", write("t19.npy", good + b"\0\0\0\0"), "unexpected bytes"),
        ("version_4", write("t20.npy", raw_npy(f32, good[128:], version=(4, 0))), "format version 4.0"),
        ("structured_dtype", write("t21.npy", raw_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (5, 16), }", good[128:])),
         "structured"),
        ("one_dimensional", save("t22.npy", q.reshape(-1)), "expected 2-D"),
        ("four_dimensional_q_only", save("t23.npy", q.reshape(1, 1, 5, 16)), "must have the same rank"),
        ("five_dimensional", save("t26.npy", q.reshape(1, 1, 1, 5, 16)), "expected 2-D"),
        ("garbage_after_dict", write("t24.npy", raw_npy(f32[:-1] + "}x", good[128:])), "after the header dict"),
        ("missing_file", str(WORK / "does_not_exist.npy"), "cannot open"),
        ("control_bytes", write("t25.npy", raw_npy("{'descr': '<f4',\x00 'fortran_order': False, 'shape': (5, 16), }", good[128:])),
         "control byte"),
    ]
    for name, path, needle in cases:
        expect_error(name, run_with_q(path), needle, code=1)

    base = ["--out", str(WORK / "m_y.npy")]
    k8 = save("m_k8.npy", rng.standard_normal((7, 8)).astype(np.float32))
    expect_error("dk_mismatch", ["run", "--q", good_q, "--k", k8, "--v", good_v, *base], "(5, 16)")
    expect_error("dk_mismatch_names_both", ["run", "--q", good_q, "--k", k8, "--v", good_v, *base], "(7, 8)")
    v6 = save("m_v6.npy", rng.standard_normal((6, 8)).astype(np.float32))
    expect_error("m_mismatch", ["run", "--q", good_q, "--k", good_k, "--v", v6, *base], "(6, 8)")
    q3 = save("m_q3.npy", rng.standard_normal((3, 5, 16)).astype(np.float32))
    k3 = save("m_k3.npy", rng.standard_normal((2, 7, 16)).astype(np.float32))
    v3 = save("m_v3.npy", rng.standard_normal((2, 7, 8)).astype(np.float32))
    expect_error("heads_not_multiple", ["run", "--q", q3, "--k", k3, "--v", v3, *base], "multiple")
    expect_error("heads_flag_mismatch", ["run", "--q", good_q, "--k", good_k, "--v", good_v, "--heads", "2,1", *base],
                 "does not match")
    bad_mask = save("m_mask.npy", np.ones((5, 6), bool))
    expect_error("mask_shape", ["run", "--q", good_q, "--k", good_k, "--v", good_v, "--mask", bad_mask, *base], "(5, 6)")
    int8_mask = save("m_mask8.npy", np.ones((5, 7), np.int8))
    expect_error("mask_dtype", ["run", "--q", good_q, "--k", good_k, "--v", good_v, "--mask", int8_mask, *base],
                 "bool or uint8")
    float_mask = save("m_maskf.npy", np.zeros((5, 7), np.float32))
    expect_error("float_mask_and_bias", ["run", "--q", good_q, "--k", good_k, "--v", good_v, "--mask", float_mask,
                                         "--bias", float_mask, *base], "give one of them")
    common = ["run", "--q", good_q, "--k", good_k, "--v", good_v, *base]
    expect_error("dtype_other", [*common, "--dtype", "f64"], "--dtype", code=2)
    # --dtype f16 / i8 inputs and --qparams
    i8 = {t: save(f"m_{t}8.npy", (a * 20).astype(np.int8)) for t, a in (("q", q), ("k", k), ("v", v))}
    common8 = ["run", "--dtype", "i8", "--q", i8["q"], "--k", i8["k"], "--v", i8["v"], *base]
    good_qp = "q=0.02,k=0.03:-7,v=0.05:11,y=0.05:-4"
    expect_error("i8_needs_qparams", common8, "--qparams", code=2)
    expect_error("qparams_without_i8", [*common, "--qparams", good_qp], "applies to --dtype i8 and i16 only", code=2)
    expect_error("i8_float_input", [*common, "--dtype", "i8", "--qparams", good_qp], "must be int8", code=1)
    expect_error("f16_int8_input", ["run", "--dtype", "f16", "--q", i8["q"], "--k", good_k, "--v", good_v, *base],
                 "must be float32 or float16 for --dtype f16", code=1)
    for case, qp, needle, code in [
        ("qparams_zero_scale", "q=0,k=0.03,v=0.05,y=0.05", "bad_quantization", 1),
        ("qparams_negative_scale", "q=0.02,k=-0.03,v=0.05,y=0.05", "bad_quantization", 1),
        ("qparams_nan_scale", "q=0.02,k=0.03,v=nan,y=0.05", "bad_quantization", 1),
        ("qparams_inf_scale", "q=0.02,k=0.03,v=0.05,y=inf", "bad_quantization", 1),
        ("qparams_zero_point_range", "q=0.02:128,k=0.03,v=0.05,y=0.05", "bad_quantization", 1),
        ("qparams_head_count", "q=0.02/0.03,k=0.03,v=0.05,y=0.05", "bad_quantization", 1),
        ("qparams_overflowing_output", "q=0.02,k=0.03,v=1e30,y=1e-30", "bad_quantization", 1),
        ("qparams_missing_y", "q=0.02,k=0.03,v=0.05", "must give q=, k=, v= and y=", 2),
        ("qparams_unknown_tensor", "q=0.02,k=0.03,v=0.05,y=0.05,x=1", "'x=1'", 2),
        ("qparams_twice", "q=0.02,q=0.03,k=0.03,v=0.05,y=0.05", "twice", 2),
        ("qparams_not_a_number", "q=abc,k=0.03,v=0.05,y=0.05", "'abc'", 2),
        ("qparams_bad_zero_point", "q=0.02:1.5,k=0.03,v=0.05,y=0.05", "'0.02:1.5'", 2),
        ("qparams_missing_file", str(WORK / "no_such_qparams.txt"), "readable file", 2),
    ]:
        expect_error(case, [*common8[:3], "--qparams", qp, *common8[3:]], needle, code=code)
    bias_f = save("m_bias_f.npy", np.zeros((5, 7), np.float32))
    expect_error("i8_float_bias", [*common8, "--qparams", good_qp, "--bias", bias_f], "no float bias", code=1)
    bias_8 = save("m_bias_8.npy", np.zeros((5, 7), np.int8))
    expect_error("i8_bias_without_b", [*common8, "--qparams", good_qp, "--bias", bias_8], "b=SCALE", code=1)
    expect_error("i8_b_without_bias", [*common8, "--qparams", good_qp + ",b=0.1"], "no --bias", code=2)
    expect_error("kv_len_range", [*common, "--kv-len", "8"], "--kv-len", code=2)
    expect_error("window_syntax", [*common, "--window", "2"], "--window", code=2)
    expect_error("window_empty", [*common, "--window", "-3,1"], "bad_mask")
    expect_error("causal_value", [*common, "--causal", "diagonal"], "--causal", code=2)
    expect_error("score_stage_value", [*common, "--scores", str(WORK / "s.npy"), "--score-stage", "softmax"],
                 "--score-stage", code=2)
    expect_error("scores_f16", [*common, "--dtype", "f16", "--scores", str(WORK / "s.npy")], "--scores", code=2)
    expect_error("offset_without_causal", [*common, "--offset", "2"], "--offset", code=2)
    expect_error("causal_offset_without_offset", [*common, "--causal", "offset"], "--offset", code=2)
    expect_error("offset_past_kv_len", [*common, "--causal", "offset", "--offset", "5", "--kv-len", "6"], "bad_mask")
    expect_error("scale_nan", [*common, "--scale", "nan"], "--scale", code=2)
    for bad in ("0", "-1", "inf", "nan", "2x"):
        expect_error(f"softcap_{bad}", [*common, "--softcap", bad], "--softcap", code=2)
    expect_error("i8_softcap", [*common8, "--qparams", good_qp, "--softcap", "5"], "--softcap", code=2)
    # --int8-mode: s= goes with tflite and tflite with s=; no int8 bias in tflite; its key limit
    tfl8 = [*common8, "--int8-mode", "tflite"]
    expect_error("tflite_without_s", [*tfl8, "--qparams", good_qp], "needs s=SCALE", code=2)
    expect_error("s_in_native_mode", [*common8, "--qparams", good_qp + ",s=0.3"], "add --int8-mode tflite", code=2)
    expect_error("s_in_native_mode_explicit", [*common8, "--int8-mode", "native", "--qparams", good_qp + ",s=0.3"],
                 "add --int8-mode tflite", code=2)
    expect_error("int8_mode_unknown", [*common8, "--int8-mode", "tf-lite", "--qparams", good_qp + ",s=0.3"],
                 "--int8-mode must be native or tflite", code=2)
    expect_error("int8_mode_without_i8", [*common, "--int8-mode", "tflite"], "--dtype i8 only", code=2)
    expect_error("tflite_s_syntax", [*tfl8, "--qparams", good_qp + ",s=abc"], "'abc'", code=2)
    expect_error("tflite_s_twice", [*tfl8, "--qparams", good_qp + ",s=0.3,s=0.4"], "twice", code=2)
    expect_error("tflite_s_zero", [*tfl8, "--qparams", good_qp + ",s=0"], "bad_quantization", code=1)
    expect_error("tflite_s_head_count", [*tfl8, "--qparams", good_qp + ",s=0.3/0.2/0.1"], "bad_quantization", code=1)
    expect_error("tflite_bias", [*tfl8, "--qparams", good_qp + ",s=0.3,b=0.1", "--bias", bias_8], "no int8 bias",
                 code=2)
    long_k = save("m_k_4096.npy", np.zeros((4096, 4), np.int8))
    long_v = save("m_v_4096.npy", np.zeros((4096, 2), np.int8))
    expect_error("tflite_4096_keys", ["run", "--dtype", "i8", "--int8-mode", "tflite", "--q",
                                      save("m_q_4096.npy", np.zeros((1, 4), np.int8)), "--k", long_k, "--v", long_v,
                                      "--out", str(WORK / "m_y_4096.npy"), "--qparams", good_qp + ",s=0.3"],
                 "at most 4095 keys", code=1)
    # --dtype i16: its inputs, symmetric --qparams without b= or s=, no bias, no float mask, its limits
    i16f = {t: save(f"m_{t}16.npy", (a * 3000).astype(np.int16)) for t, a in (("q", q), ("k", k), ("v", v))}
    common16 = ["run", "--dtype", "i16", "--q", i16f["q"], "--k", i16f["k"], "--v", i16f["v"], *base]
    qp16 = "q=6e-5,k=7e-5,v=1.2e-4,y=1.5e-4"
    expect_error("i16_needs_qparams", common16, "--qparams", code=2)
    expect_error("i16_float_input", [*common, "--dtype", "i16", "--qparams", qp16], "must be int16 for --dtype i16",
                 code=1)
    expect_error("i16_int8_input", ["run", "--dtype", "i16", "--q", i8["q"], "--k", i16f["k"], "--v", i16f["v"], *base,
                                    "--qparams", qp16], "must be int16", code=1)
    expect_error("i8_int16_input", [*common8[:3], "--q", i16f["q"], *common8[5:], "--qparams", good_qp],
                 "must be int8", code=1)
    expect_error("f32_int16_input", ["run", "--q", i16f["q"], "--k", good_k, "--v", good_v, *base],
                 "must be float32 or float16", code=1)
    expect_error("i16_zero_point", [*common16, "--qparams", "q=6e-5:3,k=7e-5,v=1.2e-4,y=1.5e-4"],
                 "plan_int16 rejected --qparams: bad_quantization", code=1)
    expect_error("i16_zero_scale", [*common16, "--qparams", "q=0,k=7e-5,v=1.2e-4,y=1.5e-4"], "bad_quantization", code=1)
    expect_error("i16_head_count", [*common16, "--qparams", "q=6e-5/7e-5,k=7e-5,v=1.2e-4,y=1.5e-4"], "bad_quantization",
                 code=1)
    expect_error("i16_b_in_qparams", [*common16, "--qparams", qp16 + ",b=0.1"], "no b=", code=2)
    expect_error("i16_s_in_qparams", [*common16, "--qparams", qp16 + ",s=0.3"], "add --int16-mode tflite", code=2)
    expect_error("i16_tflite_without_s", [*common16, "--int16-mode", "tflite", "--qparams", qp16], "needs s=SCALE",
                 code=2)
    expect_error("i16_tflite_b", [*common16, "--int16-mode", "tflite", "--qparams", qp16 + ",s=1e-3,b=0.1"], "no b=",
                 code=2)
    expect_error("i16_tflite_s_zero_point", [*common16, "--int16-mode", "tflite", "--qparams", qp16 + ",s=1e-3:2"],
                 "plan_int16 rejected --qparams: bad_quantization", code=1)
    expect_error("i16_mode_unknown", [*common16, "--int16-mode", "tfl", "--qparams", qp16],
                 "--int16-mode must be native or tflite", code=2)
    expect_error("int16_mode_without_i16", [*common8, "--qparams", good_qp, "--int16-mode", "native"],
                 "--int16-mode applies to --dtype i16 only", code=2)
    expect_error("i16_bias", [*common16, "--qparams", qp16, "--bias", bias_f], "takes no --bias", code=2)
    expect_error("i16_float_mask", [*common16, "--qparams", qp16, "--mask", float_mask], "no float mask", code=1)
    expect_error("i16_softcap", [*common16, "--qparams", qp16, "--softcap", "5"], "--softcap", code=2)
    expect_error("i16_int8_mode", [*common16, "--qparams", qp16, "--int8-mode", "native"], "--dtype i8 only", code=2)
    expect_error("i16_scores", [*common16, "--qparams", qp16, "--scores", str(WORK / "s.npy")], "--scores", code=2)
    wide_q = save("m_q16_wide.npy", np.zeros((1, 32769), np.int16))
    expect_error("i16_dk_limit", ["run", "--dtype", "i16", "--qparams", qp16, "--q", wide_q, "--k",
                                  save("m_k16_wide.npy", np.zeros((2, 32769), np.int16)), "--v",
                                  save("m_v16_wide.npy", np.zeros((2, 2), np.int16)), *base], "Dk <= 32768", code=1)
    expect_error("i16_key_limit", ["run", "--dtype", "i16", "--qparams", qp16, "--q",
                                   save("m_q16_long.npy", np.zeros((1, 2), np.int16)), "--k",
                                   save("m_k16_long.npy", np.zeros((65536, 2), np.int16)), "--v",
                                   save("m_v16_long.npy", np.zeros((65536, 1), np.int16)), *base],
                 "at most 65535 keys", code=1)
    expect_error("plan_dtype_unknown", ["plan", "--dk", "8", "--dtype", "f32", "--qparams", qp16],
                 "--dtype must be i8 or i16", code=2)
    expect_error("plan_i16_int8_mode", ["plan", "--dk", "8", "--dtype", "i16", "--int8-mode", "native", "--qparams",
                                        qp16], "--int8-mode applies to --dtype i8 only", code=2)
    expect_error("plan_i16_bias", ["plan", "--dk", "8", "--dtype", "i16", "--qparams", qp16 + ",b=0.1"], "no b=",
                 code=2)
    expect_error("plan_i16_zero_point", ["plan", "--dk", "8", "--dtype", "i16", "--qparams",
                                         "q=6e-5,k=7e-5,v=1.2e-4,y=1.5e-4:1"], "plan_int16 rejected", code=1)
    expect_error("plan_i16_tflite_without_s", ["plan", "--dk", "8", "--dtype", "i16", "--int16-mode", "tflite",
                                               "--qparams", qp16], "needs s=SCALE", code=2)
    expect_error("plan_i16_s_in_native", ["plan", "--dk", "8", "--dtype", "i16", "--qparams", qp16 + ",s=1e-3"],
                 "add --int16-mode tflite", code=2)
    expect_error("plan_int16_mode_with_i8", ["plan", "--dk", "8", "--int16-mode", "tflite", "--qparams", good_qp],
                 "--int16-mode applies to --dtype i16 only", code=2)
    plan_tfl = ["plan", "--dk", "8", "--int8-mode", "tflite"]
    expect_error("plan_tflite_without_s", [*plan_tfl, "--qparams", good_qp], "needs s=SCALE", code=2)
    expect_error("plan_s_in_native_mode", ["plan", "--dk", "8", "--qparams", good_qp + ",s=0.3"],
                 "add --int8-mode tflite", code=2)
    expect_error("plan_int8_mode_unknown", ["plan", "--dk", "8", "--int8-mode", "tfl", "--qparams", good_qp],
                 "--int8-mode must be native or tflite", code=2)
    expect_error("plan_tflite_bias", [*plan_tfl, "--qparams", good_qp + ",s=0.3,b=0.1"], "no int8 bias", code=2)
    # 4-D (ONNX's batched form), past keys/values, attn_mask broadcasting, --causal onnx
    q4 = save("m_q4.npy", rng.standard_normal((2, 2, 3, 16)).astype(np.float32))
    k4 = save("m_k4.npy", rng.standard_normal((2, 1, 4, 16)).astype(np.float32))
    v4 = save("m_v4.npy", rng.standard_normal((2, 1, 4, 8)).astype(np.float32))
    common4 = ["run", "--q", q4, "--k", k4, "--v", v4, *base]
    k4b = save("m_k4b.npy", rng.standard_normal((3, 1, 4, 16)).astype(np.float32))
    expect_error("batch_mismatch", ["run", "--q", q4, "--k", k4b, "--v", v4, *base], "batch sizes differ")
    pk = save("m_pk.npy", rng.standard_normal((2, 1, 5, 16)).astype(np.float32))
    pv = save("m_pv.npy", rng.standard_normal((2, 1, 5, 8)).astype(np.float32))
    pv6 = save("m_pv6.npy", rng.standard_normal((2, 1, 6, 8)).astype(np.float32))
    pk_dk = save("m_pk_dk.npy", rng.standard_normal((2, 1, 5, 12)).astype(np.float32))
    expect_error("past_k_without_past_v", [*common4, "--past-k", pk], "--past-v", code=2)
    expect_error("present_k_without_present_v", [*common4, "--present-k", str(WORK / "pk_out.npy")], "--present-v",
                 code=2)
    expect_error("past_lengths_differ", [*common4, "--past-k", pk, "--past-v", pv6], "past lengths differ")
    expect_error("past_dk_differs", [*common4, "--past-k", pk_dk, "--past-v", pv], "Dk")
    expect_error("past_rank_differs", [*common, "--past-k", pk, "--past-v", pv], "the past keys need")
    for name, shape in (("mask4_bad_batch", (3, 1, 3, 4)), ("mask4_bad_heads", (2, 3, 3, 4)),
                        ("mask4_bad_rows", (1, 1, 2, 4)), ("mask4_too_long", (3, 5)), ("mask4_five_axes", (1, 1, 1, 3, 4))):
        expect_error(name, [*common4, "--mask", save(f"{name}.npy", np.ones(shape, bool))], "must broadcast to")
    expect_error("kv_len_list_length", [*common4, "--kv-len", "1,2,3"], "one per batch element", code=2)
    expect_error("kv_len_list_range", [*common4, "--kv-len", "2,5"], "--kv-len", code=2)
    expect_error("causal_onnx_with_offset", [*common4, "--causal", "onnx", "--offset", "1"], "drop --offset", code=2)
    q4l = save("m_q4l.npy", np.zeros((2, 1, 3, 1), np.float32))
    expect_error("past_too_long", ["run", "--q", q4l, "--k", save("m_k4l.npy", np.zeros((2, 1, 40000, 1), np.float32)),
                                   "--v", save("m_v4l.npy", np.zeros((2, 1, 40000, 1), np.float32)),
                                   "--past-k", save("m_pk4l.npy", np.zeros((2, 1, 30000, 1), np.float32)),
                                   "--past-v", save("m_pv4l.npy", np.zeros((2, 1, 30000, 1), np.float32)), *base],
                 "above the limit of 65536")
    expect_error("batch_element_named", [*common4, "--kv-len", "4,2", "--causal", "offset", "--offset", "1"],
                 "batch element 1")
    expect_error("unknown_flag", [*common, "--frobnicate", "1"], "unknown argument", code=2)
    expect_error("missing_out", ["run", "--q", good_q, "--k", good_k, "--v", good_v], "--out", code=2)
    expect_error("unknown_command", ["frobnicate"], "unknown command", code=2)
    expect_error("unwritable_out", ["run", "--q", good_q, "--k", good_k, "--v", good_v, "--out",
                                    str(WORK / "no_such_dir" / "y.npy")], "does not exist", code=2)
    empty_values(good_q, good_k, good_v)
    all_or_none(good_q, good_k, good_v)
    same_file(good_q, good_k, good_v)
    bounded_reads(good_k, good_v, good)
    options_before_files(good_k, good_v)


def quantized(x, half_scales=False):
    """Rows of x as the int8 storage keeps them (docs/decode.md): scale max|x|/127 in float32
    (fp16 scales: the next half up), x / scale to nearest (ties away from zero), within +-127."""
    x = x.astype(np.float32)
    amax = np.abs(x).max(axis=-1, keepdims=True)
    s = amax / np.float32(127)
    if half_scales:
        h = s.astype(np.float16)
        h = np.where(h.astype(np.float32) < s, np.nextafter(h, np.float16(np.inf)), h)
        s = h.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (x / s).astype(np.float64)
        q = np.where(s > 0, np.clip(np.sign(r) * np.floor(np.abs(r) + 0.5), -127, 127), 0).astype(np.float32)
    return q * s


def check_decode(name, hq, hkv, tokens, dk, dv, flags, kv="f32", window=None, sinks=0, rope=None, position=0):
    """`tinyattn decode` against the float64 reference over the whole sequence with the cache's
    mask: token t visible to query p when t <= p and (no ring, t < sinks or t > p - window), the
    rows rotated at positions position + t first (rope = (style, theta, rotary_dim))."""
    q = (rng.standard_normal((hq, tokens, dk)) * 1.5).astype(np.float32)
    k = (rng.standard_normal((hkv, tokens, dk)) * 1.5).astype(np.float32)
    v = rng.standard_normal((hkv, tokens, dv)).astype(np.float32)
    qp, kp, vp = save(f"{name}_q.npy", q), save(f"{name}_k.npy", k), save(f"{name}_v.npy", v)
    out = str(WORK / f"{name}_y.npy")
    r = tool("decode", "--q", qp, "--k", kp, "--v", vp, "--out", out, "--kv-dtype", kv, *flags)
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        return
    y = np.load(out).astype(np.float64)
    qr, kr = q.astype(np.float64), k.astype(np.float64)
    if rope is not None:
        style, theta, rotary = rope
        qr = rope_ref.rope_hf(qr, style, theta, rotary, position)
        kr = rope_ref.rope_hf(kr, style, theta, rotary, position)
    p = np.arange(tokens)[:, None]
    t = np.arange(tokens)[None, :]
    keep = t <= p
    if window is not None:
        keep &= (t < sinks) | (t > p - window)
    vmax = float(np.abs(v).max())
    if kv == "f16":
        qr, kr, vr = (x.astype(np.float16).astype(np.float64) for x in (qr, kr, v))
        want, _ = reference(qr, kr, vr, keep=keep.astype(np.uint8))
        tol = 2e-3 * (np.abs(want) + vmax)  # fp16 inputs of the rotated rows and fp16 output roundings
    elif kv.startswith("i8"):
        half_scales = kv == "i8-scaled-f16"
        qd, kd, vd = quantized(qr), quantized(kr, half_scales), quantized(v, half_scales)
        want, _ = reference(qd.astype(np.float64), kd.astype(np.float64), vd.astype(np.float64),
                            keep=keep.astype(np.uint8))
        # The dequantized attention within fp32's tolerance and the integer weights' rounding; the
        # rotated rows are float32 here and in the tool, so a rounding tie may quantize apart: 1 %.
        tol = 2e-5 * (vmax + np.abs(want)) + (0.5 * tokens + 1) / 32768 * vmax + (0.01 * vmax if rope else 0)
    else:
        want, _ = reference(qr, kr, v.astype(np.float64), keep=keep.astype(np.uint8))
        tol = 2e-5 * (vmax + np.abs(want))
    err = np.abs(y - want)
    if y.shape != want.shape or not np.all(err <= tol):
        failures.append(f"{name}: decode off the reference by {float(err.max()):.3g} (shape {y.shape})")


def decode_cases():
    check_decode("decode_f32", 4, 2, 30, 8, 6, [])
    check_decode("decode_f32_ring_sinks_rope", 4, 2, 40, 8, 6,
                 ["--window", "6", "--sinks", "2", "--rope", "interleaved,500000,4", "--position", "7", "--chunk", "3"],
                 window=6, sinks=2, rope=(rope_ref.INTERLEAVED, 500000.0, 4), position=7)
    check_decode("decode_f32_rope_half", 2, 1, 25, 16, 16, ["--rope", "half-split", "--chunk", "4"],
                 rope=(rope_ref.HALF_SPLIT, 10000.0, 16))
    check_decode("decode_f16", 2, 2, 20, 8, 8, ["--chunk", "2"], kv="f16")
    check_decode("decode_i8", 4, 2, 30, 8, 6, [], kv="i8-scaled")
    check_decode("decode_i8_f16_ring", 4, 4, 30, 16, 8, ["--window", "5", "--sinks", "3", "--chunk", "2"],
                 kv="i8-scaled-f16", window=5, sinks=3)
    check_decode("decode_i8_rope", 2, 1, 24, 8, 8, ["--rope", "half-split,10000,8"], kv="i8-scaled",
                 rope=(rope_ref.HALF_SPLIT, 10000.0, 8))
    # Bad arguments: one line, exit 2.
    q, k, v = (save(f"decode_bad_{n}.npy", rng.standard_normal((4, 8)).astype(np.float32)) for n in "qkv")
    for args, needle in ((["--kv-dtype", "q4"], "--kv-dtype must be"), (["--sinks", "2"], "--sinks needs --window"),
                         (["--rope", "sideways"], "--rope must be"), (["--chunk", "0"], "--chunk must be")):
        r = tool("decode", "--q", q, "--k", k, "--v", v, "--out", str(WORK / "decode_bad_y.npy"), *args)
        if r.returncode != 2 or needle not in r.stderr or r.stderr.count("\n") > 2:
            failures.append(f"decode {args}: want exit 2 and '{needle}', got {r.returncode}: {r.stderr.strip()}")


if MODE == "run":
    run_cases()
elif MODE == "decode":
    decode_cases()
elif MODE == "malformed":
    malformed()
else:
    sys.exit(f"unknown mode {MODE}")
for f in failures:
    print(f"FAIL {f}")
print(f"{'FAILED' if failures else 'PASSED'}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
