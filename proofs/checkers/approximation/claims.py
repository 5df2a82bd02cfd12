r"""Independent checks of lipschitz_approx and lipschitz_rates, from the recorded data alone.

For each (target, grid) instance the check

1. checks the hypotheses: h in (0, 1] (the grid has m = ceil(1/h) steps), the
   stated constant > 0 (numerator and denominator below 2^MAX_CONSTANT_BITS),
   alpha in (0, 1] (numerator and denominator at most MAX_ALPHA_TERMS);
   re-parses the recorded expression with the restricted parser (nothing from
   the certificate is executed);
2. recomputes the samples' enclosures f(x_i) and requires |y_i - f(x_i)| <= 2^-bits;
3. decides the stated modulus on the tested grid pairs again (:mod:`.modulus`):
   the record must be the recomputed one, and a pair that is violated or
   undecided makes the claim fail (only a proven pair holds);
4. checks that the recorded leaves tile [0, 1]^d (:mod:`.partition`) and
   recomputes every leaf's bound max(f_hi - inf g, sup g - f_lo), with g from
   the recorded samples and slope (:class:`.mcshane.Interpolant`): the
   partition's bound must be their maximum, exactly; recomputes the closed-form
   bound, its hypotheses checked from the expression (:mod:`.closed_form`);
   eps must be the better of the two;
5. recomputes the lower bound at the recorded worst point (it must not exceed eps)
   and the reason the search stopped;
6. recomputes the independent sub-grid bound (:mod:`.subgrid`), whose sampled
   lower bound must not exceed eps either;
7. lipschitz_approx: the piece tables of the recorded RASP program must be the
   McShane pieces of the recorded samples and slope, and the network's
   Lipschitz constant max |slope| over its pieces is recomputed from them.

The rebuild that follows (:mod:`proofs.core.rebuild`) re-derives every other field
from the parameters, reusing only what these steps have re-checked.
"""

from __future__ import annotations

from typing import Any

import sympy
from flint import ctx, fmpq

from attncert.exact import QQ, ParseError
from attncert.exact.canonical import json_equal
from attncert.exact.expressions import compile_enclosure, endpoints, interval, parse_function, point, variables
from attncert.exact.rationals import parse_rational
from attncert.proofs.checkers.approximation.closed_form import closed_form
from attncert.proofs.checkers.approximation.mcshane import Interpolant, piece_tables
from attncert.proofs.checkers.approximation.modulus import decide, decision_json, decision_text
from attncert.proofs.checkers.approximation.partition import read_leaves, sides, tiling_problem
from attncert.proofs.checkers.reading import integer, items, obj, qvector, rational
from attncert.proofs.checkers.result import conclude
from attncert.proofs.checkers.approximation.subgrid import subgrid_bound
from attncert.proofs.core.params import int_list

MAX_D = 16
#: Bounds on the stated modulus C ||x - y||^alpha (its thresholds are q-th roots of C^q times powers of 2).
MAX_CONSTANT_BITS = 256
MAX_ALPHA_TERMS = 1000


def check_lipschitz_approx(doc: dict[str, Any]) -> list[str]:
    params, construction, outputs, reference, result = (obj(doc, k) for k in ("params", "construction", "outputs", "reference", "result"))
    expr, d, C, alpha, problems = _target(obj(obj(doc, "inputs"), "target"), integer(params, "d", 1, MAX_D))
    m = _steps(params.get("h"), problems)
    inst = {**{k: construction.get(k) for k in ("grid", "samples", "slope", "network_lipschitz")}, **outputs, "hypothesis": reference.get("hypothesis")}
    failures: list[str] = []
    undecided: list[str] = []
    if not problems:
        problems += _tables(construction, d, m, inst)
    if not problems:
        problems += check_instance(expr, d, m, C, alpha, params, inst, failures, undecided)
    if result.get("rasp_equals_closed_form") is not True:
        problems.append("the certificate records that the RASP program differs from the closed form g at a sample point")
    return conclude(doc, "bound", problems, failures, undecided)


