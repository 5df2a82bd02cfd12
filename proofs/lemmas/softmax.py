"""Lemma (row softmax): one RASP program maps vec(S) to vec(softmax_rows(S)) for rational scores S.

A certificate checks it on one recorded input, exactly in EE: e^q for rational q is an element of EE, and equality there is
decided by Lindemann–Weierstrass, not by precision.
"""

from __future__ import annotations

from functools import partial

from attncert.constructions.activations import softmax_rows
from attncert.proofs.core import cost
from attncert.proofs.checkers import references
from attncert.proofs.core.layout_claims import LayoutClaim
from attncert.proofs.core.inputs import random_rational_values, size_param
from attncert.proofs.core.registry import register

CLAIM = LayoutClaim(
    "softmax",
    "on the recorded input S (rational scores), softmax_rows(r, c) maps vec(S) to vec(softmax(S)) row-wise, exactly in EE",
    softmax_rows,
    references.BY_CLAIM["softmax"],
    (size_param("r", 3, "rows of S"), size_param("c", 4, "columns of S")),
    domain="EE",
    input_domain="QQ",  # scores are rational, so exp stays in EE
    cost=partial(cost.softmax, scores=random_rational_values()),  # a row's distinct exponentials: the seed's values at most
)
register(CLAIM.claim())
