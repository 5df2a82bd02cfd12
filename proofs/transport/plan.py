"""Claim transport_plan: the exact optimal transport plan of a cost and two marginals, with its optimality
certificate, and the exact verdict on a given plan (POT's ``ot.emd`` plan, say): optimal or not, and its cost gap.

The problem is random from a seed (costs k/100, ties included) or a user's own from files (``--cost FILE --a
FILE --b FILE``, read exactly by :mod:`exact.numberfiles`), with ``--plan FILE`` the plan to judge. The
certificate records the problem, the optimal plan (its basis arcs), the potentials and the costs;
:mod:`proofs.checkers.transport.plan` re-checks LP duality in QQ, and verify rebuilds from the recorded basis.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from flint import fmpq

from attncert.constructions.pot import import_pot, pot_emd
from attncert.constructions.sinkhorn.problem import random_cost, random_marginal
from attncert.constructions.transport import OptimalTransport, TransportInputError, judge_plan, optimal_transport, read_transport
from attncert.constructions.transport.tree import NotATree, Tree, spanning_tree
from attncert.exact import ParseError, QQ
from attncert.exact.matrices import Rows
from attncert.exact.numberfiles import FORMATS, read_matrix, read_vector
from attncert.exact.roundoff import float_of
from attncert.proofs.checkers.reading import qmatrix, qvector
from attncert.proofs.checkers.transport.plan import MAX_SIZE, check_transport_plan, sparse
from attncert.proofs.core.certify import certificate
from attncert.proofs.core.cost import Cost
from attncert.proofs.core.params import positive_int
from attncert.proofs.core.rebuild import recorded_params
from attncert.proofs.core.registry import Claim, Param, register
from attncert.proofs.sinkhorn.common import PLAN_OUT, SEED, float_note, pot_side_notes, pot_version, qmat, qvec, write_plan

NAME = "transport_plan"
STATEMENT = (
    "the recorded plan is an optimal transport plan of the recorded cost and marginals, with the recorded exact cost "
    "(LP duality: potentials with every reduced cost >= 0, equal primal and dual values, decided in QQ); a recorded plan "
    "to judge has exactly the recorded cost, marginal errors, gap to the optimum and verdict"
)
#: The options that give the problem from files: cost, a and b together (and the plan to judge, optional).
FILES = ("cost", "a", "b", "plan")
RANDOM = ("n", "m", "seed")
#: The random costs are k / COST_DEN, k in [0, COST_DEN]: ties, hence degenerate bases, are common.
COST_DEN = 100


def prove(
    n: int = 8, seed: int = 0, m: int | None = None, cost: str | None = None, a: str | None = None, b: str | None = None, plan: str | None = None,
    plan_out: str | None = None,
) -> dict:
    """The certificate on a random n x m problem from the seed, or on the problem (and plan) of the files; ``plan_out``
    a file for the optimal plan as float64 (not recorded)."""
    if plan_out is not None:
        if os.path.splitext(plan_out)[1].lower() not in (".npy", ".csv"):
            raise ParseError(f"--plan-out {plan_out!r:.60}: the plan is written as .npy or .csv (by the suffix)")
        doc = prove(n, seed, m, cost, a, b, plan)
        write_plan(plan_out, _float_plan(doc))
        return doc
    if cost is None and a is None and b is None:
        if plan is not None:
            raise ParseError("--plan goes with --cost, --a and --b: the plan to judge is a plan of your own problem")
        cols = n if m is None else m
        if max(n, cols) > MAX_SIZE:  # the checker reads at most MAX_SIZE rows and columns
            raise ParseError(f"the random cost would be {n}x{cols}; at most {MAX_SIZE:,} rows and columns")
        C, av, bv = random_cost(n, cols, seed, COST_DEN), random_marginal(n, seed + 1), random_marginal(cols, seed + 2)
        return _prove(C, av, bv, None, {"n": n, "m": cols, "seed": seed}, None)
    if None in (cost, a, b):
        raise ParseError("--cost, --a and --b go together: the cost matrix and both marginals, each from a file")
    given = [f"--{k}" for k, v in (("n", n), ("m", m), ("seed", seed)) if v != CLAIM.defaults()[k]]
    if given:
        raise ParseError(f"{' and '.join(given)}: only for the random problem (with --cost, the sizes and the data are the files')")
    C, tag_c = read_matrix(cost)
    (av, tag_a), (bv, tag_b) = read_vector(a), read_vector(b)
    G, tag_p = read_matrix(plan) if plan is not None else (None, None)
    if max(len(C), len(C[0])) > MAX_SIZE:
        raise ParseError(f"the cost is {len(C)}x{len(C[0])}; at most {MAX_SIZE:,} rows and columns")
    tags = {"cost": tag_c, "a": tag_a, "b": tag_b, **({"plan": tag_p} if plan is not None else {})}
    return _prove(C, av, bv, G, {"n": len(C), "m": len(C[0])}, tags)


def _prove(C: Rows, a: list[fmpq], b: list[fmpq], G: Rows | None, origin: dict[str, Any], tags: dict[str, str] | None, start: Tree | None = None) -> dict:
    """The certificate on this exact problem; ``tags`` the formats of its files, ``start`` a basis to start from."""
    floats = tags is not None and "npy-float" in (tags["a"], tags["b"])  # the one rule for float masses applies
    problem = read_transport(a, b, C, float_masses=floats)
    n, m = problem.n, problem.m
    if G is not None and (len(G), len(G[0])) != (n, m):
        raise TransportInputError(f"shapes disagree: the cost is {n}x{m}, the plan {len(G)}x{len(G[0])}")
    judged = [(i, j, x) for i, row in enumerate(G) for j, x in enumerate(row) if x != 0] if G is not None else None
    if start is None and judged:
        Gf = np.zeros((n, m))
        Gf[[i for i, _, _ in judged], [j for _, j, _ in judged]] = [max(float(x), 0.0) for _, _, x in judged]
        opt = optimal_transport(problem, G=Gf)
    else:
        opt = optimal_transport(problem, start=start)
    outputs: dict[str, Any] = {"optimum": _optimum_json(opt)}
    inputs: dict[str, Any] = {"C": qmat(C), "a": qvec(a), "b": qvec(b)}
    if problem.b != b:  # float masses whose totals differ by rounding: b scaled to sum(a), the one rule (docs/transport.md)
        inputs["b_scaled"] = qvec(problem.b)
    result: dict[str, Any] = {
        "relation": "exact_equal",
        "holds": True,
        "decided_in": "QQ",
        "optimal_cost": QQ.to_json(opt.cost),
        "meaning": "min <P, C> over the plans P >= 0 of (a, b) is optimal_cost, attained by the recorded plan (LP duality)",
    }
    if judged is not None:
        inputs["plan"] = [[i, j, QQ.to_json(x)] for i, j, x in judged]
        rows, cols = np.array([i for i, _, _ in judged], dtype=np.intp), np.array([j for _, j, _ in judged], dtype=np.intp)
        v = judge_plan(problem, rows, cols, [x for _, _, x in judged], opt)
        outputs["judged"] = {
            "nonnegative": v.nonnegative,
            "row_error": QQ.to_json(v.row_error),
            "col_error": QQ.to_json(v.col_error),
            "cost": QQ.to_json(v.cost),
            "gap": QQ.to_json(v.gap),
            "feasible": v.feasible,
            "optimal": v.optimal,
            "complementary": v.complementary,
        }
        result["plan_optimal"] = v.optimal
    if tags is not None:
        inputs["read_from"] = {k: FORMATS[t] for k, t in tags.items()}
    version = pot_version()
    return certificate(
        NAME,
        {**origin, **(tags or {})},
        inputs,
        {
            "problem": "min <P, C> over P >= 0 with P 1 = a and P^T 1 = b (the transportation linear program)",
            "method": "a spanning-tree basis (from a float plan's support: POT's ot.emd, the judged plan, or the matrix-minimum "
            "rule), exact flows and potentials on it, exact primal/dual simplex pivots until every reduced cost is >= 0 and "
            "every flow >= 0 (docs/transport.md)",
            "size": {"iterations": 0, "n": n, "m": m},
        },
        outputs,
        {
            "dual_value": QQ.to_json(opt.cost),
            "duality": "every plan P of (a, b) has <P, C> = sum_ij (C_ij - f_i - g_j) P_ij + a.f + b.g >= a.f + b.g; "
            "the optimal plan attains it",
        },
        result,
        _side_notes(version, problem, opt),
    )


def _float_plan(doc: dict[str, Any]) -> np.ndarray:
    """The recorded optimal plan as float64 (each entry the double nearest the exact one)."""
    n, m = doc["params"]["n"], doc["params"]["m"]
    G = np.zeros((n, m))
    for i, j, x in doc["outputs"]["optimum"]["plan"]:
        G[i, j] = float_of(QQ.from_json(x))
    return G


def _optimum_json(opt: OptimalTransport) -> dict[str, Any]:
    """The optimal plan as its basis arcs in row-major order (zero flows included: they name the basis), f, g, W."""
    arcs = sorted(opt.arcs, key=lambda t: (t[0], t[1]))
    return {
        "plan": [[i, j, QQ.to_json(x)] for i, j, x in arcs],
        "f": qvec(opt.f),
        "g": qvec(opt.g),
        "cost": QQ.to_json(opt.cost),
    }


def _side_notes(version: str | None, problem: Any, opt: OptimalTransport) -> dict[str, Any]:
    """POT's ot.emd on the doubles nearest the problem: its cost, and the exact verdict on its plan (information)."""
    if version is None:
        return pot_side_notes(None, "", "", [])
    ot = import_pot()
    a = np.array([float(x) for x in problem.a])
    b = np.array([float(x) for x in problem.b])
    b *= a.sum() / b.sum()
    G = pot_emd(ot, a, b, problem.cost.approx, numItermax=10**7)
    rows, cols = np.nonzero(G)
    v = judge_plan(problem, rows, cols, [fmpq(*x.as_integer_ratio()) for x in G[rows, cols].tolist()], opt)
    entry = {
        "emd2": float_note(float((G * problem.cost.approx).sum())),
        "plan_feasible": v.feasible,
        "plan_gap": QQ.to_json(v.gap),
        "plan_complementary": v.complementary,
        "start": opt.start,
        "pivots": {"primal": opt.pivots.primal, "dual": opt.pivots.dual},
    }
    return pot_side_notes(version, "ot.emd float64 on the doubles nearest the problem: its cost, and the exact verdict on its plan", "runs", [entry])


