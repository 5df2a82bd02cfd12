r"""Independent check of sinkhorn_universality: every W1 bound re-derived from the recorded weights and enclosures.

What it decides, from the recorded data alone (it never fits anything):

1. the family: every text is in the claims' class (:mod:`proofs.checkers.sinkhorn.texts`),
   the counts are the parameters', and no held-out pair is a fit pair;
2. the targets: each pair's entropic plan S_eps(|x - y|; a, b) from its witness
   (:func:`proofs.checkers.sinkhorn.runs.check_run`); then, in QQ on the recorded balls'
   endpoints, the independent plan's balls contain a b^T, the entropic plan's
   contain the run's, and the mixture's contain (a b^T + E)/2 for every E in them;
3. each (system, width): the recorded model is read and run by this package's
   own forward pass (:mod:`proofs.checkers.sinkhorn.model`) on every pair, and the
   recorded certified run's coupling is checked against the cost it gives;
4. each W1 bound: W1(P~, F~) of the recorded rational representatives by LP
   duality in QQ (:func:`proofs.checkers.sinkhorn.duality.w1_value`), and

       W1(P*, F*) <= W1(P~, F~) + (diam/2)(||P* - P~||_1 + ||F* - F~||_1)

   for couplings of equal mass (Kantorovich-Rubinstein: a 1-Lipschitz f can be
   shifted into [-diam/2, diam/2]), the L1 terms bounded from the recorded balls'
   midpoints and radii, which contain P* and F* by 2. and 3.;
5. the family maxima are the maxima of the recorded bounds, and the summary's
   flags (whether the fit and the held-out maxima never rise with the width)
   are what the bounds say.
"""

from __future__ import annotations

from typing import Any

from flint import fmpq

from attncert.exact import ParseError
from attncert.exact.matrices import Rows
from attncert.exact.rationals import parse_rational
from attncert.proofs.checkers.sinkhorn.duality import diameter, w1_value
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError
from attncert.proofs.checkers.reading import flag, integer, items, obj, qmatrix, rational, shape_is
from attncert.proofs.checkers.sinkhorn.runs import check_run
from attncert.proofs.checkers.result import conclude
from attncert.proofs.checkers.sinkhorn.claims import problem_or_reason, same_eps
from attncert.proofs.checkers.sinkhorn.model import RecordedModel
from attncert.proofs.checkers.sinkhorn.texts import key, text
from attncert.proofs.core.params import int_list

SYSTEMS = ("independent", "entropic", "mixture")
MAX_WIDTH = 16
MAX_PAIRS = 1 << 12


def l1_to_balls(R: Rows, balls: Any) -> fmpq:
    """An exact r >= ||P' - R||_1 for every P' in the recorded balls: sum |R - mid| + rad, from the JSON values."""
    total = fmpq(0)
    if not isinstance(balls, list) or len(balls) != len(R):
        raise ParseError("a plan's balls must match its representative's shape")
    for r_row, b_row in zip(R, balls):
        if not isinstance(b_row, list) or len(b_row) != len(r_row):
            raise ParseError("a plan's balls must match its representative's shape")
        for x, ball in zip(r_row, b_row):
            if not isinstance(ball, dict):
                raise ParseError("a ball must be an object")
            total += abs(x - rational(ball.get("mid"))) + rational(ball.get("rad"))
    return total


def mass(R: Rows) -> fmpq:
    return sum((x for r in R for x in r), fmpq(0))


