"""Lemma (MaxMin): one RASP program sorts each adjacent pair descending (GroupSort, groups of 2).

An odd last element is passed through. Comparisons are exact in QQ and EE.
"""

from __future__ import annotations

from constructions.activations import maxmin
from proofs import references
from proofs.lemmas.common import INPUTS, SEED, domain_param, exact_domain, inputs_for, prove_construction, size_param
from proofs.registry import Claim, register

STATEMENT = "maxmin(n) sorts each pair (x_2m, x_2m+1) descending, an odd last element unchanged, exactly"


def prove(n: int = 9, seed: int = 0, domain: str = "EE", inputs: str | None = None) -> dict:
    dom = exact_domain(domain)
    mats = inputs_for(seed, inputs, {"x": (1, n)}, dom)
    return prove_construction(maxmin(n), mats, references.maxmin(mats["x"], dom), dom, {"n": n, "seed": seed}, STATEMENT)


register(Claim("maxmin", STATEMENT, prove, (size_param("n", 9, "length of x"), SEED, domain_param("EE"), INPUTS)))
