"""Claim sinkhorn_convergence: certified enclosures of the Sinkhorn plan of a random cost at several
eps, down to eps where float64 Sinkhorn (POT) underflows or stops early."""

from __future__ import annotations

from attncert.constructions.sinkhorn import sinkhorn
from attncert.constructions.sinkhorn.problem import random_cost, random_marginal
from attncert.exact import Ball, QQ
from attncert.proofs import progress
from attncert.proofs.certify import certificate
from attncert.proofs.registry import Claim, Param, register
from attncert.proofs.sinkhorn.common import (
    convergence_cost,
    PREC,
    SEED,
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
    qmat,
    qvec,
    run_json,
)
from attncert.proofs.checkers.sinkhorn_claims import check_convergence
from attncert.proofs.params import MAX_ITERATIONS, iteration_budget, positive_int, positive_rational, rational_list

NAME = "sinkhorn_convergence"
STATEMENT = (
    "the Sinkhorn plan of a random cost is enclosed to a certified bound at every eps; "
    "where POT is installed, its float64 Sinkhorn on the same problem is recorded in side_notes as float agreement, "
    "information that is not part of the claim"
)
REFERENCE_DPS = 60


def prove(
    n: int = 8,
    seed: int = 0,
    eps: str = "1/5,1/20,1/100,1/1000,1/10000",
    tol: str = "1e-30",
    prec: int = 128,
    ref_iter: int = 2000,
    pot_iter: int = 10000,
) -> dict:
    eps_list = rational_list(eps)
    for e in eps_list:
        positive_rational(e)
    C = random_cost(n, n, seed)
    a, b = random_marginal(n, seed + 1), random_marginal(n, seed + 2)
    version = pot_version()
    runs, refs, pot_runs, holds, iters = [], [], [], True, 0
    with progress.bar(len(eps_list), "eps", desc=NAME) as bar:
        for e in eps_list:
            r = sinkhorn(C, a, b, e, Ball(prec), tol=tol)
            P = r.plan if r.plan is not None else r.iterate
            marg_ok = r.plan is not None and marginals_contain(P, a, b, r.details["prec"])
            ref, its = mp_sinkhorn(C, a, b, e, REFERENCE_DPS, ref_iter)
            ref_ok = ref is None or (r.plan is not None and contains(r.plan, ref, r.details["prec"]))
            holds = holds and r.certified and marg_ok and ref_ok
            iters = max(iters, r.iterations)
            run = {"eps": QQ.to_json(e), **run_json(r, prec), "plan": None if r.plan is None else bmat(r.plan, prec)}
            run["plan_marginals_contain_a_b"] = marg_ok
            run["iterate_row_error"] = bvec(r.row_error, prec)
            run["iterate_col_error"] = bvec(r.col_error, prec)
            runs.append(run)
            entry = {
                "eps": QQ.to_json(e),
                "mpmath": f"plain Sinkhorn at {REFERENCE_DPS} digits: "
                + (f"converged in {its} iterations; inside the enclosure: {ref_ok}" if ref is not None else f"did not converge in {its} iterations (no comparison)"),
            }
            if version is not None:
                pot = pot_sinkhorn(C, a, b, e, pot_iter)
                pot_runs.append(
                    {
                        "eps": QQ.to_json(e),
                        "outcome": pot["outcome"],
                        "iterations": pot["iterations"],
                        "residual": float_note(pot["err"]),
                        "warnings": pot["warnings"],
                        "max_distance_to_enclosure": float_note(deviation(pot["plan"], P)) if r.plan is not None else None,
                        "pot_fails_we_certify": (not pot["ok"]) and r.certified,
                    }
                )
            refs.append(entry)
            bar.update()
    return certificate(
        NAME,
        {"n": n, "seed": seed, "eps": eps, "tol": tol, "prec": prec, "ref_iter": ref_iter, "pot_iter": pot_iter},
        {"C": qmat(C), "a": qvec(a), "b": qvec(b)},
        {
            "operator": "S_eps(C; a, b) = diag(u) exp(-C/eps) diag(v); Ball: Hilbert a-posteriori bound (Delta <= 40) or Krawczyk on the dual",
            "size": {"iterations": iters, "n": n, "m": n},
        },
        {"runs": runs},
        {"references": refs},
        {
            "relation": "enclosure",
            "holds": holds,
            "meaning": "every plan is an arb enclosure of the exact Sinkhorn plan; the bound is on max |log P^ - log P*| for the computed P^",
        },
        pot_side_notes(
            version,
            f"ot.sinkhorn float64, stopThr 1e-9, numItermax {pot_iter}: its outcome, residual (its last marginal error) and "
            "distance to our enclosure (floats as the exact rational value of the double; null when not finite)",
            "runs",
            pot_runs,
        ),
    )


register(
    Claim(
        NAME,
        STATEMENT,
        prove,
        (
            Param("n", positive_int, 8, "size of the n x n cost"),
            SEED,
            Param("eps", str, "1/5,1/20,1/100,1/1000,1/10000", "temperatures, comma-separated"),
            TOL,
            PREC,
            Param("ref_iter", iteration_budget, 2000, f"iteration budget of the mpmath reference (at most {MAX_ITERATIONS:,})"),
            Param("pot_iter", iteration_budget, 10000, f"numItermax of POT's float Sinkhorn (if POT is installed; at most {MAX_ITERATIONS:,})"),
        ),
        check=check_convergence,
        cost=convergence_cost,
    )
)
