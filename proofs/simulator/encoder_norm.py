r"""Theorem (encoder layer with layer norm): one RASP program computes LN(Z), Z the encoder layer's output,
LN(Z)[i][j] = gamma_j (Z[i][j] - mu_i) / sqrt(sigma_i^2 + delta) + beta_j. An enclosure, exact up to Z.

The square root leaves EE (docs/design.md, "The number tower"), so no exact
equality can be decided after it. What a certificate of this claim establishes,
on its one recorded input:

1. **Exact part (EE).** attncert's ``encoder_layer`` program, which is this
   program's first 13 layers node for node (:func:`constructions.simulator.encoder_layer_norm`),
   maps the inputs to Z, and Z equals the reference Z = Y + ReLU(Y W_1 + b_1) W_2 + b_2,
   Y = X + MHA(X), exactly in EE.
2. **Enclosed part (Ball).** The whole program, evaluated in arb at ``prec`` bits
   from the exact rational inputs, gives balls that contain its true output; the
   reference LN of the exact Z, enclosed by :func:`exact.layer_norm.layer_norm_rows`,
   gives balls that contain T's true output. Every pair of balls intersects and
   every radius is at most 2^-(prec // 2), so the two true outputs differ by at
   most 2^(1 - prec // 2) in every entry: agreement within an enclosure, which is
   all that balls can show. Positions after the output block are exactly 0.

The verifier checks the hypotheses (delta > 0, sizes, the precision's range),
then proves again from the recorded inputs (or the recorded seed's) and compares
every claim field.
"""

from __future__ import annotations

from typing import Any

from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.layout import Construction
from attncert.constructions.simulator import encoder_layer, encoder_layer_norm
from attncert.exact import EE, QQ, ParseError
from attncert.exact.domains import Ball
from attncert.exact.domains.ball import exact_dyadic
from attncert.exact.matrices import Rows, matrix_to_json
from attncert.exact.rationals import rational_to_json
from attncert.proofs.core import cost, figures
from attncert.proofs.checkers import references
from attncert.proofs.core.certify import certificate, differing_fields
from attncert.proofs.core.layout_claims import recorded_matrices, recorded_origin, recorded_sizes
from attncert.proofs.core.inputs import INPUTS, SEED, inputs_for, size_param
from attncert.proofs.core.params import positive_rational
from attncert.proofs.core.registry import Claim, Param, register

NAME = "encoder_layer_norm"
STATEMENT = (
    "on the recorded inputs, encoder_layer_norm(n, d, d_v, h, f, delta) maps its encoded weights, gamma, beta and X to "
    "LN(Z) = gamma (Z - mean) / sqrt(var + delta) + beta row by row, Z = Y + ReLU(Y W1 + b1) W2 + b2, Y = X + MHA(X): "
    "Z equals the reference exactly in EE; the output and the reference LN(Z) are enclosed in balls that intersect, "
    "each of radius at most the recorded bound (the square root leaves EE)"
)
SIZES = (
    size_param("n", 3, "rows of X"),
    size_param("d", 2, "model width"),
    size_param("dv", 2, "columns of each V_m"),
    size_param("h", 2, "heads"),
    size_param("f", 3, "feed-forward width"),
)
#: The precision range: below 32 bits the radius bound 2^-(prec // 2) says little; the top keeps arb's work bounded.
MIN_PREC, MAX_PREC = 32, 1 << 14


