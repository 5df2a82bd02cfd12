"""The identity checker's own arithmetic: quotients of exponential polynomials, with sympy's sparse rings.

An identity certificate (docs/identity.md) claims that a graph computes its reference as a
function of m real input variables x. The checker evaluates both in the field

    K = Q(x)(E_1, ..., E_r, T),   E_i = e^{H_i(x)},   T = e^{1/D},

where H_1, ..., H_r are the recorded basis rows and D the recorded constant denominator: an
exponential e^{c + p'} whose non-constant part is p' = Σ a_i H_i (integers a_i) and whose
constant part c has c D integer is the Laurent monomial T^{c D} Π E_i^{a_i}.

**Uninterpreted values.** relu(z) of a value z that is not an affine form of the inputs (the
encoder layer's ReLU of exponential expressions) has no rule: it becomes a new indeterminate
R_k, one per argument up to equality as functions (:meth:`Field.uninterpreted`, by this field's
exact zero test of the difference). Evaluating over K[R_1, R_2, ...] is sound for proving an
identity: the substitution R_k -> relu(z_k) is a ring homomorphism, so a difference that is
zero with the R_k as indeterminates is zero as a function. It is a homomorphism only on values
whose denominators are free of the R_k: a division by a value that involves one is counted
before any normalisation (which would take its leading R^u for a unit) and fails the divisor
check, as R_k can be 0. A nonzero difference proves nothing (the R_k are not independent of
the inputs).

Layer norm's (σ² + δ)^(-1/2) is the same kind of value: x^y for a non-integer rational y, of a
value that depends on the inputs, is the uninterpreted ``power(y)`` of its argument
(:meth:`Field.power`). Unlike ReLU it is a partial function (x^(-1/2) is a real number for
x > 0 only), so the homomorphism argument needs every argument it is applied to to be positive
at every input: a caller that knows its argument positive says so (the reference's σ² + δ, a
mean of squares plus δ > 0), and :attr:`Field.in_domain` lists the R_k so shown; an R_k the
graph forms on an argument equal to none of those is not shown defined (a problem of the check).

**Why equality in K is equality of functions.** The rows are checked to be non-constant
polynomials with distinct leading monomials (:class:`Basis`), so they are Q-linearly
independent modulo constants. By Ax's theorem (J. Ax, *On Schanuel's conjectures*, Ann. of
Math. 93 (1971), Cor. 2; for polynomials Ostrowski 1946, Kolchin 1968) the functions E_i are
then algebraically independent over C(x), so an exponential polynomial Σ_a q_a(x, T) E^a is
the zero function only if every q_a(x, e^{1/D}) is; T is transcendental (Lindemann), so
q_a(x, e^{1/D}) = 0 at every rational x only if q_a is the zero polynomial in x and T. An
exponential polynomial is therefore zero as a function exactly when it has no term, and a
quotient n/d (d not the zero function) is zero exactly when n has no term.

**Representation (two levels).** Exponents of E_i and T may be negative (an argument's
coordinates, e^{-c}), so an exponential polynomial is a Laurent polynomial in E and T with
coefficients in R = Q[x]: a dict from its *key* (a_1, ..., a_r, t, u_1, ..., u_j), a tuple of
integers of any sign standing for E^a T^t R^u (the exponents of the uninterpreted values R_k
last, with no trailing zero, so a key without them is r + 1 long and one monomial has one key),
to a nonzero element of sympy's sparse ring
``ring(variables, QQ)`` (never FLINT's polynomials: the prover uses those). One sympy ring with
a generator per E_i and for T as well would need the negative powers moved into denominators,
where the softmax weights e^{S_ik} / D_i of one row get different denominators, which then
multiply; or a shift kept beside every polynomial. As keys they cost nothing: a unit
r E^a T^t multiplies by shifting keys, and a monomial's tuple holds the m input exponents only
(a product of a 16-term by an 8-term polynomial took 1.4 ms with 64 generators, 2.3 ms with
129). Sympy's ``FracField`` is not used: its gcd normalisation took 140 s on the softmax part
of U(8, 4, 4), against 0.6 s for ring arithmetic on unreduced pairs (the lead engineer's
measurement).

A :class:`Quotient` is Σ_j n_j / d_j, one *part* per distinct denominator, each d_j None (for
1) or *normalised*: its largest key is the zero key and that key's polynomial has leading
coefficient 1 (sympy's lex order), reached by dividing n_j and d_j by the unit r E^a T^t of
d_j's largest term. Denominators equal up to a unit have one normalised form, so the entries
of one softmax row share it and add by adding numerators; and the heads of a multi-head layer,
each over its own row sums, are never put over the product of those sums (one fraction per
value took 219 s and 4.4 GB to check multihead(8, 4, 4, 4, 8); parts, 4 s). Only a division
(by the divisor's single numerator) and the zero test of a value with two or more parts
combine parts, by cross-multiplication; an output entry minus its reference cancels part by
part. No gcd is taken. A value that is a rational constant is kept as an ``fmpq``.

**Divisors.** A division by a value that is not a constant (it depends on x or on some E_i)
and not a unit is recorded, normalised, in :attr:`Field.divisors`: the quotient equals the
function only where that divisor is nonzero (docs/identity.md, "Divisors").
"""

