"""Claim sinkhorn_universality: Sinkhorn Transformers of growing width approximate concrete
coupling systems (independent, entropic plan of |x - y|, their mixture) on one pair of texts,
with certified upper bounds on W1."""

from __future__ import annotations

from typing import Any

from constructions.sinkhorn.universality import FIT_BITS, systems, sweep, texts
from exact import QQ, ParseError
from proofs import progress
from proofs.certify import certificate
from proofs.checkers.sinkhorn_claims import check_universality
from proofs.params import int_list, positive_int, positive_rational
from proofs.registry import Claim, Param, register
from proofs.sinkhorn.common import PREC, SEED, bmat, qmat, qvec, run_json, universality_cost, w1_json

NAME = "sinkhorn_universality"
MAX_WIDTH = 64
STATEMENT = (
    "on one pair of random texts, Sinkhorn Transformers of growing width (Chebyshev features, weights fitted in floats "
    "and then fixed as rationals) approximate the independent, entropic and mixed coupling systems: each W1 error has a "
    "certified upper bound, and for each system some width's bound is <= target"
)


def prove(n: int = 6, seed: int = 0, eps: str = "1/2", widths: str = "1,2,3,4,5,6", target: str = "1e-6", prec: int = 128) -> dict:
    e, goal, ws = positive_rational(eps), positive_rational(target, "target"), int_list(widths)
    if max(ws) > MAX_WIDTH:
        raise ParseError(f"widths must be at most {MAX_WIDTH} (the Chebyshev fit and its check), got {max(ws)}")
    xs, a, ys, b = texts(n, n, seed)
    table, holds, entropic_run = {}, True, None
    targets = systems(e)
    with progress.bar(len(targets) * len(ws), "widths", desc=NAME) as bar:
        fitted = {name: _sweep(system, xs, a, ys, b, e, ws, prec, bar) for name, system in targets.items()}
    for name, (F, rows) in fitted.items():
        entropic_run = entropic_run or (F.run and {**run_json(F.run, prec), "plan": bmat(F.run.plan, prec)})
        reached = [r.width for r in rows if r.w1_hi <= goal]
        holds = holds and bool(reached)
        table[name] = {
            "target_plan": bmat(F.plan, prec),
            "target_representative": qmat(rows[0].w1.F_rep),
            "rows": [
                {
                    "width": r.width,
                    "weights": qmat(r.weights),
                    "run": run_json(r.run, prec),
                    "coupling": bmat(r.run.plan, prec),
                    "representative": qmat(r.w1.P_rep),
                    "w1_of_representatives": w1_json(r.w1.certificate),
                    "w1_lower": QQ.to_json(r.w1_lo),
                    "w1_upper": QQ.to_json(r.w1_hi),
                }
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
                "independent": "F(mu, nu) = a b^T / sum(a)",
                "entropic": f"F(mu, nu) = S_eps0(|x - y|; a, b), eps0 = {QQ.to_json(e)}, certified to 1e-30",
                "mixture": "(independent + entropic) / 2",
            },
            "ground_metric": "|x - x'| + |y - y'| on the product support",
            "size": {"iterations": max(r["run"]["iterations"] for t in table.values() for r in t["rows"]), "n": n, "m": n, "widths": ws},
        },
        {"entropic_target": entropic_run, "table": table},
        {
            "w1": "W1(P*, F*) <= W1(P~, F~) + (diam/2)(||P* - P~||_1 + ||F* - F~||_1): P~, F~ rational representatives of the "
            "enclosures (mass sum(a)), W1(P~, F~) exact with its flow and dual potentials, the L1 terms from the balls' midpoints and radii"
        },
        {"relation": "bound", "holds": holds, "meaning": f"for each system some width has certified W1 <= {QQ.to_json(goal)}"},
    )


def _sweep(system: Any, xs: list, a: list, ys: list, b: list, e: Any, ws: list[int], prec: int, bar: Any) -> tuple[Any, list]:
    """``sweep`` one width at a time, the target computed once, so that the bar moves per system and width."""
    F = system(a, xs, b, ys, prec)
    rows = []
    for w in ws:
        rows += sweep(lambda *_: F, xs, a, ys, b, e, [w], prec)[1]
        bar.update()
    return F, rows


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
        check=check_universality,
        cost=universality_cost,
    )
)
