r"""Independent check of ``transport_plan``: LP duality for the transportation problem, decided in QQ.

**Theorem** (weak duality; Kantorovich 1942, Dantzig 1951). Let a, b >= 0 with sum(a) = sum(b) and C an n x m
rational matrix. If x >= 0 has row sums a and column sums b, and (f, g) satisfy C_ij - f_i - g_j >= 0 for every
(i, j), then every plan P of (a, b) has <P, C> >= a.f + b.g; so if <x, C> = a.f + b.g, x is optimal and its cost
W = <x, C> is the optimum. (<P, C> = sum_ij (C_ij - f_i - g_j) P_ij + a.f + b.g, and the sum is >= 0.)

The check reads the problem (C, a, b) and the recorded plan (sparse: distinct entries (i, j, x_ij) in range),
checks the hypotheses (masses >= 0, equal totals, x >= 0 with marginals exactly a and b), every one of the
n m reduced costs in QQ (fmpq), and the equation; then recomputes, for a recorded plan G to judge, G's
non-negativity, its exact marginal errors, its cost <G, C>, the gap <G, C> - W, feasibility, optimality
(feasible with gap 0) and complementarity (every G_ij > 0 has C_ij - f_i - g_j = 0, which makes G optimal among
the plans with G's own marginals, by the same theorem). Nothing is imported from the prover: this is its own
code on the recorded numbers.
"""

from __future__ import annotations

from typing import Any

from flint import fmpq

from attncert.exact import ParseError
from attncert.exact.numberfiles import FORMATS, is_double
from attncert.proofs.checkers.reading import flag, integer, obj, qmatrix, qvector, rational, shape_is, whole
from attncert.proofs.checkers.result import conclude
from attncert.proofs.checkers.marginals import scaled_marginal

#: The most rows or columns of a recorded problem.
MAX_SIZE = 1 << 12
#: The parameters that name the formats of the files the problem was read from, and the inputs they hold.
FILES = {"cost": "C", "a": "a", "b": "b", "plan": "plan"}


def sparse(entries: Any, n: int, m: int, name: str) -> dict[tuple[int, int], fmpq]:
    """A recorded sparse matrix [[i, j, "p/q"], ...]: distinct (i, j) in range, in row-major order, each value read."""
    if not isinstance(entries, list):
        raise ParseError(f"{name} must be a list of [i, j, value] entries")
    out: dict[tuple[int, int], fmpq] = {}
    last = (-1, -1)
    for e in entries:
        if not (isinstance(e, list) and len(e) == 3 and whole(e[0]) and whole(e[1])):
            raise ParseError(f"{name}: every entry is [i, j, value] with integers i, j")
        i, j = e[0], e[1]
        if not (0 <= i < n and 0 <= j < m):
            raise ParseError(f"{name}: the entry ({i}, {j}) is outside the {n}x{m} matrix")
        if (i, j) <= last:
            raise ParseError(f"{name}: the entries must be distinct, in row-major order; ({i}, {j}) comes after {last}")
        last = (i, j)
        out[(i, j)] = rational(e[2])
    return out


def marginals(x: dict[tuple[int, int], fmpq], n: int, m: int) -> tuple[list[fmpq], list[fmpq]]:
    rows, cols = [fmpq(0)] * n, [fmpq(0)] * m
    for (i, j), v in x.items():
        rows[i] += v
        cols[j] += v
    return rows, cols


