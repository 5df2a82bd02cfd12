"""Claim lipschitz_approx: the McShane MaxMin network of a target's samples, with a certified sup-norm error.

One target (library or user expression), one grid of step h. The certificate
records the samples, the RASP program (and its compiled size where N <= 1024),
the network's Lipschitz constant from its weights, the leaf partition and the
closed-form bound (the better of the two is eps, sup |f - g| <= eps), the
sampled lower bound, the independent sub-grid bound, and the stated modulus
decided on grid pairs: it holds only where proven (docs/approximation.md).
"""

from __future__ import annotations

from typing import Any

from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.approximation.targets import target as make_target
from attncert.constructions.compiler import compile_graph
from attncert.constructions.layout import Construction
from attncert.exact import QQ
from attncert.exact.expressions.enclose import display
from attncert.proofs.approximation.common import (
    ALPHA,
    BITS,
    EXPR,
    L_PARAM,
    MAX_D,
    MAX_LEAVES,
    MAX_PREC,
    PREC,
    RATIO,
    TARGET,
    bounded,
    grid_steps,
    instance_cost,
    instance_json,
    mcshane_network,
    prove_instance,
    stop_ratio,
    target_json,
    modulus_proven,
)
from attncert.proofs.core import figures
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.approximation.claims import check_lipschitz_approx
from attncert.proofs.checkers.approximation.modulus import decision_text
from attncert.proofs.core.cost import Cost
from attncert.proofs.core.params import positive_int
from attncert.proofs.core.rebuild import recorded_params
from attncert.proofs.core.registry import Claim, Param, register

NAME = "lipschitz_approx"
STATEMENT = (
    "the McShane network g(x) = max_i min_{k,+-} (y_i -+ L (x_k - x_i,k)) of the target's samples y_i on the grid of step h, "
    "one RASP program with exact rational weights, satisfies sup over [0,1]^d of |f - g| <= eps, the better of an interval "
    "branch-and-bound (f enclosed in arb, g bounded exactly) and the closed-form bound whose modulus of f is proven from its "
    "expression; and the target's stated Lipschitz or Hölder bound is proven on every tested grid pair (from exact values of f "
    "where f is exact there, otherwise from enclosures)"
)
#: Largest N compiled to weights (the exact forward pass scores every query-key pair of each head).
COMPILE_MAX_POSITIONS = 1024
RASP_SAMPLES = 3


def prove(target: str = "three_cones", expr: str = "", d: int = 2, h: str = "1/8", L: str = "", alpha: str = "", ratio: str = "5/4",
          max_leaves: int = 100_000, bits: int = 24, prec: int = 64) -> dict:  # fmt: skip
    return _prove(dict(target=target, expr=expr, d=d, h=h, L=L, alpha=alpha, ratio=ratio, max_leaves=max_leaves, bits=bits, prec=prec), None)


def build(target: str = "three_cones", expr: str = "", d: int = 2, h: str = "1/8", L: str = "", alpha: str = "", bits: int = 24, prec: int = 64) -> Construction:
    """The claim's McShane network, one RASP program over the target's samples on the grid, for ``attncert graph``."""
    t = make_target(target, bounded("d", d, 1, MAX_D), expr, L, alpha)
    return mcshane_network(t, grid_steps(h)[1], bounded("bits", bits, 4, 64), bounded("prec", prec, 32, MAX_PREC)).construction()


def rebuild(doc: dict[str, Any]) -> dict[str, Any]:
    """Prove again from the recorded parameters, with the recorded (independently re-checked) search result,
    sub-grid bound and grid-pair decision."""
    return _prove(recorded_params(CLAIM, doc), {**doc["outputs"], "hypothesis": doc["reference"]["hypothesis"]})


def _prove(p: dict[str, Any], witness: dict[str, Any] | None) -> dict:
    hv, m = grid_steps(p["h"])
    bounded("d", p["d"], 1, MAX_D)
    r = stop_ratio(p["ratio"])
    bits, prec = bounded("bits", p["bits"], 4, 64), bounded("prec", p["prec"], 32, MAX_PREC)
    t = make_target(p["target"], p["d"], p["expr"], p["L"], p["alpha"])
    inst = prove_instance(t, m, bits, prec, r, p["max_leaves"], witness)
    data = instance_json(inst, r)
    ms = inst.mcshane
    cons = ms.construction()
    g = cons.graph()
    points = [list(inst.certified.worst_point), [fmpq(1, 3)] * t.d, [fmpq(1)] * t.d]
    runs = [rasp.evaluate_graph(g, cons.layout.encode({"x": [x]}, QQ), QQ)["output"] for x in points]
    closed = [ms.value(x) for x in points]
    rasp_ok = all(all(v == c for v in seq) for seq, c in zip(runs, closed))
    compiled = _compiled(g, cons, points[0], runs[0])
    size = rasp.size(g)
    violation = decision_text(data["hypothesis"])
    holds = modulus_proven(data) and rasp_ok and compiled.get("equals_rasp", True)
    cert = data["certified"]
    params = {**p, "target": t.name, "h": QQ.to_json(hv), "ratio": QQ.to_json(r), "L": p["L"] and QQ.to_json(t.constant), "alpha": p["alpha"] and QQ.to_json(t.alpha)}
    return certificate(
        NAME,
        params,
        {"target": target_json(t)},
        {
            **{k: data[k] for k in ("grid", "samples", "slope", "network_lipschitz")},
            "graph": rasp.graph_to_json(g),
            "layout": cons.layout.to_json(),
            "size": size.to_json(length=ms.length),
            "compiled": compiled,
        },
        {
            "certified": cert,
            "independent": data["independent"],
            "rasp_at_samples": [{"x": [QQ.to_json(v) for v in x], "g": QQ.to_json(seq[0]), "all_positions_equal": len(set(seq)) == 1} for x, seq in zip(points, runs)],
        },
        {"closed_form_at_samples": [QQ.to_json(c) for c in closed], "hypothesis": data["hypothesis"]},
        {
            "relation": "bound",
            "holds": holds,
            "statement": statement(t, hv, ms.length, size.layers, cert, data["network_lipschitz"], data["hypothesis"]),
            "eps": cert["eps"],
            "lower": cert["lower"],
            "stopped": cert["stopped"],
            "independent_bound": data["independent"]["bound"],
            "network_lipschitz": data["network_lipschitz"],
            "width": ms.length,
            "depth": size.layers,
            "rasp_equals_closed_form": rasp_ok,
            "violation": violation,
        },
    )


