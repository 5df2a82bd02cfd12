"""Claim sinkhorn_convergence: certified enclosures of the Sinkhorn plan of a cost at several eps, down to
eps where float64 Sinkhorn (POT) underflows or stops early. The cost and marginals are random from a
seed, or a user's own from three files (``--cost FILE --a FILE --b FILE``: JSON, CSV or .npy, read
exactly by :mod:`exact.numberfiles`), which the certificate records so that verify re-checks from them."""

from __future__ import annotations

import functools
import os
from typing import Any

from flint import fmpq

from attncert.constructions.sinkhorn import read_problem, sinkhorn
from attncert.constructions.sinkhorn.pot import certified_plan
from attncert.constructions.sinkhorn.problem import float_rule, random_cost, random_marginal
from attncert.exact import Ball, ParseError, QQ
from attncert.exact.matrices import Rows
from attncert.exact.numberfiles import FORMATS, read_matrix, read_vector
from attncert.proofs.core import progress
from attncert.proofs.core.certify import certificate
from attncert.proofs.core.registry import Claim, Param, register
from attncert.proofs.sinkhorn.common import (
    REFERENCE_ENTRIES,
    REFERENCE_WORK,
    convergence_cost,
    pot_eps,
    recorded_problem,
    reference_budget,
    PREC,
    TOL,
    bmat,
    bvec,
    contains,
    deviation,
    marginals_contain,
    float_note,
    mp_sinkhorn,
    pot_side_notes,
    pot_sinkhorn,
    pot_version,
    PLAN_OUT,
    qmat,
    qvec,
    reference_dps,
    run_figure,
    run_json,
    write_plan,
)
from attncert.proofs.checkers.reading import qmatrix, qvector
from attncert.proofs.checkers.sinkhorn.claims import MAX_SIZE, RECORDED_PLAN_ENTRIES, check_convergence
from attncert.proofs.core.params import MAX_ITERATIONS, iteration_budget, positive_int, positive_rational, rational_list
from attncert.proofs.core.rebuild import recorded_params

NAME = "sinkhorn_convergence"
STATEMENT = (
    "the Sinkhorn plan of the recorded cost and marginals (random from the seed, or read exactly from the user's files) is enclosed to a certified bound at every eps; "
    "where POT is installed, its float64 Sinkhorn on the same problem is recorded in side_notes as float agreement, "
    "information that is not part of the claim"
)


#: The options that give the problem from files (docs/sinkhorn.md, "Your own cost"): all three, or none.
FILES = ("cost", "a", "b")
#: The options that choose the random problem, which do not apply with files. Their defaults are None, so that
#: --estimate of a problem from files names no size of a random one; the random problem is RANDOM_N x RANDOM_N, seed 0.
RANDOM = ("n", "m", "seed")
RANDOM_N = 8
#: The temperatures a run takes when given none: from mild to where only the Krawczyk path certifies.
EPS_SCHEDULE = "1/5,1/20,1/100,1/1000,1/10000"


def prove(
    n: int | None = None,
    seed: int | None = None,
    eps: str = EPS_SCHEDULE,
    tol: str = "1e-30",
    prec: int = 128,
    ref_iter: int = 2000,
    pot_iter: int = 10000,
    m: int | None = None,
    cost: str | None = None,
    a: str | None = None,
    b: str | None = None,
    reg: str | None = None,
    plan_out: str | None = None,
) -> dict:
    """The certificate on a random n x m cost from the seed, or on the cost and marginals of three files. ``reg`` is
    POT's name for ``eps``; ``plan_out`` a file for the certified plan of the one eps (neither is recorded)."""
    eps = pot_eps(eps, reg, EPS_SCHEDULE)
    if plan_out is not None:
        if len(rational_list(eps)) != 1:
            raise ParseError("--plan-out writes one plan: give one eps (--eps or --reg)")
        if os.path.splitext(plan_out)[1].lower() not in (".npy", ".csv"):
            raise ParseError(f"--plan-out {plan_out!r:.60}: the plan is written as .npy or .csv (by the suffix)")
    runs = {"eps": eps, "tol": tol, "prec": prec, "ref_iter": ref_iter, "pot_iter": pot_iter, "plan_out": plan_out}
    if cost is None and a is None and b is None:
        n, seed = RANDOM_N if n is None else n, 0 if seed is None else seed
        cols = n if m is None else m
        if max(n, cols) > MAX_SIZE:  # the checker reads at most MAX_SIZE rows and columns
            raise ParseError(f"the random cost would be {n}x{cols}; at most {MAX_SIZE:,} rows and columns")
        C, av, bv = random_cost(n, cols, seed), random_marginal(n, seed + 1), random_marginal(cols, seed + 2)
        return _prove(C, av, bv, {"n": n, "seed": seed, **({} if m is None else {"m": m})}, runs, None)
    if None in (cost, a, b):
        raise ParseError("--cost, --a and --b go together: the cost matrix and both marginals, each from a file")
    given = [f"--{k}" for k, v in (("n", n), ("m", m), ("seed", seed)) if v != CLAIM.defaults()[k]]
    if given:
        raise ParseError(f"{' and '.join(given)}: only for the random cost (with --cost, the sizes and the data are the files')")
    C, tag_c = read_matrix(cost)
    (av, tag_a), (b_read, tag_b) = read_vector(a), read_vector(b)
    bv = float_rule(av, b_read, "npy-float" in (tag_a, tag_b))  # the one rule for float marginals, as in attncert.sinkhorn
    read_problem(C, av, bv, rational_list(eps)[0])  # the hypotheses, one line each: positive, balanced, shapes
    if max(len(C), len(C[0])) > MAX_SIZE:
        raise ParseError(f"the cost is {len(C)}x{len(C[0])}; at most {MAX_SIZE:,} rows and columns")
    return _prove(C, av, bv, {"n": len(C), "m": len(C[0])}, runs, {"C": tag_c, "a": tag_a, "b": tag_b}, b_read)


