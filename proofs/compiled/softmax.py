"""Claim ``compiled_softmax``: the compiled weights under true softmax attention, against average-hard attention.

The same weights as ``compiled`` are evaluated with softmax attention at inverse
temperature beta (weights e^{beta (s_ij - max_j s_ij)}, normalised; the scores are
rational) in arb balls, and the average-hard model (the beta -> infinity limit)
exactly. For each listed beta the certificate gives rigorous bounds

    B(beta)     >= max over the positions 1..N of |softmax_beta model(X) - AHAT model(X)|,
    B_out(beta) >= the same maximum over the output block alone (positions 1..r c, the
                   construction's r x c result; the positions after it are padding),

on the recorded input X (the ball's distance to the exact value, rounded up), and
the least listed beta with B(beta) <= tol, and with B_out(beta) <= tol. tracr's
fixed softmax coldness is 100; the table shows what that gives here. Relation
``bound``: an enclosure-based bound for this input, never an exact equality.
"""

from __future__ import annotations

from typing import Any

from flint import ctx, fmpq

from attncert.exact import QQ, Ball, Domain
from attncert.exact.matrices import matrix_to_json
from attncert.proofs.core import figures
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.compiled.construction import check_compiled_softmax
from attncert.proofs.compiled.construction import canonical_sizes, compile_construction, instance, parse_sizes
from attncert.proofs.compiled.construction import cost as compiled_cost
from attncert.proofs.core.cost import Cost
from attncert.proofs.core.inputs import SEED
from attncert.proofs.core.params import positive_int, positive_rational, rational_list
from attncert.proofs.core.registry import Claim, Param, register
from attncert.constructions.compiler import MODEL_CLASS
from attncert.constructions.compiler.check import NUMERIC_INPUTS
from attncert.constructions.compiler.model import model_to_json

NAME = "compiled_softmax"
TRACR_COLDNESS = 100
STATEMENT = (
    "for the recorded input, the compiled weights under softmax attention at inverse temperature beta differ from the "
    "average-hard model by at most the recorded B(beta) at every position of the output column, and by at most B_out(beta) "
    "on the output block (arb enclosures, rounded up); the least listed beta with B(beta) <= tol, and with B_out(beta) <= tol, "
    "are recorded"
)


def distance_bound(soft: list[Any], exact: list[Any], dom: Domain, prec: int) -> fmpq:
    """An exact rational >= max_k |soft_k - exact_k| for balls soft_k and exact values exact_k."""
    with ctx.workprec(prec):
        return max(((s - dom.enclose(e, prec)).abs_upper() for s, e in zip(soft, exact)), key=lambda t: t.mid()).fmpq()


def prove(of: str = "universal", sizes: str = "n=3,d=2,dv=2", seed: int = 0, betas: str = "10,30,100,300,1000,3000", tol: str = "1e-6", prec: int = 256) -> dict:
    size_kw = parse_sizes(of, sizes)
    bs, goal = [positive_rational(b, "beta") for b in rational_list(betas)], positive_rational(tol, "tol")
    cons, model = compile_construction(of, size_kw)
    dom, mats, _, extra = instance(of, size_kw, seed, cons)
    xs = cons.layout.encode(mats, dom)
    ahat = model.forward(xs, dom)[0]["output"]
    ball = Ball(prec)
    block = cons.layout.output[0] * cons.layout.output[1]
    rows = []
    for b in bs:
        soft = model.forward([QQ.convert(x) if not hasattr(x, "enclose") else x.enclose(prec) for x in xs], ball, beta=b)[0]["output"]
        rows.append(
            {
                "beta": QQ.to_json(b),
                "output": [ball.to_json(v) for v in soft],
                "bound": QQ.to_json(distance_bound(soft, ahat, dom, prec)),
                "bound_output_block": QQ.to_json(distance_bound(soft[:block], ahat[:block], dom, prec)),
            }
        )
    within = [QQ.from_json(r["beta"]) for r in rows if QQ.from_json(r["bound"]) <= goal]
    within_block = [QQ.from_json(r["beta"]) for r in rows if QQ.from_json(r["bound_output_block"]) <= goal]
    at_tracr = next((r for r in rows if QQ.from_json(r["beta"]) == TRACR_COLDNESS), None)
    return certificate(
        NAME,
        {"of": of, "sizes": canonical_sizes(size_kw), "seed": seed, "betas": betas, "tol": QQ.to_json(goal), "prec": prec},
        {**extra, **{name: matrix_to_json(m, dom) for name, m in mats.items()}},
        {
            "model_class": MODEL_CLASS,
            "model": model_to_json(model),
            "layout": cons.layout.to_json(),
            "softmax_mode": "attention weights e^{beta (s_ij - max_j s_ij)} / sum_j, over the same W_QK scores; average-hard is the beta -> infinity limit",
        },
        {"ahat": [dom.to_json(v) for v in ahat], "softmax": rows},
        {
            "tracr_coldness": TRACR_COLDNESS,
            "bound_at_tracr_coldness": at_tracr and at_tracr["bound"],
            "bound_output_block_at_tracr_coldness": at_tracr and at_tracr["bound_output_block"],
        },
        {
            "relation": "bound",
            "holds": bool(within),
            "domain": dom.name,
            "statement": STATEMENT,
            "least_beta_within_tol": QQ.to_json(min(within)) if within else None,
            "least_beta_within_tol_output_block": QQ.to_json(min(within_block)) if within_block else None,
            "meaning": "B(beta) is rigorous for the recorded input only; it is not uniform over inputs",
        },
    )


def cost(of: str, sizes: str, betas: str, prec: int, **_: Any) -> Cost:
    base = compiled_cost(of, sizes)
    runs = len(rational_list(betas)) + 1 + NUMERIC_INPUTS  # the softmax passes, the AHAT pass, the compiler's check
    return Cost(base.positions, base.pairs, runs, prec, base.seconds * runs * max(1, prec // 64), base.memory)


def summary(doc: dict[str, Any]) -> str:
    """B(beta) at each beta (rounded up), and the least beta within tol, or that none is: the claim is then not
    proven (an upper bound above tol does not show the distance above it), as verify's NOT-PROVEN says."""
    bounds = ", ".join(f"beta {run['beta']}: {figures.upper(run['bound'])}" for run in doc["outputs"]["softmax"])
    r = doc["result"]
    least = r["least_beta_within_tol"]
    tol = doc["params"]["tol"]
    reached = f"least beta with B <= {tol}: {least} (output block: {r['least_beta_within_tol_output_block']})" if least else f"not proven: no beta reaches B <= {tol} (B bounds the distance from above)"
    return f"B(beta) <= {bounds}; {reached}"


register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("of", str, "universal", "the construction to compile (a matrix claim)"),
            Param("sizes", str, "n=3,d=2,dv=2", "its sizes (the construction's defaults for the rest)"),
            SEED,
            Param("betas", str, "10,30,100,300,1000,3000", "inverse temperatures, comma-separated"),
            Param("tol", str, "1e-6", "the bound some beta must reach"),
            Param("prec", positive_int, 256, "working precision of the balls, in bits"),
        ),
        check=check_compiled_softmax,
        summary=summary,
        cost=cost,
    )
)
