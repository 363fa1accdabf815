#!/usr/bin/env python3
"""Generates tests/demo/demo_expected.h: the seed notebook's numbers.

Runs the computations of the seed notebook (50_scaled_dot_product_attention,
its attention map, properties, softmax-saturation and disambiguation cells --
the computations only, without marimo, pandas or plotly) in the notebook's
order and with its seeds (NumPy's legacy RandomState draws), and records every
number the demo prints, formatted exactly as the notebook formats it. The demo
test holds tinyattn's results to these strings.

Where the notebook calls np.dot, np.matmul, np.einsum, np.linalg.norm, np.exp,
np.sum or np.mean, this script computes the same formula with exactly rounded
sums (math.fsum) and an exp computed in software (decimal): NumPy sends those
to BLAS or to code dispatched per CPU (SIMD exp, summation order), whose last
bits differ between machines, and the header must be byte-identical everywhere.
The values can differ from a NumPy run in the last bits, never in the printed
digits. The draws themselves are NumPy's (its legacy polar method calls the C
library's log; glibc's FMA and SSE2 versions give the same draws here).

    /usr/bin/python3 tools/gen/demo_expected.py           # rewrite the header
    /usr/bin/python3 tools/gen/demo_expected.py --check   # fail if it differs
"""
import argparse
import math
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from exact_math import dot, exp, fsum, matmul  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "demo" / "demo_expected.h"


# Only correctly rounded elementwise IEEE operations (+, -, *, /, sqrt) and the
# random draws are left to NumPy; see the docstring for why.


def softmax_rows(z):
    """exp(z - row max) / row sum, with exp() and exactly rounded sums."""
    out = np.empty(z.shape)
    for i, row in enumerate(z.tolist()):
        mx = max(row)  # exact: the same whatever the order
        e = [exp(x - mx) for x in row]
        total = math.fsum(e)
        out[i] = [x / total for x in e]
    return out


def norm(x):
    return math.sqrt(dot(x, x))