def check_transport_plan(doc: dict[str, Any]) -> list[str]:
    """The recorded optimum is optimal with the recorded cost (the theorem above), and the recorded verdict on a
    given plan is exactly what its numbers say."""
    params, inp, out, ref = obj(doc, "params"), obj(doc, "inputs"), obj(doc, "outputs"), obj(doc, "reference")
    n = integer(params, "n", 1, MAX_SIZE)
    m = integer(params, "m", 1, MAX_SIZE)
    C, a, b = qmatrix(inp.get("C")), qvector(inp.get("a")), qvector(inp.get("b"))
    shape_is(C, n, m, "C")
    if (len(a), len(b)) != (n, m):
        raise ParseError(f"a and b must have {n} and {m} entries")
    problems = _files(params, inp, C, a, b)
    if "b_scaled" in inp:
        b = scaled_marginal(params, a, b, qvector(inp.get("b_scaled")))
    if any(x < 0 for x in a + b) or sum(a, fmpq(0)) != sum(b, fmpq(0)) or sum(a, fmpq(0)) == 0:
        return conclude(doc, "exact_equal", problems + ["the masses are not >= 0 with equal positive totals"])
    opt = obj(out, "optimum")
    x = sparse(opt.get("plan"), n, m, "the optimal plan")
    f, g = qvector(opt.get("f")), qvector(opt.get("g"))
    if (len(f), len(g)) != (n, m):
        raise ParseError(f"the potentials f, g must have {n} and {m} entries")
    W = rational(opt.get("cost"))
    if any(v < 0 for v in x.values()):
        problems.append("the optimal plan has a negative entry")
    if marginals(x, n, m) != (a, b):
        problems.append("the optimal plan's marginals are not a and b")
    negative = next(((i, j) for i in range(n) for j in range(m) if C[i][j] - f[i] - g[j] < 0), None)
    if negative is not None:
        problems.append(f"the reduced cost C_ij - f_i - g_j is negative at {negative}: the potentials are not dual feasible")
    primal = sum((v * C[i][j] for (i, j), v in x.items()), fmpq(0))
    dual = sum((s * t for s, t in zip(a, f)), fmpq(0)) + sum((s * t for s, t in zip(b, g)), fmpq(0))
    if not primal == dual == W:
        problems.append(f"<x, C> = {primal}, a.f + b.g = {dual} and the recorded cost {W} are not one number")
    if rational(ref.get("dual_value")) != dual:
        problems.append("the recorded dual value is not a.f + b.g")
    if "plan" in inp:
        problems += _judged(inp, obj(out, "judged"), C, a, b, f, g, W, n, m)
    elif "judged" in out:
        problems.append("a verdict is recorded without a plan to judge")
    result = obj(doc, "result")
    if result.get("optimal_cost") != opt.get("cost"):
        problems.append("result.optimal_cost is not the optimum's cost")
    if "plan" in inp and result.get("plan_optimal") is not obj(out, "judged").get("optimal"):
        problems.append("result.plan_optimal is not the verdict's")
    return conclude(doc, "exact_equal", problems)


def _judged(inp: dict[str, Any], verdict: dict[str, Any], C: list, a: list[fmpq], b: list[fmpq], f: list[fmpq], g: list[fmpq], W: fmpq, n: int, m: int) -> list[str]:
    """The verdict on the recorded plan G, field by field, recomputed."""
    G = sparse(inp.get("plan"), n, m, "the judged plan")
    if any(v == 0 for v in G.values()):
        raise ParseError("the judged plan records only its nonzero entries")
    rows, cols = marginals(G, n, m)
    cost = sum((v * C[i][j] for (i, j), v in G.items()), fmpq(0))
    row_error = max(abs(s - t) for s, t in zip(rows, a))
    col_error = max(abs(s - t) for s, t in zip(cols, b))
    nonnegative = all(v > 0 for v in G.values())
    feasible = nonnegative and row_error == 0 and col_error == 0
    expected = {
        "nonnegative": nonnegative,
        "row_error": row_error,
        "col_error": col_error,
        "cost": cost,
        "gap": cost - W,
        "feasible": feasible,
        "optimal": feasible and cost == W,
        "complementary": all(C[i][j] - f[i] - g[j] == 0 for (i, j), v in G.items() if v > 0),
    }
    problems = []
    for key, value in expected.items():
        recorded = flag(verdict, key) if isinstance(value, bool) else rational(verdict.get(key))
        if recorded != value:
            problems.append(f"the verdict's {key} is {verdict.get(key)!r:.40}, the plan's numbers say {value}")
    return problems


def _files(params: dict[str, Any], inp: dict[str, Any], C: list, a: list[fmpq], b: list[fmpq]) -> list[str]:
    """A problem read from files records each file's format; an input read from a .npy file of floats must hold only
    values of binary64 floats, and one read from a .npy file of integers only integers, as the certificate says."""
    tags = {k: params[k] for k in FILES if params.get(k) is not None}
    if not tags:
        return []
    if any(k not in tags for k in ("cost", "a", "b")) or any(t not in FORMATS for t in tags.values()) or "seed" in params:
        raise ParseError(f"a problem read from files records the formats of cost, a and b (among {', '.join(FORMATS)}), and no seed")
    values = {"C": [x for row in C for x in row], "a": a, "b": b, "plan": [rational(e[2]) for e in inp.get("plan") or [] if isinstance(e, list) and len(e) == 3]}
    kinds = {"npy-float": ("floats", "a binary64 float", is_double), "npy-int": ("integers", "an integer", lambda v: v.q == 1)}
    return [
        f"{FILES[key]} is recorded as read from a .npy file of {kinds[tag][0]}, but holds a value that is not {kinds[tag][1]}"
        for key, tag in tags.items()
        if tag in kinds and not all(kinds[tag][2](v) for v in values[FILES[key]])
    ]
