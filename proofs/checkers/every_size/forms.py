r"""The checker's Σ normal form: values for every size, compared by their forms.

A value is a quotient of two *forms*. A form is a finite sum of coefficient times *term*,

    Σ_{b_1 < B_1} ... Σ_{b_m < B_m}  F_1 ... F_p ,

each bound B_i a polynomial in the sizes (no bound depends on a binder), each factor F_j an array
read ``M[e_1][e_2]`` (e_1, e_2 integer polynomials in sizes, digits and binders) or exp, relu
(of one form), inv(F) = 1 / F (of one form the checker has shown nonzero where it made the factor,
:func:`reciprocal`), max or min (of two forms); the coefficients lie in Q(sizes), here sympy's field of
rational functions (:class:`Coefficients`).

**Normal form** (:meth:`Form.add_term`), each rule an identity of real functions of the sizes and
the arrays' entries:

* a product of sums is one sum over the binders of both, renamed apart (substitution never
  captures: a term whose binder occurs in what is substituted has its binders renamed first);
* max(a, a) = min(a, a) = a; a sum over a constant range k is written out, F(0) + ... + F(k - 1)
  (none for k <= 0); a sum whose binder no factor reads is B times its term (B >= 1 wherever this form is built: group sizes proven >= 1, the
  sizes themselves, and the quotients of a range split);
* e^a e^b = e^{a + b} and e^0 = 1; ReLU(c a) = c ReLU(a) for c > 0 (:func:`positive_coefficient`),
  and inv(c a) = c^{-1} inv(a) for c of one sign at every size: the argument's first term (in key
  order) gets the coefficient 1;
* a term's *key*: the least, over the orders of its binders (Fubini: the bounds do not depend on
  the binders), of its bounds and sorted factor keys, the binders renamed ``_L_k`` in that order
  (α-renaming). L is one more than the level of any such name free in the term, so a binder's
  name is never that of a name free where it is bound; read with lexical scoping, a key names
  exactly one term. Terms with the same key are added.

Two forms with the same terms and coefficients are the same function for every size and input;
the converse fails, so the checker's verdict on a difference is "not shown", never "false".

The recorded forms (``{"coeff": [P, Q], "sums": [[b, B], ...], "factors": [...]}``) are read into
this representation (:func:`read_form`, binders scoped lexically) and normalised the same way.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any, Iterable, Mapping

from flint import fmpq
from sympy import QQ, symbols as sympy_symbols
from sympy.polys.fields import field

from attncert.exact import ParseError
from attncert.proofs.checkers.every_size.sizes import Poly, nonnegative_polynomial, parse_size, symbol_name

#: The most binders a term may hold, and the most orders of them a canonical key tries.
MAX_BINDERS, MAX_ORDERS = 16, 5040
#: The most terms a form may hold.
MAX_TERMS = 20_000
#: The longest constant range a sum is written out over (every constant range is).
MAX_WRITTEN = 256
#: The deepest nesting of forms read from a record.
MAX_NESTING = 12


class FormError(Exception):
    """A value outside the normal form (a bound that depends on a binder, a coefficient not in Q(sizes), ...)."""


class Coefficients:
    """Q(sizes): sympy's field of rational functions over Q in the size symbols."""

    def __init__(self, sizes: Iterable[str]):
        self.sizes = tuple(sorted(sizes))
        names = self.sizes or ("_",)
        self.field, *gens = field(sympy_symbols(",".join(names) + ","), QQ)
        self.gens = dict(zip(names, gens))
        self.zero, self.one = self.field.zero, self.field.one

    def const(self, c: int | fmpq) -> Any:
        if isinstance(c, fmpq):
            return self.field(QQ(int(c.p), int(c.q)))
        return self.field(c)

    def of(self, p: Poly) -> Any:
        """A polynomial in the sizes (no other symbol, no max, min, floor or mod) as a coefficient."""
        out = self.zero
        for mono, c in p.terms.items():
            t = self.field(c)
            for a, e in mono:
                if a.op != "sym" or a.args[0] not in self.sizes:
                    raise FormError(f"{p.text()} is not a polynomial in the sizes {', '.join(self.sizes)}")
                t = t * self.gens[a.args[0]] ** e
            out = out + t
        return out


