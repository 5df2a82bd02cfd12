"""Start-up: the command line's light verbs, and U(3, 3, 3) as a whole process against the paper's own demo.

The paper's demo is DDuttaGit/TMA's ``Demo/U.py`` (option 3, its default values): U(3, 3, 3) in
floats in the tech-srl RASP interpreter, beside numpy. It is not a dependency; to measure it, give
a folder holding ``U.py``, ``U_support.py``, ``U/`` and tech-srl/RASP's ``RASP_support/``, and a
Python with ``antlr4-python3-runtime==4.9.1``, ``termcolor`` and ``numpy`` (what RASP's setup.sh
installs):

    ATTNCERT_PAPER_DEMO=/path/to/Demo ATTNCERT_PAPER_PYTHON=/path/to/venv/bin/python python -m bench.run

Without them that row says it was not measured.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.timing import fmt_seconds

REPEAT = 5


def _attncert() -> list[str]:
    """The installed console script, as a user runs it (else python -m attncert)."""
    script = Path(sys.executable).with_name("attncert")
    return [str(script)] if script.exists() else [sys.executable, "-m", "attncert"]


def _best(cmd: list[str], stdin: bytes | None = None, cwd: str | None = None, repeat: int = REPEAT) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, input=stdin, capture_output=True, check=True, cwd=cwd)
        best = min(best, time.perf_counter() - t0)
    return best


def _paper_demo() -> float | None:
    folder, python = os.environ.get("ATTNCERT_PAPER_DEMO"), os.environ.get("ATTNCERT_PAPER_PYTHON")
    if not (folder and python and (Path(folder) / "U.py").exists()):
        return None
    return _best([python, "U.py"], stdin=b"3\n", cwd=folder, repeat=3)


def run() -> list[dict]:
    cli = _attncert()
    light = [[" ".join(["attncert", *args]), fmt_seconds(_best(cli + args)), "<= 0.25 s"] for args in (["--version"], ["list"], ["--help"])]
    with tempfile.TemporaryDirectory() as tmp:
        ours = _best(cli + ["prove", "universal", "--n", "3", "--d", "3", "--dv", "3", "--out", str(Path(tmp) / "u.json")], repeat=3)
    demo = _paper_demo()
    ratio = f"{ours / demo:.2f}×" if demo else "-"
    return [
        {
            "title": "Start-up of the light verbs (a fresh process each, best of 5)",
            "header": ["command", "wall time", "target (issue 23)"],
            "rows": light,
            "note": "They read the claim index only (proofs/core/registry.py INDEX): no FLINT, numpy, networkx or sympy is imported.",
        },
        {
            "title": "U(3, 3, 3) as a whole process: attncert prove universal (exact, certificate written) against the paper's float demo",
            "header": ["attncert prove universal --n 3 --d 3 --dv 3", "paper's Demo/U.py (option 3)", "ratio", "target (issue 23)"],
            "rows": [[fmt_seconds(ours), fmt_seconds(demo) if demo else "not measured (see the module's docstring)", ratio, "<= 0.5×"]],
            "note": "Best of 3 fresh processes each, in the same run. Ours proves U(3, 3, 3) exactly in EE on a random rational "
            "input and writes the certificate; the demo runs U in floats in the tech-srl interpreter and compares with numpy.",
        },
    ]