def _prec(v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not MIN_PREC <= v <= MAX_PREC:
        raise ParseError(f"prec must be an integer number of bits in [{MIN_PREC}, {MAX_PREC}], got {v!r:.20}")
    return v


PARAMS = SIZES + (
    Param("delta", str, "1/100", "layer norm's variance floor delta > 0 (a rational)"),
    Param("prec", int, 128, f"working precision of the balls, in bits ({MIN_PREC} to {MAX_PREC})"),
    SEED,
    INPUTS,
)


def prove(n: int = 3, d: int = 2, dv: int = 2, h: int = 2, f: int = 3, delta: str = "1/100", prec: int = 128, seed: int = 0, inputs: str | None = None) -> dict[str, Any]:
    sizes = dict(n=n, d=d, dv=dv, h=h, f=f)
    cons = build(**sizes, delta=delta)
    mats = inputs_for(seed, inputs, _shapes(cons), QQ)
    return _prove(cons, mats, sizes, str(delta), _prec(prec), {"seed": seed} if inputs is None else {"inputs": "file"})


def _shapes(cons: Construction) -> dict[str, tuple[int, int]]:
    return {name: (r, c) for name, r, c in cons.layout.inputs}


def _prove(cons: Construction, mats: dict[str, Rows], sizes: dict[str, int], delta: str, prec: int, origin: dict[str, Any]) -> dict[str, Any]:
    dl = positive_rational(delta, "delta")
    ball = Ball(prec)
    # 1. The exact part: the encoder layer's own program (this one's first 13 layers) in EE.
    pre = encoder_layer(**sizes)
    lifted = {k: [[EE.native(x) for x in row] for row in m] for k, m in mats.items()}
    z = pre.layout.decode(pre.run({k: lifted[k] for k in _shapes(pre)}, EE, pre.graph()))
    z_ref, ln_ref = references.encoder_layer_norm(mats, dl, prec)
    pre_equal = all(EE.eq(a, b) for ra, rb in zip(z, z_ref) for a, b in zip(ra, rb))
    # 2. The enclosed part: the whole program in Ball from the exact rational inputs.
    g = cons.graph()
    with ball.context():
        seq = cons.run({k: [[ball.native(x) for x in row] for row in m] for k, m in mats.items()}, ball, g)
    out, rest = cons.layout.decode(seq), cons.layout.rest(seq)
    disjoint = [{"row": i, "col": j} for i, (ro, rr) in enumerate(zip(out, ln_ref)) for j, (a, b) in enumerate(zip(ro, rr)) if not a.overlaps(b)]
    bound = fmpq(1, 2 ** (prec // 2))
    max_radius = max(exact_dyadic(x.rad()) for row in out + ln_ref for x in row)
    rest_ok = all(x.is_zero() for x in rest)
    return certificate(
        claim=NAME,
        params={**sizes, "delta": delta, "prec": prec, **origin},
        inputs={k: matrix_to_json(m, QQ) for k, m in mats.items()},
        construction={"graph": rasp.graph_to_json(g), "size": rasp.size(g).to_json(length=cons.layout.length), "layout": cons.layout.to_json()},
        outputs={"output": matrix_to_json(out, ball), "rest": [ball.to_json(v) for v in rest], "pre_norm": matrix_to_json(z, EE)},
        reference={"output": matrix_to_json(ln_ref, ball), "pre_norm": matrix_to_json(z_ref, EE)},
        result={
            "relation": "enclosure",
            "holds": pre_equal and not disjoint and max_radius <= bound and rest_ok,
            "domain": ball.name,
            "statement": STATEMENT,
            "pre_norm": {"relation": "exact_equal", "domain": "EE", "holds": pre_equal},
            "entries_compared": sum(len(r) for r in out),
            "disjoint": disjoint[:10],
            "radius_bound": rational_to_json(bound),
            "max_radius": rational_to_json(max_radius),
            "rest_is_zero": rest_ok,
        },
    )


def verify(doc: dict[str, Any]) -> list[str]:
    """Check the hypotheses from the recorded parameters, prove again from the recorded inputs, compare every field."""
    params = doc.get("params")
    if not isinstance(params, dict):
        raise ParseError('certificate field "params" must be an object')
    sizes = recorded_sizes(params, SIZES)
    delta = params.get("delta")
    if not isinstance(delta, str):
        raise ParseError("parameter delta must be a rational string")
    cons = build(**sizes, delta=delta)  # checks the hypothesis delta > 0
    prec = _prec(params.get("prec"))
    origin = recorded_origin(params)
    mats = inputs_for(origin["seed"], None, _shapes(cons), QQ) if "seed" in origin else recorded_matrices(doc, cons, QQ)
    expected = _prove(cons, mats, sizes, delta, prec, origin)
    problems = differing_fields(doc, expected)
    if not problems and not expected["result"]["holds"]:
        problems.append("the program's output and the reference do not agree within the bound: the claim does not hold")
    return problems


def _cost(n: int, d: int, dv: int, h: int, f: int, prec: int = 128, **_: Any) -> Any:
    return cost.encoder_layer_norm(n, d, dv, h, f, prec)


def build(n: int, d: int, dv: int, h: int, f: int, delta: str = "1/100") -> Construction:
    return encoder_layer_norm(n, d, dv, h, f, positive_rational(delta, "delta"))


def summary(doc: dict[str, Any]) -> str:
    """The balls' largest radius (rounded up), or why the claim does not hold."""
    r = doc["result"]
    line = f"LN(Z) and its reference in intersecting balls of radius <= {figures.upper(r['max_radius'])} (bound {r['radius_bound']})"
    if r["holds"]:
        return line
    why = [] if r["pre_norm"]["holds"] else ["Z differs from the reference exactly (before the norm)"]
    why += [f"the balls at ({e['row']}, {e['col']}) are disjoint" for e in r["disjoint"][:3]]
    why += [] if r["rest_is_zero"] else ["a position after the output is not 0"]
    why += [] if QQ.from_json(r["max_radius"]) <= QQ.from_json(r["radius_bound"]) else ["a radius is over the bound"]
    return "does not hold: " + "; ".join(why)


register(Claim(NAME, STATEMENT, prove, PARAMS, verify=verify, build=build, cost=_cost, summary=summary))