def coefficient_key(c: Any) -> str:
    """A text that equal coefficients share (sympy keeps p / q reduced, in one normalisation)."""
    return f"{sorted(c.numer.items())}/{sorted(c.denom.items())}"


def positive_coefficient(c: Any) -> bool:
    """Whether c = p / q is positive at every size >= 1: p != 0, and p and q have coefficients all
    >= 0, or all <= 0 (a nonzero polynomial with coefficients of one sign has that sign there)."""
    if not c.numer:
        return False
    signs = {x > 0 for x in c.numer.coeffs()}, {x > 0 for x in c.denom.coeffs()}
    return len(signs[0]) == 1 and signs[0] == signs[1]


class Factor:
    """``read`` (block, row, col), or ``exp`` / ``relu`` / ``inv`` (one form), ``max`` / ``min`` (two, in key order)."""

    __slots__ = ("kind", "args", "_key", "_free")

    def __init__(self, kind: str, args: tuple):
        if kind in ("max", "min"):
            args = tuple(sorted(args, key=lambda f: f.key))
        self.kind, self.args = kind, args
        self._key: str | None = None
        self._free: frozenset[str] | None = None

    @property
    def key(self) -> str:
        if self._key is None:
            if self.kind == "read":
                self._key = f"{self.args[0]}[{self.args[1].text()}][{self.args[2].text()}]"
            else:
                self._key = f"{self.kind}(" + "; ".join(a.key for a in self.args) + ")"
        return self._key

    @property
    def free(self) -> frozenset[str]:
        if self._free is None:
            if self.kind == "read":
                self._free = frozenset(self.args[1].symbols() | self.args[2].symbols())
            else:
                self._free = frozenset().union(*(a.free for a in self.args))
        return self._free

    def rename(self, m: Mapping[str, Poly]) -> "Factor":
        """The factor with free names replaced (remembered, as :meth:`Form.rename`)."""
        used = sorted(k for k in m if k in self.free)
        if not used:
            return self
        # a read holds no coefficient; the forms of exp, relu, max and min hold those of their field
        memo = (None if self.kind == "read" else id(self.args[0].K), self.key, tuple((k, m[k].text()) for k in used))
        out = _RENAMED.get(memo)
        if out is None:
            if self.kind == "read":
                out = Factor("read", (self.args[0], self.args[1].substitute(m), self.args[2].substitute(m)))
            else:
                out = Factor(self.kind, tuple(a.rename(m) for a in self.args))
            _remember(memo, out)
        return out


class Term:
    """Σ over the binders ((name, bound), ...) of the product of the factors."""

    __slots__ = ("binders", "factors", "_free")

    def __init__(self, binders: tuple[tuple[str, Poly], ...], factors: tuple[Factor, ...]):
        self.binders, self.factors = binders, factors
        self._free: frozenset[str] | None = None

    @property
    def free(self) -> frozenset[str]:
        if self._free is None:
            self._free = frozenset().union(*(f.free for f in self.factors)) - {b for b, _ in self.binders}
        return self._free

    def rename(self, m: Mapping[str, Poly]) -> "Term":
        """Free names replaced (capture-avoiding: binders that occur in the replacements are renamed apart first)."""
        inner = {k: v for k, v in m.items() if k in self.free}
        if not inner:
            return self
        names = {b for b, _ in self.binders}
        t = apart(self) if names & set().union(*(v.symbols() for v in inner.values())) else self
        return Term(t.binders, tuple(f.rename(inner) for f in t.factors))


_fresh = itertools.count()


def fresh() -> str:
    """A binder name nothing else has (a certificate's names begin with a letter, these with _)."""
    return f"_b{next(_fresh)}"


def apart(t: Term) -> Term:
    """The term with fresh binder names."""
    m = {b: Poly.symbol(fresh()) for b, _ in t.binders}
    return Term(tuple((m[b].name() or "", B) for b, B in t.binders), tuple(f.rename(m) for f in t.factors))