def rebuild(doc: dict[str, Any]) -> dict:
    """Prove again from the recorded problem, starting from the recorded basis (checked optimal by the check)."""
    kw = recorded_params(CLAIM, doc, optional=RANDOM + FILES + ("plan_out",))
    kw.pop("plan_out")
    tags = {k: kw.pop(k) for k in FILES}
    inputs = doc.get("inputs") if isinstance(doc.get("inputs"), dict) else {}
    C, a, b = qmatrix(inputs.get("C")), qvector(inputs.get("a")), qvector(inputs.get("b"))
    n, m = len(C), len(C[0])
    start = _recorded_basis(doc, n, m)
    if all(tags[k] is None for k in FILES):
        cols = kw["n"] if kw["m"] is None else kw["m"]
        C, a, b = random_cost(kw["n"], cols, kw["seed"], COST_DEN), random_marginal(kw["n"], kw["seed"] + 1), random_marginal(cols, kw["seed"] + 2)
        return _prove(C, a, b, None, {"n": kw["n"], "m": cols, "seed": kw["seed"]}, None, start)
    if any(tags[k] not in FORMATS for k in ("cost", "a", "b")) or (tags["plan"] is not None and tags["plan"] not in FORMATS):
        raise ParseError(f"the files' formats must be among {', '.join(FORMATS)}")
    G = None
    if tags["plan"] is not None:
        entries = sparse(inputs.get("plan"), n, m, "the judged plan")
        G = [[entries.get((i, j), fmpq(0)) for j in range(m)] for i in range(n)]
    files = {k: t for k, t in tags.items() if t is not None}
    return _prove(C, a, b, G, {"n": n, "m": m}, files, start)


