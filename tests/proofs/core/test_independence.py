"""Independence, measured: the checkers that decide a claim's truth never load the constructions.

Each module is imported in a fresh interpreter, which then lists the modules it
loaded. Claims verified through ``Claim.check`` (the Sinkhorn, compiled,
approximation and identity claims) are decided there alone; the rebuild that
follows pins fields and imports the prover by design. The identity checker loads
neither the prover's symbolic field (``exact.symbolic``) nor ``proofs.identity``; the every-size
checker (a package, proofs/checkers/every_size/) loads neither the constructions nor ``proofs.every_size``. Claims verified through ``Claim.verify`` re-evaluate the recorded RASP
graph (and U) with the evaluator, by design "rebuild the construction and
compare"; their references come from :mod:`proofs.checkers.references`, measured here too.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import pytest

import attncert.proofs.checkers
from attncert.proofs.core.registry import load_claims

#: Every module of the checkers, those of their family packages too (proofs/checkers/identity/, sinkhorn/, ...).
ALL_CHECKER_MODULES = sorted(m.name for m in pkgutil.walk_packages(attncert.proofs.checkers.__path__, "attncert.proofs.checkers."))
#: Claims whose verification re-evaluates the construction by design (docs/certificate.md says so).
REBUILD_BY_DESIGN = {
    "transpose", "matmul", "softmax", "relu", "maxmin", "inverse3",
    "universal", "multihead", "encoder_layer", "encoder_layer_norm", "hierarchy", "match2", "parity",
    "rasp_program",  # runs the recorded program again with attncert's (bounded) RASP interpreter
}  # fmt: skip


def loaded_by(module: str) -> list[str]:
    code = f"import sys, json, {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("module", ALL_CHECKER_MODULES + ["attncert.proofs.core.params"])
def test_checkers_and_references_load_no_construction(module):
    mods = loaded_by(module)
    assert module in mods
    assert not [m for m in mods if m == "attncert.constructions" or m.startswith("attncert.constructions.")]


IDENTITY_CHECKER = [m for m in ALL_CHECKER_MODULES if m.startswith("attncert.proofs.checkers.identity.")]  # its modules, not the package


@pytest.mark.parametrize("module", IDENTITY_CHECKER)
def test_the_identity_checker_loads_neither_the_prover_nor_its_symbolic_field(module):
    # docs/identity.md: the checker has its own reader, evaluator, references and arithmetic (sympy's rings)
    mods = loaded_by(module)
    prover = ("attncert.constructions", "attncert.exact.symbolic", "attncert.exact.domains.symbolic", "attncert.proofs.identity")
    assert not [m for m in mods if any(m == p or m.startswith(p + ".") for p in prover)]
    assert "sympy.polys.rings" in mods


def test_the_identity_checker_has_its_modules():
    assert {"attncert.proofs.checkers.identity.check", "attncert.proofs.checkers.identity.field", "attncert.proofs.checkers.identity.graph"} <= set(IDENTITY_CHECKER)


EVERY_SIZE_CHECKER = [m for m in ALL_CHECKER_MODULES if m.startswith("attncert.proofs.checkers.every_size")]


def test_the_every_size_checker_loads_neither_the_constructions_nor_the_every_size_prover():
    # docs/every-size.md, "What verify does": its own size expressions, SMT-LIB writer, forms, evaluator, references
    code = f"import sys, json, {', '.join(EVERY_SIZE_CHECKER)}; print(json.dumps(sorted(sys.modules)))"
    mods = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert {"attncert.proofs.checkers.every_size.check", "attncert.proofs.checkers.every_size.sizes", "attncert.proofs.checkers.every_size.forms"} <= set(EVERY_SIZE_CHECKER)
    assert set(EVERY_SIZE_CHECKER) <= set(mods)
    prover = ("attncert.constructions", "attncert.proofs.every_size", "attncert.exact.symbolic", "attncert.proofs.identity")
    assert not [m for m in mods if any(m == p or m.startswith(p + ".") for p in prover)]
    assert "sympy.polys.fields" in mods


def test_every_claim_is_checked_independently_or_rebuilt_by_design():
    for name, claim in load_claims().items():
        if claim.check is not None:
            assert claim.check.__module__ in ALL_CHECKER_MODULES, name
            assert importlib.import_module(claim.check.__module__)
        else:
            assert name in REBUILD_BY_DESIGN and claim.verify is not None, name
    assert {n for n, c in load_claims().items() if c.check is None} == REBUILD_BY_DESIGN
