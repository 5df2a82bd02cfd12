r"""Size expressions, read and printed by the checker: integer polynomials over atoms.

An *atom* is a size symbol or digit (``n``), ``max(a, b, ...)``, ``min(a, b, ...)``, ``floor(a, k)``
or ``mod(a, k)`` (a an expression, k a positive integer; floor and mod are Python's: a = k floor(a, k)
+ mod(a, k) with 0 <= mod(a, k) < k). A :class:`Poly` is a finite sum of integer coefficients times
monomials, a monomial a product of atoms to positive powers; equal polynomials in the same atoms
have the same :meth:`Poly.text`, the canonical text the certificate's size texts are written in:

* the monomials by decreasing total degree, ties by the text of the monomial (its atoms in the
  order symbols first, then by text, joined by ``*``, a power as ``^e``); a coefficient ±1 is
  left out before a monomial, ``-`` and `` + `` / `` - `` separate the terms;
* ``max`` and ``min`` keep distinct non-constant arguments sorted by text, then the most (least)
  of their constant arguments last; a nested max of a max is flattened; with one argument left
  they are that argument;
* ``floor(a, k)`` and ``mod(a, k)`` take out of a the terms whose coefficient k divides
  (floor(a + k b, k) = b + floor(a, k), mod(a + k b, k) = mod(a, k)): the remainder keeps the
  coefficients mod k; a constant remainder gives an integer.

Each rule is an identity of integers, so a text read and printed again names the same function
of the sizes. The grammar read (:func:`parse_size`), never evaluated as code::

    expr := term (("+" | "-") term)*       term := ["-"] factor ("*" factor)*
    factor := atom ["^" int]                atom := int | name | "(" expr ")" | ("max" | "min") "(" expr ("," expr)+ ")"
                                                  | ("floor" | "mod") "(" expr "," int ")"

A relation (:class:`Rel`) is ``lhs op rhs`` with op one of ``<``, ``<=``, ``=``, ``!=``.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, Mapping

from attncert.exact import ParseError

#: The longest size text read.
MAX_TEXT = 4096
#: The deepest nesting of parentheses and atoms read.
MAX_DEPTH = 48
#: The largest exponent read.
MAX_POWER = 64
#: The most terms a polynomial may hold (a bound on hostile input).
MAX_TERMS = 4096
#: The most pairs of terms a product multiplies out (a product of two expressions of 3,876 terms each would form
#: 15 million before MAX_TERMS refused the result).
MAX_PRODUCT_PAIRS = 1 << 18
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
RESERVED = frozenset({"max", "min", "floor", "mod"})


class Atom:
    """A symbol, or max / min of expressions, or floor / mod of an expression by a positive integer."""

    __slots__ = ("op", "args", "text", "order", "_hash")

    def __init__(self, op: str, args: tuple):
        self.op, self.args = op, args
        if op == "sym":
            self.text = args[0]
        elif op in ("max", "min"):
            self.text = f"{op}({', '.join(a.text() for a in args)})"
        else:
            self.text = f"{op}({args[0].text()}, {args[1]})"
        self.order = (op != "sym", self.text)
        self._hash = hash(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Atom) and self.text == other.text

    def __hash__(self) -> int:
        return self._hash

    def symbols(self) -> frozenset[str]:
        if self.op == "sym":
            return frozenset(self.args)
        return frozenset().union(*(a.symbols() for a in self.args if isinstance(a, Poly)))

    def value(self, env: Mapping[str, int]) -> int:
        if self.op == "sym":
            return env[self.args[0]]
        if self.op in ("max", "min"):
            return (max if self.op == "max" else min)(a.value(env) for a in self.args)
        x = self.args[0].value(env)
        return x // self.args[1] if self.op == "floor" else x % self.args[1]

    def substitute(self, m: Mapping[str, "Poly"]) -> "Poly":
        if self.op == "sym":
            by = m.get(self.args[0])
            return Poly.atom(self) if by is None else by
        if self.op in ("max", "min"):
            return extremum(self.op, [a.substitute(m) for a in self.args])
        x = self.args[0].substitute(m)
        return x.floor(self.args[1]) if self.op == "floor" else x.mod(self.args[1])


Monomial = tuple  # ((Atom, exponent >= 1), ...) sorted by Atom.order


@functools.lru_cache(maxsize=1 << 16)
def _sym(name: str) -> Atom:
    return Atom("sym", (name,))


class Poly:
    """An integer polynomial in atoms: {monomial: nonzero coefficient}. Immutable; compared by its terms."""

    __slots__ = ("terms", "_text", "_hash", "_symbols")

    def __init__(self, terms: Mapping[Monomial, int]):
        self.terms = {m: c for m, c in terms.items() if c}
        if len(self.terms) > MAX_TERMS:
            raise ParseError(f"a size expression of more than {MAX_TERMS} terms")
        self._text: str | None = None
        self._hash: int | None = None
        self._symbols: frozenset[str] | None = None

    @staticmethod
    def const(k: int) -> "Poly":
        return Poly({(): k})

    @staticmethod
    def atom(a: Atom) -> "Poly":
        return Poly({((a, 1),): 1})

    @staticmethod
    def symbol(name: str) -> "Poly":
        return Poly.atom(_sym(name))

    # -- reading ---------------------------------------------------------------------------------
    def text(self) -> str:
        if self._text is None:
            self._text = _render(self.terms)
        return self._text

    def constant(self) -> int | None:
        if not self.terms:
            return 0
        if len(self.terms) == 1 and () in self.terms:
            return self.terms[()]
        return None

    def symbols(self) -> frozenset[str]:
        if self._symbols is None:
            self._symbols = frozenset().union(*(a.symbols() for m in self.terms for a, _ in m))
        return self._symbols

    def atoms(self) -> set[Atom]:
        return {a for m in self.terms for a, _ in m}

    def name(self) -> str | None:
        """The symbol this polynomial is, if it is one symbol."""
        if len(self.terms) == 1:
            ((m, c),) = self.terms.items()
            if c == 1 and len(m) == 1 and m[0][1] == 1 and m[0][0].op == "sym":
                return m[0][0].args[0]
        return None

    def value(self, env: Mapping[str, int]) -> int:
        """The integer at the given values of its symbols (KeyError for a symbol not given)."""
        total = 0
        for mono, c in self.terms.items():
            for a, e in mono:
                c *= a.value(env) ** e
            total += c
        return total

    def is_polynomial_in(self, names: Iterable[str]) -> bool:
        """Whether every atom is a symbol among names (no max, min, floor, mod)."""
        ok = set(names)
        return all(a.op == "sym" and a.args[0] in ok for a in self.atoms())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Poly) and self.terms == other.terms

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.terms.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"Poly({self.text()!r})"

    # -- arithmetic ------------------------------------------------------------------------------
    def __add__(self, o: "Poly | int") -> "Poly":
        o = _poly(o)
        out = dict(self.terms)
        for m, c in o.terms.items():
            out[m] = out.get(m, 0) + c
        return Poly(out)

    def __neg__(self) -> "Poly":
        return Poly({m: -c for m, c in self.terms.items()})

    def __sub__(self, o: "Poly | int") -> "Poly":
        return self + (-_poly(o))

    def __mul__(self, o: "Poly | int") -> "Poly":
        o = _poly(o)
        if len(self.terms) * len(o.terms) > MAX_PRODUCT_PAIRS:  # refused before the pairs are formed, not after
            raise ParseError(f"a product of size expressions of {len(self.terms):,} by {len(o.terms):,} terms (over {MAX_PRODUCT_PAIRS:,} pairs)")
        out: dict[Monomial, int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in o.terms.items():
                m = _times(m1, m2)
                out[m] = out.get(m, 0) + c1 * c2
        return Poly(out)

    def power(self, k: int) -> "Poly":
        out = Poly.const(1)
        for _ in range(k):
            out = out * self
        return out

    def floor(self, k: int) -> "Poly":
        """floor(self / k), k >= 1: the terms whose coefficient k divides leave the atom."""
        return _divmod(self, k, "floor")

    def mod(self, k: int) -> "Poly":
        return _divmod(self, k, "mod")

    def substitute(self, m: Mapping[str, "Poly"]) -> "Poly":
        """The expression with the symbols of m replaced (every atom rebuilt, so simplified again)."""
        if not (self.symbols() & m.keys()):
            return self
        names = {k: v.name() for k, v in m.items()}
        if None not in names.values() and all(a.op == "sym" for a in self.atoms()):  # a renaming of symbols
            renamed: dict[Monomial, int] = {}
            for mono, c in self.terms.items():
                exps: dict[Atom, int] = {}
                for a, e in mono:
                    b = _sym(names.get(a.args[0]) or a.args[0])
                    exps[b] = exps.get(b, 0) + e
                key = tuple(sorted(exps.items(), key=lambda ae: ae[0].order))
                renamed[key] = renamed.get(key, 0) + c
            return Poly(renamed)
        out = Poly({})
        for mono, c in self.terms.items():
            t = Poly.const(c)
            for a, e in mono:
                t = t * a.substitute(m).power(e)
            out = out + t
        return out

    def divided(self, R: "Poly") -> "Poly | None":
        """q with self = q R exactly, R a monomial (one term) in symbols; None if R does not divide self."""
        if len(R.terms) != 1:
            return None
        ((rm, rc),) = R.terms.items()
        if rc == 0 or any(a.op != "sym" for a, _ in rm):
            return None
        need = dict(rm)
        out: dict[Monomial, int] = {}
        for m, c in self.terms.items():
            have = dict(m)
            if c % rc or any(have.get(a, 0) < e for a, e in need.items()):
                return None
            rest = tuple(sorted(((a, e - need.get(a, 0)) for a, e in have.items() if e > need.get(a, 0)), key=lambda ae: ae[0].order))
            out[rest] = c // rc
        return Poly(out)


def _poly(x: "Poly | int") -> Poly:
    return x if isinstance(x, Poly) else Poly.const(x)


def _times(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    exps = dict(a)
    for atom, e in b:
        exps[atom] = exps.get(atom, 0) + e
    return tuple(sorted(exps.items(), key=lambda ae: ae[0].order))


def _divmod(x: Poly, k: int, op: str) -> Poly:
    c = x.constant()
    if c is not None:
        return Poly.const(c // k if op == "floor" else c % k)
    if k == 1:
        return x if op == "floor" else Poly({})
    whole = Poly({m: c // k for m, c in x.terms.items()})
    rest = Poly({m: c % k for m, c in x.terms.items()})
    r = rest.constant()
    if r is not None:  # 0 <= r < k
        return whole if op == "floor" else Poly.const(r)
    return whole + Poly.atom(Atom("floor", (rest, k))) if op == "floor" else Poly.atom(Atom("mod", (rest, k)))


def extremum(op: str, xs: list[Poly]) -> Poly:
    """max or min of the expressions: constants merged into one (put last), a nested extremum of the same
    kind flattened, duplicates dropped, the others sorted by text; one argument left is the value."""
    pick = max if op == "max" else min
    ints: list[int] = []
    exprs: dict[str, Poly] = {}
    for x in xs:
        k = x.constant()
        if k is not None:
            ints.append(k)
            continue
        if len(x.terms) == 1:
            ((m, c),) = x.terms.items()
            if c == 1 and len(m) == 1 and m[0][1] == 1 and m[0][0].op == op:
                for a in m[0][0].args:
                    ka = a.constant()
                    if ka is not None:
                        ints.append(ka)
                    else:
                        exprs.setdefault(a.text(), a)
                continue
        exprs.setdefault(x.text(), x)
    if not exprs:
        return Poly.const(pick(ints))
    args = [exprs[t] for t in sorted(exprs)]
    if ints:
        args.append(Poly.const(pick(ints)))
    return args[0] if len(args) == 1 else Poly.atom(Atom(op, tuple(args)))


def mono_text(m: Monomial) -> str:
    return "*".join(a.text if e == 1 else f"{a.text}^{e}" for a, e in m)


def _render(terms: Mapping[Monomial, int]) -> str:
    if not terms:
        return "0"
    order = sorted(terms, key=lambda m: (-sum(e for _, e in m), mono_text(m)))
    out = []
    for i, m in enumerate(order):
        c = terms[m]
        body = mono_text(m)
        piece = str(abs(c)) if not body else body if abs(c) == 1 else f"{abs(c)}*{body}"
        out.append((("-" if c < 0 else "") if i == 0 else (" - " if c < 0 else " + ")) + piece)
    return "".join(out)


# -- reading -------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z][A-Za-z0-9_]*)|([-+*^(),]))")


def parse_size(text: object) -> Poly:
    """The polynomial a size text spells (module docstring); ParseError for anything else."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise ParseError(f"a size expression is a string of at most {MAX_TEXT} characters")
    tokens: list[tuple[str, object]] = []
    pos = 0
    while pos < len(text) and text[pos:].strip():
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ParseError(f"not a size expression: {text!r:.60}")
        if m.group(1):
            if len(m.group(1)) > 40:
                raise ParseError(f"an integer of more than 40 digits in a size expression: {text!r:.60}")
            tokens.append(("int", int(m.group(1))))
        else:
            tokens.append(("name", m.group(2)) if m.group(2) else ("op", m.group(3)))
        pos = m.end()
    reader = _Reader(tokens, text)
    out = reader.expr(0)
    if reader.i != len(tokens):
        raise ParseError(f"not a size expression: {text!r:.60}")
    return out