def _recorded_basis(doc: dict[str, Any], n: int, m: int) -> Tree | None:
    """The recorded optimal plan's arcs as a spanning tree, or None where they are not one (then the rebuild starts
    afresh, and the comparison of the fields decides)."""
    try:
        x = sparse(doc["outputs"]["optimum"]["plan"], n, m, "the optimal plan")
        return spanning_tree(n, m, [i for i, _ in x], [j for _, j in x])
    except (KeyError, TypeError, ParseError, NotATree):
        return None


def transport_cost(n: int, m: int | None = None, cost: str | None = None, a: str | None = None, b: str | None = None, plan: str | None = None, **_: Any) -> Cost:
    """One exact solve on n x m entries, whose certificate records the problem: time and memory linear in n m
    (estimates), the document from the files' numbers when they are given (read for their shape and digits).

    The outputs hold n + m - 1 flows and n + m potentials: each a sum of up to n + m masses or costs, so about
    OUTPUT_DIGITS times as many digits as the longest input number, and the verdict on a judged plan a few more."""
    cols = n if m is None else m
    entries = n * cols
    widest, inputs = RANDOM_NUMBER, RANDOM_NUMBER * (entries + n + cols)
    if cost is not None and cost not in FORMATS:
        C, _ = read_matrix(cost)
        n, cols = len(C), len(C[0])
        entries = n * cols
        numbers = [x for row in C for x in row] + [x for path in (a, b) if path is not None for x in read_vector(path)[0]]
        if plan is not None:
            numbers += [x for row in read_matrix(plan)[0] for x in row if x != 0]
        lengths = [len(QQ.to_json(x)) + 3 for x in numbers]
        widest, inputs = max(lengths), sum(lengths)
    outputs = 2 * (n + cols) * (OUTPUT_DIGITS * widest + 16) + 8 * widest
    return Cost(evaluations=1, entries=entries, seconds=2e-5 * entries + 0.05, memory=400 * entries + (1 << 24), document=4096 + inputs + outputs)


