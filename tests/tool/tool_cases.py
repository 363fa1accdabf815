#!/usr/bin/env python3
"""Tests of `tinyattn run` against NumPy, and of its .npy error handling.

    tool_cases.py TINYATTN WORKDIR run        # generated cases vs a float64 NumPy reference
    tool_cases.py TINYATTN WORKDIR malformed  # broken files and arguments: clean one-line errors

Cases and their expected outputs are generated into WORKDIR (the build tree)
from a fixed seed; nothing here is committed data.
"""
import io
import pathlib
import subprocess
import sys

import numpy as np

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


def reference(q, k, v, keep=None, bias=None, causal=None, window=None, kv_len=None, scale=None):
    """float64 attention with the library's semantics (fully masked rows -> 0)."""
    q3 = q if q.ndim == 3 else q[None]
    k3 = k if k.ndim == 3 else k[None]
    v3 = v if v.ndim == 3 else v[None]
    hq, n, dk = q3.shape
    hkv, m, _ = k3.shape
    s = scale if scale is not None else float(np.float32(1) / np.sqrt(np.float32(dk)))
    ys, ws = [], []
    i = np.arange(n)[:, None]
    j = np.arange(m)[None, :]
    vis = np.ones((n, m), bool)
    if causal == "top-left":
        vis &= j <= i
    if causal == "bottom-right":
        vis &= j <= i + m - n
    if window is not None:
        left, right, align = window
        p = i if align == "top-left" else i + m - n
        vis &= (j >= p - left) & (j <= p + right)
    if kv_len is not None:
        vis &= j < kv_len
    for h in range(hq):
        g = h // (hq // hkv)
        logits = s * (q3[h].astype(np.float64) @ k3[g].astype(np.float64).T)
        visible = vis.copy()
        if keep is not None:
            visible &= (keep if keep.ndim == 2 else keep[h]).astype(bool)
        if bias is not None:
            logits = logits + (bias if bias.ndim == 2 else bias[h]).astype(np.float64)
        logits = np.where(visible, logits, -np.inf)
        mx = logits.max(axis=1, keepdims=True)
        empty = ~np.isfinite(mx)
        e = np.where(empty, 0.0, np.exp(logits - np.where(empty, 0.0, mx)))
        tot = e.sum(axis=1, keepdims=True)
        a = np.where(tot > 0, e / np.where(tot > 0, tot, 1), 0.0)
        ys.append(a @ v3[g].astype(np.float64))
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
    check_run("float16", (r(5, 16), r(7, 16), r(7, 8)), [], {}, dtype=np.float16)
    check_run("format_2_0", (r(3, 4), r(5, 4), r(5, 2)), [], {}, version=(2, 0))
    check_run("format_3_0", (r(3, 4), r(5, 4), r(5, 2)), [], {}, version=(3, 0))
    # Longer than one key tile and no weights requested: the online-softmax path.
    check_run("long_keys_tiled", (r(2, 3, 16), r(1, 700, 16), r(1, 700, 8)), ["--causal", "bottom-right"],
              {"causal": "bottom-right"}, weights=False)


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
        ("four_dimensional", save("t23.npy", q.reshape(1, 1, 5, 16)), "expected 2-D"),
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
    float_mask = save("m_maskf.npy", np.ones((5, 7), np.float32))
    expect_error("mask_dtype", ["run", "--q", good_q, "--k", good_k, "--v", good_v, "--mask", float_mask, *base],
                 "bool or uint8")
    common = ["run", "--q", good_q, "--k", good_k, "--v", good_v, *base]
    expect_error("dtype_f16", [*common, "--dtype", "f16"], "not available", code=2)
    expect_error("dtype_i8", [*common, "--dtype", "i8"], "not available", code=2)
    expect_error("dtype_other", [*common, "--dtype", "f64"], "--dtype", code=2)
    expect_error("kv_len_range", [*common, "--kv-len", "8"], "--kv-len", code=2)
    expect_error("window_syntax", [*common, "--window", "2"], "--window", code=2)
    expect_error("window_empty", [*common, "--window", "-3,1"], "bad_mask")
    expect_error("causal_value", [*common, "--causal", "diagonal"], "--causal", code=2)
    expect_error("scale_nan", [*common, "--scale", "nan"], "--scale", code=2)
    expect_error("unknown_flag", [*common, "--frobnicate", "1"], "unknown argument", code=2)
    expect_error("missing_out", ["run", "--q", good_q, "--k", good_k, "--v", good_v], "--out", code=2)
    expect_error("unknown_command", ["frobnicate"], "unknown command", code=2)
    expect_error("unwritable_out", ["run", "--q", good_q, "--k", good_k, "--v", good_v, "--out",
                                    str(WORK / "no_such_dir" / "y.npy")], "cannot create")


if MODE == "run":
    run_cases()
elif MODE == "malformed":
    malformed()
else:
    sys.exit(f"unknown mode {MODE}")
for f in failures:
    print(f"FAIL {f}")
print(f"{'FAILED' if failures else 'PASSED'}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
