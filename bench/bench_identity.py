"""For-all-inputs (identity) proofs: time and memory of a whole process, against the one-input proof and the checker."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from bench.timing import fmt_seconds

#: (claim, sizes, target) of issue 22's table; each runs in a fresh process.
CASES = [
    ("universal", {"n": 8, "d": 4, "dv": 4}, "checker within 5x of the prover"),
    ("universal", {"n": 16, "d": 8, "dv": 8}, "<= 10 s, <= 1 GiB"),
    ("universal", {"n": 32, "d": 8, "dv": 8}, "<= 60 s, <= 4 GiB"),
    ("multihead", {"n": 8, "d": 4, "dv": 4, "h": 4, "do": 8}, "<= 60 s"),
    ("encoder_layer", {"n": 4, "d": 3, "dv": 2, "h": 2, "f": 4}, "<= 10 s"),
    ("relu", {"n": 1024}, "<= 60 s"),
    ("maxmin", {"n": 1024}, "<= 60 s"),
    ("transpose", {"r": 128, "c": 128}, "<= 5 s"),
    ("hierarchy", {"N": 8, "D": 4, "Dv": 4}, "<= 60 s"),
]

#: Run in the child: prove the identity, check it, prove the one-input claim; print the figures as JSON.
_CHILD = r"""
import json, sys, time
from bench.timing import peak_rss
t0 = time.perf_counter()
from attncert.proofs.core.registry import load_claims
claims = load_claims()
base, sizes = sys.argv[1], json.loads(sys.argv[2])
identity = claims[base + "_identity"]
t1 = time.perf_counter()
doc = identity.prove(**sizes)
t2 = time.perf_counter()
problems = identity.check(doc) if identity.check else ["no checker"]
t3 = time.perf_counter()
instance = claims[base]
t4 = time.perf_counter()
instance.prove(**sizes)
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "prove": t2 - t1, "check": t3 - t2, "instance": t5 - t4,
                  "rss": peak_rss(), "holds": doc["result"]["holds"],
                  "checked": not problems}))
"""


def _case(base: str, sizes: dict) -> dict:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD, base, json.dumps(sizes)], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["wall"] = time.perf_counter() - t0
    return out


def identities() -> dict:
    rows = []
    for base, sizes, target in CASES:
        r = _case(base, sizes)
        rows.append(
            [
                f"{base}({', '.join(str(v) for v in sizes.values())})",
                fmt_seconds(r["prove"]),
                f"{r['rss'] / 2**20:.0f} MiB",
                fmt_seconds(r["wall"]),
                fmt_seconds(r["check"]),
                f"{r['check'] / r['prove']:.1f}×",
                fmt_seconds(r["instance"]),
                "holds, checked" if r["holds"] and r["checked"] else f"holds={r['holds']} checked={r['checked']}",
                target,
            ]
        )
    return {
        "title": "Identity certificates (for all inputs) against the one-input certificate of the same construction",
        "header": ["construction", "identity proof", "peak memory (process)", "whole process", "checker", "checker / prover",
                   "one-input proof", "verdict", "target (issue 22)"],
        "rows": rows,
        "note": "Each row is a fresh process: importing attncert, proving the identity, running the independent checker "
        "(proofs/checkers/identity/, its own sparse polynomials) and proving the one-input claim at the same sizes. "
        "The whole-process time includes all four; the peak memory is the process's own (VmHWM, bench.timing.peak_rss).",
    }


def run() -> list[dict]:
    return [identities()]