#: Bytes of a random cost entry k/100 or mass k/s, quoted, comma included.
RANDOM_NUMBER = 12
#: Digits of a flow or potential per digit of the widest input number (sums of a few of them; common denominators).
OUTPUT_DIGITS = 4


def summary(doc: dict[str, Any]) -> str:
    """The optimal cost, and the verdict on a judged plan."""
    line = f"optimal cost {doc['result']['optimal_cost']}"
    judged = doc["outputs"].get("judged")
    if judged is not None:
        line += "; the given plan is optimal" if judged["optimal"] else f"; the given plan is NOT optimal (feasible: {judged['feasible']}, gap {judged['gap']})"
    return line if doc["result"]["holds"] else "does not hold: " + line


CLAIM = register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("n", positive_int, 8, "rows of the random cost"),
            SEED,
            Param("m", positive_int, None, "columns of the random cost (n when not given)"),
            Param("cost", str, None, "the cost matrix from FILE (.json, .csv or .npy, read exactly), with --a and --b instead of random data"),
            Param("a", str, None, "the row marginal from FILE (masses >= 0), with --cost"),
            Param("b", str, None, "the column marginal from FILE (masses >= 0, sum b = sum a exactly), with --cost"),
            Param("plan", str, None, "a plan to judge from FILE (n x m, e.g. POT's ot.emd plan saved with np.save), with --cost"),
            PLAN_OUT,
        ),
        check=check_transport_plan,
        cost=transport_cost,
        summary=summary,
        rebuild=rebuild,
    )
)
