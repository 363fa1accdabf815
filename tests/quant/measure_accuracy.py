#!/usr/bin/python3
"""The accuracy of the integer modes side by side (docs/quant.md, "Accuracy of the modes").

Every mode starts from the same float Q, K, V (seeded normal draws) and
quantizes them itself, symmetric per tensor from each tensor's max (int8:
/127, int16: /32767); Y's scale from the exact output's max, the TFLite
modes' score scale from max|Q.K^T|. Each mode's output is then compared with
float64 attention of the float inputs (the exact softmax, true masking), so
the error includes the inputs' quantization. Errors are in units of an int8
output LSB (max|y|/127) for every mode, so the rows compare directly; the
int16 rows also give their own LSB. The models are the golden generators'
(gen_quant_vectors.py, gen_tflite_vectors.py, gen_int16_vectors.py,
gen_tflite16_vectors.py), which
the library matches bit for bit.

  measure_accuracy.py    print the table
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_int16_vectors as int16  # noqa: E402
import gen_quant_vectors as native  # noqa: E402
import gen_tflite16_vectors as tflite16  # noqa: E402
import gen_tflite_vectors as tflite  # noqa: E402

CONFIGS = [
    ("N(0,1), no mask", dict(n=16, m=32, dk=32, dv=32, sd=1.0, causal=0)),
    ("N(0,1), causal", dict(n=16, m=32, dk=32, dv=32, sd=1.0, causal=2)),
    ("N(0,2²) (peaked rows)", dict(n=16, m=32, dk=32, dv=32, sd=2.0, causal=0)),
    ("N(0,1), M = 256", dict(n=4, m=256, dk=64, dv=32, sd=1.0, causal=0)),
]


def quantize(x, levels, dtype):
    s = float(np.float32(np.abs(x).max() / levels))
    return s, np.clip(np.round(x / s), -levels, levels).astype(dtype)


def main():
    print("| inputs (N, M, Dk, Dv) | mode | max Y error (int8 LSB) | mean Y error (int8 LSB) | max Y error (own LSB) |")
    print("|---|---|---:|---:|---:|")
    for label, cfg in CONFIGS:
        n, m, dk, dv, sd = cfg["n"], cfg["m"], cfg["dk"], cfg["dv"], cfg["sd"]
        rng = np.random.default_rng(7)
        qf, kf, vf = (rng.normal(0, sd, size=(x, d)) for x, d in ((n, dk), (m, dk), (m, dv)))
        beta = float(np.float32(1.0) / np.sqrt(np.float32(dk)))
        mask = {"causal": cfg["causal"]} if cfg["causal"] else {}
        vis = np.array([[native.key_range(mask, i, n, m)[0] <= j < native.key_range(mask, i, n, m)[1]
                         for j in range(m)] for i in range(n)])
        logits = np.where(vis, (qf @ kf.T) * beta, -np.inf)
        a = np.exp(logits - logits.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        y_true = a @ vf
        amax = np.abs(y_true).max()
        lsb8 = amax / 127

        rows = []
        # int8, both modes, on the same int8 tensors.
        sq, q8 = quantize(qf, 127, np.int8)
        sk, k8 = quantize(kf, 127, np.int8)
        sv, v8 = quantize(vf, 127, np.int8)
        sy = float(np.float32(amax / 127))
        raw = (q8.astype(np.int64) @ k8.astype(np.int64).T).astype(np.float64) * sq * sk
        ss = float(np.float32(np.abs(raw[vis]).max() / 127))
        c = {"dims": (n, m, dk, dv, 1, 1), "softmax_scale": beta, "mask": mask, "q_data": q8.ravel(),
             "k_data": k8.ravel(), "v_data": v8.ravel()}
        for t, s in (("q", sq), ("k", sk), ("v", sv), ("y", sy), ("scores", ss)):
            c[t] = ([s], [0])
        yn, _ = native.forward(c, native.plan(c))
        yt, _ = tflite.forward(c, tflite.plan(c))
        rows.append(("int8 native", yn.astype(np.float64) * sy, sy))
        rows.append(("int8 TFLite", yt.astype(np.float64) * sy, sy))

        # int16, both modes, on int16 tensors of the same floats.
        sq, q16 = quantize(qf, 32767, np.int16)
        sk, k16 = quantize(kf, 32767, np.int16)
        sv, v16 = quantize(vf, 32767, np.int16)
        sy16 = float(np.float32(amax / 32767))
        c16 = {"dims": (n, m, dk, dv, 1, 1), "softmax_scale": beta, "mask": mask, "q_data": q16.ravel(),
               "k_data": k16.ravel(), "v_data": v16.ravel(), "q": [sq], "k": [sk], "v": [sv], "y": [sy16]}
        y16, _ = int16.forward(c16, int16.plan(c16), int16.Stats())
        rows.append(("int16 native", y16.astype(np.float64) * sy16, sy16))
        raw16 = (q16.astype(np.int64) @ k16.astype(np.int64).T).astype(np.float64) * sq * sk
        c16["scores"] = [float(np.float32(np.abs(raw16[vis]).max() / 32767))]
        yt16, _ = tflite16.forward(c16, tflite16.plan(c16), tflite16.Stats())
        rows.append(("int16 TFLite 16x8", np.array(yt16, dtype=np.float64) * sy16, sy16))

        for mode, y, own in rows:
            err = np.abs(y.reshape(n, dv) - y_true)
            print(f"| {label} ({n}, {m}, {dk}, {dv}) | {mode} | {err.max() / lsb8:.3f} | {err.mean() / lsb8:.3f} "
                  f"| {err.max() / own:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
