"""Float64 arithmetic that gives the same bits on every machine, for the
generators of committed test data (tests/vectors/gen_vectors.py,
tools/gen/selftest_vectors.py, tools/gen/demo_expected.py,
tests/tool/tool_cases.py).

NumPy is left only correctly rounded elementwise IEEE operations (+, -, *, /,
sqrt), which are the same on every CPU. Its @ / dot go to BLAS, whose kernels
and summation order depend on the CPU, and its float64 exp/log and some
reductions are dispatched to per-CPU SIMD code; math.exp is not fixed either
(glibc picks an FMA or an SSE2 version at run time, which differ in the last
bit on rare inputs). So sums are exactly rounded (math.fsum) and exp/log are
computed to 40 digits with the decimal module, then rounded to float64.
"""
import decimal
import math

import numpy as np


def fsum(x):
    """Exactly rounded float64 sum of every element of x."""
    return math.fsum(np.asarray(x, dtype=np.float64).ravel().tolist())


def dot(x, y):
    """Exactly rounded float64 dot product (the products of fp32 inputs are exact)."""
    return fsum(np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64))


def matmul(a, b):
    """a [n, k] @ b [k, m], each entry an exactly rounded dot product."""
    bt = np.asarray(b, dtype=np.float64).T
    return np.array([[dot(row, col) for col in bt] for row in np.asarray(a, dtype=np.float64)])


def exp(x):
    """e**x to 40 digits, rounded to float64."""
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        return float(decimal.Decimal(x).exp())


def tanh(x):
    """tanh(x) = (e^2x - 1) / (e^2x + 1), like exp(); +-1 beyond where that rounds to it."""
    if abs(x) > 30.0:
        return math.copysign(1.0, x)
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        e = (2 * decimal.Decimal(x)).exp()
        return float((e - 1) / (e + 1))


def log(x):
    """The natural log, like exp()."""
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        return float(decimal.Decimal(x).ln())
