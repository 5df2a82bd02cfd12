"""Number tower: exact QQ products against pure-Python Fractions and sympy, and an EE softmax."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import sympy
from flint import fmpq, fmpq_mat

from bench.timing import best_of, fmt_seconds
from attncert.exact import EE, Float
from attncert.exact.softmax import softmax_row


def _random_rows(n: int, rng: random.Random) -> list[list[tuple[int, int]]]:
    return [[(rng.randint(-99, 99), rng.randint(1, 20)) for _ in range(n)] for _ in range(n)]


def _fraction_product(a, b):
    n = len(a)
    return [[sum((a[i][k] * b[k][j] for k in range(n)), Fraction(0)) for j in range(n)] for i in range(n)]


def qq_products(sizes=(64, 128)) -> dict:
    rng = random.Random(0)
    rows = []
    for n in sizes:
        a, b = _random_rows(n, rng), _random_rows(n, rng)
        fa = fmpq_mat(n, n, [fmpq(p, q) for r in a for p, q in r])
        fb = fmpq_mat(n, n, [fmpq(p, q) for r in b for p, q in r])
        pa = [[Fraction(p, q) for p, q in r] for r in a]
        pb = [[Fraction(p, q) for p, q in r] for r in b]
        sa, sb = sympy.Matrix(pa), sympy.Matrix(pb)
        t_flint = best_of(lambda: fa * fb, repeat=5)
        t_frac = best_of(lambda: _fraction_product(pa, pb), repeat=1)
        t_sympy = best_of(lambda: sa * sb, repeat=1)
        # Same answer from all three (exactness is checked, not assumed).
        prod = fa * fb
        assert all(
            prod[i, j] == fmpq(x.numerator, x.denominator)
            for i, row in enumerate(_fraction_product(pa, pb)[:2])
            for j, x in enumerate(row)
        )
        rows.append(
            [f"{n}", fmt_seconds(t_flint), fmt_seconds(t_frac), fmt_seconds(t_sympy), f"{t_frac / t_flint:.0f}×", f"{t_sympy / t_flint:.0f}×"]
        )
    return {
        "title": "QQ matrix product (n×n, entries p/q with |p| < 100, q ≤ 20)",
        "header": ["n", "FLINT fmpq_mat", "pure Fraction loop", "sympy Matrix", "Fraction / FLINT", "sympy / FLINT"],
        "rows": rows,
        "note": "Target (issue 2): FLINT at n = 128 at least 50× faster than the pure-Fraction loop.",
    }


def ee_softmax(n: int = 256) -> dict:
    rng = random.Random(1)
    scores = [fmpq(rng.randint(-500, 500), rng.randint(1, 60)) for _ in range(n)]
    floats = np.array([float(s) for s in scores])

    def np_softmax():
        e = np.exp(floats)
        return e / e.sum()

    t_ee = best_of(lambda: softmax_row(scores, EE), repeat=5)
    t_ee_check = best_of(lambda: EE.sum(softmax_row(scores, EE)) == 1, repeat=5)
    t_float = best_of(lambda: softmax_row(scores, Float), repeat=5)
    t_np = best_of(np_softmax, repeat=20)
    return {
        "title": f"Row softmax over {n} rational scores",
        "header": ["EE (exact)", "EE + exact check Σ = 1", "Float domain (Python)", "numpy float64", "EE / numpy"],
        "rows": [[fmt_seconds(t_ee), fmt_seconds(t_ee_check), fmt_seconds(t_float), fmt_seconds(t_np), f"{t_ee / t_np:.0f}×"]],
        "note": "All entries of the EE row share one denominator object, so the exact sum check is a merge of numerators.",
    }


def run() -> list[dict]:
    return [qq_products(), ee_softmax()]
