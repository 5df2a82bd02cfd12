"""Claim lipschitz_rates: certified error of the McShane network against width as h shrinks.

Rows: a Lipschitz library target at d = 1, 2, 3 (grids m1, m2, m3) and each
Hölder target at d = 1 (grid m1). Each row is one instance of
:mod:`proofs.approximation.common`: samples, certified eps with its leaf
partition, sampled lower bound, sub-grid bound, stated modulus on grid pairs,
and the RASP program's width N and depth. Per (target, d) the log-log slope of
eps (and of the lower bound) against h is fitted by least squares in float64:
an agreement figure beside the theory (1 for Lipschitz, alpha for Hölder,
since |f - g| <= C h^alpha), not a certified one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attncert.constructions import rasp
from attncert.constructions.approximation.mcshane import sequence_length
from attncert.constructions.approximation.targets import LIBRARY, target as make_target
from attncert.exact import QQ, ParseError
from attncert.proofs.approximation.common import BITS, MAX_PREC, PREC, RATIO, bounded, instance_cost, instance_json, modulus_proven, prove_instance, stop_ratio, target_json
from attncert.proofs.core import figures
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.approximation.claims import check_lipschitz_rates
from attncert.proofs.core.cost import Cost
from attncert.proofs.core.params import int_list, positive_int
from attncert.proofs.core.rebuild import recorded_params
from attncert.proofs.core.registry import Claim, Param, register

NAME = "lipschitz_rates"
STATEMENT = (
    "for a Lipschitz target at d = 1, 2, 3 and Hölder targets at d = 1, on grids of shrinking step h = 1/m, the McShane "
    "network's sup-norm error has the certified upper bound eps and the certified lower bound of each row (relation bound); "
    "the fitted log-log slopes of eps against h are float agreement figures beside the theory (1, or alpha)"
)
#: Leaf budget per row (the rows' budgets add up in the cost model's evaluations).
LEAVES_PER_ROW = 20_000
DEFAULTS = {"lipschitz_target": "three_cones", "holder_targets": "sqrt,cbrt", "m1": "4,8,16,32,64", "m2": "4,8,16", "m3": "2,4"}


def rows_asked(lipschitz_target: str, holder_targets: str, m1: str, m2: str, m3: str) -> list[tuple[str, int, int]]:
    """(target, d, m) of every row, in order (the checker reads the same order from the parameters)."""
    names = [lipschitz_target] + [n for n in holder_targets.split(",") if n]
    for n in names:
        if n not in LIBRARY:
            raise ParseError(f"unknown target {n!r:.40}; choose from {', '.join(LIBRARY)}")
    ms = [int_list(m1), int_list(m2), int_list(m3)]
    return [(lipschitz_target, d, m) for d in (1, 2, 3) for m in ms[d - 1]] + [(n, 1, m) for n in names[1:] for m in ms[0]]


def prove(lipschitz_target: str = DEFAULTS["lipschitz_target"], holder_targets: str = DEFAULTS["holder_targets"], m1: str = DEFAULTS["m1"],
          m2: str = DEFAULTS["m2"], m3: str = DEFAULTS["m3"], ratio: str = "5/4", max_leaves: int = LEAVES_PER_ROW, bits: int = 24, prec: int = 64) -> dict:  # fmt: skip
    p = dict(lipschitz_target=lipschitz_target, holder_targets=holder_targets, m1=m1, m2=m2, m3=m3, ratio=ratio, max_leaves=max_leaves, bits=bits, prec=prec)
    return _prove(p, None)


def rebuild(doc: dict[str, Any]) -> dict[str, Any]:
    """Prove again from the recorded parameters, with each row's recorded (independently re-checked) search result."""
    return _prove(recorded_params(CLAIM, doc), doc["outputs"]["rows"])