class _Reader:
    def __init__(self, tokens: list[tuple[str, object]], text: str):
        self.t, self.i, self.text = tokens, 0, text

    def fail(self) -> ParseError:
        return ParseError(f"not a size expression: {self.text!r:.60}")

    def peek(self) -> tuple[str, object] | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, kind: str, value: object = None) -> object:
        tok = self.peek()
        if tok is None or tok[0] != kind or (value is not None and tok[1] != value):
            raise self.fail()
        self.i += 1
        return tok[1]

    def expr(self, depth: int) -> Poly:
        if depth > MAX_DEPTH:
            raise ParseError("a size expression nests too deeply")
        out = self.term(depth)
        while (tok := self.peek()) in (("op", "+"), ("op", "-")):
            self.i += 1
            out = out + self.term(depth) if tok[1] == "+" else out - self.term(depth)
        return out

    def term(self, depth: int) -> Poly:
        neg = self.peek() == ("op", "-")
        if neg:
            self.i += 1
        out = self.factor(depth)
        while self.peek() == ("op", "*"):
            self.i += 1
            out = out * self.factor(depth)
        return -out if neg else out

    def factor(self, depth: int) -> Poly:
        base = self.atom(depth)
        if self.peek() == ("op", "^"):
            self.i += 1
            k = self.take("int")
            assert isinstance(k, int)
            if k > MAX_POWER:
                raise ParseError(f"a size exponent is at most {MAX_POWER}")
            base = base.power(k)
        return base

    def atom(self, depth: int) -> Poly:
        tok = self.peek()
        if tok is None:
            raise self.fail()
        if tok[0] == "int":
            self.i += 1
            assert isinstance(tok[1], int)
            return Poly.const(tok[1])
        if tok == ("op", "("):
            self.i += 1
            out = self.expr(depth + 1)
            self.take("op", ")")
            return out
        name = self.take("name")
        assert isinstance(name, str)
        if name in ("max", "min"):
            self.take("op", "(")
            args = [self.expr(depth + 1)]
            while self.peek() == ("op", ","):
                self.i += 1
                args.append(self.expr(depth + 1))
            self.take("op", ")")
            if len(args) < 2:
                raise ParseError(f"{name} takes two or more size expressions")
            return extremum(name, args)
        if name in ("floor", "mod"):
            self.take("op", "(")
            x = self.expr(depth + 1)
            self.take("op", ",")
            k = self.take("int")
            self.take("op", ")")
            assert isinstance(k, int)
            if k < 1:
                raise ParseError(f"{name} divides by a positive integer")
            return x.floor(k) if name == "floor" else x.mod(k)
        return Poly.symbol(name)