def check_lipschitz_rates(doc: dict[str, Any]) -> list[str]:
    params, outputs = obj(doc, "params"), obj(doc, "outputs")
    rows = items(outputs, "rows")
    problems: list[str] = []
    failures: list[str] = []
    undecided: list[str] = []
    asked = [(name, d, m) for name, d, ms in _asked(params) for m in ms]
    if len(rows) != len(asked):
        raise ParseError(f"the table has {len(rows)} rows, the parameters ask for {len(asked)}")
    for row, (name, d, m) in zip(rows, asked):
        expr, _, C, alpha, found = _target(obj(row, "target"), d)
        failed: list[str] = []
        open_: list[str] = []
        if row["target"].get("name") != name:
            found.append(f"a row is for the target {row['target']['name']!r:.30}, the parameters ask for {name!r}")
        if integer(obj(row, "grid"), "m", 1, 1 << 20) != m:
            found.append(f"a row of {name} (d = {d}) has m = {row['grid']['m']}, the parameters ask for {m}")
        if not found and rational(row.get("network_lipschitz")) != rational(row.get("slope")):
            found.append(f"the network's Lipschitz constant is its slope {row.get('slope')!r:.30} (every piece has slope +-L), not {row.get('network_lipschitz')!r:.30}")
        if not found:
            found += check_instance(expr, d, m, C, alpha, params, row, failed, open_)
        problems += [f"{name}, d = {d}, m = {m}: {p}" for p in found]
        failures += [f"{name}, d = {d}, m = {m}: {p}" for p in failed]
        undecided += [f"{name}, d = {d}, m = {m}: {p}" for p in open_]
    return conclude(doc, "bound", problems, failures, undecided)


def _asked(params: dict[str, Any]) -> list[tuple[str, int, list[int]]]:
    """(target, d, the m of each row) as the rates parameters ask: the Lipschitz target at d = 1, 2, 3, then each Hölder target at d = 1."""
    out = []
    ms = [int_list(str(params.get(f"m{d}"))) for d in (1, 2, 3)]
    lip = params.get("lipschitz_target")
    if not isinstance(lip, str) or not isinstance(params.get("holder_targets"), str):
        raise ParseError("lipschitz_rates names its targets in lipschitz_target and holder_targets")
    out += [(lip, d, ms[d - 1]) for d in (1, 2, 3)]
    out += [(name, 1, ms[0]) for name in params["holder_targets"].split(",") if name]
    return out


def _target(t: dict[str, Any], d: int) -> tuple[sympy.Expr, int, fmpq, fmpq, list[str]]:
    """The recorded target re-parsed, with its hypotheses checked (constant > 0, alpha in (0, 1])."""
    if integer(t, "d", 1, MAX_D) != d:
        raise ParseError(f"the target is recorded for d = {t['d']}, the parameters ask for d = {d}")
    C, alpha = rational(t.get("constant")), rational(t.get("alpha"))
    if max(int(C.p).bit_length(), int(C.q).bit_length()) > MAX_CONSTANT_BITS or max(abs(int(alpha.p)), int(alpha.q)) > MAX_ALPHA_TERMS:
        raise ParseError(f"the stated constant needs at most {MAX_CONSTANT_BITS} bits and alpha's terms at most {MAX_ALPHA_TERMS}")
    problems = []
    if not C > 0:
        problems.append(f"hypothesis L > 0 fails: the stated constant is {C}")
    if not 0 < alpha <= 1:
        problems.append(f"hypothesis alpha in (0, 1] fails: alpha is {alpha}")
    if not isinstance(t.get("expression"), str):
        raise ParseError("the target's expression must be a string")
    return parse_function(t["expression"], d), d, C, alpha, problems


def _steps(h: Any, problems: list[str]) -> int:
    v = parse_rational(h)
    if not 0 < v <= 1:
        problems.append(f"hypothesis h in (0, 1] fails: h is {v}")
        return 1
    return int((1 / v).ceil())


