"""Lemma (ReLU): one RASP map computes max(x, 0) elementwise, with the sign decided exactly.

In QQ the sign is that of a rational; in EE (inputs a + b e^q) it is decided by
the Lindemann–Weierstrass zero test and arb refinement.
"""

from __future__ import annotations

from constructions.activations import relu
from proofs import references
from proofs.lemmas.common import INPUTS, SEED, domain_param, exact_domain, inputs_for, prove_construction, size_param
from proofs.registry import Claim, register

STATEMENT = "relu(n) maps x to max(x, 0) elementwise exactly"


def prove(n: int = 8, seed: int = 0, domain: str = "EE", inputs: str | None = None) -> dict:
    dom = exact_domain(domain)
    mats = inputs_for(seed, inputs, {"x": (1, n)}, dom)
    return prove_construction(relu(n), mats, references.relu(mats["x"], dom), dom, {"n": n, "seed": seed}, STATEMENT)


register(Claim("relu", STATEMENT, prove, (size_param("n", 8, "length of x"), SEED, domain_param("EE"), INPUTS)))