_CANONICAL = re.compile(r"_(\d+)_\d+\Z")
#: Renamed forms remembered, at most this many.
MAX_REMEMBERED = 1 << 16
_RENAMED: dict[tuple, Any] = {}


def _remember(memo: tuple, x: Any) -> None:
    if len(_RENAMED) > MAX_REMEMBERED:
        _RENAMED.clear()
    _RENAMED[memo] = x


class Form:
    """A finite sum of coefficient times term, in normal form, indexed by the terms' keys."""

    __slots__ = ("K", "terms", "_key", "_free")

    def __init__(self, K: Coefficients):
        self.K = K
        self.terms: dict[str, tuple[Any, Term]] = {}
        self._key: str | None = None
        self._free: frozenset[str] | None = None

    # -- building ----------------------------------------------------------------------------------
    @staticmethod
    def coeff(K: Coefficients, c: Any) -> "Form":
        out = Form(K)
        out.add_term(c, Term((), ()))
        return out

    @staticmethod
    def factor(K: Coefficients, f: Factor) -> "Form":
        out = Form(K)
        out.add_term(K.one, Term((), (f,)))
        return out

    def add_term(self, c: Any, t: Term) -> None:
        """Add c times t, normalised (module docstring)."""
        if not c:
            return
        same = next((f for f in t.factors if f.kind in ("max", "min") and f.args[0].key == f.args[1].key), None)
        if same is not None:  # max(a, a) = a: the term with a in the factor's place
            k = t.factors.index(same)
            rest = t.factors[:k] + t.factors[k + 1 :]
            for c2, t2 in same.args[0].terms.values():
                t2 = apart(t2)
                self.add_term(c * c2, Term(t.binders + t2.binders, rest + t2.factors))
            return
        written = next(((b, k) for b, B in t.binders if (k := B.constant()) is not None), None)
        if written is not None:  # Σ_{b<k} F(b) = F(0) + ... + F(k - 1) (no term for k <= 0)
            b, k = written
            if k > MAX_WRITTEN:
                raise FormError(f"a sum over {k} values, more than the {MAX_WRITTEN} written out")
            rest = tuple(x for x in t.binders if x[0] != b)
            for e in range(k):
                m = {b: Poly.const(e)}
                self.add_term(c, Term(rest, tuple(f.rename(m) for f in t.factors)))
            return
        c, t = self._normal(c, t)
        if not c:
            return
        key, t = canonical(t)
        self._insert(key, c, t)

    def _normal(self, c: Any, t: Term) -> tuple[Any, Term]:
        names = {b for b, _ in t.binders}
        for _, B in t.binders:
            if B.symbols() & names:
                raise FormError(f"the bound {B.text()} of a sum depends on another binder")
        used = frozenset().union(*(f.free for f in t.factors))
        binders = []
        for b, B in t.binders:
            if b in used:
                binders.append((b, B))
            else:  # Σ_{b < B} F = B F, F free of b
                c = c * self.K.of(B)
        if len(binders) > MAX_BINDERS:
            raise FormError(f"a term of more than {MAX_BINDERS} sums")
        exps, others = [], []
        for f in t.factors:
            if f.kind == "exp":
                exps.append(f)
                continue
            if f.kind == "relu" and f.args[0].terms:
                first = f.args[0].terms[min(f.args[0].terms)][0]
                if first != self.K.one and positive_coefficient(first):  # ReLU(c a) = c ReLU(a), c > 0
                    f = Factor("relu", (f.args[0].scale(1 / first),))
                    c = c * first
            if f.kind == "inv" and f.args[0].terms:
                first = f.args[0].terms[min(f.args[0].terms)][0]
                if first != self.K.one and (positive_coefficient(first) or positive_coefficient(-first)):  # 1 / (c a) = c^{-1} / a
                    f = Factor("inv", (f.args[0].scale(1 / first),))
                    c = c / first
            others.append(f)
        if len(exps) > 1:  # e^a e^b = e^{a + b}
            arg = exps[0].args[0]
            for f in exps[1:]:
                arg = arg + f.args[0]
            exps = [Factor("exp", (arg,))]
        if exps and not exps[0].args[0].terms:  # e^0 = 1
            exps = []
        return c, Term(tuple(binders), tuple(others + exps))

    # -- arithmetic ----------------------------------------------------------------------------------
    def __add__(self, o: "Form") -> "Form":
        out = self.copy()
        for key, (c, t) in o.terms.items():
            out._insert(key, c, t)
        return out

    def _insert(self, key: str, c: Any, t: Term) -> None:
        """Add c times a term already normal, of this key."""
        if key in self.terms:
            c = self.terms[key][0] + c
            if not c:
                del self.terms[key]
                return
        self.terms[key] = (c, t)
        if len(self.terms) > MAX_TERMS:
            raise FormError(f"a form of more than {MAX_TERMS:,} terms")

    def copy(self) -> "Form":
        out = Form(self.K)
        out.terms = dict(self.terms)
        return out

    def scale(self, c: Any) -> "Form":
        """c times the form (a normal term times a coefficient is normal: its key stays)."""
        out = Form(self.K)
        if c:
            out.terms = {key: (c0 * c, t) for key, (c0, t) in self.terms.items()}
        return out

    def __neg__(self) -> "Form":
        return self.scale(-self.K.one)

    def __sub__(self, o: "Form") -> "Form":
        return self + (-o)

    def __mul__(self, o: "Form") -> "Form":
        out = Form(self.K)
        for c1, t1 in self.terms.values():
            for c2, t2 in o.terms.values():
                a, b = apart(t1), apart(t2)
                out.add_term(c1 * c2, Term(a.binders + b.binders, a.factors + b.factors))
        return out

    def summed(self, binder: str, bound: Poly) -> "Form":
        """Σ_{binder < bound} of this form (the binder a name free in it; bound >= 1 where it is used)."""
        out = Form(self.K)
        for c, t in self.terms.values():
            out.add_term(c, Term(((binder, bound),) + t.binders, t.factors))
        return out

    def rename(self, m: Mapping[str, Poly]) -> "Form":
        """Free names replaced by polynomials (binders untouched, never captured). Remembered: a form is
        not changed once built, and the same renaming of the same form recurs (a canonical key tries it)."""
        used = sorted(k for k in m if k in self.free)
        if not used:
            return self
        memo = (id(self.K), self.key, tuple((k, m[k].text()) for k in used))
        out = _RENAMED.get(memo)
        if out is None:
            out = Form(self.K)
            for c, t in self.terms.values():
                out.add_term(c, t.rename(m))
            _remember(memo, out)
        return out

    # -- reading ------------------------------------------------------------------------------------
    @property
    def free(self) -> frozenset[str]:
        if self._free is None:
            self._free = frozenset().union(*(t.free for _, t in self.terms.values()))
        return self._free

    @property
    def key(self) -> str:
        if self._key is None:
            self._key = " + ".join(sorted(f"{coefficient_key(c)} * {k}" for k, (c, _) in self.terms.items())) or "0"
        return self._key

    def constant(self) -> Any | None:
        """The coefficient if the form is one (no binder, no factor)."""
        if not self.terms:
            return self.K.zero
        if len(self.terms) == 1:
            c, t = next(iter(self.terms.values()))
            if not t.factors and not t.binders:
                return c
        return None

    def same(self, o: "Form") -> bool:
        """The same terms with the same coefficients."""
        return self.terms.keys() == o.terms.keys() and all(not (c - o.terms[k][0]) for k, (c, _) in self.terms.items())


