#!/usr/bin/python3
"""Fits the rational M(a) = P(a)/Q(a) that gelu_erf's f32 kernel uses (AVX2 and AVX-512:
codegen/lower/cpu/vec_math_f32.hpp).

gelu_erf(x) = relu(x) - a Phi(-a), a = |x|, and Phi(-a) = exp(-a^2/2) M(a), so M(a) =
Phi(-a) exp(a^2/2) = erfc(a/sqrt 2) exp(a^2/2) / 2, smooth, from 1/2 at 0 to ~1/(a sqrt(2 pi)).
P has degree 4 with P(0) = 1/2, Q degree 5 with Q(0) = 1; the fit minimises the largest
relative error on [0, 13.1] (linearised least squares, reweighted towards the largest errors,
as Lawson's algorithm), then rounds the coefficients to f32 one at a time, from the highest
degree, refitting the others each time. Prints the error and the coefficients the kernel
has. Needs Debian's python3 with numpy:

    /usr/bin/python3 scripts/fit_gelu_erf.py
"""
import math

import numpy as np

P_DEGREE, Q_DEGREE, END = 4, 5, 13.1


def mills(a):
    return 0.5 * math.erfc(a / math.sqrt(2)) * math.exp(a * a / 2)


a = np.unique(np.concatenate([np.linspace(0, END, 6000), END * (1 - np.cos(np.linspace(0, np.pi / 2, 3000)))]))
m = np.array([mills(v) for v in a])


def fit(fixed_p, fixed_q, iterations=80):
    """(largest relative error, p, q) with the coefficients in fixed_p / fixed_q held."""
    free_p = [i for i in range(P_DEGREE + 1) if i not in fixed_p]
    free_q = [j for j in range(1, Q_DEGREE + 1) if j not in fixed_q]
    q_previous, weights, best = np.ones_like(a), np.ones_like(a), None
    for iteration in range(iterations):
        # P(a) - m Q(a) = 0, linear in the free coefficients; each row divided by m Q_previous(a)
        y = m.copy()
        for j, v in fixed_q.items():
            y += m * v * a**j
        for i, v in fixed_p.items():
            y -= v * a**i
        columns = [a**i for i in free_p] + [-m * a**j for j in free_q]
        c = []
        if columns:
            x = np.stack(columns, 1)
            s = np.sqrt(weights) / (m * q_previous)
            c, *_ = np.linalg.lstsq(x * s[:, None], y * s, rcond=None)
        p, q = np.zeros(P_DEGREE + 1), np.zeros(Q_DEGREE + 1)
        q[0] = 1
        for i, v in fixed_p.items():
            p[i] = v
        for j, v in fixed_q.items():
            q[j] = v
        for k, i in enumerate(free_p):
            p[i] = c[k]
        for k, j in enumerate(free_q):
            q[j] = c[len(free_p) + k]
        q_values = np.polyval(q[::-1], a)
        error = (np.polyval(p[::-1], a) / q_values - m) / m
        largest = np.max(np.abs(error))
        if best is None or largest < best[0]:
            best = (largest, p.copy(), q.copy())
        q_previous = np.abs(q_values)
        if iteration > 10:
            weights = weights * np.abs(error) / np.mean(np.abs(error))
            weights /= weights.sum()
    return best


def main():
    fixed_p, fixed_q = {0: 0.5}, {}
    print(f"unrounded: largest relative error {fit(fixed_p, fixed_q)[0]:.3g} on [0, {END}]")
    for kind, i in [("q", j) for j in range(Q_DEGREE, 0, -1)] + [("p", j) for j in range(P_DEGREE, 0, -1)]:
        _, p, q = fit(fixed_p, fixed_q)
        if kind == "p":
            fixed_p[i] = float(np.float32(p[i]))
        else:
            fixed_q[i] = float(np.float32(q[i]))
    error, p, q = fit(fixed_p, fixed_q, 1)
    print(f"f32 coefficients: largest relative error {error:.3g}")
    print("P:", ", ".join(f"{v:.9e}" for v in p))
    print("Q:", ", ".join(f"{v:.9e}" for v in q))


if __name__ == "__main__":
    main()