def symbol_name(x: object, what: str) -> str:
    """A name a certificate gives a size, digit or binder: letters, digits, _, not a reserved word."""
    if not isinstance(x, str) or not NAME.match(x) or x in RESERVED or len(x) > 64:
        raise ParseError(f"{what} must be a name (letters, digits, _), not {str(x)[:40]!r}")
    return x


# -- relations -----------------------------------------------------------------------------------

_REL = re.compile(r"(.*?) (<=|<|!=|=) (.*)\Z", re.S)


class Rel:
    """lhs op rhs, op one of <, <=, =, != (between integers)."""

    __slots__ = ("op", "lhs", "rhs", "text")

    def __init__(self, op: str, lhs: Poly, rhs: Poly):
        self.op, self.lhs, self.rhs = op, lhs, rhs
        self.text = f"{lhs.text()} {op} {rhs.text()}"

    def negated(self) -> "Rel":
        """The relation that holds exactly where this one fails."""
        if self.op == "<":
            return Rel("<=", self.rhs, self.lhs)
        if self.op == "<=":
            return Rel("<", self.rhs, self.lhs)
        return Rel("!=" if self.op == "=" else "=", self.lhs, self.rhs)

    def symbols(self) -> frozenset[str]:
        return self.lhs.symbols() | self.rhs.symbols()

    def holds(self, env: Mapping[str, int]) -> bool:
        a, b = self.lhs.value(env), self.rhs.value(env)
        return a < b if self.op == "<" else a <= b if self.op == "<=" else a == b if self.op == "=" else a != b

    def substitute(self, m: Mapping[str, Poly]) -> "Rel":
        return Rel(self.op, self.lhs.substitute(m), self.rhs.substitute(m))


def parse_rel(text: object) -> Rel:
    """A relation text ``lhs op rhs`` (size texts hold no <, = or !)."""
    if not isinstance(text, str) or len(text) > 2 * MAX_TEXT:
        raise ParseError("a relation is a string")
    m = _REL.match(text)
    if m is None or any(ch in m.group(1) + m.group(3) for ch in "<=!"):
        raise ParseError(f"not a relation: {text!r:.60}")
    return Rel(m.group(2), parse_size(m.group(1)), parse_size(m.group(3)))


def nonnegative_polynomial(p: Poly, sizes: Iterable[str]) -> bool:
    """Whether p is a nonzero polynomial in the sizes alone with nonnegative integer coefficients: then
    p >= 1 at every size >= 1 (each monomial with a coefficient c >= 1 is at least c)."""
    return bool(p.terms) and p.is_polynomial_in(sizes) and all(c > 0 for c in p.terms.values())
