r"""Independent checks of four Sinkhorn claims, from the recorded data alone (sinkhorn_universality: :mod:`proofs.checkers.sinkhorn.universality`).

Each ``check_*`` reads the recorded parameters and inputs, checks that the
recorded outputs are consistent with the parameters (every eps, t or width asked
for has exactly one run, sizes agree, tolerances agree, nothing is empty), uses
only the theorem checkers of this package (whose hypotheses are checked first),
recomputes ``holds`` and requires the claim's own relation. ``attncert verify``
then rebuilds the whole document from the recorded parameters and compares
every field (:mod:`proofs.core.rebuild`); these checks are what makes an OK mean the
claim is true even for a document the prover itself could have written.
"""

from __future__ import annotations

from typing import Any

from flint import arb, ctx, fmpq

from attncert.exact import EE, ParseError
from attncert.exact.matrices import Rows, matrix_from_json
from attncert.exact.numberfiles import FORMATS, is_double
from attncert.exact.rationals import parse_rational
from attncert.proofs.checkers.sinkhorn.duality import w1_value
from attncert.proofs.checkers.sinkhorn.fixed_point import is_sinkhorn_plan
from attncert.proofs.checkers.marginals import scaled_marginal
from attncert.proofs.checkers.sinkhorn.problem import HypothesisError, Problem, sinkhorn_problem
from attncert.proofs.checkers.result import conclude
from attncert.proofs.checkers.reading import flag, integer, items, obj, qmatrix, qvector, rational, shape_is
from attncert.proofs.checkers.sinkhorn.runs import EXTRA_BITS, check_run, read_plan, run_precision
from attncert.proofs.checkers.sinkhorn.model import RecordedModel
from attncert.proofs.checkers.sinkhorn.texts import text
from attncert.proofs.core.params import rational_list

MAX_SIZE = 1 << 12
#: A run of sinkhorn_convergence records its plan's balls up to this many entries n m; a larger plan is recorded
#: in factored form only (the witness, the shifted kernel's recipe and the bound; docs/sinkhorn.md).
RECORDED_PLAN_ENTRIES = 4096


def problem_or_reason(C: Rows, a: list[fmpq], b: list[fmpq], eps: fmpq, label: str, problems: list[str]) -> Problem | None:
    try:
        return sinkhorn_problem(C, a, b, eps)
    except HypothesisError as e:
        problems.append(f"{label}: {e}")
        return None


def marginals_contain(P: list[list[arb]], a: list[fmpq], b: list[fmpq], prec: int) -> bool:
    """Whether the enclosure's row and column sums contain a and b (as P*'s do, exactly)."""
    with ctx.workprec(prec + EXTRA_BITS):
        rows = [sum(r, arb(0)) for r in P]
        cols = [sum((r[j] for r in P), arb(0)) for j in range(len(P[0]))]
        return all(x.contains(arb(v)) for x, v in zip(rows + cols, list(a) + list(b)))


def same_eps(params: dict[str, Any], inputs: dict[str, Any]) -> fmpq:
    eps = parse_rational(params.get("eps"))
    if "eps" in inputs and rational(inputs["eps"]) != eps:
        raise ParseError("the inputs record another eps than the parameters")
    return eps


# -- sinkhorn_fixed_point -------------------------------------------------------------------


def check_fixed_point(doc: dict[str, Any]) -> list[str]:
    """pi > 0 with marginals a, b (in QQ) is S_eps(-eps log pi; a, b): Sinkhorn's uniqueness theorem."""
    params, inp, out = obj(doc, "params"), obj(doc, "inputs"), obj(doc, "outputs")
    n, m = integer(params, "n", 1, MAX_SIZE), integer(params, "m", 1, MAX_SIZE)
    pi, a, b = qmatrix(inp.get("pi")), qvector(inp.get("a")), qvector(inp.get("b"))
    shape_is(pi, n, m, "pi")
    if (len(a), len(b)) != (n, m):
        raise ParseError(f"a and b must have {n} and {m} entries")
    eps = same_eps(params, inp)
    problems: list[str] = []
    try:
        if not is_sinkhorn_plan(pi, a, b, eps):
            problems.append("pi is not positive with marginals a and b, so it is not S_eps(-eps log pi; a, b)")
    except HypothesisError as e:
        problems.append(str(e))
    if qmatrix(out.get("plan")) != pi:
        problems.append("the recorded plan is not pi")
    rows = [sum(r, fmpq(0)) for r in pi]
    cols = [sum((r[j] for r in pi), fmpq(0)) for j in range(m)]
    if qvector(out.get("row_sums")) != rows or qvector(out.get("col_sums")) != cols:
        problems.append("the recorded row or column sums are not those of pi")
    return conclude(doc, "exact_equal", problems)


# -- sinkhorn_limit ---------------------------------------------------------------------------


