"""Session setup shared by every test module."""

import compileall
import os
from pathlib import Path

from attncert.proofs.sinkhorn.common import POT_NUMPY_ONLY

# Tests that import POT themselves get it on numpy alone, as attncert's own comparisons do (import_pot).
for _key in POT_NUMPY_ONLY:
    os.environ.setdefault(_key, "1")

ROOT = Path(__file__).resolve().parents[1]


def pytest_sessionstart(session) -> None:
    """Byte-compile attncert once, so that the few hundred ``attncert`` subprocesses the suite starts
    read cached bytecode instead of each compiling ~150 modules (0.2 s apiece) when the environment sets
    PYTHONDONTWRITEBYTECODE, as CI machines may. Up-to-date files are skipped, so a rerun costs ~nothing."""
    for package in ("exact", "constructions", "proofs", "bench"):
        compileall.compile_dir(ROOT / package, quiet=1)