def _prove(
    C: Rows, a: list[fmpq], b: list[fmpq], origin: dict[str, Any], run_params: dict[str, Any], read: dict[str, str] | None, b_read: list[fmpq] | None = None
) -> dict:
    """The certificate on this problem; ``origin`` its recorded sizes and seed, ``read`` the formats of its files,
    ``b_read`` the b of the file where the one rule for float marginals scaled it to ``b``."""
    eps_list = rational_list(run_params["eps"])
    plan_out = run_params.get("plan_out")
    for e in eps_list:
        positive_rational(e)
    tol, prec, ref_iter, pot_iter = run_params["tol"], run_params["prec"], run_params["ref_iter"], run_params["pot_iter"]
    reference_budget(ref_iter, len(a), len(b))
    version = pot_version()
    runs, refs, pot_runs, holds, iters = [], [], [], True, 0
    small = len(a) * len(b) <= RECORDED_PLAN_ENTRIES  # the plan's balls are recorded (and read) only then
    with progress.bar(len(eps_list), "eps", desc=NAME) as bar:
        for e in eps_list:
            r = sinkhorn(C, a, b, e, Ball(prec), tol=tol)
            if plan_out is not None and r.plan is not None:
                write_plan(plan_out, certified_plan(r)[0])
            P = r.plan if r.plan is not None else r.iterate
            marg_ok = r.plan is not None and (not small or marginals_contain(P, a, b, r.details["prec"]))
            dps = reference_dps(r.details.get("prec", prec))
            ref, its = mp_sinkhorn(C, a, b, e, dps, ref_iter) if len(a) * len(b) <= REFERENCE_ENTRIES else (None, 0)
            ref_ok = ref is None or (r.plan is not None and contains(r.plan, ref, r.details["prec"]))
            holds = holds and r.certified and marg_ok and ref_ok
            iters = max(iters, r.iterations)
            # an uncertified run's balls prove nothing (the check reads no plan of it) and may be astronomically wide
            recorded = r.plan is not None and small and r.certified
            run = {"eps": QQ.to_json(e), **run_json(r, prec), "plan": bmat(r.plan, prec) if recorded else None}
            run["plan_marginals_contain_a_b"] = marg_ok if small else None
            run["iterate_row_error"] = bvec(r.row_error, prec)
            run["iterate_col_error"] = bvec(r.col_error, prec)
            runs.append(run)
            if len(a) * len(b) > REFERENCE_ENTRIES:
                mp_text = f"not run: the plan has {len(a) * len(b):,} entries, over {REFERENCE_ENTRIES:,} (no comparison)"
            elif ref is not None:
                mp_text = f"converged in {its} iterations; inside the enclosure: {ref_ok}"
            else:
                mp_text = f"did not converge in {its} iterations (no comparison)"
            entry = {"eps": QQ.to_json(e), "mpmath": f"plain Sinkhorn at {dps} digits: " + mp_text}
            if version is not None:
                pot = pot_sinkhorn(C, a, b, e, pot_iter)
                pot_runs.append(
                    {
                        "eps": QQ.to_json(e),
                        "outcome": pot["outcome"],
                        "iterations": pot["iterations"],
                        "residual": float_note(pot["err"]),
                        "warnings": pot["warnings"],
                        "max_distance_to_enclosure": float_note(deviation(pot["plan"], P)) if r.plan is not None and small else None,
                        "pot_fails_we_certify": (not pot["ok"]) and r.certified,
                    }
                )
            refs.append(entry)
            bar.update()
    files = {} if read is None else {"cost": read["C"], "a": read["a"], "b": read["b"]}
    inputs = {"C": qmat(C), "a": qvec(a), "b": qvec(b)}
    if b_read is not None and b_read != b:  # float masses whose totals differ by rounding: b as read, and as scaled
        inputs["b"], inputs["b_scaled"] = qvec(b_read), qvec(b)
    if read is not None:
        inputs["read_from"] = {k: FORMATS[tag] for k, tag in read.items()}
    return certificate(
        NAME,
        {**origin, **files, "eps": run_params["eps"], "tol": tol, "prec": prec, "ref_iter": ref_iter, "pot_iter": pot_iter},
        inputs,
        {
            "operator": "S_eps(C; a, b) = diag(u) exp(-C/eps) diag(v); Ball: Hilbert a-posteriori bound (Delta <= 40; in arb, "
            "float-verified or high-precision for the shifted kernel), strong convexity of the dual (convexity, precise-convexity) "
            "or Krawczyk on the dual",
            "size": {"iterations": iters, "n": len(a), "m": len(b)},
        },
        {"runs": runs},
        {"references": refs},
        {
            "relation": "enclosure",
            "holds": holds,
            "meaning": "every plan is an arb enclosure of the exact Sinkhorn plan; the bound is on max |log P^ - log P*| for the computed P^ "
            f"(a plan of more than {RECORDED_PLAN_ENTRIES:,} entries is recorded in factored form: the witness u^, and P* within "
            "[e^-bound, e^bound] of diag(u^) K' diag(b / K'^T u^), K' the shifted kernel)",
        },
        pot_side_notes(
            version,
            f"ot.sinkhorn float64, stopThr 1e-9, numItermax {pot_iter}: its outcome, residual (its last marginal error) and "
            "distance to our enclosure (floats as the exact rational value of the double; null when not finite)",
            "runs",
            pot_runs,
        ),
    )