from __future__ import annotations

import random
from math import lcm
from operator import add, neg
from typing import Any, Iterable, Union

from flint import fmpq
from sympy import integer_nthroot
from sympy.polys.domains import QQ as SYMPY_QQ
from sympy.polys.rings import PolyElement, ring

from attncert.exact.errors import AttncertError, LimitExceeded
from attncert.exact.limits import current as current_limits

#: A Laurent monomial E^a T^t R^u as (a_1, ..., a_r, t, u_1, ..., u_j), u without trailing zeros.
Key = tuple[int, ...]
#: A monomial as sorted (variable index, exponent) pairs: the certificate's spelling, ordered as Python orders lists.
Monomial = tuple[tuple[int, int], ...]
#: A polynomial of the certificate: monomial -> nonzero rational.
Vector = dict[Monomial, fmpq]
#: An exponential polynomial: key -> nonzero polynomial of the ring.
ExpPoly = dict[Key, PolyElement]
#: A fraction n/d of exponential polynomials, d normalised or None for 1.
Part = tuple[ExpPoly, "ExpPoly | None"]


class IdentityFailure(AttncertError):
    """Something the certificate records, or the graph computes, that the checker cannot accept (one line)."""


class Basis:
    """The recorded rows H_1, ..., H_r: checked independent, and the solver of p' = Σ a_i H_i.

    The rows must be nonzero, free of a constant term, and have distinct leading monomials
    (largest in Python's list order of the monomial spellings). Then they are linearly
    independent: in a nonzero combination Σ c_i H_i, the largest leading monomial among the
    rows with c_i != 0 occurs in that row only, so it survives. The same fact gives the solver:
    reducing p' by the row whose leading monomial is p''s largest monomial strictly lowers it,
    and p' is outside the span as soon as its largest monomial leads no row.
    """

    def __init__(self, rows: list[Vector]):
        self.rows = rows
        self._by_lead: dict[Monomial, int] = {}
        for i, row in enumerate(rows):
            if not row:
                raise IdentityFailure(f"exp_basis row {i} is the zero polynomial")
            if () in row:
                raise IdentityFailure(f"exp_basis row {i} has a constant term: the rows must be non-constant parts")
            lead = max(row)
            j = self._by_lead.setdefault(lead, i)
            if j != i:
                raise IdentityFailure(f"exp_basis rows {j} and {i} have the same leading monomial, so the rows are not shown independent")

    def __len__(self) -> int:
        return len(self.rows)

    def coordinates(self, v: Vector) -> dict[int, fmpq]:
        """The rational a with v = Σ a_i H_i; IdentityFailure if v is outside the span."""
        rest = dict(v)
        coords: dict[int, fmpq] = {}
        while rest:
            lead = max(rest)
            i = self._by_lead.get(lead)
            if i is None:
                raise IdentityFailure("an exp argument is outside the span of the recorded exp_basis rows")
            row = self.rows[i]
            f = rest[lead] / row[lead]
            coords[i] = f
            for m, c in row.items():
                s = rest.get(m, 0) - f * c
                if s:
                    rest[m] = s
                else:
                    rest.pop(m, None)
        return coords