def canonical(t: Term) -> tuple[str, Term]:
    """The term's key and the term with its binders renamed canonically (module docstring)."""
    if not t.binders:
        factors = sorted(t.factors, key=lambda f: f.key)
        return "Σ() " + " * ".join(f.key for f in factors), Term((), tuple(factors))
    level = 1 + max((int(m.group(1)) for v in t.free if (m := _CANONICAL.match(v))), default=-1)
    best: tuple[str, Term] | None = None
    for order in _orders(t):
        m = {b: Poly.symbol(f"_{level}_{k}") for k, (b, _) in enumerate(order)}
        factors = sorted((f.rename(m) for f in t.factors), key=lambda f: f.key)
        key = "Σ(" + ", ".join(B.text() for _, B in order) + ") " + " * ".join(f.key for f in factors)
        if best is None or key < best[0]:
            best = (key, Term(tuple((m[b].name() or "", B) for b, B in order), tuple(factors)))
    assert best is not None
    return best


def _orders(t: Term) -> Iterable[tuple[tuple[str, Poly], ...]]:
    """The orders of the binders tried: sorted by a signature renaming does not change (the bound, and
    the keys of the factors that read the binder, it as ``_p`` and the others as ``_o``); every order
    of the binders whose signatures tie."""
    if len(t.binders) < 2:
        return [t.binders]
    names = [b for b, _ in t.binders]
    sig = {}
    for b, B in t.binders:
        m = {x: Poly.symbol("_p" if x == b else "_o") for x in names}
        sig[b] = (B.text(), tuple(sorted(f.rename(m).key for f in t.factors if b in f.free)))
    ranked = sorted(t.binders, key=lambda bB: sig[bB[0]])
    groups = [list(g) for _, g in itertools.groupby(ranked, key=lambda bB: sig[bB[0]])]
    if math.prod(math.factorial(len(g)) for g in groups) > MAX_ORDERS:
        raise FormError(f"a term whose canonical key would try more than {MAX_ORDERS} orders of its binders")
    return (tuple(x for part in parts for x in part) for parts in itertools.product(*(itertools.permutations(g) for g in groups)))


