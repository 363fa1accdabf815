#!/usr/bin/env python3
"""Runs every ONNX Attention case of tests/onnx/cases through `tinyattn run`.

    onnx_cases.py TINYATTN WORKDIR

For each case of manifest.json (written by gen_onnx_attention.py): runs the
tool with the case's arguments, then holds each output to the expected one:

  Y          |y - y_ref| <= y_vmax * max|v| + y_rel * |y_ref| + y_abs  (v: every value, past included)
  weights    |a - a_ref| <= a_abs + a_rel * a_ref   (ONNX's qk_matmul_output mode 3)
  scores     -inf exactly where the reference has -inf; elsewhere s_abs + s_rel * |s_ref| (modes 0-2)
  present    equal bit for bit (ONNX's present_key / present_value)
  a fully masked row (no attendable key): the reference's Y and softmax are 0 there; the tool's must be exactly 0

A case with a `text_reading` also runs the tool at that stage and holds it to
`scores_text` (the attribute text's reading where the reference computes
otherwise). Prints each case, the worst errors per kind, and a summary.
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

TOOL, WORK = sys.argv[1], pathlib.Path(sys.argv[2])
CASES = pathlib.Path(__file__).resolve().parent / "cases"
WORK.mkdir(parents=True, exist_ok=True)
manifest = json.loads((CASES / "manifest.json").read_text())
failures = []
worst = {"f32_y": 0.0, "f32_y_rel_vmax": 0.0, "f32_a": 0.0, "f32_s": 0.0, "f16_y_rel_vmax": 0.0, "f16_a": 0.0}
by_kind = {}
fully_masked_rows = 0


def run(args, name, out):
    mapping = {p.stem: str(p) for p in (CASES / name).glob("*.npy")}
    mapping.update({f"out_{k}": str(WORK / f"{name}_{k}.npy") for k in ("y", "weights", "scores", "present_k",
                                                                        "present_v")})
    mapping["out_scores"] = str(out)
    r = subprocess.run([TOOL, "run", *[a.format(**mapping) for a in args]], capture_output=True, text=True,
                       timeout=120)
    return r


for case in manifest["cases"]:
    name, dtype = case["name"], case["dtype"]
    tol = manifest["tolerances"][dtype]
    for kind in case["kinds"]:
        by_kind[kind] = by_kind.get(kind, 0) + 1
    folder = CASES / name
    load = lambda key: np.load(folder / f"{key}.npy")
    r = run(case["tool_args"], name, WORK / f"{name}_scores.npy")
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        continue
    problems = []
    v_all = load("v").astype(np.float64)
    if "present_v" in case["expected"]:
        v_all = load("present_v").astype(np.float64)
    vmax = float(np.abs(v_all).max())
    y_ref = load("y")
    y = np.load(WORK / f"{name}_y.npy")
    want_dtype = np.float16 if dtype == "f16" else np.float32
    if y.dtype != want_dtype or y.shape != y_ref.shape:
        problems.append(f"Y is {y.dtype} {y.shape}, expected {want_dtype.__name__} {y_ref.shape}")
    else:
        yd = np.abs(y.astype(np.float64) - y_ref)
        bound = tol["y_vmax"] * vmax + tol["y_rel"] * np.abs(y_ref) + tol["y_abs"]
        if (yd > bound).any():
            problems.append(f"Y off by {yd.max():.3g} (bound {bound[yd > bound].min():.3g})")
        key = "f16" if dtype == "f16" else "f32"
        worst[f"{key}_y_rel_vmax"] = max(worst[f"{key}_y_rel_vmax"], yd.max() / vmax)
        if dtype == "f32":
            worst["f32_y"] = max(worst["f32_y"], yd.max())
        # Fully masked rows (softmax all 0, or the masked logits all -inf): the reference's Y is 0 there,
        # and the tool's must be exactly 0.
        empty = None
        if "weights" in case["expected"]:
            empty = (load("weights") == 0).all(axis=-1)
        elif "--score-stage" in case["tool_args"] and \
                case["tool_args"][case["tool_args"].index("--score-stage") + 1] == "masked":
            empty = np.isneginf(load("scores")).all(axis=-1)
        if empty is not None:
            fully_masked_rows += int(empty.sum())
            if (y_ref[empty] != 0).any() or (y[empty] != 0).any():
                problems.append("Y of a fully masked row is not exactly 0")
    if "weights" in case["expected"]:
        a_ref = load("weights")
        a = np.load(WORK / f"{name}_weights.npy")
        if a.shape != a_ref.shape:
            problems.append(f"weights shape {a.shape}, expected {a_ref.shape}")
        else:
            ad = np.abs(a.astype(np.float64) - a_ref)
            if (ad > tol["a_abs"] + tol["a_rel"] * a_ref).any():
                problems.append(f"weights off by {ad.max():.3g}")
            if (a[a_ref == 0] != 0).any():
                problems.append("a weight the reference gives 0 (masked key) is not exactly 0")
            worst[f"{'f16' if dtype == 'f16' else 'f32'}_a"] = max(worst[f"{'f16' if dtype == 'f16' else 'f32'}_a"],
                                                                  ad.max())
    stages = []
    if "scores" in case["expected"]:
        stages.append(("scores", WORK / f"{name}_scores.npy"))
    if "text_reading" in case:
        args = list(case["tool_args"])
        args[args.index("--score-stage") + 1] = case["text_reading"]["stage"]
        out = WORK / f"{name}_scores_text.npy"
        rt = run(args, name, out)
        if rt.returncode != 0:
            problems.append(f"text reading: exit {rt.returncode}: {rt.stderr.strip()}")
        else:
            stages.append(("scores_text", out))
    for key, path in stages:
        want = load(key)
        got = np.load(path).astype(np.float64)
        inf = np.isinf(want)
        if got.shape != want.shape or not np.array_equal(got[inf], want[inf]) or np.isinf(got[~inf]).any():
            problems.append(f"{key}: shape {got.shape} or the -inf entries differ from the reference")
            continue
        sd = np.abs(got[~inf] - want[~inf])
        if sd.size and (sd > tol["s_abs"] + tol["s_rel"] * np.abs(want[~inf])).any():
            problems.append(f"{key} off by {sd.max():.3g}")
        if sd.size:
            worst["f32_s"] = max(worst["f32_s"], sd.max())
    for key in ("present_k", "present_v"):
        if key in case["expected"]:
            got, want = np.load(WORK / f"{name}_{key}.npy"), load(key)
            if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
                problems.append(f"{key} differs from past + new ({got.dtype} {got.shape} vs {want.dtype} {want.shape})")
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}")
    else:
        extra = " and the text reading" if "text_reading" in case else ""
        print(f"ok   {name} [{', '.join(case['kinds'])}]: {', '.join(case['expected'])}{extra}")

print("cases per kind: " + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items())))
print(f"worst: fp32 Y {worst['f32_y']:.2e} (max|y - y_ref|/max|v| {worst['f32_y_rel_vmax']:.2e}), "
      f"fp32 weights {worst['f32_a']:.2e}, scores {worst['f32_s']:.2e}; "
      f"fp16 max|y - y_ref|/max|v| {worst['f16_y_rel_vmax']:.2e}, weights {worst['f16_a']:.2e}; "
      f"{fully_masked_rows} fully masked rows give Y = 0 and weights 0 in both")
for f in failures:
    print(f"FAIL {f}")
print(f"{'FAILED' if failures else 'PASSED'}: {len(manifest['cases'])} cases, {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