class Field:
    """K = Q(x)(E, T) for one certificate (with the uninterpreted values R_k): the ring, the basis, and
    the record of exps, divisors and uninterpreted values met."""

    def __init__(self, variables: list[str], basis: Basis, denominator: int):
        self.ring, *gens = ring(variables, SYMPY_QQ)
        self.gens: list[PolyElement] = gens
        self.m = len(variables)
        self.basis = basis
        self.denominator = denominator
        #: The length of a key without uninterpreted values (r + 1: the E_i, then T).
        self.base = len(basis) + 1
        self.zero_key: Key = (0,) * self.base
        self.one_poly = self.ring.one
        self._zero_coeff = self.ring.domain.zero
        #: The most terms a product may have (a forged graph could square its way to any size).
        self.max_terms = current_limits().max_terms
        #: Every distinct non-constant part p' of an exp argument met, with its integer coordinates (i, a_i).
        self.arguments: list[tuple[tuple[tuple[Monomial, fmpq], ...], tuple[tuple[int, int], ...]]] = []
        #: The denominators of the constant parts c of the exp arguments met.
        self.constant_denominators: set[int] = set()
        #: The distinct normalised divisors met.
        self.divisors: list[ExpPoly] = []
        #: How many divisions by a value involving an uninterpreted R_k were met (each is a problem).
        self.uninterpreted_divisors = 0
        #: The uninterpreted values formed, in order: (function name, argument); R_k is the k-th.
        self.uninterpreted_values: list[tuple[str, Number]] = []
        #: The k whose argument is shown in its function's domain (every ReLU; a power's when a caller shows it positive).
        self.in_domain: set[int] = set()
        self._uninterpreted_at: list[fmpq | None] = []
        self._values_at: dict[int, tuple[ExpPoly, fmpq]] = {}
        self._random = random.Random(len(variables))
        self._point = [fmpq(self._random.randint(-97, 97), self._random.randint(1, 89)) for _ in variables]
        # by the argument's terms (hashing a PolyElement hashes its rationals through Python's Fraction: slow)
        self._exp_cache: dict[frozenset, Quotient | fmpq] = {}

    # -- elements -------------------------------------------------------------------------
    def variable(self, k: int) -> "Quotient":
        return Quotient((({self.zero_key: self.gens[k]}, None),), self)

    def make(self, parts: list[Part]) -> "Quotient | fmpq":
        """Σ parts (distinct normalised denominators, nonzero numerators); a rational constant as an ``fmpq``."""
        if not parts:
            return fmpq(0)
        if len(parts) == 1:
            num, den = parts[0]
            if den is None and len(num) == 1:
                p = num.get(self.zero_key)
                if p is not None and p.is_ground:
                    return rational(p.LC)
        return Quotient(tuple(parts), self)

    def part(self, num: ExpPoly, den: ExpPoly | None) -> Part:
        """num/den with den normalised: both divided by den's leading unit (None for a denominator 1)."""
        if den is None:
            return num, None
        unit_key, r = self.leading_unit(den)
        if unit_key != self.zero_key or r != 1:
            inv = tuple(map(neg, unit_key))
            num = self.shift(num, inv, 1 / r)
            den = self.shift(den, inv, 1 / r)
        if len(den) == 1 and den[self.zero_key] == self.one_poly:
            return num, None
        return num, den

    def leading_unit(self, e: ExpPoly) -> tuple[Key, Any]:
        """(a, r): e's largest key and the leading coefficient of its polynomial."""
        top = max(e)
        return top, e[top].LC

    def normalised(self, e: ExpPoly) -> ExpPoly:
        """e divided by its leading unit: one form for all unit multiples of e."""
        top, r = self.leading_unit(e)
        return self.shift(e, tuple(map(neg, top)), 1 / r)

    def shift(self, e: ExpPoly, key: Key, r: Any) -> ExpPoly:
        """e times the unit r E^a T^t R^u with (a, t, u) = key."""
        return {self.key_product(k, key): p.mul_ground(r) if r != 1 else p for k, p in e.items()}

    def key_product(self, a: Key, b: Key) -> Key:
        """The key of E^a T^t R^u times E^a' T^t' R^u': exponents added, trailing zeros of u dropped."""
        base = self.base
        if len(a) == base == len(b):
            return tuple(map(add, a, b))
        if len(a) < len(b):
            a, b = b, a
        k = tuple(map(add, a, b)) + a[len(b) :]
        while len(k) > base and not k[-1]:
            k = k[:-1]
        return k

    def lift(self, q: fmpq) -> ExpPoly:
        return {self.zero_key: self.ring.ground_new(SYMPY_QQ(q.p, q.q))} if q else {}

    def parts(self, x: "Quotient | fmpq") -> tuple[Part, ...]:
        if type(x) is fmpq:
            return ((self.lift(x), None),) if x else ()
        return x.parts

    def combined(self, x: "Quotient | fmpq") -> Part:
        """x as one fraction n/d over the product of its denominators (d None for 1)."""
        num: ExpPoly = {}
        den: ExpPoly | None = None
        for n, d in self.parts(x):
            num = self.add_exp(self.mul_exp(num, d), self.mul_exp(n, den))
            den = d if den is None else den if d is None else self.mul_exp(den, d)
        return self.part(num, den)

    # -- sums and products ----------------------------------------------------------------
    def add(self, x: Any, y: Any) -> "Quotient | fmpq":
        if type(x) is fmpq and type(y) is fmpq:
            return x + y
        return self.make(self.merged(self.parts(x) + self.parts(y)))

    def total(self, values: Iterable["Quotient | fmpq"]) -> "Quotient | fmpq":
        """Σ values, the numerators over each distinct denominator added at once."""
        const = fmpq(0)
        parts: list[Part] = []
        for v in values:
            if type(v) is fmpq:
                const += v
            else:
                parts.extend(v.parts)
        if const:
            parts.append((self.lift(const), None))
        return self.make(self.merged(parts))

    def merged(self, parts: Iterable[Part]) -> list[Part]:
        """The parts over equal denominators added (numerators only, no cross-multiplication), zeros dropped."""
        groups: list[tuple[ExpPoly | None, dict[Key, list[PolyElement]]]] = []
        for num, den in parts:
            for d, acc in groups:
                if d is den or (d is not None and den is not None and d == den):
                    break
            else:
                acc = {}
                groups.append((den, acc))
            for k, p in num.items():
                acc.setdefault(k, []).append(p)
        out = []
        for den, acc in groups:
            num = {k: s for k, ps in acc.items() if (s := self.poly_sum(ps))}
            if num:
                out.append((num, den))
        return out

    def poly_sum(self, ps: list[PolyElement]) -> PolyElement:
        if len(ps) == 1:
            return ps[0]
        acc = dict(ps[0])
        get, zero = acc.get, self._zero_coeff
        for p in ps[1:]:
            for m, c in p.items():
                acc[m] = get(m, zero) + c
        return self.ring.dtype({m: c for m, c in acc.items() if c})

    def add_exp(self, a: ExpPoly, b: ExpPoly) -> ExpPoly:
        out = dict(a)
        for k, p in b.items():
            s = out.get(k)
            if s is None:
                out[k] = p
            else:
                s = s + p
                if s:
                    out[k] = s
                else:
                    del out[k]
        return out

    def mul_exp(self, a: ExpPoly, b: ExpPoly | None) -> ExpPoly:
        """a b (b None for 1)."""
        if b is None:
            return a
        zero, base, key_product = self.zero_key, self.base, self.key_product
        acc: dict[Key, list[PolyElement]] = {}
        for ka, pa in a.items():
            ca = pa.LC if pa.is_ground else None
            for kb, pb in b.items():
                if kb == zero:
                    k = ka
                elif ka == zero:
                    k = kb
                else:
                    k = tuple(map(add, ka, kb)) if len(ka) == base == len(kb) else key_product(ka, kb)
                if ca is not None:
                    p = pb if ca == 1 else pb.mul_ground(ca)
                elif pb.is_ground:
                    cb = pb.LC
                    p = pa if cb == 1 else pa.mul_ground(cb)
                else:
                    p = pa * pb
                acc.setdefault(k, []).append(p)
        return self.bounded(acc)

    def square_exp(self, a: ExpPoly) -> ExpPoly:
        """a², as (Σ_k p_k E^k)² = Σ_k p_k² E^{2k} + Σ_{j<k} 2 p_j p_k E^{j+k}: each product of two distinct
        terms formed once (and sympy's ``square`` within a term), about half the work of ``mul_exp(a, a)``."""
        keys = list(a)
        two = self.ring.domain(2)
        acc: dict[Key, list[PolyElement]] = {}
        for i, ka in enumerate(keys):
            pa = a[ka]
            acc.setdefault(self.key_product(ka, ka), []).append(pa.square())
            for kb in keys[:i]:
                acc.setdefault(self.key_product(ka, kb), []).append((pa * a[kb]).mul_ground(two))
        return self.bounded(acc)

    def bounded(self, acc: dict[Key, list[PolyElement]]) -> ExpPoly:
        """The product whose terms ``acc`` collects, summed key by key, within the limit on terms."""
        out = {k: s for k, ps in acc.items() if (s := self.poly_sum(ps))}
        if sum(map(len, out.values())) > self.max_terms:
            raise LimitExceeded(f"a product in the evaluation has over {self.max_terms:,} terms, the limit (raise it with --max-terms)")
        return out

    def square(self, x: "Quotient") -> "Quotient | fmpq":
        """x² for x = Σ_i n_i/d_i: Σ_i n_i²/d_i² + Σ_{j<i} 2 n_i n_j/(d_i d_j), the numerators by
        :meth:`square_exp` (layer norm's variance squares values over one denominator per head and row)."""
        two = self.ring.domain(2)
        products: list[Part] = []
        for i, (n1, d1) in enumerate(x.parts):
            products.append(self.part(self.square_exp(n1), None if d1 is None else self.square_exp(d1)))
            for n2, d2 in x.parts[:i]:
                num = {k: p.mul_ground(two) for k, p in self.mul_exp(n1, n2).items()}
                products.append(self.part(num, d2 if d1 is None else self.mul_exp(d1, d2)))
        return self.make(self.merged(products))

    def mul(self, x: Any, y: Any) -> "Quotient | fmpq":
        if type(x) is fmpq:
            if type(y) is fmpq:
                return x * y
            x, y = y, x
        elif x is y:
            return self.square(x)
        if type(y) is fmpq:
            if not y:
                return fmpq(0)
            if y == 1:
                return x
            c = SYMPY_QQ(y.p, y.q)
            return Quotient(tuple(({k: p.mul_ground(c) for k, p in n.items()}, d) for n, d in x.parts), self)
        products = []
        for n1, d1 in x.parts:
            for n2, d2 in y.parts:
                num = self.mul_exp(n1, n2)
                if d1 is None or d2 is None:
                    products.append((num, d2 if d1 is None else d1))
                else:
                    products.append(self.part(num, self.mul_exp(d1, d2)))
        return self.make(self.merged(products) if len(products) > 1 else products)

    def neg(self, x: Any) -> "Quotient | fmpq":
        if type(x) is fmpq:
            return -x
        return Quotient(tuple(({k: -p for k, p in n.items()}, d) for n, d in x.parts), self)

    def div(self, x: Any, y: Any) -> "Quotient | fmpq":
        """x / y; a divisor y that depends on the inputs is recorded (as one fraction's numerator), a zero one refused."""
        if type(y) is fmpq:
            if not y:
                raise IdentityFailure("a division by zero")
            return self.mul(x, 1 / y)
        yn, yd = self.combined(y)
        if not yn:
            raise IdentityFailure("a division by zero (a value that is the zero function)")
        self.note_divisor(yn)
        quotients = [self.part(self.mul_exp(n, yd), self.mul_exp(yn, d) if d is not None else yn) for n, d in self.parts(x)]
        return self.make(self.merged(quotients) if len(quotients) > 1 else quotients)

    def note_divisor(self, e: ExpPoly) -> None:
        """Record a divisor that depends on the inputs and is not a unit (a unit r E^a T^t is nonzero).
        One that involves an uninterpreted value is counted apart, before any normalisation (dividing
        by its leading R^u would take it for a unit, and R_k may be 0)."""
        if self.has_uninterpreted(e):
            self.uninterpreted_divisors += 1
            return
        if len(e) == 1 and next(iter(e.values())).is_ground:
            return
        if not self.depends_on_inputs(e):
            return  # Σ q_k T^k with a term: nonzero, T being transcendental
        d = self.normalised(e)
        if not any(d == o for o in self.divisors):
            self.divisors.append(d)

    def depends_on_inputs(self, e: ExpPoly) -> bool:
        """Whether e involves an input variable, some E_i or some R_k (else it is a constant Σ q_k T^k)."""
        r = self.base - 1
        return any(any(k[:r]) or len(k) > self.base or not p.is_ground for k, p in e.items())

    def value_depends_on_inputs(self, x: "Quotient | fmpq") -> bool:
        return any(self.depends_on_inputs(n) or (d is not None and self.depends_on_inputs(d)) for n, d in self.parts(x))

    def has_uninterpreted(self, e: ExpPoly) -> bool:
        return any(len(k) > self.base for k in e)

    # -- uninterpreted values -------------------------------------------------------------
    def uninterpreted(self, name: str, x: "Quotient", in_domain: bool = True) -> "Quotient":
        """name(x) as the indeterminate R_k, the same k for arguments equal as functions (exact zero
        test of the difference), a new one otherwise (module docstring). Arguments whose values at
        :meth:`value_at`'s point differ are different without that test. ``in_domain``: the caller
        shows x in the function's domain at every input (R_k joins :attr:`in_domain`)."""
        v = self.value_at(x)
        for k, (other, y) in enumerate(self.uninterpreted_values):
            if other != name:
                continue
            w = self._uninterpreted_at[k]
            if v is not None and w is not None and v != w:
                continue
            if self.equal(x, y):
                break
        else:
            k = len(self.uninterpreted_values)
            self.uninterpreted_values.append((name, x))
            self._uninterpreted_at.append(v)
        if in_domain:
            self.in_domain.add(k)
        return self._uninterpreted_symbol(k)

    def power(self, x: Any, y: fmpq, positive: bool = False) -> "Quotient | fmpq":
        """x^y for a non-integer rational y. Of a value that depends on the inputs: the uninterpreted
        ``power(y)`` of x (module docstring), its argument shown positive only if ``positive`` (the
        caller's word); of a rational constant: :func:`rational_power`; of a constant with
        exponentials: refused (T^k to a fractional power has no rule here)."""
        if type(x) is fmpq:
            return rational_power(x, y)
        if not self.value_depends_on_inputs(x):
            raise IdentityFailure(f"a non-integer power {y} of a constant with exponentials has no rule")
        return self.uninterpreted(f"power({y})", x, in_domain=positive)

    def value_at(self, x: "Quotient | fmpq") -> fmpq | None:
        """x at one fixed rational point of (x, E, T, R), or None where a denominator vanishes there.

        Sending each input variable, each E_i, T and each R_k to a nonzero rational (fixed
        pseudo-random values, the same for the whole check) is a ring homomorphism from
        Q[x][E^±, T^±, R^±]; where it keeps the denominators nonzero it extends to their fractions,
        so a value that is nonzero at the point is a nonzero element of the field. (A zero value
        proves nothing: only the exact test decides equality.)
        """
        if type(x) is fmpq:
            return x
        total = fmpq(0)
        for n, d in x.parts:
            num = self._exp_poly_at(n)
            if d is None:
                total += num
                continue
            den = self._exp_poly_at(d)
            if not den:
                return None
            total += num / den
        return total

    def _exp_poly_at(self, e: ExpPoly) -> fmpq:
        known = self._values_at.get(id(e))
        if known is not None and known[0] is e:
            return known[1]
        point = self._point
        total = fmpq(0)
        for key, p in e.items():
            term = fmpq(0)
            for mono, c in p.items():
                t = rational(c)
                for i, a in enumerate(mono):
                    if a:
                        t *= point[i] ** a
                term += t
            for i, a in enumerate(key):
                if a:
                    term *= self._key_point(i) ** a
            total += term
        self._values_at[id(e)] = (e, total)  # e kept alive with its value: its id stays its own
        return total

    def _key_point(self, i: int) -> fmpq:
        """The value of key position i (E_i, then T, then the R_k) at the point."""
        while len(self._point) <= self.m + i:
            self._point.append(fmpq(self._random.randint(2, 97), self._random.randint(1, 89)))
        return self._point[self.m + i]

    def _uninterpreted_symbol(self, k: int) -> "Quotient":
        return Quotient((({self.zero_key + (0,) * k + (1,): self.one_poly}, None),), self)

    # -- affine forms and regions ---------------------------------------------------------
    def affine(self, x: "Quotient | fmpq") -> tuple[dict[int, fmpq], fmpq] | None:
        """x as an affine form of the inputs (coefficient by variable index, constant), or None if it has
        a denominator, an exponential, an uninterpreted value or a term of degree > 1."""
        if type(x) is fmpq:
            return {}, x
        if len(x.parts) != 1 or x.parts[0][1] is not None:
            return None
        num = x.parts[0][0]
        p = num.get(self.zero_key)
        if p is None or len(num) != 1:
            return None
        coefficients, constant = {}, fmpq(0)
        for mono, c in p.items():
            degree = sum(mono)
            if degree > 1:
                return None
            if degree:
                coefficients[mono.index(1)] = rational(c)
            else:
                constant = rational(c)
        return coefficients, constant

    def is_zero_on(self, x: "Quotient | fmpq", equalities: list[tuple[dict[int, fmpq], fmpq]]) -> bool:
        """Whether x vanishes on the affine subspace L where every form of ``equalities`` is 0.

        x = n/d over one denominator (d nonzero wherever the divisors are), so x vanishes on L iff n
        does; n restricted to L is n with each solved variable replaced by its affine expression in the
        free ones (Gaussian elimination over Q, :func:`solve_equalities`), a polynomial that is zero iff
        n vanishes on L (a polynomial vanishing on a nonempty relatively open part of L is zero on L).
        Polynomial numerators only: regions arise from piecewise-linear maps.
        """
        if self.is_zero(x):
            return True
        solved = solve_equalities(equalities)
        if not solved:
            return False
        num = self.combined(x)[0]
        p = num.get(self.zero_key)
        if p is None or len(num) != 1:
            raise IdentityFailure("restricting a value with exponentials or uninterpreted functions to a region's equalities has no rule")
        one = self.ring.one
        substitution = [
            (self.gens[v], sum((self.gens[w] * SYMPY_QQ(c.p, c.q) for w, c in lin.items()), one * SYMPY_QQ(const.p, const.q)))
            for v, (lin, const) in solved.items()
        ]
        return not p.compose(substitution)

    # -- exponentials ---------------------------------------------------------------------
    def exp(self, x: Any) -> "Quotient | fmpq":
        """e^x for a polynomial x = c + p': T^{cD} E^a with a the integer coordinates of p' over H."""
        if type(x) is fmpq:
            return self._exp_of(self.ring.ground_new(SYMPY_QQ(x.p, x.q)))
        if len(x.parts) != 1 or x.parts[0][1] is not None or set(x.parts[0][0]) != {self.zero_key}:
            raise IdentityFailure("an exp of a value that is not a polynomial of the inputs (it has exponentials or a denominator)")
        return self._exp_of(x.parts[0][0][self.zero_key])

    def _exp_of(self, p: PolyElement) -> "Quotient | fmpq":
        fingerprint = frozenset((m, c.numerator, c.denominator) for m, c in p.items())
        known = self._exp_cache.get(fingerprint)
        if known is not None:
            return known
        zero_monom = self.ring.zero_monom
        c = rational(p.get(zero_monom, self._zero_coeff))
        cd = c * self.denominator
        if cd.q != 1:
            raise IdentityFailure(f"an exp argument's constant {c} is not a multiple of 1/D = 1/{self.denominator}")
        self.constant_denominators.add(int(c.q))
        coords: tuple[tuple[int, int], ...] = ()
        vector = {monomial(m): rational(a) for m, a in p.items() if m != zero_monom}
        if vector:
            solved = self.basis.coordinates(vector)
            if any(a.q != 1 for a in solved.values()):
                raise IdentityFailure("an exp argument has a non-integer coordinate over the recorded exp_basis rows")
            coords = tuple(sorted((i, int(a.p)) for i, a in solved.items() if a))
            self.arguments.append((tuple(sorted(vector.items())), coords))
        key = [0] * self.base
        for i, a in coords:
            key[i] = a
        key[-1] = int(cd.p)
        out = self.make([({tuple(key): self.one_poly}, None)]) if any(key) else fmpq(1)
        self._exp_cache[fingerprint] = out
        return out

    def constant_denominator(self) -> int:
        """D as the lcm of the denominators of the constants met (1 if none)."""
        return lcm(1, *self.constant_denominators)

    # -- comparison -----------------------------------------------------------------------
    def is_zero(self, x: Any) -> bool:
        """Exact: x is the zero function (module docstring). One part n/d is zero iff n is; parts over
        distinct denominators are combined over their product first."""
        if type(x) is fmpq:
            return x == 0
        if len(x.parts) == 1:
            return not x.parts[0][0]
        return not self.combined(x)[0]

    def equal(self, x: Any, y: Any) -> bool:
        """Exact: x = y as functions (parts over one denominator cancel without any multiplication)."""
        if type(x) is fmpq and type(y) is fmpq:
            return x == y
        return self.is_zero(self.add(x, self.neg(y)))

    # -- reading the certificate's exponential polynomials --------------------------------
    def from_terms(self, terms: list[tuple[dict[int, int], fmpq, Vector]]) -> ExpPoly:
        """Σ T^{cD} E^a p over the recorded terms (coordinates a, constant c, polynomial p)."""
        out: ExpPoly = {}
        for coords, c, poly in terms:
            cd = c * self.denominator
            if cd.q != 1:
                raise IdentityFailure(f"a recorded divisor has a constant {c} that is not a multiple of 1/D")
            key = [0] * self.base
            for i, a in coords.items():
                key[i] = a
            key[-1] = int(cd.p)
            out = self.add_exp(out, {tuple(key): self.polynomial(poly)})
        return out

    def polynomial(self, v: Vector) -> PolyElement:
        dense: dict[tuple[int, ...], Any] = {}
        for mono, c in v.items():
            exps = [0] * self.m
            for i, e in mono:
                exps[i] = e
            dense[tuple(exps)] = SYMPY_QQ(c.p, c.q)
        return self.ring.dtype(dense)


