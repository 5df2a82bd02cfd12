"""Exact optimal transport against POT's ot.emd (issue 34): attncert.emd, and POT's own plan certified.

Each case runs in a child process with one BLAS thread, where POT's ``ot.emd``, ``attncert.emd`` (POT's run
included: it starts from POT's basis), ``attncert.certify_plan`` of POT's plan given POT's log (its duals), and
without it, take turns (``bench.timing.best_of_each``); the peak memory of one call of each is the peak of
Python's and numpy's allocations during it (tracemalloc). Costs: uniform in [0, 1) ("random") and
``ot.dist`` of uniform points in the unit square ("ot.dist"), uniform marginals.
Run: ``python -m bench.run --only bench_transport``; one case: ``python -m bench.bench_transport 256 dist``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import numpy as np

CASES = ((256, "random"), (256, "dist"), (1024, "random"), (1024, "dist"))


def case(n: int, kind: str) -> dict[str, Any]:
    """Times, peak memory and the exact verdicts at n x n, in this process."""
    import ot

    import attncert
    from bench.bench_sinkhorn_scale import peak_memory
    from bench.timing import best_of_each

    rng = np.random.default_rng(0)
    M = rng.random((n, n)) if kind == "random" else ot.dist(rng.random((n, 2)), rng.random((n, 2)))
    a = np.ones(n) / n
    P, log = ot.emd(a, a, M, log=True)
    fns = [
        lambda: ot.emd(a, a, M),
        lambda: attncert.emd(a, a, M),
        lambda: attncert.certify_plan(a, a, M, P, log=log),
        lambda: attncert.certify_plan(a, a, M, P),
    ]
    rounds, block = (3, 2) if n >= 1024 else (5, 4)
    times = best_of_each(fns, rounds=rounds, block=block)
    memory = [peak_memory(f) for f in fns]
    G, cert = attncert.emd(a, a, M)
    v = attncert.certify_plan(a, a, M, P, log=log)
    return {
        "times": times,
        "memory": memory,
        "pivots": [cert.pivots.primal, cert.pivots.dual],
        "pot_optimal": v.optimal,
        "pot_gap": float(v.gap),
        "pot_cost_error": float(log["cost"]) - float(cert.cost),
    }


def run() -> list[dict[str, Any]]:
    from bench.timing import fmt_seconds

    rows = []
    for n, kind in CASES:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        out = subprocess.run([sys.executable, "-m", "bench.bench_transport", str(n), kind], capture_output=True, text=True, env=env, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        pot, ours, cert_log, cert = r["times"]
        mib = [f"{x / 2**20:.1f} MiB" for x in r["memory"]]
        rows.append(
            [
                f"{n}×{n} {kind}",
                f"{fmt_seconds(pot)}, {mib[0]}",
                f"{fmt_seconds(ours)} (**{ours / pot:.1f}×**), {mib[1]}, pivots {r['pivots'][0]} + {r['pivots'][1]}",
                f"{fmt_seconds(cert_log)} (**{cert_log / pot:.1f}×**), {mib[2]}",
                f"{fmt_seconds(cert)} (**{cert / pot:.1f}×**), {mib[3]}",
                f"optimal: {r['pot_optimal']}, gap {r['pot_gap']:.1e}; its float cost off by {r['pot_cost_error']:.1e}",
            ]
        )
    return [
        {
            "title": "exact EMD and POT's plan certified, against ot.emd (one BLAS thread, best of turns)",
            "header": ["problem", "POT ot.emd: time, peak memory", "attncert.emd (POT's run included)", "certify_plan(POT's plan, log)", "certify_plan(POT's plan)", "POT's plan, exactly"],
            "rows": rows,
            "note": "attncert.emd returns the exact optimal plan, cost and potentials; its time includes POT's own ot.emd, "
            "which gives the starting basis. certify_plan judges a given plan exactly (its cost, gap and optimality) and "
            "certifies the optimum; with POT's log its duals complete the basis, without it Bellman-Ford duals of the "
            "plan's support do. Peak memory: Python's and numpy's allocations during one call (tracemalloc).",
        }
    ]


if __name__ == "__main__":
    print(json.dumps(case(int(sys.argv[1]), sys.argv[2])))