def check_limit(doc: dict[str, Any]) -> list[str]:
    """pi >= 0 with marginals a, b and a zero entry; every pi_t = (1-t) pi + t ab^T/s is a positive
    Sinkhorn plan (fixed-point theorem); W1(pi_t, pi) is proven by LP duality and equals t W1(ab^T/s, pi)."""
    params, inp, out, ref = obj(doc, "params"), obj(doc, "inputs"), obj(doc, "outputs"), obj(doc, "reference")
    n, m = integer(params, "n", 1, MAX_SIZE), integer(params, "m", 1, MAX_SIZE)
    pi, a, b = qmatrix(inp.get("pi")), qvector(inp.get("a")), qvector(inp.get("b"))
    xs, ys = qmatrix(inp.get("xs")), qmatrix(inp.get("ys"))
    shape_is(pi, n, m, "pi")
    if (len(a), len(b), len(xs), len(ys)) != (n, m, n, m):
        raise ParseError(f"a, xs must have {n} entries and b, ys {m}")
    eps = same_eps(params, inp)
    problems: list[str] = []
    if problem_or_reason(pi, a, b, eps, "the problem", problems) is None:
        return conclude(doc, "exact_equal", problems)
    if any(x < 0 for r in pi for x in r):
        problems.append("pi has a negative entry: it is not a coupling")
    if [sum(r, fmpq(0)) for r in pi] != a or [sum((r[j] for r in pi), fmpq(0)) for j in range(m)] != b:
        problems.append("the marginals of pi are not a and b")
    if not any(x == 0 for r in pi for x in r):
        problems.append("pi has no zero entry, so it is not a limit of a different kind")
    if problems:
        return conclude(doc, "exact_equal", problems)
    s = sum(a, fmpq(0))
    indep = [[ai * bj / s for bj in b] for ai in a]
    try:
        base = w1_value(obj(ref, "w1_independent_vs_pi"), indep, pi, xs, ys)
    except HypothesisError as e:
        return conclude(doc, "exact_equal", [f"W1(ab^T/s, pi): {e}"])
    steps = items(out, "steps")
    ts = rational_list(params.get("ts"))
    if [rational(step.get("t")) if isinstance(step, dict) else None for step in steps] != ts:
        problems.append("the steps are not exactly the values of t in the parameters")
    for step in steps:
        t = rational(step.get("t"))
        label = f"t = {t}"
        pt = qmatrix(step.get("pi_t"))
        if not 0 < t <= 1:
            problems.append(f"{label}: t is not in (0, 1]")
            continue
        if pt != [[(1 - t) * x + t * y for x, y in zip(r, q)] for r, q in zip(pi, indep)]:
            problems.append(f"{label}: pi_t is not (1-t) pi + t ab^T/s")
            continue
        plan = is_sinkhorn_plan(pt, a, b, eps)
        if flag(step, "pi_t_is_sinkhorn_plan") is not plan or not plan:
            problems.append(f"{label}: pi_t is a Sinkhorn plan: {plan}; recorded {step.get('pi_t_is_sinkhorn_plan')!r:.6}")
        try:
            w = w1_value(obj(step, "w1"), pt, pi, xs, ys)
        except HypothesisError as e:
            problems.append(f"{label}: W1(pi_t, pi): {e}")
            continue
        scaled = w == t * base
        if flag(step, "w1_equals_t_times_base") is not scaled or not scaled:
            problems.append(f"{label}: W1(pi_t, pi) = t W1(ab^T/s, pi) is {scaled}")
    return conclude(doc, "exact_equal", problems)


# -- sinkhorn_convergence ---------------------------------------------------------------------


def check_convergence(doc: dict[str, Any]) -> list[str]:
    """Every eps of the parameters has one certified run whose plan provably contains P*. POT's float outcomes
    are informational side notes (``side_notes``): nothing here reads them."""
    params, inp, out = obj(doc, "params"), obj(doc, "inputs"), obj(doc, "outputs")
    n = integer(params, "n", 1, MAX_SIZE)
    m = integer(params, "m", 1, MAX_SIZE) if "m" in params else n
    C, a, b = qmatrix(inp.get("C")), qvector(inp.get("a")), qvector(inp.get("b"))
    shape_is(C, n, m, "C")
    eps_list, tol = rational_list(params.get("eps")), parse_rational(params.get("tol"))
    runs = items(out, "runs")
    if not all(isinstance(r, dict) for r in runs):
        raise ParseError("every Sinkhorn run must be an object")
    problems: list[str] = _read_from_files(params, {"C": C, "a": [a], "b": [b]})
    if "b_scaled" in inp:
        b = scaled_marginal(params, a, b, qvector(inp.get("b_scaled")))
    if [rational(r.get("eps")) if isinstance(r, dict) else None for r in runs] != eps_list:
        problems.append("the runs are not exactly one per eps of the parameters")
    recorded = n * m <= RECORDED_PLAN_ENTRIES
    undecided: list[str] = []
    for run in runs:
        e = rational(run.get("eps"))
        label = f"eps {e}"
        p = problem_or_reason(C, a, b, e, label, problems)
        if p is None:
            continue
        if rational(run.get("tol")) != tol:
            problems.append(f"{label}: the run's tol is not the tol of the parameters")
        if flag(run, "certified") is False:
            # no bound reached: the claim is not proven at this eps (NOT-PROVEN), and nothing shows it false; a
            # recorded plan of such a run would claim what nothing proves
            undecided.append(f"{label}: the run is not certified")
            if run.get("plan") is not None:
                problems.append(f"{label}: an uncertified run records a plan")
            continue
        if (run.get("plan") is not None) is not recorded and run.get("certified") is True:
            problems.append(f"{label}: a plan of {n * m} entries is recorded {'as balls' if recorded else 'in factored form'}, not otherwise")
            continue
        found = check_run(p, run, run.get("plan"), label)
        problems += found
        if not found and recorded:
            marg = marginals_contain(read_plan(run.get("plan"), run_precision(run)), a, b, run_precision(run))
            if flag(run, "plan_marginals_contain_a_b") is not marg or not marg:
                problems.append(f"{label}: the plan's marginals contain a, b: {marg}")
        elif not found and run.get("plan_marginals_contain_a_b") is not None:
            problems.append(f"{label}: a plan in factored form has no recorded balls whose marginals could be checked")
    return conclude(doc, "enclosure", problems, undecided=undecided)


