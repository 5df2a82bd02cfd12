"""One symbolic evaluation's ring: its input variables, its exponential basis, its divisors.

The numbers of :mod:`exact.symbolic.number` are functions of named real variables (the
entries of a construction's input matrices). A :class:`SymbolicRing` holds what they
share: FLINT's polynomial context over those variables, the Z-basis of exp arguments
(:mod:`exact.symbolic.basis`) that gives every exponential its key, the record of every
exponential formed (argument and key, for the certificate) and of every non-constant
divisor (a quotient is the function only where its divisors are nonzero).

Constants are the exact field EE: a number with no variable and no basis exponential is
Σ r_k e^{c_k} over Σ s_k e^{c_k}, whose sign :mod:`exact.expsum` decides exactly. The
sign of anything else depends on the inputs: :class:`InputDependentSign`.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import random

from flint import arb, ctx, fmpq, fmpq_mpoly, fmpq_mpoly_ctx

from attncert.exact.errors import NotInFieldError
from attncert.exact.expsum import ExpSum
from attncert.exact.symbolic.basis import Coordinates, ExpBasis, split_constant, vector_key
from attncert.exact.symbolic.number import SymNumber
from attncert.exact.symbolic.polyexp import ONE, Key, PolyExp
from attncert.exact.symbolic.regions import Affine, Regions, affine_form
from attncert.exact.symbolic.terms import terms


class InputDependentSign(NotInFieldError):
    """A sign, comparison or branch whose answer depends on the values of the inputs."""


class SymbolicRing:
    """Exponential polynomials in ``variables``, with exponentials keyed by a growing basis."""

    def __init__(self, variables: Sequence[str], basis: Iterable[fmpq_mpoly] = ()):
        if len(set(variables)) != len(variables):
            raise ValueError("variable names must be distinct")
        self.variables = tuple(variables)
        self.ctx = fmpq_mpoly_ctx.get(self.variables, "lex")
        self.basis = ExpBasis(basis)
        #: Every exponential of a non-constant argument formed: key -> (its non-constant part, coordinates).
        self.exponentials: dict[str, tuple[dict, Coordinates]] = {}
        #: The constant parts c of the exponentials formed.
        self.constants: set[fmpq] = set()
        self._divisors: dict[int, PolyExp] = {}
        self.index = {name: i for i, name in enumerate(self.variables)}
        self._gens = self.ctx.gens()
        #: The oracle for signs of affine forms (:mod:`exact.symbolic.regions`), when the caller splits regions.
        self.regions: Regions | None = None
        self._zero = SymNumber((), self)
        self._one = self.polynomial(self.ctx.constant(1))
        self._point: list[fmpq] | None = None
        self._point_exps: dict[tuple[int, int], arb] = {}
        #: The uninterpreted values formed, in order: (function name, argument); R_k is the k-th.
        self.uninterpreted_values: list[tuple[str, SymNumber]] = []
        #: Those also formed while ``defining`` was set (by the reference: the definition of the claim).
        self.defined: set[int] = set()
        #: Set while the reference is computed: an uninterpreted value it forms is part of the definition.
        self.defining = False

    # -- elements ------------------------------------------------------------------------
    def variable(self, name: str) -> SymNumber:
        return self.polynomial(self._gens[self.index[name]])

    def constant(self, q: fmpq) -> SymNumber:
        if not q:
            return self._zero
        if q == 1:
            return self._one
        return self.polynomial(self.ctx.constant(q))

    def polynomial(self, p: fmpq_mpoly) -> SymNumber:
        return SymNumber(((PolyExp({ONE: p}, self), None),) if not p.is_zero() else (), self)

    def exp(self, x: SymNumber | fmpq) -> SymNumber:
        """e^x for a polynomial x = c + x': e^c E^a, where a are x''s coordinates in the basis.

        Raises NotInFieldError for an argument that is not a polynomial of the inputs (an
        exponential or a quotient): no symbolic rule covers it.
        """
        if type(x) is fmpq:
            self.constants.add(x)
            return SymNumber.fraction(PolyExp({((), int(x.p), int(x.q)): self.ctx.constant(1)}, self))
        p = x.polynomial()
        if p is None:
            raise NotInFieldError(f"exp of {x}: the symbolic field has exponentials of polynomials of the inputs only")
        c, v = split_constant(p)
        coords = self.basis.coordinates(v, p)
        self.constants.add(c)
        if v:
            self.exponentials.setdefault(vector_key(v), (v, coords))
        return SymNumber.fraction(PolyExp({(coords, int(c.p), int(c.q)): self.ctx.constant(1)}, self))

    # -- signs ---------------------------------------------------------------------------
    def sign(self, x: SymNumber | fmpq) -> int:
        """-1, 0 or 1 for a constant, decided exactly in EE; InputDependentSign otherwise."""
        if type(x) is not SymNumber:
            return (x > 0) - (x < 0)
        if x.is_zero():
            return 0
        if x.depends_on_inputs():
            f = self.affine(x)
            if f is None:
                raise InputDependentSign(f"the sign of {_brief(x)} depends on the inputs, and it is not an affine form of them")
            if self.regions is None:
                raise InputDependentSign(f"the sign of the affine form {_brief(x)} depends on the inputs: it needs region splitting")
            return self.regions.sign(f)
        n, d = x.combined()
        s = _expsum(n).sign()
        return s * _expsum(d).sign() if d is not None else s

    def affine(self, x: SymNumber) -> Affine | None:
        """x as an affine form of the inputs, or None (a quotient, an exponential, a degree > 1)."""
        p = x.polynomial()
        return None if p is None else affine_form(p, self.index)

    def is_zero_on(self, x: SymNumber, equalities: list[Affine]) -> bool:
        """Whether x vanishes on the affine subspace where every form of ``equalities`` is 0.

        x = Σ n_j / d_j is put over one denominator (nonzero on the region) and its numerator N
        restricted: each equality eliminates one variable (Gaussian elimination over Q) by
        composition, in a context over the few variables of N and of the equalities (a
        composition in the full context takes one argument per input variable). Exponential-free
        numbers only: regions arise from piecewise-linear maps.
        """
        if not equalities:
            return x.is_zero()
        n, d = x.combined()
        p = n.polynomial()
        if p is None or (d is not None and d.polynomial() is None):
            raise InputDependentSign("restricting an exponential to a region is not supported")
        names = sorted({_base(f) for m, _ in terms(p) if m for f in m.split("*")} | {self.variables[i] for f in equalities for i, _ in f[0]})
        small = fmpq_mpoly_ctx.get(tuple(names), "lex")
        at = {name: k for k, name in enumerate(names)}
        gens = small.gens()
        solved: list[tuple[int, fmpq_mpoly]] = []

        def restrict(q: fmpq_mpoly) -> fmpq_mpoly:
            for k, value in solved:
                if q.degrees()[k]:
                    args = list(gens)
                    args[k] = value
                    q = q.compose(*args)
            return q

        for f in equalities:
            r = restrict(small.constant(f[1]) + sum((a * gens[at[self.variables[i]]] for i, a in f[0]), small.constant(0)))
            form = affine_form(r, at)
            if form is None or not form[0]:
                continue  # implied by the equalities before it (the region is nonempty, so not 0 = c)
            (k, a), *_ = form[0]
            solved.append((k, gens[k] - r / a))
        lifted = {}
        for m, a in terms(p):
            e = [0] * len(names)
            for factor in m.split("*") if m else ():
                name, _, power = factor.partition("^")
                e[at[name]] += int(power) if power else 1
            lifted[tuple(e)] = a
        return restrict(small.from_dict(lifted)).is_zero()

    def nonzero_at_a_point(self, x: SymNumber, prec: int = 128) -> bool:
        """Whether x is proven nonzero by its value at one rational point: an arb enclosure of
        x there that excludes 0 (a function nonzero at a point is not the zero function).
        False says nothing."""
        v = self.at_point(x, prec)
        return v is not None and not v.contains(0)

    def set_point(self, values: Sequence[fmpq]) -> None:
        """Evaluate at these values of the variables from now on (:meth:`at_point`)."""
        self._point = list(values)
        self._point_exps.clear()

    def at_point(self, x: SymNumber, prec: int = 128) -> arb | None:
        """An enclosure of x at the ring's point (pseudo-random, fixed per ring), or None where a
        denominator's enclosure there contains 0. An uninterpreted value is given its function's
        value there, so this is the value of x as the function it stands for."""
        if self._point is None:
            # in [-1, 1]: exponentials of polynomials of large points lose every bit to cancellation
            rng = random.Random(len(self.variables))
            self._point = [fmpq(rng.randint(-40, 40), rng.randint(41, 97)) for _ in self.variables]
        with ctx.workprec(prec):
            total = arb(0)
            for n, d in x.parts:
                v = self._value(n, prec)
                if d is not None:
                    dv = self._value(d, prec)
                    if dv.contains(0):
                        return None
                    v = v / dv
                total += v
            return total

    def _value(self, p: PolyExp, prec: int) -> arb:
        """An enclosure of p at the ring's point (at the working precision)."""
        out = arb(0)
        for (coords, cp, cq), poly in p.terms.items():
            term = arb(poly(*self._point)) if self.variables else arb(poly.leading_coefficient())
            if cp:
                term *= (arb(cp) / cq).exp()
            for j, e in coords:
                ej = self._point_exps.get((j, prec))
                if ej is None:
                    ej = self._point_exps[(j, prec)] = self._symbol_at_point(j, prec)
                term *= _integer_power(ej, e)
            out += term
        return out

    def _symbol_at_point(self, j: int, prec: int) -> arb:
        if j >= 0:
            return arb(self.basis.vectors[j](*self._point)).exp()
        name, arg = self.uninterpreted_values[-j - 1]
        v = self.at_point(arg, prec)
        wide = arb(0, 1 << 60)  # the point decides nothing about this symbol
        if v is None:
            return wide
        if name == "relu":
            return (v + abs(v)) / 2
        y = fmpq(name[len("power(") : -1])  # power(p/q), as real_power names it
        return v**y if v > 0 else wide

    # -- uninterpreted functions -----------------------------------------------------------
    def uninterpreted(self, name: str, x: SymNumber) -> SymNumber:
        """f(x) as a new indeterminate R_k, the same one for arguments equal as functions.

        Sound for proving identities: if an expression in the R_k is zero as a polynomial in
        them, it stays zero whatever functions the R_k stand for (substitution is a ring
        homomorphism). The converse fails, so a nonzero difference then proves nothing.
        R_k is keyed by the coordinate index -(k + 1), beside the basis exponentials. The functions
        are ``relu`` and ``power(y)`` (x^y for a non-integer rational y).
        """
        for k, (other_name, y) in enumerate(self.uninterpreted_values):
            if other_name != name or self._apart(x, y):
                continue
            if (x - y).is_zero():
                return self._formed(k)
        self.uninterpreted_values.append((name, x))
        return self._formed(len(self.uninterpreted_values) - 1)

    def _formed(self, k: int) -> SymNumber:
        if self.defining:
            self.defined.add(k)
        return self._uninterpreted_symbol(k)

    def undefined_powers(self) -> list[int]:
        """The uninterpreted powers x^y (y not an integer) that only the construction formed: x > 0 is not
        established for them (the reference's, such as sigma^2 + delta with delta > 0, are positive by
        definition), so the real function may be undefined where the identity is claimed."""
        return [k for k, (name, _) in enumerate(self.uninterpreted_values) if name.startswith("power(") and k not in self.defined]

    def _apart(self, x: SymNumber, y: SymNumber) -> bool:
        """Whether x and y are proven different functions by their values at the ring's point (at 128
        bits, then 1024): a cheap test before the exact one, which may combine many parts."""
        for prec in (128, 1024):
            v, w = self.at_point(x, prec), self.at_point(y, prec)
            if v is not None and w is not None and not v.overlaps(w):
                return True
        return False

    def _uninterpreted_symbol(self, k: int) -> SymNumber:
        return SymNumber.fraction(PolyExp({(((-k - 1, 1),), 0, 1): self.ctx.constant(1)}, self))

    # -- divisors ------------------------------------------------------------------------
    def note_divisor(self, p: PolyExp) -> None:
        """Record a divisor that depends on the inputs (a unit or a constant divides everywhere)."""
        if p.is_unit() or not p.depends_on_inputs():
            return
        m = p.monic()[2]
        self._divisors.setdefault(id(m), m)

    def divisors(self) -> list[PolyExp]:
        """The distinct (monic) divisors recorded so far."""
        out: list[PolyExp] = []
        for m in self._divisors.values():
            if not any(m.same(o) for o in out):
                out.append(m)
        return out

    def key_str(self, k: Key) -> str:
        parts = [f"E{j}^{e}" if e != 1 else f"E{j}" for j, e in k[0]]
        if k[1]:
            parts.append(f"e^({fmpq(k[1], k[2])})")
        return "·".join(parts) or "1"


def _expsum(p: PolyExp) -> ExpSum:
    """A constant exponential polynomial (no variable, no basis exponential) as an element of Q[e^Q]."""
    return ExpSum.from_pairs((fmpq(k[1], k[2]), q.leading_coefficient()) for k, q in p.terms.items())


def _brief(x: SymNumber) -> str:
    s = repr(x)
    return s if len(s) <= 80 else s[:77] + "..."


__all__ = ["SymbolicRing", "InputDependentSign", "Coordinates"]


def _base(factor: str) -> str:
    """The variable of a factor ``x`` or ``x^k`` of a monomial."""
    return factor.partition("^")[0]


def _integer_power(b: arb, e: int) -> arb:
    """b^e for an integer e by products: python-flint's ``**`` gives nan for a ball that contains 0."""
    if e < 0:
        return 1 / _integer_power(b, -e)
    out = arb(1)
    while e:
        if e & 1:
            out *= b
        e >>= 1
        if e:
            b = b * b
    return out
