"""Claim sinkhorn_fixed_point: a positive rational plan pi with marginals a, b is exactly the
Sinkhorn plan for C = -eps log pi (u = v = 1; marginals decided in QQ; unique by Sinkhorn 1967)."""

from __future__ import annotations

from fractions import Fraction

from attncert.constructions.sinkhorn.fixed_point import COST_RULE, fixed_point
from attncert.constructions.sinkhorn.problem import random_marginal, random_plan
from attncert.exact import QQ

from attncert.proofs.core.certify import certificate
from attncert.proofs.core.cost import Cost
from attncert.proofs.core.registry import Claim, register
from attncert.proofs.sinkhorn.common import plan_params, qmat, qvec
from attncert.proofs.checkers.sinkhorn.claims import check_fixed_point
from attncert.proofs.core.params import positive_rational

NAME = "sinkhorn_fixed_point"
STATEMENT = (
    "a positive rational plan pi whose row and column sums are a and b (decided in QQ) is the Sinkhorn plan "
    "S_eps(-eps log pi; a, b): K = exp(-C/eps) = pi exactly, and one exact Sinkhorn step from u = v = 1 returns u = v = 1"
)
THEOREM = (
    "Sinkhorn (Amer. Math. Monthly 74 (1967) 402-405): for a positive matrix K and positive a, b with equal totals, "
    "diag(u) K diag(v) with row sums a and column sums b is unique. Here K = exp(-C/eps) = pi exactly and u = v = 1."
)


def prove(n: int = 3, m: int = 4, seed: int = 0, eps: str = "1/10") -> dict:
    e = positive_rational(eps)
    a, b = random_marginal(n, seed), random_marginal(m, seed + 1)
    pi = random_plan(a, b, seed + 2)
    fp = fixed_point(pi, a, b, e)
    # Independent reference: the prescribed marginals, and the sums redone with Python Fractions.
    frac = [[Fraction(int(x.p), int(x.q)) for x in row] for row in pi]
    ref_rows = [sum(r, Fraction(0)) for r in frac]
    ref_cols = [sum(r[j] for r in frac) for j in range(m)]
    agree = [QQ.convert(x) for x in ref_rows] == fp.row_sums and [QQ.convert(x) for x in ref_cols] == fp.col_sums
    return certificate(
        NAME,
        {"n": n, "m": m, "seed": seed, "eps": QQ.to_json(e)},
        {"pi": qmat(pi), "a": qvec(a), "b": qvec(b), "eps": QQ.to_json(e)},
        {
            "cost": {"rule": COST_RULE, "eps": QQ.to_json(e), "note": "C is symbolic (pi and eps); it is never rounded"},
            "kernel": "K = exp(-C/eps) = pi, exactly",
            "scalings": {"u": qvec(fp.u), "v": qvec(fp.v)},
            "size": {"iterations": 0, "n": n, "m": m},
        },
        {"plan": qmat(fp.pi), "row_sums": qvec(fp.row_sums), "col_sums": qvec(fp.col_sums)},
        {"a": qvec(a), "b": qvec(b), "row_sums_by_fractions": [str(x) for x in ref_rows], "col_sums_by_fractions": [str(x) for x in ref_cols]},
        {
            "relation": "exact_equal",
            "holds": fp.holds and agree,
            "decided_in": "QQ",
            "positive": all(x > 0 for row in pi for x in row),
            "theorem": THEOREM,
        },
    )


register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        plan_params(3, 4, "1/10"),
        check=check_fixed_point,
        cost=lambda n, m, **_: Cost(entries=n * m),
    )
)
