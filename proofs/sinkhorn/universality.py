"""Claim sinkhorn_universality: Sinkhorn Transformers of growing width approximate concrete
coupling systems (independent, entropic plan of |x - y|, their mixture); certified W1 errors."""

from __future__ import annotations


from constructions.sinkhorn.universality import FIT_BITS, systems, sweep, texts
from exact import QQ, ParseError
from exact.rationals import parse_rational
from proofs.certify import certificate, differing_fields
from proofs.registry import Claim, Param, register
from proofs.sinkhorn.common import PREC, SEED, int_list, positive_int, qmat, qvec, upper

NAME = "sinkhorn_universality"
STATEMENT = "Sinkhorn Transformers of growing width approximate independent, entropic and mixed coupling systems in certified W1"


def prove(n: int = 6, seed: int = 0, eps: str = "1/2", widths: str = "1,2,3,4,5,6", target: str = "1e-6", prec: int = 128) -> dict:
    e, goal, ws = parse_rational(eps), parse_rational(target), int_list(widths)
    xs, a, ys, b = texts(n, n, seed)
    table, holds = {}, True
    for name, system in systems(e).items():
        rows = sweep(system, xs, a, ys, b, e, ws, prec)
        reached = [r.width for r in rows if r.w1_hi <= goal]
        holds = holds and bool(reached)
        table[name] = {
            "rows": [
                {"width": r.width, "w1_lower": QQ.to_json(r.w1_lo), "w1_upper": QQ.to_json(r.w1_hi), "sinkhorn_iterations": r.iterations,
                 "sinkhorn_bound": upper(r.bound), "weights": qmat(r.weights)}
                for r in rows
            ],
            "first_width_within_target": reached[0] if reached else None,
            "upper_bounds_nonincreasing": all(p.w1_hi >= q.w1_hi for p, q in zip(rows, rows[1:])),
        }
    return certificate(
        NAME,
        {"n": n, "seed": seed, "eps": QQ.to_json(e), "widths": widths, "target": QQ.to_json(goal), "prec": prec},
        {"xs": qmat(xs), "a": qvec(a), "ys": qmat(ys), "b": qvec(b), "eps": QQ.to_json(e)},
        {
            "network": "Q(x) = phi_w(x) M, K(y) = phi_w(y), phi_w = Chebyshev T_0..T_{w-1}; cost -<Q(x), K(y)>; certified Sinkhorn at eps",
            "fit": f"M fitted in float64 by least squares to the doubly centred eps log F, rounded to multiples of 2^-{FIT_BITS}; exact afterwards",
            "systems": {
                "independent": "F(mu, nu) = a b^T",
                "entropic": f"F(mu, nu) = S_eps0(|x - y|; a, b), eps0 = {QQ.to_json(e)}, certified to 1e-30",
                "mixture": "(independent + entropic) / 2",
            },
            "ground_metric": "|x - x'| + |y - y'| on the product support",
            "size": {"iterations": max(r["sinkhorn_iterations"] for t in table.values() for r in t["rows"]), "n": n, "m": n, "widths": ws},
        },
        {"table": table},
        {"w1": "exact W1 (networkx, dual-certified in QQ) between rational representatives, widened by (diam/2) * L1 distance to the enclosures"},
        {"relation": "bound", "holds": holds, "meaning": f"for each system some width has certified W1 <= {QQ.to_json(goal)}"},
    )


def verify(doc: dict) -> list[str]:
    """Not independent: re-runs the proof from the recorded parameters and requires every claim field
    to be identical (as ``differing_fields`` does for other claims). Deterministic on one machine; the
    least-squares fit uses floats, so another platform may legitimately produce different weights."""
    params = doc["params"]
    if not isinstance(params.get("n"), int) or not 1 <= params["n"] <= 32 or not isinstance(params.get("seed"), int):
        raise ParseError("universality parameters n (1..32) and seed must be integers")
    redo = prove(params["n"], params["seed"], params["eps"], params["widths"], params["target"], params["prec"])
    return differing_fields(doc, redo) or ([] if doc["result"]["holds"] else ["the claim does not hold"])


register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("n", positive_int, 6, "support points per text"),
            SEED,
            Param("eps", str, "1/2", "temperature of the network and of the entropic target"),
            Param("widths", str, "1,2,3,4,5,6", "feature widths, comma-separated"),
            Param("target", str, "1e-6", "W1 accuracy some width must reach"),
            PREC,
        ),
        verify=verify,
    )
)
