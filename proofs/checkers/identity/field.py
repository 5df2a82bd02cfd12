"""The identity checker's own arithmetic: quotients of exponential polynomials over its own sparse polynomials.

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
coefficients in R = Q[x]: a dict from its *key*, the Laurent monomial E^a T^t R^u, to a nonzero
polynomial of R. As keys they cost nothing: a unit r E^a T^t multiplies by shifting keys. A
polynomial (:data:`Poly`) is a dict from monomials to nonzero ``fmpq``, a monomial spelt as
the certificate spells it, sorted (variable, exponent) pairs, and a key likewise as sorted
(position, exponent) pairs, the exponents of any sign (:data:`Key`): each costs the size of its
support, whatever the number m of variables, the number r of basis rows or the exponents, and
a product merges two short tuples (:func:`power_product`). (Sympy's sparse ring, used before,
spelt a monomial as a dense tuple of m exponents, and keys were dense tuples of r + 1: a
product of two monomials cost ~35 µs at m = 197, 16,384 variables made each monomial 128 KiB,
and U(32, 8, 8)'s 1,024 rows made each key 8 KiB; FLINT's polynomials are the prover's, and
not used here.) Sympy's ``FracField`` is not used either: its gcd normalisation took 140 s on the
softmax part of U(8, 4, 4), against 0.6 s for ring arithmetic on unreduced pairs (the lead
engineer's measurement).

**Sizes.** A forged graph can ask for any product: (mean of 120 tokens)^4, x^(2^40) by 40
squarings, (2x)^(2^40). Before a product of exponential polynomials of s and t terms is
formed, s t (the terms it can have; s(s + 1)/2 for a square) is held to the limit on the terms
a for-all-inputs proof may hold (``max_symbolic_terms``, which the cost model's estimate of the
whole proof, the prover's and this check's, is held to before anything runs, so an honest
product is within it); after it, every coefficient is held to the limit on digits (a product's
coefficient has about the digits of both factors', so each squaring doubles them); a
polynomial restricted to a region's equalities is bounded likewise before it is multiplied out
(:meth:`Field.restricted`). Exponents are only added, compared and taken modulo a prime
(:meth:`Field.value_at`), so no size limits them.

**Work.** The limits above bound each value; a graph can still form many of them (the square of
the mean of every token, at every position: each product within the limit, their number not). So
every operation counts its work before it is done (:meth:`Field.charge`): a product the bound on its
terms, a sum or a difference the terms it reads, a scaling or shift the terms it writes, a value at
the check's point its terms; the evaluator adds the n positions of every node it evaluates and every
selection pair it forms or reads. The total is held to a budget that the caller derives from the
claim's sizes alone (:func:`proofs.checkers.identity.check.work_budget`, per evaluation), so a
forged graph is refused, in one line, after at most a fixed multiple of what the construction's own
check does at those sizes.

A :class:`Quotient` is Σ_j n_j / d_j, one *part* per distinct denominator, each d_j None (for
1) or *normalised*: its largest key (in the lexicographic order of the exponent vectors, which
products preserve: :func:`key_order`) is 1 and that key's polynomial has leading coefficient 1
(the coefficient of its largest monomial, in Python's order of the spellings), reached by
dividing n_j and d_j by the unit r E^a T^t of d_j's largest term. Denominators
equal up to a unit have one normalised form, so the entries of one softmax row share it and
add by adding numerators; and the heads of a multi-head layer, each over its own row sums, are
never put over the product of those sums (one fraction per value took 219 s and 4.4 GB to
check multihead(8, 4, 4, 4, 8); parts, 4 s). Only a division
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
from typing import Any, Callable, Iterable, Union

from flint import fmpq, nmod
from sympy import integer_nthroot

from attncert.exact.errors import AttncertError, LimitExceeded
from attncert.exact.limits import current as current_limits

#: A monomial as sorted (variable index, exponent) pairs, exponents positive: the certificate's spelling,
#: ordered as Python orders tuples; () is 1.
Monomial = tuple[tuple[int, int], ...]
#: A Laurent monomial E^a T^t R^u as sorted (position, exponent) pairs, exponents nonzero of any sign:
#: position i < r for E_i, r for T, r + 1 + k for R_k; () is 1.
Key = tuple[tuple[int, int], ...]
#: A polynomial of Q[x], the certificate's and the checker's: monomial -> nonzero rational.
Poly = dict[Monomial, fmpq]
#: An exponential polynomial: key -> nonzero polynomial.
ExpPoly = dict[Key, Poly]
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

    def __init__(self, rows: list[Poly]):
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

    def coordinates(self, v: Poly, charge: Callable[[int], None] = lambda units: None) -> dict[int, fmpq]:
        """The rational a with v = Σ a_i H_i; IdentityFailure if v is outside the span. Each row is used at
        most once, but a chain of rows (each leading the next one's monomial) can make one argument read them
        all: every step is ``charge``d the terms it reads (the field's :meth:`Field.charge`)."""
        rest = dict(v)
        coords: dict[int, fmpq] = {}
        while rest:
            charge(len(rest))
            lead = max(rest)
            i = self._by_lead.get(lead)
            if i is None:
                raise IdentityFailure("an exp argument is outside the span of the recorded exp_basis rows")
            row = self.rows[i]
            charge(len(row))
            f = rest[lead] / row[lead]
            coords[i] = f
            for m, c in row.items():
                s = rest.get(m, 0) - f * c
                if s:
                    rest[m] = s
                else:
                    rest.pop(m, None)
        return coords


# -- polynomials ---------------------------------------------------------------------------------

ONE, TWO = fmpq(1), fmpq(2)
#: The polynomial 1.
UNIT: Poly = {(): ONE}


def is_constant(p: Poly) -> bool:
    """Whether the nonzero polynomial p is a rational constant."""
    return len(p) == 1 and () in p


def terms(e: ExpPoly) -> int:
    """The terms of an exponential polynomial: its polynomials' terms, over all its keys."""
    return sum(map(len, e.values()))


def fingerprint(e: ExpPoly) -> frozenset:
    """e as a hashable value, equal for equal exponential polynomials (a rational as its numerator and
    denominator: hashing an fmpq goes through Python's Fraction)."""
    return frozenset((k, frozenset((m, int(c.p), int(c.q)) for m, c in p.items())) for k, p in e.items())


def inverse_key(key: Key) -> Key:
    return tuple((p, -a) for p, a in key)


def power_product(a: Key, b: Key) -> Key:
    """a b for two monomials or two keys: the pairs of both, sorted by position, the exponents at a
    position in both added (a key's may cancel: a zero exponent is dropped)."""
    if not a:
        return b
    if not b:
        return a
    if a[-1][0] < b[0][0]:
        return a + b
    if b[-1][0] < a[0][0]:
        return b + a
    s = sorted(a + b)
    for i in range(1, len(s)):
        if s[i - 1][0] == s[i][0]:
            out = [s[0]]
            for v, e in s[1:]:
                if out and out[-1][0] == v:
                    e += out.pop()[1]
                    if not e:
                        continue
                out.append((v, e))
            return tuple(out)
    return tuple(s)


def key_order(key: Key) -> tuple[tuple[int, ...], ...]:
    """A sort key for keys in the lexicographic order of their exponent vectors (E_1, ..., E_r, T, R_1, ...).

    That order is compatible with products (k < k' implies k u < k' u), so the largest key of u e is
    u times e's largest. Two keys compare by their first pairs that differ: at a position p in one key
    only, with exponent a there, that key is the larger iff a > 0; so (p, a) maps to (1, -p, a) for
    a > 0 and to (-1, p, a) for a < 0, and the end of a key to (0,), which lies between.
    """
    return tuple((1, -p, a) if a > 0 else (-1, p, a) for p, a in key) + ((0,),)


def multiply_into(out: dict[Monomial, fmpq], p: Poly, q: Poly, factor: fmpq = ONE) -> None:
    """Add factor p q to the coefficients ``out`` (a zero sum is left for the caller to drop)."""
    get = out.get
    for ma, ca in p.items():
        if factor != 1:
            ca = ca * factor
        if not ma:
            for mb, cb in q.items():
                out[mb] = get(mb, 0) + ca * cb
            continue
        for mb, cb in q.items():
            m = power_product(ma, mb)
            out[m] = get(m, 0) + ca * cb


def square_into(out: dict[Monomial, fmpq], p: Poly) -> None:
    """Add p² to ``out``: (Σ c_m m)² = Σ c_m² m² + Σ 2 c_m c_m' m m' over the unordered pairs of distinct
    terms, each formed once."""
    get = out.get
    items = list(p.items())
    for i, (ma, ca) in enumerate(items):
        m = tuple((v, 2 * e) for v, e in ma)
        out[m] = get(m, 0) + ca * ca
        twice = ca * TWO
        for mb, cb in items[:i]:
            m = power_product(ma, mb)
            out[m] = get(m, 0) + twice * cb


def poly_sum(ps: list[Poly]) -> Poly:
    """Σ ps, zeros dropped (one summand is returned as it is: polynomials are never changed in place)."""
    if len(ps) == 1:
        return ps[0]
    acc = dict(ps[0])
    get = acc.get
    for p in ps[1:]:
        for m, c in p.items():
            acc[m] = get(m, 0) + c
    return {m: c for m, c in acc.items() if c}


def poly_product(p: Poly, q: Poly) -> Poly:
    out: dict[Monomial, fmpq] = {}
    multiply_into(out, p, q)
    return {m: c for m, c in out.items() if c}


def poly_power(p: Poly, e: int) -> Poly:
    """p^e for e >= 1, by repeated squaring."""
    out: Poly | None = None
    while True:
        if e & 1:
            out = p if out is None else poly_product(out, p)
        e >>= 1
        if not e:
            return out
        p = poly_product(p, p)


def scaled(p: Poly, c: fmpq) -> Poly:
    """c p for a nonzero rational c."""
    return {m: a * c for m, a in p.items()}


def capped_binomial(n: int, r: int, cap: int) -> int:
    """C(n, r), or cap + 1 if it is over cap; 0 for r < 0. Stepwise, C(n, i + 1) = C(n, i) (n - i)/(i + 1)
    with r <= n/2 (C(n, r) = C(n, n - r)), so the steps never decrease and stop once over cap."""
    if r < 0:
        return 0
    r = min(r, n - r)
    c = 1
    for i in range(r):
        c = c * (n - i) // (i + 1)
        if c > cap:
            return cap + 1
    return c


class Field:
    """K = Q(x)(E, T) for one certificate (with the uninterpreted values R_k): the basis, the limits on
    sizes, and the record of exps, divisors and uninterpreted values met."""

    def __init__(self, variables: list[str], basis: Basis, denominator: int, budget: int | None = None):
        self.m = len(variables)
        self.basis = basis
        self.denominator = denominator
        #: T's position in a key: the E_i come before it, the R_k after.
        self.t = len(basis)
        #: The key of 1.
        self.zero_key: Key = ()
        lim = current_limits()
        #: The most terms a product may have (a forged graph could square its way to any size): no more than
        #: the whole proof may hold, by the limit the cost model checks its estimate of them against.
        self.max_terms = lim.max_symbolic_terms
        #: The most bits a coefficient's numerator or denominator may have: one of b > ceil(3.322 d) + 1 bits
        #: is at least 2^(b - 1) > 2^(3.322 d) > 10^d (log2 10 < 3.322), over d = max_digits digits.
        self.max_bits = -(-3322 * lim.max_digits // 1000) + 1
        self._max_digits = lim.max_digits
        #: The work the check may do (module docstring, "Work"), and the work done so far.
        self.budget, self.work = budget, 0
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
        #: The R_k by (function name, their argument's value at the point as an integer, None where it has none).
        self._uninterpreted_by_value: dict[tuple[str, int | None], list[int]] = {}
        self._values_at: dict[int, tuple[ExpPoly, nmod]] = {}
        self._random = random.Random(len(variables))
        self._point = [nmod(self._random.randrange(1, PRIME), PRIME) for _ in variables]
        # by the argument's terms (hashing an fmpq goes through Python's Fraction: slow)
        self._exp_cache: dict[frozenset, Quotient | fmpq] = {}

    # -- elements -------------------------------------------------------------------------
    def variable(self, k: int) -> "Quotient":
        return Quotient((({self.zero_key: {((k, 1),): ONE}}, None),), self)

    def make(self, parts: list[Part]) -> "Quotient | fmpq":
        """Σ parts (distinct normalised denominators, nonzero numerators); a rational constant as an ``fmpq``."""
        if not parts:
            return fmpq(0)
        if len(parts) == 1:
            num, den = parts[0]
            if den is None and len(num) == 1:
                p = num.get(self.zero_key)
                if p is not None and is_constant(p):
                    return p[()]
        return Quotient(tuple(parts), self)

    def part(self, num: ExpPoly, den: ExpPoly | None) -> Part:
        """num/den with den normalised: both divided by den's leading unit (None for a denominator 1)."""
        if den is None:
            return num, None
        unit_key, r = self.leading_unit(den)
        if unit_key or r != 1:
            inv = inverse_key(unit_key)
            num = self.shift(num, inv, 1 / r)
            den = self.shift(den, inv, 1 / r)
        if len(den) == 1 and den[self.zero_key] == UNIT:
            return num, None
        return num, den

    def leading_unit(self, e: ExpPoly) -> tuple[Key, fmpq]:
        """(a, r): e's largest key (:func:`key_order`) and the coefficient of the largest monomial of its polynomial."""
        top = max(e, key=key_order)
        p = e[top]
        return top, p[max(p)]

    def normalised(self, e: ExpPoly) -> ExpPoly:
        """e divided by its leading unit: one form for all unit multiples of e."""
        top, r = self.leading_unit(e)
        return self.shift(e, inverse_key(top), 1 / r)

    def shift(self, e: ExpPoly, key: Key, r: fmpq) -> ExpPoly:
        """e times the unit r E^a T^t R^u with (a, t, u) = key."""
        self.charge(terms(e))
        return {power_product(k, key): scaled(p, r) if r != 1 else p for k, p in e.items()}

    def lift(self, q: fmpq) -> ExpPoly:
        return {self.zero_key: {(): q}} if q else {}

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
        groups: list[tuple[ExpPoly | None, dict[Key, list[Poly]]]] = []
        parts = list(parts)
        self.charge(sum(terms(num) + (terms(den) if den is not None else 0) for num, den in parts))
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
            num = {k: s for k, ps in acc.items() if (s := poly_sum(ps))}
            if num:
                out.append((num, den))
        return out

    def add_exp(self, a: ExpPoly, b: ExpPoly) -> ExpPoly:
        self.charge(len(a) + terms(b))
        out = dict(a)
        for k, p in b.items():
            s = out.get(k)
            if s is None:
                out[k] = p
            elif s := poly_sum([s, p]):
                out[k] = s
            else:
                del out[k]
        return out

    def mul_exp(self, a: ExpPoly, b: ExpPoly | None) -> ExpPoly:
        """a b (b None for 1), its size bounded before it is formed (module docstring, "Sizes")."""
        if b is None:
            return a
        bound = terms(a) * terms(b)
        self._refuse_over_terms(bound)
        self.charge(bound)
        acc: dict[Key, dict[Monomial, fmpq]] = {}
        for ka, pa in a.items():
            for kb, pb in b.items():
                multiply_into(acc.setdefault(power_product(ka, kb), {}), pa, pb)
        return self.product(acc)

    def square_exp(self, a: ExpPoly) -> ExpPoly:
        """a², as (Σ_k p_k E^k)² = Σ_k p_k² E^{2k} + Σ_{j<k} 2 p_j p_k E^{j+k}: each product of two distinct
        terms formed once, within a term as between terms (:func:`square_into`), about half the work of
        ``mul_exp(a, a)``; a has at most t(t + 1)/2 distinct products of its t terms."""
        t = terms(a)
        self._refuse_over_terms(t * (t + 1) // 2)
        self.charge(t * (t + 1) // 2)
        keys = list(a)
        acc: dict[Key, dict[Monomial, fmpq]] = {}
        for i, ka in enumerate(keys):
            pa = a[ka]
            square_into(acc.setdefault(tuple((p, 2 * x) for p, x in ka), {}), pa)
            for kb in keys[:i]:
                multiply_into(acc.setdefault(power_product(ka, kb), {}), pa, a[kb], TWO)
        return self.product(acc)

    def _refuse_over_terms(self, bound: int) -> None:
        if bound > self.max_terms:
            raise LimitExceeded(
                f"a product in the evaluation may have {bound:,} terms, over the limit of {self.max_terms:,} (raise it with --max-symbolic-terms)"
            )

    def charge(self, units: int) -> None:
        """Count ``units`` of work (terms read or formed, positions and pairs evaluated) before it is done;
        LimitExceeded once the total passes the budget (module docstring, "Work")."""
        self.work += units
        if self.budget is not None and self.work > self.budget:
            raise LimitExceeded(
                f"the evaluation does over {self.budget:,} units of work (terms, positions, selection pairs), the budget of this "
                "claim at these sizes: far more than its construction does (docs/identity.md, \"What prove and verify may hold\")"
            )

    def product(self, acc: dict[Key, dict[Monomial, fmpq]]) -> ExpPoly:
        """The product whose terms ``acc`` collects, zeros dropped, every coefficient within the limit on digits."""
        out = {}
        for k, p in acc.items():
            p = {m: c for m, c in p.items() if c}
            if p:
                self.refuse_over_digits(p)
                out[k] = p
        return out

    def refuse_over_digits(self, p: Poly) -> None:
        """LimitExceeded if a coefficient of p has over max_digits digits in its numerator or denominator."""
        if max(c.height_bits() for c in p.values()) > self.max_bits:
            raise LimitExceeded(
                f"a coefficient in the evaluation has over {self._max_digits:,} digits, the limit (raise it with --max-digits)"
            )

    def square(self, x: "Quotient") -> "Quotient | fmpq":
        """x² for x = Σ_i n_i/d_i: Σ_i n_i²/d_i² + Σ_{j<i} 2 n_i n_j/(d_i d_j), the numerators by
        :meth:`square_exp` (layer norm's variance squares values over one denominator per head and row)."""
        products: list[Part] = []
        for i, (n1, d1) in enumerate(x.parts):
            products.append(self.part(self.square_exp(n1), None if d1 is None else self.square_exp(d1)))
            for n2, d2 in x.parts[:i]:
                num = {k: scaled(p, TWO) for k, p in self.mul_exp(n1, n2).items()}
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
            self.charge(sum(terms(n) for n, _ in x.parts))
            parts = tuple(({k: scaled(p, y) for k, p in n.items()}, d) for n, d in x.parts)
            for n, _ in parts:
                for p in n.values():
                    self.refuse_over_digits(p)
            return Quotient(parts, self)
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
        self.charge(sum(terms(n) for n, _ in x.parts))
        return Quotient(tuple(({k: {m: -c for m, c in p.items()} for k, p in n.items()}, d) for n, d in x.parts), self)

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
        if len(e) == 1 and is_constant(next(iter(e.values()))):
            return
        if not self.depends_on_inputs(e):
            return  # Σ q_k T^k with a term: nonzero, T being transcendental
        d = self.normalised(e)
        self.charge(terms(d) * len(self.divisors))  # the comparisons below
        if not any(d == o for o in self.divisors):
            self.divisors.append(d)

    def depends_on_inputs(self, e: ExpPoly) -> bool:
        """Whether e involves an input variable, some E_i or some R_k (else it is a constant Σ q_k T^k)."""
        t = self.t
        return any(k and (k[0][0] < t or k[-1][0] > t) or not is_constant(p) for k, p in e.items())

    def value_depends_on_inputs(self, x: "Quotient | fmpq") -> bool:
        return any(self.depends_on_inputs(n) or (d is not None and self.depends_on_inputs(d)) for n, d in self.parts(x))

    def has_uninterpreted(self, e: ExpPoly) -> bool:
        return any(k and k[-1][0] > self.t for k in e)

    # -- uninterpreted values -------------------------------------------------------------
    def uninterpreted(self, name: str, x: "Quotient", in_domain: bool = True) -> "Quotient":
        """name(x) as the indeterminate R_k, the same k for arguments equal as functions (exact zero
        test of the difference), a new one otherwise (module docstring). Arguments whose values at
        :meth:`value_at`'s point differ are different without that test. ``in_domain``: the caller
        shows x in the function's domain at every input (R_k joins :attr:`in_domain`)."""
        at = self.value_at(x)
        v = None if at is None else int(at)
        if v is None:  # x has no value at the point: every R_k of this name is a candidate
            self.charge(len(self.uninterpreted_values))
            candidates = [k for k, (other, _) in enumerate(self.uninterpreted_values) if other == name]
        else:  # those whose argument has x's value there, or none (an argument of another value is another function)
            candidates = sorted(self._uninterpreted_by_value.get((name, v), []) + self._uninterpreted_by_value.get((name, None), []))
            self.charge(len(candidates))
        for k in candidates:
            if self.equal(x, self.uninterpreted_values[k][1]):
                break
        else:
            k = len(self.uninterpreted_values)
            self.uninterpreted_values.append((name, x))
            self._uninterpreted_by_value.setdefault((name, v), []).append(k)
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

    def value_at(self, x: "Quotient | fmpq") -> nmod | None:
        """x at one fixed point of (x, E, T, R) modulo the prime P = 2^61 - 1, or None where that is not
        defined (P divides a coefficient's denominator, or a denominator's value).

        Let A be the Laurent polynomials Z_(P)[x][E^±, T^±, R^±] whose coefficients have denominators
        prime to P. Sending each input variable, each E_i, T and each R_k to a nonzero residue mod P
        (fixed pseudo-random values, the same for the whole check) is a ring homomorphism
        φ: A -> F_P; it extends to the fractions n/d of A with φ(d) != 0, a subring of the field. So
        two values whose images differ are different elements of the field. (Equal images prove
        nothing: only the exact test decides equality.) Modulo P a power costs the logarithm of its
        exponent: a degree or an exp constant of any size (x^(2^40), e^(10^12)) is evaluated at once,
        where rationals at a rational point would grow without bound.
        """
        try:
            if type(x) is fmpq:
                return nmod(x, PRIME)
            total = nmod(0, PRIME)
            for n, d in x.parts:
                value = self._exp_poly_at(n)
                if d is not None:
                    value = value / self._exp_poly_at(d)
                total += value
            return total
        except ZeroDivisionError:  # P divides a denominator
            return None

    def _exp_poly_at(self, e: ExpPoly) -> nmod:
        known = self._values_at.get(id(e))
        if known is not None and known[0] is e:
            return known[1]
        point, total = self._point, nmod(0, PRIME)
        self.charge(terms(e))
        for key, p in e.items():
            term = nmod(0, PRIME)
            for mono, c in p.items():
                t = nmod(c, PRIME)
                for v, a in mono:
                    t *= point[v] if a == 1 else point[v] ** a
                term += t
            for i, a in key:
                term *= self._key_point(i) ** a
            total += term
        self._values_at[id(e)] = (e, total)  # e kept alive with its value: its id stays its own
        return total

    def _key_point(self, i: int) -> nmod:
        """The value of key position i (E_i, then T, then the R_k) at the point."""
        while len(self._point) <= self.m + i:
            self._point.append(nmod(self._random.randrange(1, PRIME), PRIME))
        return self._point[self.m + i]

    def _uninterpreted_symbol(self, k: int) -> "Quotient":
        return Quotient((({((self.t + 1 + k, 1),): UNIT}, None),), self)

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
        self.charge(len(p))
        coefficients, constant = {}, fmpq(0)
        for mono, c in p.items():
            if not mono:
                constant = c
            elif len(mono) == 1 and mono[0][1] == 1:
                coefficients[mono[0][0]] = c
            else:
                return None
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
        return not self.restricted(p, solved)

    def restricted(self, p: Poly, solved: dict[int, tuple[dict[int, fmpq], fmpq]]) -> Poly:
        """p with each solved variable v replaced by its affine expression s_v in the free ones.

        Its size is bounded before anything is multiplied out: a monomial Π v^{e_v} becomes at most
        Π_v C(e_v + t_v - 1, t_v - 1) terms (t_v the terms of s_v; the product over the solved v),
        each coefficient a sum of products of 1 + Σ_v e_v rationals; the sum over p's monomials of
        terms times that degree is held to the limit on terms (x^(2^40) on the leaf x = 2 would
        otherwise ask for 2^(2^40)).
        """
        subs: dict[int, Poly] = {}
        for v, (lin, const) in solved.items():
            s = {((w, 1),): c for w, c in lin.items()}
            if const:
                s[()] = const
            subs[v] = s
        size = 0
        for mono in p:
            degree, count = 1, 1
            for v, e in mono:
                if v in subs:
                    degree += e
                    count *= capped_binomial(e + len(subs[v]) - 1, len(subs[v]) - 1, self.max_terms)
                    count = min(count, self.max_terms + 1)
            size += min(degree, self.max_terms + 1) * count
            if size > self.max_terms:
                raise LimitExceeded(
                    f"a value restricted to a region's equalities may have {size:,} or more terms times degree, over the limit of "
                    f"{self.max_terms:,} (raise it with --max-symbolic-terms)"
                )
        self.charge(size)
        out: list[Poly] = []
        for mono, c in p.items():
            term: Poly = {(): c}
            free = []
            for v, e in mono:
                if v in subs:
                    term = poly_product(term, poly_power(subs[v], e))
                else:
                    free.append((v, e))
            out.append({power_product(m, tuple(free)): a for m, a in term.items()})
        return poly_sum(out)

    # -- exponentials ---------------------------------------------------------------------
    def exp(self, x: Any) -> "Quotient | fmpq":
        """e^x for a polynomial x = c + p': T^{cD} E^a with a the integer coordinates of p' over H."""
        if type(x) is fmpq:
            return self._exp_of({(): x} if x else {})
        if len(x.parts) != 1 or x.parts[0][1] is not None or set(x.parts[0][0]) != {self.zero_key}:
            raise IdentityFailure("an exp of a value that is not a polynomial of the inputs (it has exponentials or a denominator)")
        return self._exp_of(x.parts[0][0][self.zero_key])

    def _exp_of(self, p: Poly) -> "Quotient | fmpq":
        self.charge(len(p))
        fingerprint = frozenset((m, int(c.p), int(c.q)) for m, c in p.items())
        known = self._exp_cache.get(fingerprint)
        if known is not None:
            return known
        c = p.get((), fmpq(0))
        cd = c * self.denominator
        if cd.q != 1:
            raise IdentityFailure(f"an exp argument's constant {c} is not a multiple of 1/D = 1/{self.denominator}")
        self.constant_denominators.add(int(c.q))
        coords: tuple[tuple[int, int], ...] = ()
        vector = {m: a for m, a in p.items() if m}
        if vector:
            solved = self.basis.coordinates(vector, self.charge)
            if any(a.q != 1 for a in solved.values()):
                raise IdentityFailure("an exp argument has a non-integer coordinate over the recorded exp_basis rows")
            coords = tuple(sorted((i, int(a.p)) for i, a in solved.items() if a))
            self.arguments.append((tuple(sorted(vector.items())), coords))
        key = coords + (((self.t, int(cd.p)),) if cd else ())
        out = self.make([({key: UNIT}, None)]) if key else fmpq(1)
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
    def from_terms(self, terms: list[tuple[dict[int, int], fmpq, Poly]]) -> ExpPoly:
        """Σ T^{cD} E^a p over the recorded terms (coordinates a, constant c, polynomial p)."""
        out: ExpPoly = {}
        for coords, c, poly in terms:
            cd = c * self.denominator
            if cd.q != 1:
                raise IdentityFailure(f"a recorded divisor has a constant {c} that is not a multiple of 1/D")
            key = tuple(sorted(coords.items())) + (((self.t, int(cd.p)),) if cd else ())
            out = self.add_exp(out, {key: poly})
        return out


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
            return " + ".join(f"({_poly_str(p)})*{_key_str(k, self.field.t)}" for k, p in sorted(e.items()))

        return " + ".join(f"[{show(n)}]" + ("" if d is None else f" / [{show(d)}]") for n, d in self.parts)


Number = Union[Quotient, fmpq]


#: The modulus of :meth:`Field.value_at` (a Mersenne prime, within FLINT's word-sized ``nmod``).
PRIME = (1 << 61) - 1


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


def _poly_str(p: Poly) -> str:
    return " + ".join(str(c) + "".join(f"*x{v}" + (f"^{e}" if e != 1 else "") for v, e in m) for m, c in sorted(p.items()))


def _key_str(k: Key, t: int) -> str:
    return "*".join(f"E{i}^{a}" if i < t else f"T^{a}" if i == t else f"R{i - t - 1}^{a}" for i, a in k) or "1"


__all__ = ["Basis", "Field", "Quotient", "Number", "IdentityFailure", "Poly", "as_number", "rational_power"]
