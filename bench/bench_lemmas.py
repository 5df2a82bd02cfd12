"""Lemma constructions: exact RASP evaluation against the direct exact computation."""

from __future__ import annotations

import random

import sympy
from flint import fmpq

from bench.timing import best_of, fmt_seconds
from attncert.constructions import activations, linalg
from attncert.exact import EE, QQ
from attncert.exact.matrices import to_fmpq_mat
from attncert.exact.softmax import softmax_rows


def _matrix(rng: random.Random, r: int, c: int) -> list[list[fmpq]]:
    return [[fmpq(rng.randint(-99, 99), rng.randint(1, 9)) for _ in range(c)] for _ in range(r)]


def products(sizes=((16, 16, 16), (32, 32, 32))) -> dict:
    rng = random.Random(0)
    rows = []
    for r, k, c in sizes:
        a, b = _matrix(rng, r, k), _matrix(rng, k, c)
        cons = linalg.matmul(r, k, c)
        g = cons.graph()
        t_rasp = best_of(lambda: cons.layout.decode(cons.run({"A": a, "B": b}, QQ, g)), repeat=3)
        fa, fb = to_fmpq_mat(a), to_fmpq_mat(b)
        t_flint = best_of(lambda: fa * fb, repeat=5)
        sa = sympy.Matrix([[sympy.Rational(int(x.p), int(x.q)) for x in row] for row in a])
        sb = sympy.Matrix([[sympy.Rational(int(x.p), int(x.q)) for x in row] for row in b])
        t_sympy = best_of(lambda: sa * sb, repeat=3)
        assert cons({"A": a, "B": b}, QQ) == [list(row) for row in (fa * fb).table()]
        rows.append(
            [f"({r},{k},{c})", str(cons.layout.length), fmt_seconds(t_rasp), fmt_seconds(t_flint), fmt_seconds(t_sympy),
             f"{t_rasp / t_sympy:.2f}×", f"{t_rasp / t_flint:.0f}×"]
        )
    return {
        "title": "Exact matrix product: the RASP construction against direct products of the same operands",
        "header": ["(r,k,c)", "sequence length", "RASP in QQ", "FLINT fmpq_mat", "sympy Matrix", "RASP / sympy", "RASP / FLINT"],
        "rows": rows,
        "note": "Target (issue 4): the RASP product at (32,32,32) within 10× of sympy's Matrix product. "
        "The RASP time includes building the sequence and reading the output.",
    }


def softmax(n: int = 64) -> dict:
    rng = random.Random(1)
    s = [[EE.convert(fmpq(rng.randint(-99, 99), rng.randint(1, 9))) for _ in range(n)] for _ in range(n)]
    cons = activations.softmax_rows(n, n)
    g = cons.graph()
    t_rasp = best_of(lambda: cons.layout.decode(cons.run({"S": s}, EE, g)), repeat=3)
    t_direct = best_of(lambda: softmax_rows(s, EE), repeat=3)
    out = cons({"S": s}, EE)
    assert all(EE.sum(row) == 1 for row in out)
    return {
        "title": f"Exact row softmax of a {n}×{n} rational score matrix in EE",
        "header": ["RASP in EE", "direct EE softmax", "RASP / direct"],
        "rows": [[fmt_seconds(t_rasp), fmt_seconds(t_direct), f"{t_rasp / t_direct:.1f}×"]],
    }


def run() -> list[dict]:
    return [products(), softmax()]