def rebuild(doc: dict[str, Any]) -> dict:
    """Prove again from the recorded parameters; a problem read from files is taken from the certificate's inputs."""
    kw = recorded_params(CLAIM, doc, optional=RANDOM + FILES + ("reg", "plan_out"))
    kw.pop("reg"), kw.pop("plan_out")
    tags = {k: kw.pop(k) for k in FILES}
    if all(t is None for t in tags.values()):
        return prove(**kw)
    if any(t not in FORMATS for t in tags.values()):
        raise ParseError(f"the files' formats must be among {', '.join(FORMATS)}")
    inputs = doc.get("inputs") if isinstance(doc.get("inputs"), dict) else {}
    C, a, b = qmatrix(inputs.get("C")), qvector(inputs.get("a")), qvector(inputs.get("b"))
    runs = {k: kw[k] for k in ("eps", "tol", "prec", "ref_iter", "pot_iter")}
    scaled = float_rule(a, b, "npy-float" in (tags["a"], tags["b"]))
    return _prove(C, a, scaled, {"n": len(C), "m": len(C[0])}, runs, {"C": tags["cost"], "a": tags["a"], "b": tags["b"]}, b)


def summary(doc: dict[str, Any]) -> str:
    """The certified bound at each eps, and what fails where the claim does not hold."""
    runs, refs = doc["outputs"]["runs"], doc["reference"]["references"]
    line = "max |log P^ - log P*| " + ", ".join(f"at eps {r['eps']} {run_figure(r)}" for r in runs)
    if doc["result"]["holds"]:
        return line
    why = [f"at eps {r['eps']} the plan's marginals do not contain a, b" for r in runs if r["certified"] and not r["plan_marginals_contain_a_b"]]
    why += [f"at eps {ref['eps']} the mpmath reference lies outside the enclosure" for ref in refs if ref["mpmath"].endswith("inside the enclosure: False")]
    return "does not hold: " + "; ".join([line, *why])


CLAIM = register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("n", positive_int, None, f"rows of the random cost ({RANDOM_N} when not given)"),
            Param("seed", int, None, "seed of the random rational data (0 when not given)"),
            Param("eps", str, EPS_SCHEDULE, "temperatures, comma-separated"),
            TOL,
            PREC,
            Param("ref_iter", iteration_budget, 2000, f"iteration budget of the mpmath reference (at most {MAX_ITERATIONS:,}, and {REFERENCE_WORK:,} / (n m) entry updates)"),
            Param("pot_iter", iteration_budget, 10000, f"numItermax of POT's float Sinkhorn (if POT is installed; at most {MAX_ITERATIONS:,})"),
            Param("m", positive_int, None, "columns of the random cost (n when not given)"),
            Param("cost", str, None, "the cost matrix from FILE (.json, .csv or .npy, read exactly), with --a and --b instead of random data"),
            Param("a", str, None, "the row marginal from FILE (positive masses), with --cost"),
            Param("b", str, None, "the column marginal from FILE (positive masses, sum b = sum a exactly, or float masses within 1e-12: b is scaled), with --cost"),
            Param("reg", str, None, "POT's name for --eps (temperatures, comma-separated)"),
            PLAN_OUT,
        ),
        check=check_convergence,
        cost=functools.partial(convergence_cost, default_eps=EPS_SCHEDULE),
        recorded=recorded_problem,
        summary=summary,
        rebuild=rebuild,
    )
)
