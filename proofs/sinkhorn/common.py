"""Shared pieces of the Sinkhorn proofs: parameters, JSON forms, independent references.

The references here never import :mod:`constructions`: the plan reference is
plain Sinkhorn in mpmath at high precision. POT (a test extra, optional at run
time) is a float cross-check labelled agreement; it goes into the certificate's
informational ``side_notes`` with POT's version, never into a claim field, so a
certificate verifies the same with POT, with another POT, or without it.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import replace
from typing import Any, Sequence

import mpmath
import numpy as np
from flint import arb, ctx, fmpq

from attncert.constructions.pot import POT_NUMPY_ONLY, import_pot  # noqa: F401 (shared with the tests' conftest)
from attncert.constructions.sinkhorn import SinkhornResult
from attncert.constructions.sinkhorn.operator import FLOAT_FLOOR, PLAIN_ENTRIES
from attncert.constructions.sinkhorn.problem import figure
from attncert.constructions.sinkhorn.wasserstein import W1Certificate
from attncert.exact import Ball, Float, QQ
from attncert.exact.errors import LimitExceeded, ParseError
from attncert.exact.matrices import Rows, matrix_to_json
from attncert.exact.numberfiles import FORMATS, read_matrix, read_vector
from attncert.exact.roundoff import EXP_MAX, LARGEST
from attncert.proofs.core import figures
from attncert.proofs.checkers.reading import qmatrix, qvector
from attncert.proofs.checkers.sinkhorn.claims import RECORDED_PLAN_ENTRIES
from attncert.proofs.core.cost import CAP, DOCUMENT_BASE, Cost, ball_bytes, krawczyk_bits, sinkhorn_cost
from attncert.proofs.core.params import int_list, positive_int, positive_rational, rational_list
from attncert.proofs.core.registry import Param


SEED = Param("seed", int, 0, "seed of the random rational data")
#: Peak bytes per plan entry of a run on the shifted kernel (float-verified, high-precision or precise-convexity): the
#: float kernel, its index, the temporaries and the high-precision paths' digit arrays (a float64 cost's: about 9 at
#: 140 bits, 173 MiB in all at 1024 x 1024), rounded up.
SHIFTED_BYTES_PER_ENTRY = 192
#: Seconds per plan entry of such a run (1024 x 1024 at tol 1e-30: about 0.4 s, one BLAS thread), rounded up.
SHIFTED_SECONDS_PER_ENTRY = 1e-6
#: Seconds per plan entry of a precise-convexity run at Delta > 40 (a float64 cost's kernel in fixed point, the
#: Cholesky, up to six evaluations: 4.2 s at 1024 x 1024, reg 0.01, on a loaded machine), rounded up.
CONVEXITY_SECONDS_PER_ENTRY = 4e-6
#: The shifted kernel's exponents are at most the cost's range over eps; float64 holds the kernel up to EXP_MAX.
KERNEL_RANGE = fmpq(int(EXP_MAX))
#: The most text pairs a universality family may have.
MAX_FAMILY = 1024
#: Seconds per network coupling of sinkhorn_universality beyond its Sinkhorn run (texts of up to 6 points, width
#: up to 8: about 16 ms measured on the benchmark machine, bench_sinkhorn_universality).
SECONDS_PER_COUPLING = 0.016
#: The mpmath reference runs on plans of at most this many entries.
REFERENCE_ENTRIES = 4096
#: Entry updates (iterations x n x m) one eps's mpmath reference may take: the default budget of 2,000 iterations at
#: the largest plan it runs on, about 20 s at 60 digits (11 ms an iteration at 64 x 64 measured). A larger budget is
#: refused before anything runs, so that neither prove nor verify's rebuild of a recorded ref_iter spends hours in it.
REFERENCE_WORK = 2000 * REFERENCE_ENTRIES
#: Seconds an entry update of the reference takes at 60 digits (2.7 us measured), rounded up.
REFERENCE_SECONDS_PER_ENTRY = 3e-6
PREC = Param("prec", positive_int, 128, "working precision of the balls, in bits")
TOL = Param("tol", str, "1e-30", "certified bound to reach on max |log P - log P*|")


def pot_eps(eps: str, reg: str | None, default: str) -> str:
    """The temperatures of a run: ``eps``, or ``reg`` (POT's name for it) when given; both, unequal, are refused."""
    if reg is None:
        return eps
    if eps != default and rational_list(eps) != rational_list(reg):
        raise ParseError("--reg is POT's name for --eps: give one of them")
    return reg


def reference_budget(ref_iter: int, n: int, m: int) -> None:
    """The mpmath reference's budget at an n x m plan within REFERENCE_WORK, or a one-line ParseError."""
    if n * m <= REFERENCE_ENTRIES and ref_iter * n * m > REFERENCE_WORK:
        raise ParseError(
            f"--ref-iter {ref_iter:,}: the mpmath reference of a {n}x{m} plan could take {ref_iter * n * m:,} entry updates an eps, "
            f"over {REFERENCE_WORK:,} (about 20 s at 60 digits); at most {REFERENCE_WORK // (n * m):,} iterations here"
        )


def convergence_cost(
    n: int | None,
    eps: str,
    prec: int,
    m: int | None = None,
    cost: str | None = None,
    a: str | None = None,
    b: str | None = None,
    reg: str | None = None,
    ref_iter: int = 2000,
    default_eps: str = "",
    recorded: tuple[Rows, int] | None = None,
    tol: str = "1e-30",
    **_: Any,
) -> Cost:
    """One run per eps (or reg, POT's name for it), the hardest sets the precision, which grows with the cost's
    range (max - min) over eps.

    Random costs lie in [0, 1]. A cost file (``cost`` a path) is read for its shape and range, and the three files
    for the bytes the certificate records of them; the estimate names that shape (``Cost.problem``). In a
    certificate ``cost`` is the recorded file's format, not a path: verify gives the recorded cost and the bytes of
    the recorded problem as ``recorded`` (:func:`recorded_problem`), as the files give them (a random cost's range, 1,
    put a cost of 5e-324 and 1e-320 at eps 1e-300 at 10^300 bits, and refused its genuine certificate).
    """
    eps = pot_eps(eps, reg, default_eps or eps)
    eps_list = [positive_rational(e) for e in rational_list(eps)]
    n = 8 if n is None else n  # the random problem's default size (convergence.RANDOM_N)
    cols, spread = n if m is None else m, fmpq(1)
    inputs = RANDOM_VALUE * (n * cols + n + cols)
    from_files = cost is not None and cost not in FORMATS
    if from_files:
        C = read_matrix(cost)[0]
        masses = [x for path in (a, b) if path is not None for x in read_vector(path)[0]]
        recorded = C, sum(len(QQ.to_json(x)) + 3 for x in [*(x for row in C for x in row), *masses])
    if recorded is not None:
        C, inputs = recorded
        n, cols = len(C), len(C[0])
        spread = max(map(max, C)) - min(map(min, C))
    bits = [krawczyk_bits(spread, e, prec) for e in eps_list]
    document = convergence_document(n, cols, [(spread / e, b) for e, b in zip(eps_list, bits)], prec, inputs)
    origin = f"the file {os.path.basename(cost)}'s" if from_files else "recorded" if recorded is not None else "random"
    # an eps of many digits (1e-300 is 1/10^300) in three, marked as rounded
    shown = [str(e) if len(str(e)) <= 24 else f"~{figure(e)}" for e in eps_list]
    ranges = [spread / e for e in eps_list]
    problem = f"{n} x {cols} cost ({origin}), eps {', '.join(shown)}; path: {run_paths(n * cols, ranges, bits, prec, tol)}"
    reference_budget(ref_iter, n, cols)
    runs = _convergence_runs(n, cols, ranges, bits, prec)
    reference = len(eps_list) * ref_iter * n * cols * REFERENCE_SECONDS_PER_ENTRY if n * cols <= REFERENCE_ENTRIES else 0.0
    return replace(runs, seconds=runs.seconds + reference, document=document, problem=problem)


def recorded_problem(doc: dict[str, Any]) -> dict[str, Any]:
    """A sinkhorn_convergence certificate's cost and masses as recorded, for :func:`convergence_cost` (``recorded``)
    where they were read from files; nothing for a random problem, which the parameters (n, m, seed) determine.

    A certificate names each file by its format, never by a path: any other value is refused here, before the cost
    model could open a file a certificate names."""
    params, inputs = doc.get("params"), doc.get("inputs")
    if not isinstance(params, dict) or all(params.get(k) is None for k in ("cost", "a", "b")):
        return {}
    if any(params.get(k) not in FORMATS for k in ("cost", "a", "b")):
        raise ParseError(f"a problem read from files records the formats of cost, a and b, among {', '.join(FORMATS)}")
    if not isinstance(inputs, dict):
        raise ParseError('certificate field "inputs" must be an object')
    C, masses = qmatrix(inputs.get("C")), [inputs.get("a"), inputs.get("b")]
    for v in masses:
        qvector(v)
    # the bytes as recorded (each number quoted, comma included), not spelled again from the rationals
    return {"recorded": (C, sum(len(str(x)) + 3 for rows in (inputs["C"], masses) for row in rows for x in row))}


def run_paths(entries: int, ranges: list[fmpq], bits: list[int], prec: int, tol: str) -> str:
    """The paths ``auto`` is expected to take at these runs (the cost's range over each eps, Krawczyk's bits), named in
    one line: a plan of more than PLAIN_ENTRIES entries whose float kernel exists (range / eps <= EXP_MAX) takes the
    shifted kernel's paths (float-verified or convexity above their float floor, else high-precision at Delta <= 40
    on an integer cost, else precise-convexity); the arb paths otherwise. An expectation: a run that a path does not
    certify goes on to the next."""
    try:
        floor = rational_list(tol)[0] >= FLOAT_FLOOR
    except ParseError:  # the tolerance is read, and refused if bad, by the run itself
        floor = False
    names = []
    for r, b in zip(ranges, bits):
        if entries > PLAIN_ENTRIES and r <= KERNEL_RANGE:
            name = "float-verified or convexity" if floor else "high-precision or precise-convexity" if b == prec else "precise-convexity"
        else:
            name = "float-verified or convexity, else arb" if floor and r <= KERNEL_RANGE else "arb (Hilbert)" if b == prec else "arb (Krawczyk)"
        if name not in names:
            names.append(name)
    return "; ".join(names)


def _convergence_runs(n: int, cols: int, ranges: list[fmpq], bits: list[int], prec: int) -> Cost:
    """The runs' time and memory: balls per entry up to PLAIN_ENTRIES, past it the shifted kernel's paths where the
    float kernel exists (range / eps <= EXP_MAX): Delta <= 40 (krawczyk_bits = prec) float-verified or high-precision,
    beyond precise-convexity (its fixed-point kernel, about 4 us an entry); Krawczyk (balls) for the rest."""
    if n * cols <= PLAIN_ENTRIES:
        return sinkhorn_cost(n, cols, len(bits), max(bits))
    slow = [b for b, r in zip(bits, ranges) if r > KERNEL_RANGE]
    fast = [b for b, r in zip(bits, ranges) if r <= KERNEL_RANGE]
    seconds = n * cols * sum(SHIFTED_SECONDS_PER_ENTRY if b == prec else CONVEXITY_SECONDS_PER_ENTRY for b in fast)
    shifted = replace(sinkhorn_cost(n, cols, len(bits), prec), memory=SHIFTED_BYTES_PER_ENTRY * n * cols + (1 << 24), seconds=seconds)
    if not slow:
        return shifted
    krawczyk = sinkhorn_cost(n, cols, len(slow), max(slow))
    return replace(krawczyk, evaluations=len(bits), memory=max(krawczyk.memory, shifted.memory), seconds=krawczyk.seconds + shifted.seconds)


#: A sinkhorn_convergence run's fields besides its balls and witness (status, details, Delta, lambda), with its
#: mpmath line and POT's side note: about 1.5 KB measured.
RUN_BYTES = 2048
#: A random cost entry k/1000 or mass k/s, quoted, comma included.
RANDOM_VALUE = 12


#: Digits of a plan entry's ball per unit of (max C - min C) / eps: an entry P_ij = e^-r_ij (r_ij its reduced cost over
#: eps, above a few units off the optimal support) is p/2^k with k about 1.44 r_ij + prec, and its midpoint and radius
#: spell 2^k twice, 0.87 r_ij digits. The mean r_ij is about half the cost's range over eps (fitted on random costs
#: at 8 x 8 to 64 x 64 and eps down to 1/20000: 0.45); 0.6 is above it.
PLAN_DIGITS_PER_RANGE = fmpq(3, 5)


def witness_bytes(bits: int) -> int:
    """One witness entry: a dyadic rational of at most ``bits`` bits of mantissa and an exponent down to about -1100
    (a double's, or a midpoint's near e^-700), about 0.31 (2 bits + 1100) digits in all."""
    return 360 + bits


def convergence_document(n: int, m: int, runs: list[tuple[fmpq, int]], prec: int, inputs: int) -> int:
    """Bytes of a sinkhorn_convergence certificate: the problem (``inputs`` bytes), and per run (range, bits), range
    the cost's (max C - min C) / eps and bits its precision ladder's top, the plan's n m balls at ``prec`` bits and
    PLAN_DIGITS_PER_RANGE digits per unit of the range (up to RECORDED_PLAN_ENTRIES; a larger plan is factored), the
    n + m balls of the iterate's marginal errors, a witness of at most n + m entries of up to ``bits`` bits, and
    RUN_BYTES. An estimate, not a bound: the plan's digits follow its reduced costs, which the data decide."""
    small = n * m <= RECORDED_PLAN_ENTRIES
    total = DOCUMENT_BASE + inputs
    for r, bits in runs:
        plan = n * m * (ball_bytes(prec) + int(r * PLAN_DIGITS_PER_RANGE)) if small else 0
        total += RUN_BYTES + plan + (n + m) * (ball_bytes(prec) + witness_bytes(bits))
        if total >= CAP:
            return CAP
    return total


def universality_cost(pairs: int, held_out: int, max_n: int, widths: str, eps: str, prec: int, **_: Any) -> Cost:
    """One entropic target per pair (cost |x - y| in [0, 2]) and one network coupling per pair, system and width.

    A family above MAX_FAMILY pairs is refused here, before anything is built, with the cost it would have.
    """
    family = pairs + held_out
    runs = family * (1 + 3 * len(int_list(widths)))
    cost = sinkhorn_cost(max_n, max_n, runs, krawczyk_bits(fmpq(2), positive_rational(eps), prec))
    # A coupling here is more than a run: two encoders in EE, the exact cost, W1 by network simplex.
    cost = replace(cost, seconds=cost.seconds + runs * SECONDS_PER_COUPLING)
    if family > MAX_FAMILY:
        raise LimitExceeded(
            f"a family of {family:,} text pairs needs {runs:,} certified Sinkhorn runs (about {cost.seconds:,.0f} s), "
            f"over the limit of {MAX_FAMILY:,} pairs"
        )
    return cost


def plan_params(n: int, m: int, eps: str) -> tuple[Param, ...]:
    """The sizes of an n x m plan, the seed of its random data, and the temperature."""
    return (
        Param("n", positive_int, n, "rows of the plan"),
        Param("m", positive_int, m, "columns of the plan"),
        SEED,
        Param("eps", str, eps, "temperature eps > 0 (rational)"),
    )


def qvec(v: Sequence[fmpq]) -> list[str]:
    return [QQ.to_json(x) for x in v]


def qmat(M: Rows) -> list[list[str]]:
    return matrix_to_json(M, QQ)


def bvec(v: Sequence[arb], prec: int) -> list[dict[str, str]]:
    return [Ball(prec).to_json(x) for x in v]


def bmat(M: Sequence[Sequence[arb]], prec: int) -> list[list[dict[str, str]]]:
    return matrix_to_json([list(r) for r in M], Ball(prec))


def upper(x: arb) -> str:
    """An exact arb (an upper endpoint) as a rational string."""
    return QQ.to_json(x.fmpq())


def run_json(r: SinkhornResult, prec: int) -> dict[str, Any]:
    """What a Ball run computed and certified, in canonical JSON, with the witness a verifier re-checks."""
    return {
        "method": r.method,
        "iterations": r.iterations,
        "delta": QQ.to_json(r.delta),
        "lambda": Ball(prec).to_json(r.lam),
        "bound": None if r.bound is None else upper(r.bound),
        "tol": QQ.to_json(r.tol),
        "certified": r.certified,
        "status": r.status,
        "details": {k: v for k, v in r.details.items() if isinstance(v, (int, bool, str))},
        "witness": witness_json(r.witness),
    }


def run_figure(run: dict[str, Any]) -> str:
    """A recorded run's certified bound on max |log P^ - log P*| (rounded up), or why it has none."""
    if run["certified"] and run["bound"] is not None:
        return f"<= {figures.upper(run['bound'])}"
    return f"not certified ({run['status']})"


def witness_json(w: dict | None) -> dict | None:
    """A result's witness in canonical JSON."""
    if w is None:
        return None
    return {k: (QQ.to_json(v) if isinstance(v, fmpq) else [QQ.to_json(t) for t in v]) for k, v in w.items()}


def w1_json(c: W1Certificate) -> dict[str, Any]:
    """An exact W1 value with the optimal flow and dual potentials that prove it."""
    return {
        "value": QQ.to_json(c.value),
        "flow": [[s, t, QQ.to_json(f)] for s, t, f in c.flow],
        "phi": {str(k): QQ.to_json(v) for k, v in sorted(c.phi.items())},
        "psi": {str(k): QQ.to_json(v) for k, v in sorted(c.psi.items())},
    }


def exact_arb(v: Any) -> arb:
    """An mpf (exactly, as man * 2^exp) or a rational, as an arb."""
    if isinstance(v, mpmath.mpf):
        man, exp = v.man_exp
        return arb((int(man), int(exp)))
    return arb(v)


def contains(enclosure: Sequence[Sequence[arb]], values: Sequence[Sequence[Any]], prec: int) -> bool:
    """True iff every value (mpf or rational, rounded outward at ``prec`` bits) lies in its ball."""
    with ctx.workprec(prec):
        return all(e.contains(exact_arb(v)) for er, vr in zip(enclosure, values) for e, v in zip(er, vr))


def marginal_balls(P: Sequence[Sequence[arb]], prec: int) -> tuple[list[arb], list[arb]]:
    """Balls containing the row and column sums of every matrix in the enclosure P."""
    with ctx.workprec(prec):
        rows = [sum(r, arb(0)) for r in P]
        cols = [sum((r[j] for r in P), arb(0)) for j in range(len(P[0]))]
    return rows, cols


def marginals_contain(P: Sequence[Sequence[arb]], a: Sequence[fmpq], b: Sequence[fmpq], prec: int) -> bool:
    """Whether the enclosure's row and column sums contain a and b (as they must: P* has marginals a, b)."""
    rows, cols = marginal_balls(P, prec)
    return contains([rows, cols], [a, b], prec)


# -- independent references ------------------------------------------------------------------


def reference_dps(bits: int) -> int:
    """The digits of the mpmath reference compared with an enclosure computed at ``bits`` bits: 60, or 20 more than
    those bits hold. The reference stops at a residual of 10^-(dps-10), so at 60 digits it is itself good only to
    about 10^-50 and lies outside a correct enclosure of radius 10^-63 (a run escalated to 256 bits for tol 1e-60)."""
    return max(60, math.ceil(bits * math.log10(2)) + 20)


def mp_sinkhorn(C: Rows, a: Sequence[fmpq], b: Sequence[fmpq], eps: fmpq, dps: int, max_iter: int) -> tuple[list[list[mpmath.mpf]] | None, int]:
    """Plain Sinkhorn in mpmath at ``dps`` digits until the row residual is below 10^-(dps-10) times the total mass
    (the same test for masses of total 1 as an absolute one; masses of total 1e-250 passed that at the first
    iteration, far from the plan, and the reference then lay outside a correct enclosure).

    Returns (plan, iterations), or (None, iterations) when the budget ran out: a
    non-rigorous but independent reference (no underflow: mpf exponents are unbounded).
    """
    with mpmath.workdps(dps):
        q = lambda x: mpmath.mpf(int(x.p)) / int(x.q)  # noqa: E731
        K = [[mpmath.exp(-q(c) / q(eps)) for c in row] for row in C]
        KT = [list(col) for col in zip(*K)]
        A, B = [q(x) for x in a], [q(x) for x in b]
        n, m = len(A), len(B)
        u, v = [mpmath.mpf(1)] * n, [mpmath.mpf(1)] * m
        tol = mpmath.mpf(10) ** (10 - dps) * q(sum(a, fmpq(0)))
        for it in range(1, max_iter + 1):
            # fdot: mpmath's dot product, one rounding per sum (half the time of fsum over products)
            v = [B[j] / mpmath.fdot(KT[j], u) for j in range(m)]
            Kv = [mpmath.fdot(K[i], v) for i in range(n)]
            if max(abs(u[i] * Kv[i] - A[i]) for i in range(n)) < tol:
                return [[u[i] * K[i][j] * v[j] for j in range(m)] for i in range(n)], it
            u = [A[i] / Kv[i] for i in range(n)]
        return None, max_iter


def pot_version() -> str | None:
    """The installed POT's version (recorded beside every float comparison with it), or None: POT is a test extra."""
    try:
        ot = import_pot()
    except ImportError:
        return None
    return str(ot.__version__)


def float_note(x: float | np.floating | None) -> str | None:
    """A float of a side note in the certificate's one spelling of numbers: the exact rational value of the
    double ("p/q"), never a Python or numpy repr; None for no value or a non-finite one."""
    if x is None or not np.isfinite(x):
        return None
    return Float.to_json(float(x))


def pot_side_notes(version: str | None, method: str, key: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``side_notes`` of a claim that compares with POT: its float outcomes under ``key``, labelled
    agreement, with the POT version that produced them; or that POT was not installed."""
    if version is None:
        return {"pot": {"version": None, "note": "POT not installed: float comparison skipped"}}
    return {"pot": {"relation": "agreement", "version": version, "method": method, key: entries}}


def pot_sinkhorn(C: Rows, a: Sequence[fmpq], b: Sequence[fmpq], eps: fmpq, max_iter: int) -> dict[str, Any]:
    """POT's float64 ``ot.sinkhorn`` (method "sinkhorn", stopThr 1e-9) on the same problem, and how it ended; not
    run where a number of the problem has no double (POT takes doubles)."""
    ot = import_pot()

    if any(abs(x) > LARGEST for x in [eps, *a, *b, *(c for row in C for c in row)]):
        outcome = "not run: a number of the problem is beyond float64's range, and POT takes doubles"
        return {"plan": np.full((len(a), len(b)), np.nan), "outcome": outcome, "iterations": 0, "err": None, "warnings": [], "ok": False}
    Cf = np.array([[float(c) for c in row] for row in C])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            P, log = ot.sinkhorn(np.array([float(x) for x in a]), np.array([float(x) for x in b]), Cf, float(eps), numItermax=max_iter, stopThr=1e-9, log=True)
    messages = sorted({str(w.message).split(".")[0] for w in caught})
    err = log["err"][-1] if log.get("err") else None
    numerical = any("divide" in m or "invalid" in m or "overflow" in m or "numerical" in m.lower() for m in messages) or not np.isfinite(P).all()
    converged = err is not None and err < 1e-9 and not numerical
    if numerical:
        outcome = "numerical error (underflow: division by zero)"
    elif converged:
        outcome = "converged"
    else:
        outcome = f"stopped without converging after {log['niter']} iterations"
    return {"plan": P, "outcome": outcome, "iterations": int(log["niter"]), "err": err, "warnings": messages, "ok": converged}


def deviation(P: np.ndarray, enclosure: Sequence[Sequence[arb]]) -> float:
    """max_ij distance from a float plan to the balls of the true plan (a lower bound on the float plan's error)."""
    worst = 0.0
    for i, row in enumerate(enclosure):
        for j, e in enumerate(row):
            x = float(P[i, j]) if np.isfinite(P[i, j]) else float("inf")
            lo, hi = float(e.lower()), float(e.upper())
            worst = max(worst, lo - x, x - hi, 0.0)
    return worst


#: ``--plan-out FILE``: the certified plan, as float64, written where the claim is proven (never recorded in it).
PLAN_OUT = Param("plan_out", str, None, "write the certified plan (float64; .npy or .csv, by the suffix) to FILE")


def write_plan(path: str, G: np.ndarray) -> None:
    """The plan G to ``path``, atomically: a .npy array (numpy's format) or a .csv of 17-digit decimals (each the double
    it reads back as); another suffix is refused in one line before anything is written."""
    import io

    from attncert.exact.certificate import atomic_write_bytes

    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".npy":
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(G, dtype=np.float64), allow_pickle=False)
        data = buffer.getvalue()
    elif suffix == ".csv":
        data = "".join(",".join(f"{x:.17g}" for x in row) + "\n" for row in np.asarray(G, dtype=np.float64).tolist()).encode()
    else:
        raise ParseError(f"--plan-out {path!r:.60}: the plan is written as .npy or .csv (by the suffix)")
    atomic_write_bytes(path, data)