def _prove(p: dict[str, Any], witness: list[dict[str, Any]] | None) -> dict:
    r = stop_ratio(p["ratio"])
    bits, prec = bounded("bits", p["bits"], 4, 64), bounded("prec", p["prec"], 32, MAX_PREC)
    asked = rows_asked(p["lipschitz_target"], p["holder_targets"], p["m1"], p["m2"], p["m3"])
    rows = []
    for k, (name, d, m) in enumerate(asked):
        t = make_target(name, d)
        inst = prove_instance(t, m, bits, prec, r, p["max_leaves"], None if witness is None else witness[k])
        size = rasp.size(inst.mcshane.construction().graph())
        rows.append({"target": target_json(t), **instance_json(inst, r), "width": inst.mcshane.length, "depth": size.layers})
    fits = _fits(rows)
    holds = all(modulus_proven(row) for row in rows)
    return certificate(
        NAME,
        {**p, "ratio": QQ.to_json(r)},
        {"targets": sorted({row["target"]["name"] for row in rows})},
        {"network": "McShane MaxMin network, one RASP program per row (width N, depth 2 + log2 N)"},
        {"rows": rows},
        {"slopes": fits, "fit": "least squares of log eps (and log lower) against log h over each (target, d), float64: agreement only"},
        {
            "relation": "bound",
            "holds": holds,
            "statement": STATEMENT,
            "table": [
                {"target": row["target"]["name"], "d": row["grid"]["d"], "h": row["grid"]["h"], "width": row["width"], "depth": row["depth"], "eps": row["certified"]["eps"], "lower": row["certified"]["lower"]}
                for row in rows
            ],
            "modulus_not_proven": [f"{row['target']['name']} d={row['grid']['d']} m={row['grid']['m']}" for row in rows if not modulus_proven(row)],
        },
    )


def summary(doc: dict[str, Any]) -> str:
    """eps (rounded up) at the coarsest and the finest step of each (target, d), and the rows whose modulus is not
    proven: the claim does not hold when a row's grid pair is decided violated, else it is not proven (verify's
    NOT-PROVEN)."""
    series: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in doc["result"]["table"]:
        series.setdefault((row["target"], row["d"]), []).append(row)
    line = "sup |f - g| <= eps: " + "; ".join(
        f"{name} d={d}: {figures.upper(rs[0]['eps'])} at h={rs[0]['h']} to {figures.upper(rs[-1]['eps'])} at h={rs[-1]['h']}" for (name, d), rs in series.items()
    )
    missing = doc["result"]["modulus_not_proven"]
    if not missing:
        return line
    verdict = "does not hold" if any(row["hypothesis"]["violated"] for row in doc["outputs"]["rows"]) else "not proven"
    return f"{verdict}: the stated modulus is not proven for {', '.join(missing)}"


def _fits(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    series: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        series.setdefault((row["target"]["name"], row["grid"]["d"]), []).append(row)
    out = []
    for (name, d), rs in series.items():
        logh = [math.log(1 / r["grid"]["m"]) for r in rs]
        fit = lambda key: f"{np.polyfit(logh, [math.log(float(QQ.from_json(r['certified'][key]))) for r in rs], 1)[0]:.3f}" if len(rs) > 1 else None  # noqa: E731
        out.append({"target": name, "d": d, "theory": rs[0]["target"]["alpha"], "eps_slope": fit("eps"), "lower_slope": fit("lower")})
    return out


def cost(lipschitz_target: str, holder_targets: str, m1: str, m2: str, m3: str, max_leaves: int, **_: Any) -> Cost:
    rows = rows_asked(lipschitz_target, holder_targets, m1, m2, m3)
    costs = [instance_cost(NAME, make_target(name, d), m, max_leaves, 0) for name, d, m in rows]
    return Cost(
        positions=max(sequence_length(d, m) for _, d, m in rows),
        pairs=max(c.pairs for c in costs),
        evaluations=sum(c.evaluations for c in costs),
        seconds=sum(c.seconds for c in costs),
        memory=max(c.memory for c in costs),
        magnitude=max(c.magnitude for c in costs),
    )


CLAIM = register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("lipschitz_target", str, DEFAULTS["lipschitz_target"], "the Lipschitz library target, at d = 1, 2, 3"),
            Param("holder_targets", str, DEFAULTS["holder_targets"], "Hölder library targets, comma-separated, at d = 1"),
            Param("m1", str, DEFAULTS["m1"], "grid steps per side at d = 1 (h = 1/m), comma-separated"),
            Param("m2", str, DEFAULTS["m2"], "grid steps per side at d = 2"),
            Param("m3", str, DEFAULTS["m3"], "grid steps per side at d = 3"),
            RATIO,
            Param("max_leaves", positive_int, LEAVES_PER_ROW, "budget of the branch-and-bound of each row, in leaves"),
            BITS,
            PREC,
        ),
        check=check_lipschitz_rates,
        cost=cost,
        rebuild=rebuild,
        summary=summary,
    )
)
