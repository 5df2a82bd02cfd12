"""Reading a FLINT polynomial's terms by monomial name, and writing polynomials as JSON.

FLINT prints ``3*X_0_0*A_1_2^2 - 1/2*X_0_0 + 7``: the terms in the order of ``coeffs()``.
Reading the monomials from that text costs a few characters per term; ``to_dict`` builds an
exponent tuple with one Python integer per variable of the context, which dominated with
hundreds of variables. Variable names are identifiers (letters, digits, underscores).

JSON (docs/identity.md): a polynomial is a list of terms ``[monomial, coefficient]``, a
monomial a list of ``[variable index, exponent]`` pairs in increasing index order, the
coefficient a canonical rational string; terms sorted by monomial, so one polynomial has one
spelling.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from flint import fmpq, fmpq_mpoly

from attncert.exact.rationals import rational_to_json

_TERM_SEP = re.compile(r" [+-] ")
_NUMBER = re.compile(r"[0-9]+(/[0-9]+)?")


def terms(p: fmpq_mpoly) -> list[tuple[str, fmpq]]:
    """(monomial, coefficient) for each term of p; the monomial as FLINT prints it, "" for a constant."""
    coeffs = p.coeffs()
    if not coeffs:
        return []
    out = []
    for term, a in zip(_TERM_SEP.split(str(p)), coeffs):
        term = term.lstrip("-")
        head, _, rest = term.partition("*")
        out.append((rest if _NUMBER.fullmatch(head) else term, a))
    return out


def monomial_pairs(monomial: str, index: Mapping[str, int]) -> list[list[int]]:
    """``X_0_0*A_1_2^2`` as [[index of X_0_0, 1], [index of A_1_2, 2]], sorted by index."""
    if not monomial:
        return []
    pairs = []
    for factor in monomial.split("*"):
        name, _, power = factor.partition("^")
        pairs.append([index[name], int(power) if power else 1])
    return sorted(pairs)


def poly_to_json(p: fmpq_mpoly, index: Mapping[str, int]) -> list[list[Any]]:
    """The canonical JSON of a polynomial over the variables numbered by ``index``."""
    return sorted([monomial_pairs(m, index), rational_to_json(a)] for m, a in terms(p))