def read(K: Coefficients, block: str, row: Poly, col: Poly) -> Form:
    return Form.factor(K, Factor("read", (block, row, col)))


def exp(K: Coefficients, a: Form) -> Form:
    return Form.factor(K, Factor("exp", (a,)))


def relu(K: Coefficients, a: Form) -> Form:
    return Form.factor(K, Factor("relu", (a,)))


def reciprocal(a: Form, data_rows: tuple[str, Poly] | None = None) -> Form:
    """1 / a as the factor inv(a), for a shown positive or negative at every size and input (:func:`positive`, the
    tags' hypothesis ``data_rows`` included); one term c e^E (c positive at every size) is c^{-1} e^{-E} instead, as
    a quotient's denominator of that shape is divided out. FormError if a is not shown nonzero."""
    if not (positive(a, data_rows) or positive(-a, data_rows)):
        raise FormError("the reciprocal of a form not shown nonzero at every size and input")
    if len(a.terms) == 1:
        c, t = next(iter(a.terms.values()))
        if not t.binders and all(f.kind == "exp" for f in t.factors) and positive_coefficient(c):
            out = Form.coeff(a.K, 1 / c)
            for f in t.factors:
                out = out * exp(a.K, -f.args[0])
            return out
    return Form.factor(a.K, Factor("inv", (a,)))


def extremum(K: Coefficients, kind: str, a: Form, b: Form) -> Form:
    """max(a, b) or min(a, b); a itself when both are the same form."""
    if a.key == b.key:
        return a
    return Form.factor(K, Factor(kind, (a, b)))


