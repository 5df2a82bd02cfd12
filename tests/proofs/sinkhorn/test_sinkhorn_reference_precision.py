"""The mpmath reference is as precise as the enclosure it is compared with.

At tol 1e-60 a run escalates its balls to about 256 bits and encloses the plan to radius 1e-63 to 1e-73; a
reference at a fixed 60 digits stops at a residual of 10^-50, lies outside that correct enclosure, and the prover
wrote holds = false on a claim the checker finds true (verify: REJECTED, a genuine document called forged). The
expected verdicts come from the claim's definition: the enclosure is certified, so the claim holds."""

from __future__ import annotations

import pytest

from attncert.proofs.core.registry import load_claims
from attncert.proofs.core.verify import OK, verify_document
from attncert.proofs.sinkhorn.common import reference_dps


@pytest.mark.parametrize(
    "name, params",
    [("sinkhorn_convergence", {"n": 4, "eps": "1/5", "tol": "1e-60", "prec": 64}), ("sinkhorn_transformer", {"tol": "1e-60"})],
)
def test_a_run_certified_far_below_sixty_digits_holds_and_verifies(name, params):
    doc = load_claims()[name].prove(**params)
    assert doc["result"]["holds"] is True, doc["result"]
    assert verify_document(doc)[0] == OK


def test_the_reference_has_twenty_digits_more_than_the_balls():
    assert reference_dps(128) == 60  # the default runs keep their 60-digit reference (and their certificates)
    assert reference_dps(256) == 98  # 256 log10(2) = 77.06, rounded up, plus 20