class Quotient:
    """Σ_j n_j / d_j in K: one part per distinct normalised denominator (None for 1); a value that is not
    a rational constant."""

    __slots__ = ("parts", "field")

    def __init__(self, parts: tuple[Part, ...], field: Field):
        self.parts, self.field = parts, field

    def __add__(self, other: Any) -> "Quotient | fmpq":
        return self.field.add(self, _q(other))

    __radd__ = __add__

    def __sub__(self, other: Any) -> "Quotient | fmpq":
        return self.field.add(self, self.field.neg(_q(other)))

    def __rsub__(self, other: Any) -> "Quotient | fmpq":
        return self.field.add(_q(other), self.field.neg(self))

    def __mul__(self, other: Any) -> "Quotient | fmpq":
        return self.field.mul(self, _q(other))

    __rmul__ = __mul__

    def __neg__(self) -> "Quotient | fmpq":
        return self.field.neg(self)

    def __repr__(self) -> str:
        def show(e: ExpPoly) -> str:
            return " + ".join(f"({p})*{_key_str(k, self.field.base - 1)}" for k, p in sorted(e.items()))

        return " + ".join(f"[{show(n)}]" + ("" if d is None else f" / [{show(d)}]") for n, d in self.parts)


Number = Union[Quotient, fmpq]