def notebook():
    """The notebook's cells, in order (the same global RandomState stream)."""
    r = {}
    sentence_tokens = ["The", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired"]
    seq_len = len(sentence_tokens)
    np.random.seed(1337)
    r["first_gauss_1337"] = list(np.random.randn(4))
    np.random.seed(1337)
    d_k_demo = 32
    emb_matrix = np.random.normal(0, 0.5, (seq_len, d_k_demo))
    idx_animal = sentence_tokens.index("animal")
    idx_it = sentence_tokens.index("it")
    idx_tired = sentence_tokens.index("tired")
    emb_matrix[idx_it] = 0.7 * emb_matrix[idx_animal] + 0.3 * emb_matrix[idx_tired] + 0.1 * np.random.randn(d_k_demo)
    emb_matrix[idx_tired] += 0.4 * emb_matrix[idx_animal]
    raw_dot_products = matmul(emb_matrix, emb_matrix.T)
    scaled_scores = raw_dot_products / np.sqrt(d_k_demo)
    attention_matrix = softmax_rows(scaled_scores)
    r["tokens"] = sentence_tokens
    r["embeddings"] = emb_matrix
    r["attention"] = attention_matrix

    dim_grid = np.array([4, 8, 16, 32, 64, 128, 256, 512])
    n_trials = 200
    grad_norm_unscaled, grad_norm_scaled = [], []
    for d in dim_grid:
        q_samples = np.random.normal(0, 1, (n_trials, d))
        k_samples = np.random.normal(0, 1, (n_trials, 10, d))
        unscaled_z = np.array([[dot(q_samples[t], k_samples[t, j]) for j in range(k_samples.shape[1])]
                               for t in range(n_trials)])
        scaled_z = unscaled_z / np.sqrt(d)
        p_unscaled = softmax_rows(unscaled_z)
        p_scaled = softmax_rows(scaled_z)
        grad_norm_unscaled.append(fsum(p_unscaled * (1.0 - p_unscaled)) / p_unscaled.size)
        grad_norm_scaled.append(fsum(p_scaled * (1.0 - p_scaled)) / p_scaled.size)
    sat = []
    for idx, d in enumerate(dim_grid):
        ratio = grad_norm_scaled[idx] / max(grad_norm_unscaled[idx], 1e-12)
        sat.append((int(d), f"{grad_norm_scaled[idx]:.5f}", f"{grad_norm_unscaled[idx]:.5f}", f"{ratio:.1f}x",
                    "Stable Gradient Flow" if grad_norm_unscaled[idx] > 0.03 else "Severe Softmax Saturation",
                    grad_norm_scaled[idx], grad_norm_unscaled[idx]))
    r["saturation"] = sat

    def sdpa(Q, K, V):
        d_k = Q.shape[-1]
        scores = matmul(Q, K.T) / np.sqrt(d_k)
        A = softmax_rows(scores)
        return matmul(A, V), A

    np.random.seed(42)
    Q = np.random.randn(5, 16)
    K = np.random.randn(6, 16)
    V = np.random.randn(6, 8)
    Y, A = sdpa(Q, K, V)
    row_sums = np.array([fsum(row) for row in A])
    v_min_norm = min(norm(row) for row in V)
    v_max_norm = max(norm(row) for row in V)
    y_norms = np.array([norm(row) for row in Y])
    # np.min/np.max round nothing, so they give the same value in any order, on any CPU.
    r["properties"] = [
        ("Row Sum Normalization (sum_j A_ij = 1)", "1.000000", f"{np.min(row_sums):.6f}", f"{np.max(row_sums):.6f}",
         "Exact Match" if np.allclose(row_sums, 1.0, atol=1e-6) else "Discrepancy"),
        ("Non-Negativity (A_ij >= 0)", ">= 0.0", f"{np.min(A):.6f}", f"{np.max(A):.6f}",
         "Strictly Non-Negative" if np.all(A >= 0.0) else "Negative Entry Found"),
        ("Convex Hull Norm Boundedness", f"[{v_min_norm:.2f}, {v_max_norm:.2f}]", f"{np.min(y_norms):.2f}",
         f"{np.max(y_norms):.2f}", "Within Convex Hull" if np.max(y_norms) <= v_max_norm * 1.01 else "Exceeded"),
    ]

    np.random.seed(42)
    bases = {
        "deposit": np.array([2.0, 0.1, 0.0, 0.0, 1.5, 0.0, 0.0, 0.5]),
        "cash": np.array([2.5, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.2]),
        "at": np.array([0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1, 0.0]),
        "river": np.array([0.0, 3.0, 2.5, 2.0, 0.0, 0.0, 0.0, 0.0]),
        "investment": np.array([3.0, 0.0, 0.0, 0.0, 3.0, 1.5, 0.0, 1.0]),
        "bank": np.array([1.5, 1.5, 1.0, 1.0, 1.5, 0.5, 0.0, 0.5]),
    }
    sent_A = ["deposit", "cash", "at", "river", "bank"]
    X_A = np.array([bases[w] for w in sent_A])
    Y_A, _ = sdpa(X_A, X_A, X_A)
    bank_A = Y_A[sent_A.index("bank")]
    sent_B = ["deposit", "cash", "at", "investment", "bank"]
    X_B = np.array([bases[w] for w in sent_B])
    Y_B, _ = sdpa(X_B, X_B, X_B)
    bank_B = Y_B[sent_B.index("bank")]

    def cos(u, v):
        return dot(u, v) / (norm(u) * norm(v))

    r["bank"] = [
        ("Static bank vs Static bank (Pre-Attention)", f"{cos(bases['bank'], bases['bank']):.4f}",
         "Single polysemous static vector cannot differentiate senses"),
        ("Contextual bank (River) vs Contextual bank (Finance)", f"{cos(bank_A, bank_B):.4f}",
         "Attention forces representations into distinct semantic regions"),
        ("Contextual bank (River) vs Static 'river'", f"{cos(bank_A, bases['river']):.4f}",
         "Substantial alignment with geographic/hydrological context"),
        ("Contextual bank (Finance) vs Static 'investment'", f"{cos(bank_B, bases['investment']):.4f}",
         "Strong alignment with financial enterprise context"),
    ]
    return r


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate():
    r = notebook()
    n = len(r["tokens"])
    out = ["// Generated by tools/gen/demo_expected.py -- do not edit; rerun the generator.",
           "// The seed notebook's numbers, from its NumPy code with its seeds (1337, 42).",
           "#pragma once\n", "namespace demo_expected {\n"]
    out.append("// np.random.seed(1337); np.random.randn(4)")
    out.append("inline constexpr double kFirstGauss1337[4] = {" +
               ", ".join(float.hex(float(x)) for x in r["first_gauss_1337"]) + "};\n")
    out.append(f"inline constexpr int kTokens = {n};")
    out.append("inline constexpr const char* kTokenNames[kTokens] = {" + ", ".join(c_str(t) for t in r["tokens"]) + "};\n")
    out.append("// The synthetic embeddings (seed 1337, after the two injected correlations).")
    emb = r["embeddings"].reshape(-1)
    out.append(f"inline constexpr double kEmbeddings[{emb.size}] = {{")
    for i in range(0, emb.size, 4):
        out.append("    " + ", ".join(float.hex(float(x)) for x in emb[i:i + 4]) + ",")
    out.append("};\n")
    out.append("// The self-attention map A = softmax(E E^T / sqrt(32)) and the same values as printed (%.2f).")
    att = r["attention"].reshape(-1)
    out.append(f"inline constexpr double kAttention[{att.size}] = {{")
    for i in range(0, att.size, 4):
        out.append("    " + ", ".join(float.hex(float(x)) for x in att[i:i + 4]) + ",")
    out.append("};")
    out.append(f"inline constexpr const char* kAttentionPrinted[{att.size}] = {{")
    for i in range(0, att.size, n):
        out.append("    " + ", ".join(c_str(f"{x:.2f}") for x in att[i:i + n]) + ",")
    out.append("};\n")
    out.append("struct SaturationRow {\n  int dk;\n  const char* scaled;\n  const char* unscaled;\n  const char* ratio;\n"
               "  const char* regime;\n  double scaled_value;\n  double unscaled_value;\n};")
    out.append(f"inline constexpr SaturationRow kSaturation[{len(r['saturation'])}] = {{")
    for d, s, u, ratio, regime, sv, uv in r["saturation"]:
        out.append(f"    {{{d}, {c_str(s)}, {c_str(u)}, {c_str(ratio)}, {c_str(regime)}, {float.hex(float(sv))}, "
                   f"{float.hex(float(uv))}}},")
    out.append("};\n")
    out.append("struct PropertyRow {\n  const char* property;\n  const char* theoretical;\n  const char* min;\n"
               "  const char* max;\n  const char* status;\n};")
    out.append(f"inline constexpr PropertyRow kProperties[{len(r['properties'])}] = {{")
    for row in r["properties"]:
        out.append("    {" + ", ".join(c_str(x) for x in row) + "},")
    out.append("};\n")
    out.append("struct BankRow {\n  const char* pair;\n  const char* cosine;\n  const char* meaning;\n};")
    out.append(f"inline constexpr BankRow kBank[{len(r['bank'])}] = {{")
    for row in r["bank"]:
        out.append("    {" + ", ".join(c_str(x) for x in row) + "},")
    out.append("};\n")
    out.append("}  // namespace demo_expected")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed header differs")
    args = ap.parse_args()
    text = generate()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: rerun {pathlib.Path(__file__).name}", file=sys.stderr)
            return 1
        print(f"{OUT.relative_to(ROOT)} is up to date")
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
