"""Claim sinkhorn_transformer: the coupling of a Sinkhorn Transformer with linear encoders,
cost -<Q x_i, K y_j> (exact) then certified Sinkhorn, enclosed with its marginal errors."""

from __future__ import annotations

import random
from fractions import Fraction

from flint import fmpq

from constructions.sinkhorn.problem import random_marginal
from constructions.sinkhorn.transformer import LinearEncoder, SinkhornTransformer
from exact import Ball, QQ

from proofs.certify import certificate
from proofs.registry import Claim, Param, register
from proofs.checkers.sinkhorn_claims import check_transformer
from proofs.params import positive_int, positive_rational
from proofs.sinkhorn.common import transformer_cost, PREC, SEED, TOL, bmat, bvec, contains, marginal_balls, marginals_contain, mp_sinkhorn, qmat, qvec, run_json

NAME = "sinkhorn_transformer"
STATEMENT = "a Sinkhorn Transformer's coupling (cost -<Q(x), K(y)>, linear Q, K) is enclosed to a certified bound, with its marginal errors"


def _rand(rng: random.Random, rows: int, cols: int) -> list[list[fmpq]]:
    return [[fmpq(rng.randint(-10, 10), 10) for _ in range(cols)] for _ in range(rows)]


def prove(n: int = 4, m: int = 5, d: int = 3, k: int = 2, seed: int = 0, eps: str = "1/2", tol: str = "1e-30", prec: int = 128) -> dict:
    e = positive_rational(eps)
    rng = random.Random(seed)
    xs, ys = _rand(rng, n, d), _rand(rng, m, d)
    WQ, WK = _rand(rng, d, k), _rand(rng, d, k)
    a, b = random_marginal(n, seed + 1), random_marginal(m, seed + 2)
    net = SinkhornTransformer(LinearEncoder(WQ), LinearEncoder(WK), e)
    C = net.cost(xs, ys)
    r = net(xs, a, ys, b, Ball(prec), tol=tol)
    # Independent reference: the cost with Python Fractions, the plan with mpmath at 60 digits.
    F = lambda M: [[Fraction(int(x.p), int(x.q)) for x in row] for row in M]  # noqa: E731
    fx, fy, fq, fk = F(xs), F(ys), F(WQ), F(WK)
    q = [[sum(fx[i][t] * fq[t][c] for t in range(d)) for c in range(k)] for i in range(n)]
    kk = [[sum(fy[j][t] * fk[t][c] for t in range(d)) for c in range(k)] for j in range(m)]
    ref_C = [[-sum(q[i][c] * kk[j][c] for c in range(k)) for j in range(m)] for i in range(n)]
    cost_ok = all(QQ.convert(ref_C[i][j]) == C[i][j] for i in range(n) for j in range(m))
    ref, its = mp_sinkhorn(C, a, b, e, 60, 5000)
    work = r.details.get("prec", prec)
    ref_ok = ref is not None and r.plan is not None and contains(r.plan, ref, work)
    rows, cols = marginal_balls(r.plan, work) if r.plan is not None else ([], [])
    marg_ok = r.plan is not None and marginals_contain(r.plan, a, b, work)
    return certificate(
        NAME,
        {"n": n, "m": m, "d": d, "k": k, "seed": seed, "eps": QQ.to_json(e), "tol": tol, "prec": prec},
        {"xs": qmat(xs), "a": qvec(a), "ys": qmat(ys), "b": qvec(b), "eps": QQ.to_json(e)},
        {
            "encoders": {"query": net.query.to_json(), "key": net.key.to_json()},
            "cost": qmat(C),
            "cost_rule": "C_ij = -<x_i W_Q, y_j W_K>, exact in QQ",
            "sinkhorn": run_json(r, prec),
            "size": {"iterations": r.iterations, "n": n, "m": m, "features": k},
        },
        {
            "coupling": None if r.plan is None else bmat(r.plan, prec),
            "coupling_marginals": {"rows": bvec(rows, prec), "cols": bvec(cols, prec)},
            "iterate": bmat(r.iterate, prec),
            "iterate_row_error": bvec(r.row_error, prec),
            "iterate_col_error": bvec(r.col_error, prec),
            "bound": run_json(r, prec)["bound"],
        },
        {
            "cost_by_fractions": [[str(x) for x in row] for row in ref_C],
            "cost_equal": cost_ok,
            "mpmath_plan": f"plain Sinkhorn at 60 digits, {its} iterations; inside the enclosure: {ref_ok}",
        },
        {
            "relation": "enclosure",
            "holds": r.certified and cost_ok and ref_ok and marg_ok,
            "meaning": "coupling: balls containing the exact Sinkhorn plan of the exact cost; iterate errors: balls containing "
            "P^1 - a and P^T1 - b of the computed plan P^ (the limit's marginals are a, b exactly)",
        },
    )


register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("n", positive_int, 4, "support points of the first text"),
            Param("m", positive_int, 5, "support points of the second text"),
            Param("d", positive_int, 3, "dimension of the support points"),
            Param("k", positive_int, 2, "feature width of Q and K"),
            SEED,
            Param("eps", str, "1/2", "temperature eps > 0 (rational)"),
            TOL,
            PREC,
        ),
        check=check_transformer,
        cost=transformer_cost,
    )
)
