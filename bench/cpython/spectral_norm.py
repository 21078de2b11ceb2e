# spectral_norm.py - the spectral norm of the infinite matrix
# A[i][j] = 1 / ((i + j) (i + j + 1) / 2 + i + 1), by the power method
# (small function calls in nested loops, floats); bench/cpython/run.sh
# times it.  spectral_norm.py [N]
#
# SPDX-License-Identifier: MIT
import sys


def a(i, j):
    return 1.0 / ((i + j) * (i + j + 1) // 2 + i + 1)


def times(v):
    n = len(v)
    return [sum(a(i, j) * v[j] for j in range(n)) for i in range(n)]


def times_transposed(v):
    n = len(v)
    return [sum(a(j, i) * v[j] for j in range(n)) for i in range(n)]


def spectral_norm(n):
    u = [1.0] * n
    for _ in range(10):
        v = times_transposed(times(u))
        u = times_transposed(times(v))
    vbv = sum(x * y for x, y in zip(u, v))
    vv = sum(x * x for x in v)
    return (vbv / vv) ** 0.5


if __name__ == "__main__":
    print(f"{spectral_norm(int(sys.argv[1]) if len(sys.argv) > 1 else 250):.9f}")
