"""An honest Sinkhorn certificate never depends on an optional package (POT).

POT's float outcomes are side notes (``side_notes``): recorded with POT's version,
covered by the hash, never compared and never part of OK or REJECTED. A certificate
proven with POT verifies where POT cannot be imported, and the other way round.
"POT absent" is genuine: a wrapper script puts a meta path finder in front of
every other, so ``import ot`` raises ModuleNotFoundError in that process (no
switch in attncert itself).
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import read_certificate, seal
from attncert.exact.rationals import rational_from_json
from attncert.proofs.core.certify import CLAIM_FIELDS
from attncert.proofs.cli import main
from attncert.proofs.core.verify import REJECTED, verify_bytes

ot = pytest.importorskip("ot")

WITHOUT_POT = '''"""attncert in a process where POT cannot be imported."""
import sys
from importlib.abc import MetaPathFinder


class NoPOT(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "ot" or name.startswith("ot."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None


sys.meta_path.insert(0, NoPOT())
from attncert.proofs.cli import main
from attncert.proofs.core.verify import REJECTED, verify_bytes

sys.exit(main(sys.argv[1:]))
'''

ARGS = {
    "sinkhorn_convergence": ["--n", "3", "--eps", "1/5,1/10000", "--ref_iter", "10", "--pot_iter", "100"],
    "sinkhorn_limit": ["--n", "3", "--m", "3", "--ts", "1/10,1/1000"],
}
ENTRIES = {"sinkhorn_convergence": "runs", "sinkhorn_limit": "steps"}


def without_pot(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "without_pot.py"
    script.write_text(WITHOUT_POT)
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)


def claim_fields(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: doc[k] for k in CLAIM_FIELDS}


@pytest.mark.parametrize("name", sorted(ARGS))
def test_proven_with_pot_verified_without(name, tmp_path, capsys):
    path = tmp_path / f"{name}.json"
    assert main(["prove", name, *ARGS[name], "--out", str(path)]) == 0
    notes = read_certificate(path)["side_notes"]["pot"]
    assert notes["version"] == ot.__version__ and notes["relation"] == "agreement" and notes[ENTRIES[name]]
    r = without_pot(tmp_path, "verify", str(path))
    assert r.returncode == 0 and r.stdout.startswith("OK"), r.stdout + r.stderr


@pytest.mark.parametrize("name", sorted(ARGS))
def test_proven_without_pot_verified_with(name, tmp_path, capsys):
    path = tmp_path / f"{name}.json"
    r = without_pot(tmp_path, "prove", name, *ARGS[name], "--out", str(path))
    assert r.returncode == 0, r.stderr
    doc = read_certificate(path)
    # the block is genuine: the prover found no POT
    assert doc["side_notes"] == {"pot": {"version": None, "note": "POT not installed: float comparison skipped"}}
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out
    # and the claim is the very same document as one proven with POT
    with_pot = tmp_path / f"{name}-with-pot.json"
    assert main(["prove", name, *ARGS[name], "--out", str(with_pot)]) == 0
    assert claim_fields(read_certificate(with_pot)) == claim_fields(doc)


def strings(obj: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from strings(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from strings(v, f"{path}[{i}]")
    elif isinstance(obj, str):
        yield path, obj


# What Python or numpy print for a value, standing in for the value: np.float64(...), array(...), None, nan, inf.
REPR = re.compile(r"\bnp\.\w|\bnumpy\.\w|float(16|32|64|128)\(|array\(|^(None|nan|inf|-inf|True|False)$")


@pytest.mark.parametrize("name", sorted(ARGS))
def test_no_python_or_numpy_repr(name, tmp_path):
    path = tmp_path / f"{name}.json"
    assert main(["prove", name, *ARGS[name], "--out", str(path)]) == 0
    doc = json.loads(path.read_text())
    assert [(p, s) for p, s in strings(doc) if REPR.search(s)] == []
    # every float of a side note is the exact rational value of the double it was, or null where none was finite
    fields = ("residual", "max_distance_to_enclosure") if name == "sinkhorn_convergence" else ("w1", "abs_difference")
    values = [e[f] for e in doc["side_notes"]["pot"][ENTRIES[name]] for f in fields]
    assert any(v is not None for v in values)
    for v in values:
        if v is not None:
            q = rational_from_json(v)
            exact = Fraction(int(q.p), int(q.q))
            assert Fraction(float(exact)) == exact  # a double, exactly


def test_a_certificate_from_before_side_notes_names_what_differs(tmp_path, capsys):
    # A sinkhorn_limit certificate as attncert wrote it before side notes: POT's text in reference.pot
    # (re-sealed). Verify names the member, not only "the field reference".
    path = tmp_path / "limit.json"
    assert main(["prove", "sinkhorn_limit", *ARGS["sinkhorn_limit"], "--out", str(path)]) == 0
    doc = read_certificate(path)
    old = copy.deepcopy(doc)
    old["reference"]["pot"] = "ot.emd2 in float64 (agreement only)"
    out = verify_bytes(canonical_json(seal(old)))
    assert out.status == REJECTED and out.reason == "the field \"reference\" differs from its recomputation: 'pot' is not in the recomputation"
    # a changed member deeper down is named by its path
    changed = copy.deepcopy(doc)
    changed["reference"]["identity"] += " "
    out = verify_bytes(canonical_json(seal(changed)))
    assert out.status == REJECTED and out.reason == 'the field "reference.identity" differs from its recomputation'
