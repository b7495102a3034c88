#!/usr/bin/env python3
"""Finds the coefficients of the f32 normal CDF that the exact GELU and its
gradient use (emitNormalCdfF32 in lib/Conversion/FXToLoop/MathLowering.cpp).

The upper tail q(z) = 0.5 erfc(z / sqrt 2) is approximated on [0, 14] as

    q(z) = exp(-z^2 / 2) t P(t),    t = 1 / (1 + p z),

with P of degree 7. For each p of a grid, P's coefficients minimise the
largest relative error of q (a linear problem in them, solved by Lawson's
iteratively reweighted least squares); the best p is then refined. Prints p
and P's coefficients, highest power first, rounded to f32, and the largest
relative error. Needs NumPy (Debian's python3-numpy).

    utils/fit-normal-cdf.py [--degree 7]
"""

import argparse
import math

import numpy as np


def fit(z, q, density, scale, degree, iterations):
    """P's coefficients (lowest power first) for one p, and their error."""
    t = 1.0 / (1.0 + scale * z)
    # Row i: the relative contribution of each coefficient at z[i].
    basis = (density * t)[:, None] * t[:, None] ** np.arange(degree + 1)[None, :]
    basis /= q[:, None]
    target = np.ones_like(q)
    weights = np.full_like(z, 1.0 / len(z))
    for _ in range(iterations):
        root = np.sqrt(weights)
        coefficients, *_ = np.linalg.lstsq(basis * root[:, None], target * root, rcond=None)
        residual = np.abs(basis @ coefficients - target)
        weights *= residual
        weights /= weights.sum()
    return coefficients, float(np.max(np.abs(basis @ coefficients - target)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--degree", type=int, default=7)
    args = parser.parse_args()

    z = np.linspace(0.0, 14.0, 28001)
    q = np.array([0.5 * math.erfc(v / math.sqrt(2.0)) for v in z])
    density = np.exp(-z * z / 2.0)

    def best_of(scales, iterations):
        return min((fit(z, q, density, s, args.degree, iterations) + (s,) for s in scales),
                   key=lambda result: result[1])

    _, _, coarse = best_of(np.linspace(0.15, 0.6, 91), 30)
    coefficients, error, scale = best_of(np.linspace(coarse - 0.006, coarse + 0.006, 25), 80)
    print(f"p = {np.float32(scale):.9g}")
    print("P, highest power first:",
          ", ".join(f"{np.float32(c):.9g}" for c in coefficients[::-1]))
    print(f"largest relative error of q on [0, 14]: {error:.2e}")


if __name__ == "__main__":
    main()
