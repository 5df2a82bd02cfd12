r"""The Σ normal form: values of a construction for every size, decided equal by their forms.

A value is a quotient of two *forms*; a form is a finite sum of coefficient times *term*,

    Σ_{b_1 < B_1} ... Σ_{b_m < B_m}  F_1 F_2 ... F_p ,

the B_i size expressions (the same whatever the other binders), the F_j *factors*: an array read
``M[e_1][e_2]`` (e_1, e_2 integer polynomials in the sizes, the region's digits and the binders), or
exp, relu, max, min of a form, or inv(F) = 1 / F of a form F shown nonzero (:func:`reciprocal`): a sum
of quotients whose denominators depend on the summation binder (the heads of multi-head attention
over a symbolic number of heads, Σ_{m<h} a_m / b_m) is Σ_m a_m inv(b_m). Coefficients lie in Q(sizes), the
field of rational functions of the size symbols (:class:`Coeff`, FLINT's ``fmpq_mpoly``), so the 1/d of a mean cancels the d of a later
product exactly.

**The normal form.** Sums and products are expanded (linearity; a product of sums is one sum over
the binders of both, renamed apart); a binder no factor reads is summed out (Σ_{b<B} F = B F), a sum over a constant
range is written out (Σ_{b<k} F(b) = F(0) + ... + F(k - 1), so that a size fixed to an integer gives one form); the
exp factors of a term are one, exp of the sum of their arguments (e^a e^b = e^{a+b}); ReLU(c a) = c ReLU(a) takes
out a coefficient positive at every size (the first term of the argument gets 1), and inv(c F) = c^{-1} inv(F)
a coefficient nonzero at every size (the same first term gets 1); a term's key is
its binders' bounds and its sorted factors with the binders renamed canonically (α-renaming), taking
the least key over every order of the binders (Fubini: the bounds do not depend on the binders, so
the order of the sums is free). Terms with the same key are added.

**What equality of forms proves.** Every rewrite above is an identity of real-valued functions of
the sizes and the arrays' entries, so two expressions whose forms are equal are equal for every size
and every input. The converse fails (two equal functions may have different forms), so a difference
is "no proof", never "false": a counterexample comes from a concrete size and input, evaluated
exactly (:mod:`proofs.every_size.prove`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from flint import fmpq, fmpq_mpoly, fmpq_mpoly_ctx

from attncert.constructions.sizes.expr import SizeExpr, parse
from attncert.exact.errors import AttncertError

#: The most binders a term may hold (canonical renaming tries every order of them).
MAX_BINDERS = 6
#: The most terms a form may hold.
MAX_TERMS = 20_000
#: The longest constant range a sum is written out over (every constant range is).
MAX_WRITTEN = 256


class FormError(AttncertError):
    """A value outside the normal form (a quotient inside exp, a bound that depends on a binder, ...)."""


# -- coefficients: Q(sizes) ------------------------------------------------------------------------


class Coeff:
    """p / q with p, q polynomials in the size symbols (FLINT ``fmpq_mpoly``), q != 0, reduced, q monic."""

    __slots__ = ("p", "q")

    def __init__(self, p: fmpq_mpoly, q: fmpq_mpoly):
        if q.is_zero():
            raise FormError("a coefficient divides by zero")
        g = p.gcd(q)
        if not g.is_one() and not g.is_zero():
            p, q = p / g, q / g
        lc = q.leading_coefficient()
        if lc != 1:
            p, q = p * (1 / lc), q * (1 / lc)
        self.p, self.q = p, q

    def is_zero(self) -> bool:
        return self.p.is_zero()

    def __add__(self, o: "Coeff") -> "Coeff":
        if self.q == o.q:
            return Coeff(self.p + o.p, self.q)
        return Coeff(self.p * o.q + o.p * self.q, self.q * o.q)

    def __mul__(self, o: "Coeff") -> "Coeff":
        return Coeff(self.p * o.p, self.q * o.q)

    def __neg__(self) -> "Coeff":
        return Coeff(-self.p, self.q)

    def inverse(self) -> "Coeff":
        return Coeff(self.q, self.p)

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Coeff) and self.p == o.p and self.q == o.q

    def __hash__(self) -> int:
        return hash((str(self.p), str(self.q)))

    def text(self) -> str:
        return str(self.p) if self.q.is_one() else f"({self.p})/({self.q})"

    def to_json(self, symbols: tuple[str, ...]) -> list[str]:
        """[P, Q]: the coefficient P / Q with P, Q integer polynomials (size-expression texts), scaled to
        have integer coefficients without a common factor, Q's leading coefficient positive."""
        from math import gcd, lcm

        terms = [(m, c) for x in (self.p, self.q) for m, c in zip(x.monoms(), x.coeffs())]
        scale = lcm(*(int(c.q) for _, c in terms)) if terms else 1
        g = 0
        for _, c in terms:
            g = gcd(g, int(c.p) * (scale // int(c.q)))
        g = g or 1

        def text(x: fmpq_mpoly) -> str:
            out: dict[Any, int] = {}
            for mono, c in zip(x.monoms(), x.coeffs()):
                key = tuple(sorted((SizeExpr.symbol(s).atoms().pop(), e) for s, e in zip(symbols, mono) if e))
                out[key] = int(c.p) * (scale // int(c.q)) // g
            return SizeExpr(out).text()

        return [text(self.p), text(self.q)]


class Sizes:
    """The size symbols of a proof and the polynomial ring of its coefficients."""

    def __init__(self, symbols: Iterable[str]):
        self.symbols = tuple(sorted(symbols))
        self.ctx = fmpq_mpoly_ctx.get(self.symbols or ("_",), "lex")

    def const(self, c: Any) -> Coeff:
        return Coeff(self.ctx.from_dict({(0,) * self.ctx.nvars(): fmpq(c)}) if c else self.ctx.from_dict({}), self.ctx.from_dict({(0,) * self.ctx.nvars(): 1}))

    def poly(self, e: SizeExpr) -> fmpq_mpoly:
        """A size polynomial (size symbols only, no max, min, floor or mod) in the coefficient ring."""
        out = self.ctx.from_dict({})
        for mono, c in e.terms.items():
            exps = [0] * self.ctx.nvars()
            for atom, k in mono:
                if atom.op != "sym" or atom.args[0] not in self.symbols:
                    raise FormError(f"the coefficient {e.text()} is not a polynomial in the sizes {', '.join(self.symbols)}")
                exps[self.symbols.index(atom.args[0])] += k
            out += self.ctx.from_dict({tuple(exps): c})
        return out

    def of(self, e: SizeExpr) -> Coeff:
        return Coeff(self.poly(e), self.poly(SizeExpr.const(1)))


# -- factors, terms, forms ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Factor:
    """``read`` (block, row, col: SizeExpr), or ``exp`` / ``relu`` / ``inv`` (a form) / ``max`` / ``min`` (two forms)."""

    kind: str
    args: tuple[Any, ...]

    def rename(self, m: Mapping[str, SizeExpr]) -> "Factor":
        if self.kind == "read":
            return Factor("read", (self.args[0],) + tuple(_subst(e, m) for e in self.args[1:]))
        args = tuple(a.rename(m) for a in self.args)
        if self.kind in ("max", "min"):  # symmetric: its arguments in the order of their keys
            args = tuple(sorted(args, key=Form.key))
        return Factor(self.kind, args)

    def free(self) -> set[str]:
        if self.kind == "read":
            return set().union(*(e.symbols() for e in self.args[1:]))
        return set().union(*(a.free() for a in self.args))

    def key(self) -> str:
        if self.kind == "read":
            return f"{self.args[0]}[{self.args[1].text()}][{self.args[2].text()}]"
        return f"{self.kind}(" + "; ".join(a.key() for a in self.args) + ")"

    def to_json(self) -> dict[str, Any]:
        if self.kind == "read":
            return {"read": [self.args[0], self.args[1].text(), self.args[2].text()]}
        return {self.kind: [a.to_json() for a in self.args]}


@dataclass(frozen=True)
class Term:
    """Σ over the binders ((name, bound), ...) of the product of the factors."""

    binders: tuple[tuple[str, SizeExpr], ...]
    factors: tuple[Factor, ...]

    def rename(self, m: Mapping[str, SizeExpr]) -> "Term":
        """The free digits replaced, capture-avoiding: a binder of this term named like a symbol of a
        replacement (an outer binder renamed canonically ``z0_0`` into a sum whose own binder is
        ``z0_0``) is renamed apart first, so that Σ_k exp(Σ_j X[i][j] X[k][j]) stays that sum."""
        bound = {b for b, _ in self.binders}
        inner = {k: v for k, v in m.items() if k not in bound}
        if any(v.symbols() & bound for v in inner.values()):
            return _apart(self).rename(inner)
        return Term(self.binders, tuple(f.rename(inner) for f in self.factors))

    def free(self) -> set[str]:
        return set().union(*(f.free() for f in self.factors)) - {b for b, _ in self.binders}


_fresh = itertools.count()


def fresh(prefix: str = "b") -> str:
    """A binder name no other binder of this proof has (names are made canonical only in keys)."""
    return f"{prefix}{next(_fresh)}"


def reset_fresh() -> None:
    """Start a proof's binder names afresh, so that a proof's record does not depend on what ran before."""
    global _fresh
    _fresh = itertools.count()


class Form:
    """A finite sum of coefficient times term (module docstring), kept in normal form."""

    __slots__ = ("sizes", "terms")

    def __init__(self, sizes: Sizes, terms: Mapping[str, tuple[Coeff, Term]] | None = None):
        self.sizes = sizes
        self.terms: dict[str, tuple[Coeff, Term]] = dict(terms or {})

    # -- building ---------------------------------------------------------------------------------
    @staticmethod
    def const(sizes: Sizes, c: Any) -> "Form":
        return Form.of_term(sizes, sizes.const(c), Term((), ()))

    @staticmethod
    def coeff(sizes: Sizes, c: Coeff) -> "Form":
        return Form.of_term(sizes, c, Term((), ()))

    @staticmethod
    def factor(sizes: Sizes, f: Factor) -> "Form":
        return Form.of_term(sizes, sizes.const(1), Term((), (f,)))

    @staticmethod
    def of_term(sizes: Sizes, c: Coeff, t: Term) -> "Form":
        out = Form(sizes)
        out._add(c, t)
        return out

    def _add(self, c: Coeff, t: Term) -> None:
        same = next((f for f in t.factors if f.kind in ("max", "min") and f.args[0].key() == f.args[1].key()), None)
        if same is not None:  # max(a, a) = a: the term is expanded with a in the factor's place
            k = t.factors.index(same)
            rest = t.factors[:k] + t.factors[k + 1 :]
            for c2, t2 in same.args[0].terms.values():
                t2 = _apart(t2)  # a's own sums renamed apart; the term's binders stay free in a
                self._add(c * c2, Term(t.binders + t2.binders, rest + t2.factors))
            return
        written = next(((b, k) for b, B in t.binders if (k := B.constant()) is not None), None)
        if written is not None:  # Σ_{b<k} F(b) = F(0) + ... + F(k - 1) (no term for k <= 0)
            b, k = written
            if k > MAX_WRITTEN:
                raise FormError(f"a sum over {k} values, more than the {MAX_WRITTEN} written out")
            rest = tuple(x for x in t.binders if x[0] != b)
            for e in range(k):
                m = {b: SizeExpr.const(e)}
                self._add(c, Term(rest, tuple(f.rename(m) for f in t.factors)))
            return
        c, t = _normal(self.sizes, c, t)
        if c.is_zero():
            return
        k, t = canonical(t)
        if k in self.terms:
            c = self.terms[k][0] + c
            if c.is_zero():
                del self.terms[k]
                return
        self.terms[k] = (c, t)
        if len(self.terms) > MAX_TERMS:
            raise FormError(f"a form of more than {MAX_TERMS:,} terms")

    # -- arithmetic --------------------------------------------------------------------------------
    def __add__(self, o: "Form") -> "Form":
        out = Form(self.sizes, self.terms)
        for c, t in o.terms.values():
            out._add(c, t)
        return out

    def scale(self, c: Coeff) -> "Form":
        out = Form(self.sizes)
        for c0, t in self.terms.values():
            out._add(c0 * c, t)
        return out

    def __neg__(self) -> "Form":
        return self.scale(self.sizes.const(-1))

    def __sub__(self, o: "Form") -> "Form":
        return self + (-o)

    def __mul__(self, o: "Form") -> "Form":
        out = Form(self.sizes)
        for c1, t1 in self.terms.values():
            for c2, t2 in o.terms.values():
                a, b = _apart(t1), _apart(t2)
                out._add(c1 * c2, Term(a.binders + b.binders, a.factors + b.factors))
        return out

    def summed(self, binder: str, bound: SizeExpr) -> "Form":
        """Σ_{binder < bound} of this form (binder a digit free in it)."""
        out = Form(self.sizes)
        for c, t in self.terms.values():
            out._add(c, Term(((binder, bound),) + t.binders, t.factors))
        return out

    def rename(self, m: Mapping[str, SizeExpr]) -> "Form":
        """The free digits replaced by integer polynomials (binders untouched)."""
        out = Form(self.sizes)
        for c, t in self.terms.values():
            out._add(c, t.rename(m))
        return out

    def free(self) -> set[str]:
        return set().union(*(t.free() for _, t in self.terms.values()))

    def is_zero(self) -> bool:
        return not self.terms

    def constant(self) -> Coeff | None:
        """The coefficient if the form is one (no factor, no binder)."""
        if not self.terms:
            return self.sizes.const(0)
        if len(self.terms) == 1:
            c, t = next(iter(self.terms.values()))
            if not t.factors and not t.binders:
                return c
        return None

    def same(self, o: "Form") -> bool:
        """The same terms with the same coefficients (the same normal form)."""
        return self.terms.keys() == o.terms.keys() and all(c == o.terms[k][0] for k, (c, _) in self.terms.items())

    def key(self) -> str:
        """The canonical text of the form (its terms' keys, sorted, with their coefficients)."""
        return " + ".join(sorted(f"{c.text()} * {k}" for k, (c, _) in self.terms.items())) or "0"

    def to_json(self) -> list[dict[str, Any]]:
        """The form's terms in the order of their keys, each canonical: its coefficient (:meth:`Coeff.to_json`),
        its sums [[binder, bound], ...] and its factors (``{"read": [block, row, col]}``, ``{"exp": [form]}``,
        ``{"relu": [form]}``, ``{"inv": [form]}``, ``{"max": [form, form]}``, ``{"min": [form, form]}``)."""
        return [
            {"coeff": c.to_json(self.sizes.symbols), "sums": [[b, B.text()] for b, B in t.binders], "factors": [f.to_json() for f in t.factors]}
            for _, (c, t) in sorted(self.terms.items())
        ]


def _apart(t: Term) -> Term:
    """The term with its binders renamed to fresh names (a product of two sums binds both apart)."""
    m = {b: SizeExpr.symbol(fresh()) for b, _ in t.binders}
    return Term(tuple((m[b].text(), B) for b, B in t.binders), tuple(f.rename(m) for f in t.factors))


def _normal(sizes: Sizes, c: Coeff, t: Term) -> tuple[Coeff, Term]:
    """The term with unused binders summed out and its exp factors merged into one."""
    used = set().union(*(f.free() for f in t.factors))
    binders = []
    for b, B in t.binders:
        if B.symbols() & {x for x, _ in t.binders}:
            raise FormError(f"the bound {B.text()} of a sum depends on another binder")
        if b in used:
            binders.append((b, B))
        else:
            c = c * sizes.of(B)  # Σ_{b < B} F = B F when F does not read b
    exps = [f for f in t.factors if f.kind == "exp"]
    others = []
    for f in t.factors:
        if f.kind == "relu" and not f.args[0].is_zero():
            # ReLU is positively homogeneous: ReLU(c a) = c ReLU(a) for c > 0; the argument's first term
            # (in key order) gets the coefficient 1 when its coefficient is positive for every size
            first = f.args[0].terms[min(f.args[0].terms)][0]
            if positive_coeff(first) and first != sizes.const(1):
                f = Factor("relu", (f.args[0].scale(first.inverse()),))
                c = c * first
        if f.kind == "inv" and not f.args[0].is_zero():
            # 1 / (c a) = c^{-1} (1 / a) for c nonzero at every size: the argument's first term gets the coefficient 1
            first = f.args[0].terms[min(f.args[0].terms)][0]
            if first != sizes.const(1) and (positive_coeff(first) or positive_coeff(-first)):
                f = Factor("inv", (f.args[0].scale(first.inverse()),))
                c = c * first.inverse()
        if f.kind != "exp":
            others.append(f)
    if len(exps) > 1:
        arg = exps[0].args[0]
        for f in exps[1:]:
            arg = arg + f.args[0]
        exps = [Factor("exp", (arg,))] if not arg.is_zero() else []
    elif exps and exps[0].args[0].is_zero():
        exps = []  # e^0 = 1
    if len(binders) > MAX_BINDERS:
        raise FormError(f"a term of more than {MAX_BINDERS} sums")
    return c, Term(tuple(binders), tuple(others + exps))


_CANONICAL = re.compile(r"z(\d+)_\d+\Z")


def canonical(t: Term) -> tuple[str, Term]:
    """The term's key and the term in canonical form: the least key over the orders of its binders
    (:func:`_orders`), the binders renamed ``zL_k`` in that order and its factors sorted by key.

    L is one more than the level of any canonical name free in the term (an outer binder, renamed
    while the outer term's key is computed), so that a binder never prints as a free digit does."""
    level = 1 + max((int(m.group(1)) for v in t.free() if (m := _CANONICAL.match(v))), default=-1)
    best: tuple[str, Term] | None = None
    for order in _orders(t):
        m = {b: SizeExpr.symbol(f"z{level}_{k}") for k, (b, _) in enumerate(order)}
        factors = sorted(((f.key(), f) for f in (g.rename(m) for g in t.factors)), key=lambda kf: kf[0])
        key = "sum(" + ", ".join(B.text() for _, B in order) + ") " + " * ".join(k for k, _ in factors)
        if best is None or key < best[0]:
            best = (key, Term(tuple((m[b].text(), B) for b, B in order), tuple(f for _, f in factors)))
    return best if best is not None else ("", t)


def _orders(t: Term) -> Iterable[tuple[tuple[str, SizeExpr], ...]]:
    """The orders of the binders the canonical key is the least over: sorted by a signature that renaming
    does not change (the bound, and the factors' keys with this binder as ``zp`` and the others as ``zo``),
    every order of binders whose signatures tie. Every order would give the same least key; these are fewer."""
    if len(t.binders) < 2:
        return [t.binders]
    names = [b for b, _ in t.binders]
    sig = {}
    for b, B in t.binders:
        m = {x: SizeExpr.symbol("zp" if x == b else "zo") for x in names}
        sig[b] = (B.text(), tuple(sorted(f.rename(m).key() for f in t.factors if b in f.free())))
    ranked = sorted(t.binders, key=lambda bB: sig[bB[0]])
    groups = [list(g) for _, g in itertools.groupby(ranked, key=lambda bB: sig[bB[0]])]
    return (tuple(x for part in parts for x in part) for parts in itertools.product(*(itertools.permutations(g) for g in groups)))


def _subst(e: SizeExpr, m: Mapping[str, SizeExpr]) -> SizeExpr:
    """e with the symbols of m replaced (polynomially: e's atoms are symbols here)."""
    if not (e.symbols() & set(m)):
        return e
    out = SizeExpr.const(0)
    for mono, c in e.terms.items():
        t = SizeExpr.const(c)
        for atom, k in mono:
            if atom.op != "sym":
                raise FormError(f"a position {e.text()} holds {atom.text()}, which a digit cannot be substituted into")
            t = t * (m.get(atom.args[0], SizeExpr.of_atom(atom)) ** k)
        out = out + t
    return out


def positive_coeff(c: Coeff) -> bool:
    """Whether a coefficient is positive at every size >= 1: p / q with p, q polynomials of nonnegative
    coefficients, p not zero."""
    return not c.p.is_zero() and all(x >= 0 for x in c.p.coeffs()) and all(x >= 0 for x in c.q.coeffs())


def positive(f: Form, data_rows: tuple[str, SizeExpr] | None = None) -> bool:
    """Whether the form is shown positive for every size >= 1 and every input: each term's coefficient
    a quotient of polynomials with nonnegative coefficients, not zero (positive at sizes >= 1), each
    factor an exp (positive), each sum's bound a nonzero polynomial in the sizes with nonnegative
    coefficients (>= 1 at sizes >= 1, so the sum is not empty: a range cut's part may be), and at least
    one term.

    ``data_rows`` = (M, R) adds the hypothesis that the tags tag(M)[k][0], k < R, are 0 or 1 and some is 1:
    a term may then also hold tags tag(M)[e][0] whose row e is one of its binders of range R, or an integer
    in [0, R) (a sum over a fixed R written out). Every term is then >= 0. For a row k with tag 1, a term
    whose integer rows are all k is > 0: its summand with every tag binder at k is. So the form is > 0 if
    for each k < R some term's integer rows are all k: a term without any where R is a size, else checked
    for each k."""
    if f.is_zero():
        return False
    rows_of: list[set[int]] = []  # each term's integer tag rows
    for c, t in f.terms.values():
        bounds = dict(t.binders)
        if not positive_coeff(c) or not all(_at_least_one(B, f.sizes) for B in bounds.values()):
            return False
        fixed_rows: set[int] = set()
        for x in t.factors:
            if x.kind == "exp":
                continue
            if data_rows is None or x.kind != "read" or x.args[0] != f"tag({data_rows[0]})" or x.args[2] != SizeExpr.const(0):
                return False
            row, R = x.args[1], data_rows[1]
            if row.constant() is not None and R.constant() is not None and 0 <= row.constant() < R.constant():
                fixed_rows.add(row.constant())
            elif row.text() not in bounds or bounds[row.text()] != R:
                return False
        rows_of.append(fixed_rows)
    if any(not rows for rows in rows_of):
        return True
    R = data_rows[1].constant() if data_rows is not None else None
    return R is not None and all(any(rows == {k} for rows in rows_of) for k in range(R))


def _at_least_one(B: SizeExpr, sizes: Sizes) -> bool:
    """Whether B is a nonzero polynomial in the sizes with nonnegative coefficients: B >= 1 at sizes >= 1."""
    return bool(B.terms) and all(c > 0 and all(a.op == "sym" and a.args[0] in sizes.symbols for a, _ in m) for m, c in B.terms.items())


def value_at(f: Form, env: Mapping[str, int], mats: Mapping[str, Any], domain: Any) -> Any:
    """The form's value at integer sizes and digits (``env``) on concrete input matrices, in ``domain``
    (exp, ReLU, max and min the domain's): each sum written out. For the counterexample search."""
    total = domain.convert(0)
    for c, t in f.terms.values():
        point = [env.get(s, 0) for s in f.sizes.symbols] or [0]
        coeff = domain.convert(c.p(*point) / c.q(*point))
        ranges = [range(B.value(env)) for _, B in t.binders]
        for values in itertools.product(*ranges):
            inner = {**env, **{b: v for (b, _), v in zip(t.binders, values)}}
            x = coeff
            for g in t.factors:
                x = x * _factor_value(g, inner, mats, domain)
            total = total + x
    return total


def _factor_value(g: Factor, env: Mapping[str, int], mats: Mapping[str, Any], domain: Any) -> Any:
    if g.kind == "read":
        return domain.convert(mats[g.args[0]][g.args[1].value(env)][g.args[2].value(env)])
    args = [value_at(a, env, mats, domain) for a in g.args]
    if g.kind == "exp":
        return domain.exp(args[0])
    if g.kind == "relu":
        return domain.relu(args[0])
    if g.kind == "inv":
        return domain.convert(1) / args[0]
    return domain.max(*args) if g.kind == "max" else domain.min(*args)


def read(sizes: Sizes, block: str, row: SizeExpr, col: SizeExpr) -> Form:
    return Form.factor(sizes, Factor("read", (block, row, col)))


def reciprocal(f: Form, data_rows: tuple[str, SizeExpr] | None = None) -> Form:
    """1 / f as the factor inv(f), for f shown positive or negative at every size and input (:func:`positive`, with
    the tags' hypothesis ``data_rows``); a form of one term c e^E (c positive at every size) is c^{-1} e^{-E} instead,
    as :func:`~proofs.every_size.evaluate.quotient` divides it out, so that both give one form."""
    if not (positive(f, data_rows) or positive(-f, data_rows)):
        raise FormError(f"1 / ({f.key()[:120]}), not shown nonzero at every size and input")
    if len(f.terms) == 1:
        c, t = next(iter(f.terms.values()))
        if not t.binders and all(x.kind == "exp" for x in t.factors) and positive_coeff(c):
            out = Form.coeff(f.sizes, c.inverse())
            for x in t.factors:
                out = out * Form.factor(f.sizes, Factor("exp", (-x.args[0],)))
            return out
    return Form.factor(f.sizes, Factor("inv", (f,)))


def extremum(sizes: Sizes, kind: str, a: Form, b: Form) -> Form:
    """max(a, b) or min(a, b): one argument when both are the same form (max(a, a) = a), else a factor
    with its two arguments in the order of their keys (max and min are symmetric)."""
    if kind not in ("max", "min"):
        raise FormError(f"no extremum {kind!r}")
    if a.key() == b.key():
        return a
    return Form.factor(sizes, Factor(kind, tuple(sorted((a, b), key=Form.key))))


__all__ = ["Coeff", "Factor", "Form", "FormError", "Sizes", "Term", "canonical", "extremum", "fresh", "parse", "positive", "read", "reciprocal"]
