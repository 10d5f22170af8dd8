#!/usr/bin/env python3
"""Derives the polynomial coefficients of the inline math helpers in codegen/c/vmath.cc.

Each polynomial is a near-minimax fit (Lawson's iteratively reweighted least squares on a dense
grid; the target function in 40-digit mpmath) of the error measure the helper needs (relative
for exp, log, tanh and erf's small branch, absolute for the exponent of erf's large branch).
Coefficients are rounded to float one at a time, lowest degree first, and the higher ones
refitted after each rounding. Prints each helper's coefficients, highest degree first (the
order of the Horner steps in vmath.cc), with the fit's maximum error after rounding.

Usage: /usr/bin/python3 tools/vmath_fit.py    (Debian's python3-numpy and python3-mpmath)
"""
import struct

import mpmath as mp
import numpy as np

mp.mp.dps = 40


def f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def lawson(A, g, w, iters=3000):
    """c minimising max_i w_i |(A c)_i - g_i| (Lawson's algorithm)."""
    u = np.ones(len(g)) / len(g)
    Aw, gw = A * w[:, None], g * w
    best = None
    for _ in range(iters):
        s = np.sqrt(u)
        c = np.linalg.lstsq(Aw * s[:, None], gw * s, rcond=None)[0]
        e = np.abs(Aw @ c - gw)
        if best is None or e.max() < best[0]:
            best = (e.max(), c)
        u = u * e
        u /= u.sum()
    return best[1]


def fit(xs, target, weight, powers, fixed=None):
    """target(x) ~ sum_p c_p x^p over xs, error weighted by weight(x); `fixed` coefficients
    are not fitted. Returns ({power: float coefficient}, max weighted error)."""
    fixed = dict(fixed or {})
    xs = np.asarray(xs, dtype=np.float64)
    g = np.array([float(target(x)) for x in xs])
    w = np.array([float(weight(x)) for x in xs])
    free = [p for p in powers if p not in fixed]
    while free:
        rest = g - sum(v * xs**p for p, v in fixed.items())
        c = lawson(np.stack([xs**p for p in free], axis=1), rest, w)
        fixed[free[0]] = f32(c[0])
        free = free[1:]
    err = np.abs((g - sum(v * xs**p for p, v in fixed.items())) * w).max()
    return fixed, err


def show(name, coeffs, err, powers):
    print("%s (max error %.2e):" % (name, err))
    for p in sorted(powers, reverse=True):
        print("  x^%-2d %s" % (p, float(coeffs[p]).hex()))


def main():
    # onnxc_expf: e^r = 1 + r + r^2 q(r) on |r| <= ln(2)/2 (widened for the rounding of n).
    R = 0.3467
    c, err = fit(np.linspace(-R, R, 4001), mp.exp, lambda r: 1 / mp.exp(r), range(7), {0: 1.0, 1: 1.0})
    show("expf: q(r), coefficients of r^2..r^6, relative error", c, err, range(2, 7))

    # onnxc_logf: ln(1 + f) = f - f^2/2 + f^3 P(f), f in [sqrt(1/2) - 1, sqrt(2) - 1].
    xs = np.linspace((2**-0.5 - 1) * 1.0001, (2**0.5 - 1) * 1.0001, 4001)
    xs = xs[np.abs(xs) > 1e-6]
    c, err = fit(xs, lambda f: (mp.log1p(f) - f + f * f / 2) / f**3, lambda f: abs(f**3 / mp.log1p(f)), range(8))
    show("logf: P(f), relative error", c, err, range(8))

    # onnxc_tanhf: tanh(a) = a + a^3 P(a^2) on [0, 0.9] (P in powers of a^2).
    pw = [2 * j for j in range(7)]
    c, err = fit(np.linspace(1e-4, 0.9, 3000), lambda a: (mp.tanh(a) - a) / a**3, lambda a: abs(a**3 / mp.tanh(a)), pw)
    show("tanhf: P(s), s = a^2 (x^2k is s^k), relative error", c, err, pw)

    # onnxc_erff, |x| < 0.92: erf(a) = a + a P(a^2).
    c, err = fit(np.linspace(1e-4, 0.92, 3000), lambda a: mp.erf(a) / a - 1, lambda a: abs(a / mp.erf(a)), pw)
    show("erff small: P(s), s = a^2 (x^2k is s^k), relative error", c, err, pw)

    # onnxc_erff, 0.92 <= |x| <= 4: erf(b) = 1 - e^Q(b), Q ~ ln(erfc(b)).
    c, err = fit(np.linspace(0.92, 4.0, 4000), lambda b: mp.log(mp.erfc(b)), lambda b: 1, range(9))
    show("erff large: Q(b), absolute error", c, err, range(9))


if __name__ == "__main__":
    main()