def positive(f: Form, data_rows: tuple[str, Poly] | None = None) -> bool:
    """Whether the form is shown positive at every size >= 1 and every input: at least one term, each
    a coefficient positive there (:func:`positive_coefficient`) times exp factors only, summed over
    ranges each a nonzero polynomial in the sizes with positive coefficients (>= 1 there, so the sum
    is not empty: a range cut's part may be empty).

    ``data_rows`` = (M, R) adds the hypothesis that the tags tag(M)[k][0], k < R, are 0 or 1 and some is 1:
    a term may then also hold tags tag(M)[e][0] whose row e is one of its binders of range R, or an integer in
    [0, R) (a fixed R's sum written out). Each term is then >= 0; for a row k whose tag is 1, a term whose
    integer rows are all k is > 0 (its summand with every tag binder at k is). So the form is > 0 if for each
    k < R a term's integer rows are all k: one term without any where R is a size, else each k checked."""
    if not f.terms:
        return False
    rows_of: list[frozenset[int]] = []
    for c, t in f.terms.values():
        bounds = dict(t.binders)
        if not positive_coefficient(c) or not all(nonnegative_polynomial(B, f.K.sizes) for B in bounds.values()):
            return False
        fixed: set[int] = set()
        for x in t.factors:
            if x.kind == "exp":
                continue
            if data_rows is None or x.kind != "read" or x.args[0] != f"tag({data_rows[0]})" or x.args[2] != Poly.const(0):
                return False
            row, R = x.args[1], data_rows[1]
            k, top = row.constant(), R.constant()
            if k is not None and top is not None and 0 <= k < top:
                fixed.add(k)
            elif row.name() is None or bounds.get(row.name()) != R:
                return False
        rows_of.append(frozenset(fixed))
    if any(not rows for rows in rows_of):
        return True
    top = data_rows[1].constant() if data_rows is not None else None
    return top is not None and all(frozenset({k}) in rows_of for k in range(top))


# -- the recorded forms ------------------------------------------------------------------------------

FACTOR_KINDS = {"read": 3, "exp": 1, "relu": 1, "inv": 1, "max": 2, "min": 2}


def read_form(K: Coefficients, obj: Any, blocks: frozenset[str], depth: int = 0) -> Form:
    """A recorded form in the checker's representation; ParseError if it is not one."""
    if depth > MAX_NESTING:
        raise ParseError("a recorded form nests too deeply")
    if not isinstance(obj, list) or len(obj) > MAX_TERMS:
        raise ParseError("a recorded form is a list of terms")
    out = Form(K)
    for term in obj:
        if not isinstance(term, dict) or set(term) != {"coeff", "sums", "factors"}:
            raise ParseError("a recorded term has coeff, sums and factors")
        cf, sums, factors = term["coeff"], term["sums"], term["factors"]
        if not isinstance(cf, list) or len(cf) != 2 or not isinstance(sums, list) or not isinstance(factors, list):
            raise ParseError("a recorded term's coeff is [P, Q], its sums and factors lists")
        try:
            p, q = K.of(parse_size(cf[0])), K.of(parse_size(cf[1]))
        except FormError as e:
            raise ParseError(f"a recorded coefficient: {e}") from None
        if not q:
            raise ParseError("a recorded coefficient divides by zero")
        binders = []
        for s in sums:
            if not isinstance(s, list) or len(s) != 2:
                raise ParseError("a recorded sum is [binder, bound]")
            binders.append((symbol_name(s[0], "a binder"), parse_size(s[1])))
        if len({b for b, _ in binders}) != len(binders):
            raise ParseError("a recorded term binds one name twice")
        try:
            out.add_term(p / q, Term(tuple(binders), tuple(_read_factor(K, f, blocks, depth) for f in factors)))
        except FormError as e:
            raise ParseError(f"a recorded form is not a normal form: {e}") from None
    return out


def _read_factor(K: Coefficients, obj: Any, blocks: frozenset[str], depth: int) -> Factor:
    if not isinstance(obj, dict) or len(obj) != 1:
        raise ParseError("a recorded factor is one of read, exp, relu, inv, max, min")
    ((kind, args),) = obj.items()
    if kind not in FACTOR_KINDS or not isinstance(args, list) or len(args) != FACTOR_KINDS[kind]:
        raise ParseError(f"a recorded factor {str(kind)[:20]!r} with {FACTOR_KINDS.get(kind, '?')} arguments")
    if kind == "read":
        if args[0] not in blocks:
            raise ParseError(f"a recorded read of {str(args[0])[:20]!r}, which is no input block")
        return Factor("read", (args[0], parse_size(args[1]), parse_size(args[2])))
    return Factor(kind, tuple(read_form(K, a, blocks, depth + 1) for a in args))
