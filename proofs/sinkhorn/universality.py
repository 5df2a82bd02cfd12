"""Claim sinkhorn_universality: for three coupling systems F and growing widths w, one Sinkhorn Transformer of
width w (in-context encoders), fitted once to a family of text pairs, has a certified upper bound on
W1(F(mu, nu), T(mu, nu)) for every fit pair and every held-out pair; the family maxima are recorded."""

from __future__ import annotations

from typing import Any

from flint import fmpq

from attncert.constructions.sinkhorn.graph import SinkhornLayer
from attncert.constructions.sinkhorn.systems import NAMES, target_plans
from attncert.constructions.sinkhorn.texts import DOMAIN, Family, random_family
from attncert.constructions.sinkhorn.universality import BETA, FIT_BITS, FIT_WEIGHT_POWER, PairBound, fit_weights, width_row
from attncert.constructions.sinkhorn.wasserstein import representative
from attncert.exact import QQ, ParseError
from attncert.proofs.core import figures, progress
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.reading import obj, qmatrix
from attncert.proofs.checkers.sinkhorn.universality import check_universality
from attncert.proofs.core.params import int_list, nonnegative_int, positive_int, positive_rational
from attncert.proofs.core.rebuild import recorded_params
from attncert.proofs.core.registry import Claim, Param, register
from attncert.proofs.sinkhorn.common import PREC, SEED, TOL, bmat, qmat, run_json, universality_cost, w1_json
from attncert.proofs.sinkhorn.texts import family_from, family_json, read_file

NAME = "sinkhorn_universality"
#: Widths above this are refused (the fit's w^2 unknowns, and the check).
MAX_WIDTH = 16
#: Longest random text: the grid k/20 of [-1, 1] has 41 points.
MAX_N = 41
STATEMENT = (
    "for the independent, entropic (|x - y|) and mixed coupling systems F and each width w, one Sinkhorn Transformer "
    "of width w with in-context encoders, fitted once to a family of text pairs (floats find the weights, then fixed "
    "as rationals), has a certified upper bound on W1(F(mu, nu), T(mu, nu)) on every fit pair and every held-out pair; "
    "the family maxima are the maxima of those bounds, with whether they ever rise with the width (a finite family: "
    "uniformity is not claimed)"
)


def prove(pairs: int = 32, held_out: int = 16, max_n: int = 6, seed: int = 0, eps: str = "1/2", widths: str = "1,2,4,8", tol: str = "1e-30", prec: int = 128, family: str = "") -> dict:
    params = dict(pairs=pairs, held_out=held_out, max_n=max_n, seed=seed, eps=eps, widths=widths, tol=tol, prec=prec)
    fam = family_from(read_file(family), family) if family else None
    return _prove(params, fam, None)


