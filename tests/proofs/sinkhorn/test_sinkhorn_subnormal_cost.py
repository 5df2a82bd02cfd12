"""A cost of subnormal doubles (5e-324 and 1e-320, from a .npy file) at eps 1e-300: proven, and verified.

Verify's cost model once took a recorded cost's range to be a random cost's, 1 (the certificate names the file's
format, not a path), and so estimated 2 / 1e-300 / (2 ln 2) bits, over any limit: the genuine certificate was BAD.
It now reads the recorded cost, whose range over eps is 2e-20 (Delta <= 40: the working precision itself). The
bounds stay bounds: a recorded cost whose range over eps needs more precision than the limit is refused before
anything is re-checked, and so is a run recording a precision over the limit in force.
"""

from __future__ import annotations

import copy
import subprocess
import sys

import numpy as np
import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.exact.limits import Limits
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import BAD, OK, REJECTED, verify_bytes
from tests.proofs.sinkhorn.test_fresh_attack_convexity import verdict

CLAIM = load_claim("sinkhorn_convergence")
SUBNORMAL = [[5e-324, 1e-320], [1e-320, 5e-324]]
EPS = "1e-300"


def save(directory, cost) -> dict[str, str]:
    """The three .npy files of a problem with this cost and uniform masses, as the options name them."""
    np.save(directory / "C.npy", np.array(cost))
    np.save(directory / "a.npy", np.full(len(cost), 1 / len(cost)))
    np.save(directory / "b.npy", np.full(len(cost[0]), 1 / len(cost[0])))
    return {"cost": str(directory / "C.npy"), "a": str(directory / "a.npy"), "b": str(directory / "b.npy")}


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> dict:
    files = save(tmp_path_factory.mktemp("subnormal"), SUBNORMAL)
    doc = CLAIM.prove(**{**CLAIM.defaults(), **files, "eps": EPS, "ref_iter": 50, "pot_iter": 50})
    assert doc["result"]["holds"] and doc["params"]["cost"] == "npy-float", doc["outputs"]["runs"][0]["status"]
    return doc


def exact_text(x: float) -> str:
    """A double as a certificate's exact rational text."""
    p, q = x.as_integer_ratio()
    return str(p) if q == 1 else f"{p}/{q}"


def sealed(doc: dict) -> bytes:
    return canonical_json(seal({k: v for k, v in copy.deepcopy(doc).items() if k != "sha256"}))


def edited(doc: dict, edit) -> dict:
    changed = copy.deepcopy(doc)
    edit(changed)
    return changed


def test_the_genuine_certificate_verifies(genuine):
    assert verdict(genuine) == (OK, "")


def test_the_estimate_of_the_certificate_takes_the_recorded_cost_s_range(genuine):
    # max C - min C = 1e-320 - 5e-324 (as doubles), over eps 1e-300: Delta <= 2e-20 <= 40, so the estimate is the
    # working precision; with the range of a random cost (1) it was 2e300 / (2 ln 2) bits.
    params = {k: v for k, v in genuine["params"].items() if k in {p.name for p in CLAIM.params}}
    assert CLAIM.estimate(params, genuine).precision == genuine["params"]["prec"] == 128
    assert CLAIM.estimate(params).precision >= 10**18  # without the certificate: a random cost's range, as before (capped)


def test_prove_and_verify_on_the_command_line(tmp_path):
    save(tmp_path, SUBNORMAL)
    prove = [sys.executable, "-m", "attncert", "prove", "sinkhorn_convergence", "--cost", "C.npy", "--a", "a.npy", "--b", "b.npy"]
    done = subprocess.run([*prove, "--eps", EPS, "--ref-iter", "50", "--pot-iter", "50", "--out", "s.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    done = subprocess.run([sys.executable, "-m", "attncert", "verify", "s.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("OK"), done.stdout + done.stderr[-800:]


def set_precision(bits: int):
    return lambda d: d["outputs"]["runs"][0]["details"].__setitem__("prec", bits)


def test_a_recorded_precision_far_above_the_limit_is_refused(genuine):
    status, why = verdict(edited(genuine, set_precision(10**7)))
    assert status == BAD and "records a working precision of 10,000,000 bits, over the limit of 65,536" in why


def test_a_recorded_precision_over_a_lowered_limit_is_refused_before_it_is_worked_at(genuine):
    # 60,000 bits is under the default limit; under --max-precision 1024 the estimate (128 bits) passes, and the
    # run's own precision is what the check refuses, instead of re-checking the theorem at 60,064 bits.
    out = verify_bytes(sealed(edited(genuine, set_precision(60_000))), lim=Limits(max_precision=1024))
    assert out.status == BAD and "records a working precision of 60,000 bits, over the limit of 1,024" in out.reason
    assert verify_bytes(sealed(genuine), lim=Limits(max_precision=1024)).status == OK


def test_a_recorded_precision_the_prover_did_not_use_is_rejected_by_the_rebuild(genuine):
    status, why = verdict(edited(genuine, set_precision(512)))
    assert status == REJECTED and 'the field "outputs.runs[0].details.prec" differs from its recomputation' in why


def test_a_cost_whose_range_needs_more_precision_than_the_limit_is_refused(genuine):
    # Still doubles (as an npy-float input must be): range 1e-290 over eps 1e-300 is Delta = 2e10, which Krawczyk's
    # ladder would climb to about 2e10 / (2 ln 2) bits, far over 65,536: refused before any theorem is re-checked.
    def wider(d):
        d["inputs"]["C"][0][1] = d["inputs"]["C"][1][0] = exact_text(1e-290)

    status, why = verdict(edited(genuine, wider))
    assert status == BAD and "bits of arb precision, over the limit of 65,536" in why
    bits = int(why.split("needs about ")[1].split(" bits")[0].replace(",", ""))
    assert 1.4e10 < bits < 1.5e10  # 2 (1e-290 - 5e-324) / 1e-300 / (2 ln 2) = 1.4427e10, plus 128


def test_a_certificate_naming_a_path_instead_of_a_format_is_refused_unread(genuine, tmp_path):
    # The cost model reads a file the parameters name when proving; a certificate's parameters name formats only,
    # and a path there is refused before anything could open it (this file's range would need 10^300 bits).
    path = save(tmp_path, [[0.0, 1.0], [1.0, 0.0]])["cost"]
    status, why = verdict(edited(genuine, lambda d: d["params"].__setitem__("cost", path)))
    assert status == BAD and "records the formats of cost, a and b" in why
