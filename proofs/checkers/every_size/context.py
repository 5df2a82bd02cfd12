r"""What is known at a point of the proof: the sizes (each >= 1), the digits (0 <= d < B) and the
relations assumed; its hypotheses, in the order the record writes them.

The hypotheses of a context are ``1 <= s`` for each size s (sorted by name), then ``0 <= d`` and
``d < B`` for each digit in order, then the relations assumed, in order; its text joins their texts
with `` and ``. A step of the record names the context it was taken in by that text, and a fact
may use only hypotheses among these.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from attncert.proofs.checkers.every_size.sizes import Poly, Rel

ZERO, ONE = Poly.const(0), Poly.const(1)


@dataclass(frozen=True)
class Context:
    """Sizes (sorted names), digits ((name, bound), ...) and relations assumed."""

    sizes: tuple[str, ...]
    digits: tuple[tuple[str, Poly], ...] = ()
    assumed: tuple[Rel, ...] = ()

    def with_digit(self, name: str, bound: Poly) -> "Context":
        return Context(self.sizes, self.digits + ((name, bound),), self.assumed)

    def assuming(self, rel: Rel) -> "Context":
        return Context(self.sizes, self.digits, self.assumed + (rel,))

    def substitute(self, digit: str, by: Poly, new: tuple[tuple[str, Poly], ...]) -> "Context":
        """The digit written as ``by`` in new digits: it leaves the digits, the new ones follow, each
        relation assumed is rewritten, and 0 <= by < (the digit's bound) is assumed."""
        bound = dict(self.digits)[digit]
        m = {digit: by}
        digits = tuple((d, B) for d, B in self.digits if d != digit) + new
        assumed = tuple(r.substitute(m) for r in self.assumed)
        return Context(self.sizes, digits, assumed + (Rel("<=", ZERO, by), Rel("<", by, bound)))

    def names(self) -> set[str]:
        """Every symbol the context gives a meaning: its sizes and its digits."""
        return set(self.sizes) | {d for d, _ in self.digits}

    @functools.cached_property
    def hypotheses(self) -> tuple[Rel, ...]:
        out = [Rel("<=", ONE, Poly.symbol(s)) for s in self.sizes]
        for d, B in self.digits:
            out += [Rel("<=", ZERO, Poly.symbol(d)), Rel("<", Poly.symbol(d), B)]
        return tuple(out) + self.assumed

    @functools.cached_property
    def texts(self) -> frozenset[str]:
        """The texts of the hypotheses."""
        return frozenset(r.text for r in self.hypotheses)

    @functools.cached_property
    def text(self) -> str:
        return " and ".join(r.text for r in self.hypotheses)