def statement(t: Any, h: fmpq, width: int, depth: int, cert: dict[str, Any], lipschitz: str, modulus: dict[str, Any]) -> str:
    """What one certificate proves, with its numbers (the claim's STATEMENT is the general form)."""
    eps, lower, closed = QQ.from_json(cert["eps"]), QQ.from_json(cert["lower"]), cert["closed_form"]["bound"]
    text = (
        f"for f(x) = {t.text} on [0,1]^{t.d}, the McShane network g of f's samples on the grid of step {QQ.to_json(h)} "
        f"(one RASP program of {width} positions and {depth} layers, exact rational weights, Lipschitz constant "
        f"{lipschitz} in the max-norm) satisfies sup |f - g| <= eps = {cert['eps']} (≈ {display(eps)}), the better of "
        f"the interval branch-and-bound's {cert['partition_bound']} and the closed-form bound's "
        f"{closed if closed is not None else 'none (' + cert['closed_form']['reason'] + ')'}; "
        f"the worst sampled point shows sup |f - g| >= {cert['lower']} (≈ {display(lower)})"
    )
    violation = decision_text(modulus)
    if violation:
        return f"{text}; but {violation}"
    return (
        f"{text}; the stated bound {modulus['statement']} is proven on all {modulus['pairs']:,} tested grid pairs "
        f"({modulus['pairs_tested']}): {_sources(modulus['pairs'], modulus['from_exact_values'])}"
    )


def summary(doc: dict[str, Any]) -> str:
    """The certified interval of sup |f - g| (rounded outward), or why the claim does not hold, or, when the only
    reason is a grid pair the enclosures cannot decide (none violated), why it is not proven (verify's NOT-PROVEN)."""
    r = doc["result"]
    why = [r["violation"]] if r["violation"] else []
    if not r["rasp_equals_closed_form"]:
        why.append("the RASP program's value differs from the closed-form network at a sampled point")
    if doc["construction"]["compiled"].get("equals_rasp") is False:
        why.append("the compiled weights' value differs from the RASP program's")
    if why == [r["violation"]] and not doc["reference"]["hypothesis"]["violated"]:
        return "not proven: " + r["violation"]
    if why:
        return "does not hold: " + "; ".join(why)
    return f"{figures.lower(r['lower'])} <= sup |f - g| <= {figures.upper(r['eps'])} (lower, eps; exact in the certificate)"


def _sources(pairs: int, exact: int) -> str:
    if exact == pairs:
        return "all from exact values of f"
    return f"{exact:,} from exact values of f, the others from enclosures" if exact else "all from enclosures"


def _compiled(g: Any, cons: Any, x: list[fmpq], rasp_out: list[Any]) -> dict[str, Any]:
    """The compiled model's size and whether its exact forward pass equals the RASP program at x (small N only)."""
    N = cons.layout.length
    if N > COMPILE_MAX_POSITIONS:
        return {"skipped": f"N = {N} positions > {COMPILE_MAX_POSITIONS}: the exact forward pass scores N^2 pairs per head"}
    model = compile_graph(g, N, "scalar")
    out, _ = model.forward(cons.layout.encode({"x": [x]}, QQ), QQ)
    s = model.summary()
    return {
        "layers": s["layers"],
        "heads": s["heads"],
        "width": s["width"],
        "parameters": s["parameters"],
        "at": [QQ.to_json(v) for v in x],
        "equals_rasp": list(out["output"]) == list(rasp_out),
    }


def cost(target: str, expr: str, d: int, h: str, L: str, alpha: str, max_leaves: int, **_: Any) -> Cost:
    m = grid_steps(h)[1]
    bounded("d", d, 1, MAX_D)
    return instance_cost(NAME, make_target(target, d, expr, L, alpha), m, max_leaves, RASP_SAMPLES)


CLAIM = register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            TARGET,
            EXPR,
            Param("d", positive_int, 2, "dimension: the target is a function of x1..xd on [0, 1]^d"),
            Param("h", str, "1/8", "grid step in (0, 1]; the grid has m = ceil(1/h) steps per side"),
            L_PARAM,
            ALPHA,
            RATIO,
            MAX_LEAVES,
            BITS,
            PREC,
        ),
        check=check_lipschitz_approx,
        cost=cost,
        rebuild=rebuild,
        summary=summary,
        build=build,
    )
)