def _prove(params: dict[str, Any], given: Family | None, weights: dict[tuple[str, int], Any] | None) -> dict:
    """The certificate; ``given``: a family read from a file (else the seed's); ``weights``: readouts to reuse (else fitted)."""
    e, ws = positive_rational(params["eps"]), int_list(params["widths"])
    if max(ws) > MAX_WIDTH:
        raise ParseError(f"widths must be at most {MAX_WIDTH}, got {max(ws)}")
    if given is None:
        if not 2 <= params["max_n"] <= MAX_N:
            raise ParseError(f"max_n must be between 2 and {MAX_N} (texts of 2..max_n points on the grid k/20), got {params['max_n']}")
        if params["pairs"] < 1:
            raise ParseError("a family needs at least one fit pair")
        fam = random_family(params["pairs"], params["held_out"], params["max_n"], params["seed"])
    else:
        fam = given
        params = {**params, "pairs": len(fam.fit), "held_out": len(fam.held_out), "max_n": max(t.n for p in fam.fit + fam.held_out for t in p)}
    # The cost model on the family actually read (a file's may be larger than the parameters say): it refuses one over MAX_FAMILY.
    universality_cost(len(fam.fit), len(fam.held_out), params["max_n"], params["widths"], params["eps"], params["prec"])
    layer = SinkhornLayer(e, positive_rational(params["tol"], "tol"), "auto", params["prec"])
    prec = params["prec"]
    pairs = fam.fit + fam.held_out
    targets = [target_plans(mu, nu, e, prec) for mu, nu in pairs]
    k = len(fam.fit)
    table: dict[str, list] = {}
    with progress.bar(len(NAMES) * len(ws) * len(pairs), "couplings", desc=NAME) as bar:
        for system in NAMES:
            F = [t[system] for t in targets]
            table[system] = []
            for w in ws:
                M = weights[(system, w)] if weights is not None else fit_weights(w, fam.fit, F[:k], e)
                row = width_row(w, M, layer, list(zip(fam.fit, F[:k])), list(zip(fam.held_out, F[k:])), bar.update)
                table[system].append(_row_json(row, M, prec))
    summary = {
        s: {
            "fit_max": [r["fit_max"] for r in table[s]],
            "held_out_max": [r["held_out_max"] for r in table[s]],
            "fit_max_nonincreasing": _nonincreasing([r["fit_max"] for r in table[s]]),
            "held_out_max_nonincreasing": _nonincreasing([r["held_out_max"] for r in table[s]]) if fam.held_out else None,
        }
        for s in NAMES
    }
    return certificate(
        NAME,
        {**params, "eps": QQ.to_json(e), "family": "" if given is None else "file"},
        {"family": family_json(fam), "eps": QQ.to_json(e), "domain": [QQ.to_json(DOMAIN[0]), QQ.to_json(DOMAIN[1])]},
        {
            "network": "tokens (x, a, 1) on a residual stream [x, a, 1, c, r_1..r_{w-2}]; attention (one head, score "
            f"{QQ.to_json(BETA)} x_i x_k, value a_k) writes c; a ReLU MLP writes r_k = ReLU(x - t_k), t_k = -1 + 2k/(w - 1); "
            "readout phi = (x, c, r_1..r_{w-2}) (width 1: x; width 2: x, c); query readout times M; C = -phi(mu) M phi(nu)^T; "
            "certified Sinkhorn at eps",
            "fit": f"M fitted once per system and width on the fit pairs only: float64 least squares of phi M phi^T + f_i + g_j "
            f"against eps log F weighted by F^{FIT_WEIGHT_POWER}, rounded to multiples of 2^-{FIT_BITS}; exact afterwards",
            "systems": {
                "independent": "F(mu, nu) = a b^T",
                "entropic": f"F(mu, nu) = S_eps0(|x - y|; a, b), eps0 = {QQ.to_json(e)}, certified to 1e-30",
                "mixture": "(independent + entropic) / 2",
            },
            "ground_metric": "|x - x'| + |y - y'| on the product support",
            "size": {
                "iterations": max((p["run"]["iterations"] for rows in table.values() for r in rows for p in r["pairs"]), default=0),
                "n": params["max_n"],
                "m": params["max_n"],
                "pairs": len(fam.fit),
                "held_out": len(fam.held_out),
                "widths": ws,
            },
        },
        {"targets": [_targets_json(t, prec) for t in targets], "table": table, "summary": summary},
        {
            "w1": "W1(P*, F*) <= W1(P~, F~) + (diam/2)(||P* - P~||_1 + ||F* - F~||_1): P~, F~ rational representatives of "
            "the enclosures (mass 1), W1(P~, F~) exact with its flow and dual potentials, the L1 terms from the balls' midpoints and radii",
            "held_out": "the held-out pairs are not used by the fit; each is certified with the same network",
        },
        {
            "relation": "bound",
            "holds": True,
            "meaning": "for every system, width and pair (fit and held-out), W1(F(mu, nu), T_w(mu, nu)) <= w1_upper; "
            "fit_max and held_out_max are the maxima of those bounds, and the summary's flags say whether they never rise "
            "with the width on this finite family (evidence for uniformity, not a proof of it)",
        },
    )


def _nonincreasing(maxima: list[str]) -> bool:
    """Whether the recorded maxima (rational strings, one per width) never rise with the width."""
    values = [QQ.from_json(v) for v in maxima]
    return all(p >= q for p, q in zip(values, values[1:]))