def rational(c: Any) -> fmpq:
    """A coefficient of sympy's QQ (FLINT's or sympy's own rationals, by ground types) as an ``fmpq``."""
    return fmpq(int(SYMPY_QQ.numer(c)), int(SYMPY_QQ.denom(c)))


def rational_power(x: fmpq, y: fmpq) -> fmpq:
    """x^y for a rational x and a non-integer rational y = p/q (lowest terms, q > 1), when it is rational.

    For x = a/b >= 0 in lowest terms, x^(1/q) is rational iff a and b are perfect q-th powers
    (then it is a^(1/q) / b^(1/q), still in lowest terms); otherwise it is irrational, which this
    field does not hold. A negative x has no real q-th root to a non-integer power here, and 0 to
    a negative power is a division by zero: both refused, as is an irrational root.
    """
    if y.q == 1:
        raise IdentityFailure(f"an integer power {y} is a product, not a root")
    if x < 0:
        raise IdentityFailure(f"{x} ^ {y}: a negative number to a non-integer power is not a real number")
    if not x and y < 0:
        raise IdentityFailure(f"0 ^ {y}: a division by zero")
    q = int(y.q)
    a, a_exact = integer_nthroot(int(x.p), q)
    b, b_exact = integer_nthroot(int(x.q), q)
    if not (a_exact and b_exact):
        raise IdentityFailure(f"{x} ^ {y} is irrational: the identity checker has no rule for it")
    return fmpq(a, b) ** int(y.p)


