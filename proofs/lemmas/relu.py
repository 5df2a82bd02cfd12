"""Lemma (ReLU): one RASP map computes max(x, 0) elementwise, with the sign decided exactly.

A certificate checks it on one recorded input. In QQ the sign is that of a rational; in EE (inputs a + b e^q) it is decided by
the Lindemann–Weierstrass zero test and arb refinement.
"""

from __future__ import annotations

from attncert.constructions.activations import relu
from attncert.proofs.core import cost
from attncert.proofs.checkers import references
from attncert.proofs.core.layout_claims import LayoutClaim
from attncert.proofs.core.inputs import size_param
from attncert.proofs.core.registry import register

CLAIM = LayoutClaim(
    "relu",
    "on the recorded input x, relu(n) maps x to max(x, 0) elementwise exactly",
    relu,
    references.BY_CLAIM["relu"],
    (size_param("n", 8, "length of x"),),
    domain=None,
    cost=cost.elementwise,
)
register(CLAIM.claim())