def _targets_json(t: dict, prec: int) -> dict[str, Any]:
    """One pair's targets: the certified entropic run, and per system the plan's balls and a rational representative."""
    E = t["entropic"].run
    return {
        "entropic_run": {**run_json(E, prec), "plan": bmat(E.plan, prec)},
        "plans": {s: bmat(t[s].plan, prec) for s in NAMES},
        "representatives": {s: qmat(representative(t[s].plan, fmpq(1))[0]) for s in NAMES},
    }


def pair_json(b: PairBound, prec: int) -> dict[str, Any]:
    r = b.run.result
    return {
        "run": run_json(r, prec),
        "coupling": bmat(r.plan, prec),
        "representative": qmat(b.w1.P_rep),
        "w1_of_representatives": w1_json(b.w1.certificate),
        "w1_lower": QQ.to_json(b.w1.lo),
        "w1_upper": QQ.to_json(b.w1.hi),
    }


def _row_json(row: Any, M: Any, prec: int) -> dict[str, Any]:
    held = row.held_out_max
    return {
        "width": row.width,
        "readout_M": qmat(M),
        "model": row.model.to_json(),
        "pairs": [pair_json(b, prec) for b in row.fit + row.held_out],
        "fit_max": QQ.to_json(row.fit_max),
        "held_out_max": None if held is None else QQ.to_json(held),
    }


def rebuild(doc: dict[str, Any]) -> dict:
    """Prove again from the recorded parameters, reusing the recorded readouts M (the fit is never re-run);
    a family read from a file is taken from the certificate."""
    params = recorded_params(CLAIM, doc)
    origin = params.pop("family")
    inputs, table = obj(doc, "inputs"), obj(obj(doc, "outputs"), "table")
    given = family_from(inputs.get("family"), "the recorded family") if origin == "file" else None
    ws = int_list(params["widths"])
    weights = {}
    for system in NAMES:
        rows = table.get(system)
        if not isinstance(rows, list) or len(rows) != len(ws):
            raise ParseError(f"the table must have one row per width for {system}")
        for w, row in zip(ws, rows):
            if not isinstance(row, dict):
                raise ParseError(f"{system}, width {w}: a table row must be an object")
            M = qmatrix(row.get("readout_M"))
            if len(M) != w or len(M[0]) != w:
                raise ParseError(f"{system}, width {w}: readout_M must be {w}x{w}")
            weights[(system, w)] = M
    return _prove(params, given, weights)


def summary(doc: dict[str, Any]) -> str:
    """Per coupling system, the largest certified W1 bound over the fit (and held-out) pairs at the narrowest and the widest width."""
    widths = doc["construction"]["size"]["widths"]
    parts = []
    for system, s in doc["outputs"]["summary"].items():
        part = f"{system} fit {figures.upper(s['fit_max'][0])} to {figures.upper(s['fit_max'][-1])}"
        if s["held_out_max"][0] is not None:
            part += f", held out {figures.upper(s['held_out_max'][0])} to {figures.upper(s['held_out_max'][-1])}"
        parts.append(part)
    return f"largest W1(F, T_w) bound from width {widths[0]} to {widths[-1]}: " + "; ".join(parts)


CLAIM = register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("pairs", positive_int, 32, "text pairs the networks are fitted on"),
            Param("held_out", nonnegative_int, 16, "further text pairs, never used by the fit, certified with the same networks"),
            Param("max_n", positive_int, 6, "longest text (lengths vary from 2 to max_n)"),
            SEED,
            Param("eps", str, "1/2", "temperature of the networks and of the entropic target"),
            Param("widths", str, "1,2,4,8", "feature widths, comma-separated"),
            TOL,
            PREC,
            Param("family", str, "", 'JSON file {"fit": [{"mu": text, "nu": text}, ...], "held_out": [...]} (default: a random family from the seed)'),
        ),
        check=check_universality,
        cost=universality_cost,
        summary=summary,
        rebuild=rebuild,
    )
)
