"""Claim sinkhorn_limit: a plan pi with zeros is the W1-limit of the positive Sinkhorn plans
pi_t = (1-t) pi + t a b^T / s; W1(pi_t, pi) is decided exactly and equals t * W1(a b^T / s, pi)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from flint import fmpq

from attncert.constructions.sinkhorn.fixed_point import fixed_point, interpolate
from attncert.constructions.sinkhorn.problem import northwest_corner, random_marginal
from attncert.constructions.sinkhorn.wasserstein import check, ground_distance, product_support, w1_exact
from attncert.exact import QQ, Float

from attncert.proofs.core.certify import certificate
from attncert.proofs.core.registry import Claim, Param, register
from attncert.proofs.checkers.sinkhorn.claims import check_limit
from attncert.proofs.core.cost import Cost
from attncert.proofs.core.params import positive_rational, rational_list
from attncert.proofs.sinkhorn.common import float_note, import_pot, plan_params, pot_side_notes, pot_version, qmat, qvec, w1_json

NAME = "sinkhorn_limit"
STATEMENT = (
    "a rational coupling pi of a, b with a zero entry is the limit of the positive Sinkhorn plans pi_t = (1-t) pi + t ab^T/s "
    "(each an exact fixed point): for each recorded t, W1(pi_t, pi) = t W1(ab^T/s, pi), decided in QQ with LP duality"
)
METRIC = "d((x,y),(x',y')) = ||x - x'||_1 + ||y - y'||_1 on the product support"


def _pot_w1(p, q, xs, ys) -> float:
    ot = import_pot()

    cells = product_support(xs, ys)
    M = np.array([[float(ground_distance(u, v)) for v in cells] for u in cells])
    flat = lambda P: np.array([Float.convert(x) for row in P for x in row])  # noqa: E731
    return float(ot.emd2(flat(p), flat(q), M))


def prove(n: int = 3, m: int = 3, seed: int = 0, eps: str = "1/10", ts: str = "1/10,1/100,1/1000,1/10000") -> dict:
    e = positive_rational(eps)
    tlist = rational_list(ts)
    rng = random.Random(seed)
    xs = [[fmpq(rng.randint(0, 100), 100)] for _ in range(n)]
    ys = [[fmpq(rng.randint(0, 100), 100)] for _ in range(m)]
    a, b = random_marginal(n, seed + 1), random_marginal(m, seed + 2)
    s = sum(a, fmpq(0))
    pi = northwest_corner(a, b)
    indep = [[ai * bj / s for bj in b] for ai in a]
    base = w1_exact(indep, pi, xs, ys)
    base_ok = check(base, indep, pi, xs, ys)
    version = pot_version()
    steps, pot_steps, holds = [], [], base_ok and any(x == 0 for row in pi for x in row)
    for t in tlist:
        pt = interpolate(pi, a, b, t)
        fp = fixed_point(pt, a, b, e)
        c = w1_exact(pt, pi, xs, ys)
        ok = fp.holds and check(c, pt, pi, xs, ys) and c.value == t * base.value
        holds = holds and ok and 0 < t <= 1
        step = {
            "t": QQ.to_json(t),
            "pi_t": qmat(pt),
            "pi_t_is_sinkhorn_plan": fp.holds,
            "w1": w1_json(c),
            "w1_equals_t_times_base": c.value == t * base.value,
        }
        steps.append(step)
        if version is not None:
            pot = _pot_w1(pt, pi, xs, ys)
            pot_steps.append({"t": QQ.to_json(t), "w1": float_note(pot), "abs_difference": float_note(abs(pot - Float.convert(c.value)))})
    return certificate(
        NAME,
        {"n": n, "m": m, "seed": seed, "eps": QQ.to_json(e), "ts": ts},
        {"pi": qmat(pi), "a": qvec(a), "b": qvec(b), "xs": qmat(xs), "ys": qmat(ys), "eps": QQ.to_json(e)},
        {
            "pi_t": "(1 - t) pi + t a b^T / s, s = sum(a)",
            "cost_t": "C_t = -eps * log(pi_t) (symbolic); pi_t = S_eps(C_t; a, b) by sinkhorn_fixed_point",
            "ground_metric": METRIC,
            "w1_method": "min-cost flow (networkx network_simplex on integer-scaled data) between (pi_t - pi)_+ and (pi_t - pi)_-, "
            "certified by dual potentials checked in QQ",
            "size": {"iterations": 0, "n": n, "m": m},
        },
        {"steps": steps},
        {
            "w1_independent_vs_pi": w1_json(base),
            "identity": "W1(pi_t, pi) = t * W1(a b^T / s, pi), since pi_t - pi = t (a b^T / s - pi) and W1 depends only on the difference "
            "(Kantorovich-Rubinstein)",
        },
        {
            "relation": "exact_equal",
            "holds": holds,
            "decided_in": "QQ",
            "limit": "W1(pi_t, pi) = t * " + QQ.to_json(base.value) + " -> 0 as t -> 0",
        },
        pot_side_notes(
            version,
            f"ot.emd2 float64, ground metric {METRIC}: W1(pi_t, pi) and its distance to the exact value "
            "(floats as the exact rational value of the double)",
            "steps",
            pot_steps,
        ),
    )


def summary(doc: dict[str, Any]) -> str:
    """The exact limit, or the steps at which the claim fails."""
    if doc["result"]["holds"]:
        return doc["result"]["limit"]
    why = [f"at t = {s['t']} pi_t is not its own Sinkhorn plan" for s in doc["outputs"]["steps"] if not s["pi_t_is_sinkhorn_plan"]]
    why += [f"at t = {s['t']} W1(pi_t, pi) is not t W1(ab^T/s, pi)" for s in doc["outputs"]["steps"] if not s["w1_equals_t_times_base"]]
    return "does not hold: " + ("; ".join(why) or "see the certificate")


register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        plan_params(3, 3, "1/10") + (Param("ts", str, "1/10,1/100,1/1000,1/10000", "values of t in (0, 1], comma-separated"),),
        check=check_limit,
        summary=summary,
        cost=lambda ts, n, m, **_: Cost(evaluations=len(rational_list(ts)), entries=n * m),
    )
)