def as_number(x: Any) -> Number | None:
    """x as a number of the field (a rational or a Quotient as it is, an int as a rational); None if it is not one."""
    if type(x) is fmpq or type(x) is Quotient:
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return fmpq(x)
    return None


def _q(x: Any) -> Number:
    q = as_number(x)
    if q is None:
        raise TypeError(f"not a number of the identity checker: {type(x).__name__}")
    return q


def solve_equalities(equalities: list[tuple[dict[int, fmpq], fmpq]]) -> dict[int, tuple[dict[int, fmpq], fmpq]]:
    """Gaussian elimination over Q: for the affine forms f_j (coefficients, constant), the solved
    variables v = Σ c_w w + c over the free ones, so that L = {every f_j = 0} is their graph. A form
    implied by the ones before it is skipped (so is 0 = c != 0, a region that is empty anyway)."""
    solved: dict[int, tuple[dict[int, fmpq], fmpq]] = {}
    for coefficients, constant in equalities:
        lin, c = _substituted(dict(coefficients), constant, solved)
        if not lin:
            continue
        v = min(lin)
        a = lin.pop(v)
        expression = ({w: -b / a for w, b in lin.items()}, -c / a)
        for u, (ul, uc) in list(solved.items()):
            if v in ul:
                solved[u] = _substituted(dict(ul), uc, {v: expression})
        solved[v] = expression
    return solved


def _substituted(lin: dict[int, fmpq], c: fmpq, solved: dict[int, tuple[dict[int, fmpq], fmpq]]) -> tuple[dict[int, fmpq], fmpq]:
    """Σ lin_v v + c with every solved variable replaced by its expression."""
    for v in [v for v in lin if v in solved]:
        a = lin.pop(v)
        sl, sc = solved[v]
        for w, b in sl.items():
            s = lin.get(w, fmpq(0)) + a * b
            if s:
                lin[w] = s
            else:
                lin.pop(w, None)
        c += a * sc
    return lin, c


def monomial(exps: tuple[int, ...]) -> Monomial:
    """A dense exponent tuple as the certificate's sorted (index, exponent) pairs."""
    return tuple((i, e) for i, e in enumerate(exps) if e)


def _key_str(k: Key, r: int) -> str:
    parts = [f"E{i}^{a}" for i, a in enumerate(k[:r]) if a]
    if k[r]:
        parts.append(f"T^{k[r]}")
    parts += [f"R{j}^{a}" for j, a in enumerate(k[r + 1 :]) if a]
    return "*".join(parts) or "1"


__all__ = ["Basis", "Field", "Quotient", "Number", "IdentityFailure", "as_number", "monomial", "rational", "rational_power"]
