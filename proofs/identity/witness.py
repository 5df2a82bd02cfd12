"""What an identity certificate records of a symbolic evaluation: the exponential basis and the divisors.

* **The exponential basis.** The distinct non-constant parts p' of the exp arguments met,
  the Hermite basis H of the lattice they generate (:func:`exact.symbolic.basis.hermite_basis`)
  and each argument's integer coordinates over H; and D, the least common denominator of the
  constant parts, so that every e^c is a power of e^{1/D}. By Ax's theorem the e^{H_i} are
  algebraically independent over C(x), and e^{1/D} is transcendental (Lindemann).
* **The divisors.** Every non-constant divisor of the evaluation (construction and reference),
  monic, written over H, with a positivity certificate where it has one: every term's
  polynomial has coefficients of one sign on monomials of even degree in each variable, and one
  term's polynomial has a nonzero constant, so the divisor has that sign everywhere (the
  exponentials are positive). A divisor without one is a hypothesis of the statement: the
  identity is proven where it is nonzero (det M != 0 for the 3 x 3 inverse).

Polynomials are written as in :mod:`exact.symbolic.terms`; an exponential polynomial as a list
of terms ``[coordinates over H, constant c, polynomial]``, sorted.
"""

from __future__ import annotations

from math import lcm
from typing import Any

from flint import fmpq

from attncert.exact.rationals import rational_to_json
from attncert.exact.symbolic.basis import Coordinates, Vector, hermite_basis, split_constant
from attncert.exact.symbolic.polyexp import PolyExp
from attncert.exact.symbolic.ring import SymbolicRing
from attncert.exact.symbolic.terms import monomial_pairs, terms


class Witness:
    """The exponential basis and the divisors of one symbolic evaluation, as recorded."""

    def __init__(self, ring: SymbolicRing):
        self.ring = ring
        self.index = {name: i for i, name in enumerate(ring.variables)}
        self._pairs: dict[str, list[list[int]]] = {}
        order = self.pairs
        arguments = [v for v, _ in ring.exponentials.values()]
        # the prover's basis vectors are among what H spans: their coordinates translate every key
        prover = [split_constant(b)[1] for b in ring.basis.vectors]
        self.rows, coords = hermite_basis(arguments + prover, order)
        self.arguments = list(zip(arguments, coords[: len(arguments)]))
        self._over_h = coords[len(arguments) :]
        self.denominator = lcm(1, *(int(c.q) for c in ring.constants))

    def pairs(self, monomial: str) -> list[list[int]]:
        """The monomial as sorted [variable index, exponent] pairs (cached: rows and arguments share them)."""
        p = self._pairs.get(monomial)
        if p is None:
            p = self._pairs[monomial] = monomial_pairs(monomial, self.index)
        return p

    def vector_to_json(self, v: Vector) -> list[list[Any]]:
        return sorted([self.pairs(m), rational_to_json(a)] for m, a in v.items())

    def over_h(self, coords: Coordinates) -> Coordinates:
        """Coordinates over the prover's basis, rewritten over H."""
        acc: dict[int, int] = {}
        for j, a in coords:
            if j < 0:  # the uninterpreted value R_{-j-1} keeps its index
                acc[j] = acc.get(j, 0) + a
                continue
            for k, b in self._over_h[j]:
                acc[k] = acc.get(k, 0) + a * b
        return tuple(sorted((k, a) for k, a in acc.items() if a))

    def polyexp_to_json(self, p: PolyExp) -> list[list[Any]]:
        return sorted(
            [[list(pair) for pair in self.over_h(coords)], rational_to_json(fmpq(cp, cq)), self.vector_to_json(dict(terms(q)))]
            for (coords, cp, cq), q in p.terms.items()
        )

    def affine_to_json(self, f) -> dict[str, Any]:
        """A normalised affine form of the regions: its coefficients by variable index, and its constant."""
        return {"coefficients": [[i, rational_to_json(a)] for i, a in f[0]], "constant": rational_to_json(f[1])}

    def exp_basis_json(self) -> dict[str, Any]:
        return {
            "rows": [self.vector_to_json(r) for r in self.rows],
            "arguments": sorted([self.vector_to_json(v), [list(pair) for pair in c]] for v, c in self.arguments),
            "constant_denominator": self.denominator,
        }

    def divisors_json(self) -> list[dict[str, Any]]:
        return sorted(
            ({"divisor": self.polyexp_to_json(d), "sign": positivity(d) or "hypothesis"} for d in self.ring.divisors()),
            key=lambda e: (e["sign"], str(e["divisor"])),
        )


def positivity(p: PolyExp) -> str | None:
    """"positive" or "negative" if p has that sign everywhere by the term pattern of the module
    docstring, else None."""
    signs, constant = set(), False
    if any(j < 0 for coords, _, _ in p.terms for j, _ in coords):
        return None  # an uninterpreted value (ReLU) may be 0: no sign from the pattern
    for q in p.terms.values():
        for monomial, a in terms(q):
            if not monomial:
                constant = True
            elif any(e % 2 for _, e in _exponents(monomial)):
                return None
            signs.add(a > 0)
    if not constant or len(signs) != 1:
        return None
    return "positive" if signs.pop() else "negative"


def _exponents(monomial: str) -> list[tuple[str, int]]:
    out = []
    for factor in monomial.split("*"):
        name, _, power = factor.partition("^")
        out.append((name, int(power) if power else 1))
    return out