def check_universality(doc: dict[str, Any]) -> list[str]:
    """Every recorded bound and maximum follows from the recorded weights, runs and representatives (module docstring)."""
    params, inp, out = obj(doc, "params"), obj(doc, "inputs"), obj(doc, "outputs")
    eps, tol, widths = same_eps(params, inp), parse_rational(params.get("tol")), int_list(params.get("widths"))
    if max(widths) > MAX_WIDTH:
        raise ParseError(f"widths above {MAX_WIDTH} are not re-checked")
    if inp.get("domain") != ["-1", "1"]:
        raise ParseError("the declared domain must be [-1, 1]")
    fam = obj(inp, "family")
    fit, held = items(fam, "fit"), fam.get("held_out")
    if not isinstance(held, list) or len(fit) + len(held) > MAX_PAIRS:
        raise ParseError(f"the family must have a list of held-out pairs and at most {MAX_PAIRS} pairs")
    k = len(fit)
    if (k, len(held)) != (integer(params, "pairs", 1, MAX_PAIRS), integer(params, "held_out", 0, MAX_PAIRS)):
        return conclude(doc, "bound", ["the family's sizes are not the parameters'"])
    try:
        pairs = [(text(p, "mu"), text(p, "nu")) for p in fit + held]
    except HypothesisError as e:
        return conclude(doc, "bound", [str(e)])
    seen = {(key(mu), key(nu)) for mu, nu in pairs[:k]}
    problems = [f"held-out pair {i} is also a fit pair: it is not held out" for i, (mu, nu) in enumerate(pairs[k:]) if (key(mu), key(nu)) in seen]
    targets = items(out, "targets")
    if len(targets) != len(pairs):
        raise ParseError("there must be one target entry per pair")
    ef: list[dict[str, fmpq]] = []
    for i, ((mu, nu), t) in enumerate(zip(pairs, targets)):
        found = _targets(i, mu, nu, t, eps)
        if isinstance(found, str):
            problems.append(found)
            return conclude(doc, "bound", problems)
        ef.append(found)
    diams = [diameter(mu[0], nu[0]) for mu, nu in pairs]
    table, summary = obj(out, "table"), obj(out, "summary")
    if set(table) != set(SYSTEMS) or set(summary) != set(SYSTEMS):
        raise ParseError(f"the table and summary must have exactly the systems {list(SYSTEMS)}")
    for system in SYSTEMS:
        rows = items(table, system)
        if [r.get("width") if isinstance(r, dict) else None for r in rows] != widths:
            problems.append(f"{system}: the rows are not exactly one per width of the parameters")
            continue
        fit_max, held_max = [], []
        for w, row in zip(widths, rows):
            uppers = _row(f"{system}, width {w}", w, row, system, pairs, targets, ef, diams, eps, tol, problems)
            fit_max.append(max(uppers[:k]) if uppers else None)
            held_max.append(max(uppers[k:]) if uppers and uppers[k:] else None)
            if uppers and (rational(row.get("fit_max")) != fit_max[-1] or (row.get("held_out_max") is None) != (held_max[-1] is None) or (held_max[-1] is not None and rational(row.get("held_out_max")) != held_max[-1])):
                problems.append(f"{system}, width {w}: the recorded family maxima are not the maxima of the pairs' bounds")
        s = obj(summary, system)
        if s.get("fit_max") != [r.get("fit_max") for r in rows] or s.get("held_out_max") != [r.get("held_out_max") for r in rows]:
            problems.append(f"{system}: the summary's maxima are not the table's")
        if None not in fit_max:
            falls = all(p >= q for p, q in zip(fit_max, fit_max[1:]))
            if flag(s, "fit_max_nonincreasing") is not falls:
                problems.append(f"{system}: the family maximum is nonincreasing in the width: {falls}")
        if None not in held_max:  # (with no held-out pair the flag is null, which the rebuild pins)
            held_falls = all(p >= q for p, q in zip(held_max, held_max[1:]))
            if flag(s, "held_out_max_nonincreasing") is not held_falls:
                problems.append(f"{system}: the held-out maximum is nonincreasing in the width: {held_falls}")
    return conclude(doc, "bound", problems)


def _interval(ball: Any) -> tuple[fmpq, fmpq]:
    """The exact interval [mid - rad, mid + rad] of a recorded ball."""
    if not isinstance(ball, dict):
        raise ParseError("a ball must be an object")
    mid, rad = rational(ball.get("mid")), rational(ball.get("rad"))
    if rad < 0:
        raise ParseError("a ball's radius must be >= 0")
    return mid - rad, mid + rad


def _intervals(plan: Any, n: int, m: int) -> list[list[tuple[fmpq, fmpq]]]:
    if not isinstance(plan, list) or len(plan) != n or not all(isinstance(r, list) and len(r) == m for r in plan):
        raise ParseError(f"a target plan must be {n}x{m} balls")
    return [[_interval(b) for b in row] for row in plan]