def check_instance(expr: sympy.Expr, d: int, m: int, C: fmpq, alpha: fmpq, params: dict[str, Any], inst: dict[str, Any], failures: list[str], undecided: list[str]) -> list[str]:
    """Steps 2 to 6 of the module docstring for one instance (a dict with grid, samples, slope, network_lipschitz,
    hypothesis, certified, independent); the network's Lipschitz constant has been checked by the caller.
    Returns the problems (recorded values that are not the recomputed ones); a stated modulus that the
    tested grid pairs do not prove, recorded as such, is appended to ``failures`` when a pair violates it
    (the claim does not hold), else to ``undecided`` (a pair the enclosures cannot decide: not proven)."""
    bits, prec = integer(params, "bits", 4, 64), integer(params, "prec", 32, 4096)
    ratio, most = parse_rational(params.get("ratio")), integer(params, "max_leaves", 1, 1 << 40)
    grid, smp = obj(inst, "grid"), obj(inst, "samples")
    G = (m + 1) ** d
    if (integer(grid, "d", 1, MAX_D), integer(grid, "m", 1, 1 << 20), integer(grid, "points", 1, 1 << 40)) != (d, m, G) or grid.get("h") != QQ.to_json(fmpq(1, m)):
        return [f"the recorded grid is not the grid of step 1/{m} on [0, 1]^{d} ({G} points)"]
    if integer(smp, "bits", 4, 64) != bits:
        return [f"the samples are recorded with {smp['bits']} bits, the parameters say {bits}"]
    y = qvector(smp.get("y"))
    if len(y) != G:
        return [f"{len(y)} samples recorded for a grid of {G} points"]
    L = rational(inst.get("slope"))
    if not L > 0:
        return [f"the network's slope must be > 0, got {L}"]
    problems: list[str] = []
    f = compile_enclosure(expr, variables(d))
    scale = 2**bits
    with ctx.workprec(prec):
        for i, v in enumerate(y):
            if int(v.q) & (int(v.q) - 1) or v.q > scale:
                return [f"the sample y_{i} = {v} is not a multiple of 2^-{bits}"]
            coords = [fmpq((i // (m + 1) ** (d - 1 - k)) % (m + 1), m) for k in range(d)]
            lo, hi = endpoints(f([point(c) for c in coords]))
            if lo < v - fmpq(1, scale) or hi > v + fmpq(1, scale):
                return [f"the sample y_{i} = {v} is not within 2^-{bits} of f(x_{i}) (x_{i} = {[str(c) for c in coords]})"]
    differ, failed, open_ = _hypothesis(expr, d, m, C, alpha, prec, obj(inst, "hypothesis"))
    problems += differ
    failures += failed
    undecided += open_
    g = Interpolant(d, m, y, L)
    cf = closed_form(expr, d, m, C, alpha, L, bits)
    cf_json = {"bound": None if cf.bound is None else QQ.to_json(cf.bound), "modulus": cf.modulus, "reason": cf.reason}
    with ctx.workprec(prec):
        problems += _certified(f, g, d, ratio, most, obj(inst, "certified"), cf_json)
    problems += _independent(expr, d, g, rational(inst.get("network_lipschitz")), prec, obj(inst, "independent"), rational(inst["certified"]["eps"]))
    return problems


def _hypothesis(expr: sympy.Expr, d: int, m: int, C: fmpq, alpha: fmpq, prec: int, rec: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """The stated modulus decided again on the tested grid pairs, only a proven pair holding: (problems,
    failures, undecided), a failure when a pair is decided violated, else undecided when a pair is not proven."""
    want = decision_json(decide(expr, d, m, C, alpha, prec), C, alpha, d, m)
    # Member by member, and a member missing is a difference even where the recomputed one is null (the rebuild
    # writes the record back as it is); false is not 0.
    differ = [k for k in want if k not in rec or not json_equal(rec[k], want[k])] + [k for k in rec if k not in want]
    if differ:
        return [f"the recorded test of the stated bound on grid pairs differs from its recomputation in {', '.join(differ)}: {decision_text(want) or 'every tested pair is proven'}"], [], []
    failed = decision_text(want)
    if failed is None:
        return [], [], []
    return ([], [failed], []) if want["violated"] else ([], [], [failed])


def _certified(f: Any, g: Interpolant, d: int, ratio: fmpq, most: int, rec: dict[str, Any], closed: dict[str, Any]) -> list[str]:
    leaves = read_leaves(rec.get("leaves"), d, most)
    hole = tiling_problem(leaves, d)
    if hole:
        return [hole]
    eps, lower, partition = rational(rec.get("eps")), rational(rec.get("lower")), rational(rec.get("partition_bound"))
    problems = []
    worst, where = None, None
    for leaf in leaves:
        box = sides(leaf)
        lo, hi = endpoints(f([interval(a, b) for a, b in box]))
        top, bottom = g.bounds(box)
        b = max(hi - bottom, top - lo)
        if worst is None or b > worst:
            worst, where = b, leaf
    if worst > partition:
        problems.append(f"the leaf {[where[0], *where[1]]} bounds |f - g| only by {worst} > the recorded partition bound {partition}: the certified error does not hold")
    elif worst != partition:
        problems.append(f"the partition bound {partition} is not the largest leaf bound {worst}")
    if rec.get("closed_form") != closed:
        problems.append(f"the closed-form bound is {closed['bound'] or 'not available: ' + closed['reason']}, the certificate records {rec.get('closed_form')!r:.80}")
    best = worst if closed["bound"] is None else min(worst, QQ.from_json(closed["bound"]))
    if eps != best:
        problems.append(f"eps = {eps} is not the better of the partition's bound {worst} and the closed-form bound {closed['bound']}: it is {best}")
    x = qvector(rec.get("worst_point"))
    if len(x) != d or not all(0 <= c <= 1 for c in x):
        return problems + ["the worst point is not a point of [0, 1]^d"]
    flo, fhi = endpoints(f([point(c) for c in x]))
    gx = g.value(x)
    low = max(flo - gx, gx - fhi, fmpq(0))
    if low != lower:
        problems.append(f"the lower bound at the recorded point is {low}, the certificate says {lower}")
    if lower > eps:
        problems.append(f"the lower bound {lower} exceeds eps = {eps}")
    if rec.get("stopped") != ("ratio" if eps <= ratio * lower else "budget"):
        problems.append("the recorded reason the search stopped does not follow from eps, lower and ratio")
    return problems


def _independent(expr: sympy.Expr, d: int, g: Interpolant, L_g: fmpq, prec: int, rec: dict[str, Any], eps: fmpq) -> list[str]:
    s = subgrid_bound(expr, d, g, L_g, prec)
    want = {"cells": s.cells, "bound": None if s.bound is None else QQ.to_json(s.bound), "lower": QQ.to_json(s.lower), "modulus": s.modulus, "reason": s.reason}
    problems = [f"the sub-grid bound is {k} = {v!r:.60}, the certificate says {rec.get(k)!r:.60}" for k, v in want.items() if rec.get(k) != v]
    if s.lower > eps:
        problems.append(f"the sub-grid finds |f - g| >= {s.lower} > eps = {eps} at a cell centre")
    return problems


def _tables(construction: dict[str, Any], d: int, m: int, inst: dict[str, Any]) -> list[str]:
    """The recorded program's piece tables are the McShane pieces; its Lipschitz constant is max |slope|."""
    graph = obj(construction, "graph")
    nodes = graph.get("nodes")
    if not isinstance(nodes, list):
        raise ParseError("the recorded graph has no node list")
    tables = {n.get("label"): n for n in nodes if isinstance(n, dict) and n.get("op") == "constant_sop"}
    names = ("piece_coordinate", "piece_slope", "piece_intercept")
    if set(tables) != set(names):
        return [f"the recorded program's constant tables are {sorted(map(str, tables))}, a McShane program has {list(names)}"]
    G, P = (m + 1) ** d, 1 << (2 * d - 1).bit_length()
    N = (1 << (G - 1).bit_length()) * P
    recorded = []
    for name in names:
        values = obj(tables[name], "params").get("value")
        if not isinstance(values, list) or len(values) != N:
            return [f"the table {name} must have N = {N} entries"]
        recorded.append([QQ.from_json(v.get("q")) if isinstance(v, dict) else None for v in values])
    y, L = qvector(inst["samples"]["y"]), rational(inst["slope"])
    source, slope, intercept = piece_tables(d, m, y, L, N)
    if recorded != [[fmpq(k) for k in source], slope, intercept]:
        return ["the recorded program's piece tables are not the McShane pieces of the recorded samples and slope"]
    lip = max(abs(a) for a in recorded[1])
    if lip != rational(inst.get("network_lipschitz")):
        return [f"the network's Lipschitz constant from its weights is {lip}, the certificate says {inst.get('network_lipschitz')}"]
    return []