#: The parameters that name the formats of the files a problem was read from, and the inputs they hold.
FILE_PARAMS = {"cost": "C", "a": "a", "b": "b"}


def _read_from_files(params: dict[str, Any], inputs: dict[str, Rows]) -> list[str]:
    """A problem read from files records each file's format (all three or none); an input read from a .npy file of
    floats must hold only values of binary64 floats, and one read from a .npy file of integers only integers, as the
    certificate says."""
    tags = {k: params[k] for k in FILE_PARAMS if k in params}
    if not tags:
        return []
    if len(tags) != len(FILE_PARAMS) or any(t not in FORMATS for t in tags.values()) or "seed" in params:
        raise ParseError(f"a problem read from files records the formats of cost, a and b (among {', '.join(FORMATS)}), and no seed")
    problems = []
    for key, tag in tags.items():
        name = FILE_PARAMS[key]
        kind = {"npy-float": ("floats", "the value of a binary64 float", is_double), "npy-int": ("integers", "an integer", lambda x: x.q == 1)}.get(tag)
        bad = next(((i, j) for i, row in enumerate(inputs[name]) for j, x in enumerate(row) if not kind[2](x)), None) if kind else None
        if bad is not None:
            where = f"{name}[{bad[0]}][{bad[1]}]" if name == "C" else f"{name}[{bad[1]}]"
            problems.append(f"{name} is recorded as read from a .npy file of {kind[0]}, but {where} is not {kind[1]}")
    return problems


# -- sinkhorn_transformer ---------------------------------------------------------------------


def check_transformer(doc: dict[str, Any]) -> list[str]:
    """The texts are in the claim's class; the cost of the recorded model, computed by this package's own forward
    pass (:mod:`proofs.checkers.sinkhorn.model`), defines a Sinkhorn problem whose certified run's coupling contains P*
    and whose marginals contain a and b; a recorded exact cost must be consistent with it."""
    params, inp, cons, out = obj(doc, "params"), obj(doc, "inputs"), obj(doc, "construction"), obj(doc, "outputs")
    n, m = integer(params, "n", 1, MAX_SIZE), integer(params, "m", 1, MAX_SIZE)
    d, k = integer(params, "d", 1, MAX_SIZE), integer(params, "k", 1, MAX_SIZE)
    eps, tol = same_eps(params, inp), parse_rational(params.get("tol"))
    try:
        mu, nu = text(inp, "mu"), text(inp, "nu")
    except HypothesisError as e:
        return conclude(doc, "enclosure", [str(e)])
    shape_is(mu[0], n, d, "the points of mu")
    shape_is(nu[0], m, d, "the points of nu")
    model = RecordedModel(cons.get("model"))
    problems: list[str] = []
    if (model.eps, model.tol, model.width) != (eps, tol, k):
        problems.append("the model's eps, tol or feature width is not the parameters'")
    C = model.cost(mu, nu)
    p = problem_or_reason(C, mu[1], nu[1], eps, "the problem", problems)
    if p is None:
        return conclude(doc, "enclosure", problems)
    run = obj(cons, "sinkhorn")
    if rational(run.get("tol")) != tol:
        problems.append("the run's tol is not the tol of the parameters")
    if out.get("bound") != run.get("bound"):
        problems.append("outputs.bound is not the run's bound")
    prec = run_precision(run)
    cost = obj(cons, "cost")
    if flag(cost, "exact"):
        recorded = matrix_from_json(cost.get("C"), EE)
        shape_is(recorded, n, m, "the recorded cost")
        balls = C.balls(prec + EXTRA_BITS)
        if not all(EE.enclose(x, prec).overlaps(c) for rr, rc in zip(recorded, balls) for x, c in zip(rr, rc)):
            problems.append("the recorded exact cost is not -<Q, K> of the recorded model (its enclosure misses this forward pass's)")
    found = check_run(p, run, out.get("coupling"), "the coupling")
    problems += found
    if not found and not marginals_contain(read_plan(out.get("coupling"), prec), mu[1], nu[1], prec):
        problems.append("the coupling's marginals do not contain a and b")
    return conclude(doc, "enclosure", problems)