def _targets(i: int, mu: tuple, nu: tuple, t: Any, eps: fmpq) -> dict[str, fmpq] | str:
    """Pair i's targets checked; per system the exact r >= ||F* - F~||_1, or the problem found.

    The entropic plan E* lies in the recorded run's balls (its theorem, re-checked); then, decided in QQ on the
    recorded dyadic endpoints, a_i b_j lies in the independent ball, E*'s ball in the entropic one, and
    [(a_i b_j + lo(E)) / 2, (a_i b_j + hi(E)) / 2] in the mixture's."""
    label = f"pair {i}"
    if not isinstance(t, dict):
        raise ParseError("a target entry must be an object")
    run, plans, reps = obj(t, "entropic_run"), obj(t, "plans"), obj(t, "representatives")
    problems: list[str] = []
    C0 = [[abs(x[0] - y[0]) for y in nu[0]] for x in mu[0]]
    p = problem_or_reason(C0, mu[1], nu[1], eps, f"{label}: the entropic target", problems)
    if p is None or check_run(p, run, run.get("plan"), f"{label}: the entropic target"):
        return problems[0] if problems else f"{label}: the entropic target's enclosure does not check"
    n, m = len(mu[1]), len(nu[1])
    E = _intervals(run.get("plan"), n, m)
    ab = [[ai * bj for bj in nu[1]] for ai in mu[1]]
    must = {
        "independent": [[(v, v) for v in r] for r in ab],
        "entropic": E,
        "mixture": [[((v + lo) / 2, (v + hi) / 2) for v, (lo, hi) in zip(rv, re)] for rv, re in zip(ab, E)],
    }
    out = {}
    for s in SYSTEMS:
        recorded = _intervals(plans.get(s), n, m)
        if not all(R[0] <= M[0] and M[1] <= R[1] for rr, rm in zip(recorded, must[s]) for R, M in zip(rr, rm)):
            return f"{label}, {s}: the recorded target plan does not contain the target"
        R = qmatrix(reps.get(s))
        shape_is(R, n, m, f"{label}: a target representative")
        if mass(R) != 1:
            return f"{label}, {s}: the target representative does not have mass 1"
        out[s] = l1_to_balls(R, plans.get(s))
    return out


def _row(label: str, w: int, row: Any, system: str, pairs: list, targets: list, ef: list, diams: list, eps: fmpq, tol: fmpq, problems: list[str]) -> list[fmpq]:
    """One (system, width): the model run by this package on every pair, each bound re-derived; the recorded uppers."""
    if not isinstance(row, dict):
        raise ParseError("a table row must be an object")
    model = RecordedModel(row.get("model"))
    if model.width != w or model.eps != eps or model.tol != tol:
        problems.append(f"{label}: the model's width, eps or tol is not the row's and the parameters'")
        return []
    entries = items(row, "pairs")
    if len(entries) != len(pairs):
        raise ParseError(f"{label}: there must be one entry per pair")
    uppers = []
    for i, ((mu, nu), e) in enumerate(zip(pairs, entries)):
        where = f"{label}, pair {i}"
        if not isinstance(e, dict):
            raise ParseError("a pair entry must be an object")
        run = obj(e, "run")
        p = problem_or_reason(model.cost(mu, nu), mu[1], nu[1], eps, where, problems)
        if p is None:
            continue
        if rational(run.get("tol")) != tol:
            problems.append(f"{where}: the run's tol is not the tol of the parameters")
        found = check_run(p, run, e.get("coupling"), f"{where}: the network's coupling")
        if found:
            problems += found
            continue
        P_rep, F_rep = qmatrix(e.get("representative")), qmatrix(obj(targets[i], "representatives").get(system))
        shape_is(P_rep, len(mu[1]), len(nu[1]), "a representative")
        if mass(P_rep) != 1:
            problems.append(f"{where}: the representative does not have mass 1")
            continue
        try:
            value = w1_value(obj(e, "w1_of_representatives"), P_rep, F_rep, mu[0], nu[0])
        except HypothesisError as err:
            problems.append(f"{where}: W1 of the representatives: {err}")
            continue
        slack = diams[i] * (l1_to_balls(P_rep, e.get("coupling")) + ef[i][system]) / 2
        lo, hi = rational(e.get("w1_lower")), rational(e.get("w1_upper"))
        if hi < value + slack or lo > max(value - slack, fmpq(0)):
            problems.append(f"{where}: the recorded W1 bounds are not implied by the enclosures")
        uppers.append(hi)
    return uppers if len(uppers) == len(pairs) else []
