"""Lemma (MaxMin): one RASP program sorts each adjacent pair descending (GroupSort, groups of 2).

An odd last element is passed through. Comparisons are exact in QQ and EE; a certificate checks one recorded input.
"""

from __future__ import annotations

from attncert.constructions.activations import maxmin
from attncert.proofs.core import cost
from attncert.proofs.checkers import references
from attncert.proofs.core.layout_claims import LayoutClaim
from attncert.proofs.core.inputs import size_param
from attncert.proofs.core.registry import register

CLAIM = LayoutClaim(
    "maxmin",
    "on the recorded input x, maxmin(n) sorts each pair (x_2m, x_2m+1) descending, an odd last element unchanged, exactly",
    maxmin,
    references.BY_CLAIM["maxmin"],
    (size_param("n", 9, "length of x"),),
    domain=None,
    cost=cost.elementwise,
)
register(CLAIM.claim())
