r"""The checker's evaluation of the template at a symbolic position, guided by the recorded steps.

A value is an :class:`Int` (a polynomial in the sizes and digits: a position, a query), a
:class:`Real` (a quotient num / den of forms) or a :class:`Pair` (``pack``). The sequence the
template reads is the inputs, row-major, one after another from position 0, then the padding token
0 up to N; the semantics of each node (RASP's, restated for symbolic positions):

* ``indices``: the position; ``tokens``: the input at the position. A position p is in block M
  (offset o, r x c) where o <= p < o + r c; its row and column are the quotient and the remainder
  of p - o by c. The record proposes the column; the checker divides (p - o - col by c, exactly, as
  polynomials) and needs a step whose facts prove o <= p < o + r c, 0 <= col < c and 0 <= row < r:
  since p - o = row c + col with 0 <= col < c, they are the quotient and the remainder (Euclid's
  division is unique). Past the inputs (p >= their total, proven) the token is 0;
* ``radix_affine`` (radices R_1..R_m, coefficients, constant, bound, other): ``other`` where
  p >= bound (proven), else const + Σ coeff_i d_i, the digits of p in the radices R_m, ..., R_2 from
  the least significant (d_1 the quotient left): each by a proposed remainder r, checked as above;
* ``Aggregate(Select(K, Q, EQ), v)``, numerical: the mean of v over the keys s < N with K(s) = Q(t),
  or its default if there is none. With K the positions (a *gather*): the key q = Q(t) when
  0 <= q < N (proven), none otherwise. With K(s) = s // R for s < B, else o (a *group*): given
  1 <= R, and q != o or N <= B (proven: no key is then o; or no bound B), the keys are {q R + l : 0 <= l < R} when q >= 0,
  q R + R - 1 < B and q R + R - 1 < N, none when q < 0, q R >= B or q R >= N (proven); the mean is
  (1/R) Σ_{l<R} v(q R + l). A sum over l is written out (a constant range, when the record says so),
  or bound to the binder the record names (a name the context does not use; sums at one node, position
  and context take the recorded binders in order, each name once), or split
  Σ_{l<R'k} f(l) = Σ_{m<R'} Σ_{u<k} f(m k + u) where the record proposes R = R' k (checked as
  polynomials, k >= 1 at every size);
* the registered functions: ``size_case`` (its condition, a size, decided = 0 or not), ``pack``,
  ``maxmin_pick`` (max at even positions, min at odd: the parity decided), ``compose``,
  ``token_value`` (x), ``token_tag`` (1: every token is a number), ``mul``, ``mul_scaled``
  (x (c y)), ``mul_const``, ``div_const`` (c nonzero at every size >= 1), ``add``, ``sub``,
  ``linear`` (a x + b y), ``div`` (its divisor shown nonzero where it is made), ``exp``, ``masked_exp`` (m e^{c s}), ``relu`` (ReLU(a / b) =
  ReLU(a) / b, b shown positive) and ``affine_relu`` (ReLU(c x + y)).

Each decision is a recorded step (:class:`~.record.Steps`), else the region is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from flint import fmpq

from attncert.exact import ParseError
from attncert.proofs.checkers.every_size import forms
from attncert.proofs.checkers.every_size.context import ONE, ZERO, Context
from attncert.proofs.checkers.every_size.forms import Coefficients, Form, FormError, positive, positive_coefficient
from attncert.proofs.checkers.every_size.graph import Graph, decode, function, integer
from attncert.proofs.checkers.every_size.record import Refusal, Steps
from attncert.proofs.checkers.every_size.sizes import Poly, Rel, nonnegative_polynomial, parse_rel, parse_size, symbol_name


@dataclass(frozen=True)
class Int:
    e: Poly


@dataclass(frozen=True)
class Real:
    num: Form
    den: Form

    def plain(self) -> bool:
        c = self.den.constant()
        return c is not None and c == self.num.K.one


@dataclass(frozen=True)
class Pair:
    x: Any
    y: Any


@dataclass(frozen=True)
class Block:
    name: str
    rows: Poly
    cols: Poly
    offset: Poly
    #: a zero-padded block: the rows and columns of its matrix (the rest of the block holds 0); None: the block is the matrix
    valid: tuple[Poly, Poly] | None = None
    #: whether a row's tag says it is one of the matrix's rows (1) or padding (0); otherwise every tag in it is 1
    tag_rows: bool = False


class Evaluator:
    """The template's values at one region's positions (module docstring)."""

    def __init__(self, graph: Graph, blocks: list[Block], N: Poly, fixed: dict[str, Poly], K: Coefficients, steps: Steps, tagged: bool = False, data_rows: tuple[str, Poly] | None = None):
        self.g, self.blocks, self.N, self.fixed, self.K, self.steps = graph, blocks, N, fixed, K, steps
        #: the tags' hypothesis a divisor may use (:func:`~.forms.positive`), or None
        self.data_rows = data_rows
        #: tokens are pairs (value, tag): a zero-padded block's (module docstring), else (M[r][c], tag(M)[r][c])
        self.tagged = tagged or any(b.valid is not None for b in blocks)
        self.end = blocks[-1].offset + blocks[-1].rows * blocks[-1].cols if blocks else ZERO
        self._memo: dict[tuple[int, str, str], Any] = {}
        #: the nodes evaluated, and the selects and keys an aggregate read (:mod:`.examined`)
        self.examined: set[int] = set()

    def value(self, v: int, pos: Poly, ctx: Context) -> Any:
        key = (v, pos.text(), ctx.text)
        self.examined.add(v)
        if key not in self._memo:
            self._memo[key] = self._value(v, pos, ctx)
        return self._memo[key]

    def _value(self, v: int, pos: Poly, ctx: Context) -> Any:
        node, args = self.g.nodes[v], self.g.args[v]
        op = node["op"]
        if op == "indices":
            return Int(pos)
        if op == "tokens":
            return self._token(v, pos, ctx)
        if op in ("map", "sequence_map"):
            return self.apply(v, function(node["params"].get("fn")), [self.value(a, pos, ctx) for a in args], pos, ctx)
        if op == "aggregate":
            return self._aggregate(v, pos, ctx)
        raise Refusal(f"node {v}: the op {op[:30]!r} has no every-size semantics in the checker")

    # -- tokens ------------------------------------------------------------------------------------
    def _token(self, v: int, pos: Poly, ctx: Context) -> Real:
        for b in self.blocks:
            for step in self.steps.choices(v, pos, ctx, f"token of {b.name}"):
                parts = step.decision.split(" and ")
                if len(parts) != 6:
                    continue
                col = _remainder(parts[2])
                row = None if col is None else (pos - b.offset - col).divided(b.cols)
                if row is None:
                    continue
                rels = [Rel("<=", b.offset, pos), Rel("<", pos, b.offset + b.rows * b.cols), Rel("<=", ZERO, col), Rel("<", col, b.cols), Rel("<=", ZERO, row), Rel("<", row, b.rows)]
                if step.decision == " and ".join(r.text for r in rels):
                    self.steps.take(step, rels, ctx)
                    return self._entry(v, b, row, col, pos, ctx)
        if self.steps.decide(v, pos, ctx, "padding", Rel("<=", self.end, pos)):
            zero = self._real(Form.coeff(self.K, self.K.zero))
            return Pair(zero, zero) if self.tagged else zero
        raise Refusal(f"node {v}: the token at {pos.text()} is in no input block by the record")

    def _entry(self, v: int, b: Block, row: Poly, col: Poly, pos: Poly, ctx: Context) -> Real | Pair:
        """The token at (row, col) of block b: M[row][col]; on tagged tokens the pair with tag(M)[row][col]; in a
        zero-padded block, (M[row][col] or 0, the row's tag), whether row and col are inside decided by the record."""
        if b.valid is None:
            value = self._real(forms.read(self.K, b.name, row, col))
            return Pair(value, self._real(forms.read(self.K, f"tag({b.name})", row, col))) if self.tagged else value
        in_row = self.steps.decide(v, pos, ctx, f"rows of {b.name}", Rel("<", row, b.valid[0]))
        inside = in_row and self.steps.decide(v, pos, ctx, f"columns of {b.name}", Rel("<", col, b.valid[1]))
        value = self._real(forms.read(self.K, b.name, row, col) if inside else Form.coeff(self.K, self.K.zero))
        tag = self.K.one if in_row or not b.tag_rows else self.K.zero
        return Pair(value, self._real(Form.coeff(self.K, tag)))

    def _real(self, f: Form) -> Real:
        return Real(f, Form.coeff(self.K, self.K.one))

    # -- index arithmetic --------------------------------------------------------------------------
    def divide(self, v: int, p: Poly, R: Poly, pos: Poly, ctx: Context) -> tuple[Poly, Poly]:
        """(q, r) with p = q R + r and 0 <= r < R proven: r proposed by a recorded ``digit`` step."""
        for step in self.steps.choices(v, pos, ctx, "digit"):
            parts = step.decision.split(" and ")
            r = _remainder(parts[0]) if len(parts) == 2 else None
            q = None if r is None else (p - r).divided(R)
            if q is None:
                continue
            rels = [Rel("<=", ZERO, r), Rel("<", r, R)]
            if step.decision == " and ".join(x.text for x in rels):
                self.steps.take(step, rels, ctx)
                return q, r
        raise Refusal(f"node {v} at {pos.text()}: no recorded digit of {p.text()} in radix {R.text()}")

    def radix_affine(self, v: int, p: Poly, params: dict[str, Any], pos: Poly, ctx: Context) -> Poly:
        radices, coeffs = params["radices"], params["coeffs"]
        if not isinstance(radices, tuple) or not isinstance(coeffs, tuple) or len(radices) != len(coeffs) or not radices:
            raise ParseError(f"node {v}: radix_affine has as many radices as coefficients")
        radices = [integer(x, "a radix") for x in radices]
        coeffs = [integer(x, "a coefficient") for x in coeffs]
        const, bound = integer(params["const"], "a constant"), params["bound"]
        if bound is not None and not self.steps.decide(v, pos, ctx, "bound", Rel("<", p, integer(bound, "a bound"))):
            return integer(params["other"], "other")
        digits, rest = [], p
        for R in reversed(radices[1:]):
            rest, r = self.divide(v, rest, R, pos, ctx)
            digits.append(r)
        digits.append(rest)
        digits.reverse()
        out = const
        for c, d in zip(coeffs, digits):
            out = out + c * d
        return out

    # -- attention -----------------------------------------------------------------------------------
    def _aggregate(self, v: int, pos: Poly, ctx: Context) -> Real:
        node, args = self.g.nodes[v], self.g.args[v]
        if len(args) != 2 or node.get("encoding") != "numerical":
            raise Refusal(f"node {v}: only a numerical Aggregate(select, values) is covered")
        sel, vals = args
        s = self.g.nodes[sel]
        if s["op"] != "select" or s["params"].get("predicate") != "EQ" or len(self.g.args[sel]) != 2:
            raise Refusal(f"node {v}: only Select(keys, queries, EQ) is covered")
        keys, queries = self.g.args[sel]
        self.examined |= {sel, keys}
        default = decode(node["params"].get("default"), self.fixed)
        if default is None:
            raise Refusal(f"node {v}: an aggregate without a default")
        default = self._real(Form.coeff(self.K, self.coefficient(default)))
        q = self.value(queries, pos, ctx)
        if not isinstance(q, Int):
            raise Refusal(f"node {v}: a query that is not an integer of the position")
        q = q.e
        if self.g.nodes[keys]["op"] == "indices":  # a gather
            if not self.steps.decide(v, pos, ctx, "gather low", Rel("<=", ZERO, q)):
                return default
            if not self.steps.decide(v, pos, ctx, "gather high", Rel("<", q, self.N)):
                return default
            return self.as_real(v, self.value(vals, q, ctx))
        R, B, o = self._group_key(v, keys)
        self.steps.require(v, pos, ctx, "group size", [Rel("<=", ONE, R)])
        tops = [self.N] if B is None else [B, self.N]  # a key lies below N, and below B (past it, its key is o)
        if B is not None:  # the query is not o, or no key is o: every key s < N lies below B
            below = Rel("<=", self.N, B)
            choices = self.steps.choices(v, pos, ctx, "group other")
            if not choices:
                raise Refusal(f"node {v} at {pos.text()}: no recorded step shows the query differs from the keys' other value {o.text()}")
            self.steps.require(v, pos, ctx, "group other", [below if any(s.decision == below.text for s in choices) else Rel("!=", q, o)])
        if not self.steps.decide(v, pos, ctx, "group low", Rel("<=", ZERO, q)):
            return default
        for top in tops:
            if not self.steps.decide(v, pos, ctx, "group start", Rel("<", q * R, top)):
                return default
        self.steps.require(v, pos, ctx, "group whole", [Rel("<", q * R + R - ONE, top) for top in tops])
        total = self.sum(v, vals, q * R, [R], ctx, pos, ZERO)
        return Real(total.num.scale(1 / self.K.of(R)), total.den)

    def _group_key(self, v: int, keys: int) -> tuple[Poly, Poly | None, Poly]:
        """(R, B, o) for keys radix_affine((*, R), (1, 0), 0, bound B, other o) of the positions: s // R for s < B."""
        k, kargs = self.g.nodes[keys], self.g.args[keys]
        fn = function(k["params"].get("fn")) if k["op"] == "map" else None
        if fn is None or fn["name"] != "radix_affine" or len(kargs) != 1 or self.g.nodes[kargs[0]]["op"] != "indices":
            raise Refusal(f"node {v}: its keys are neither the positions nor a group s // R")
        self.examined.add(kargs[0])
        p = _params(fn, ("radices", "coeffs", "const", "bound", "other"), self.fixed)
        radices, coeffs = p["radices"], p["coeffs"]
        if not isinstance(radices, tuple) or len(radices) != 2 or coeffs != (ONE, ZERO) or p["const"] != ZERO:
            raise Refusal(f"node {v}: its keys are neither the positions nor a group s // R")
        B = None if p["bound"] is None else integer(p["bound"], "a bound")
        return integer(radices[1], "a radix"), B, integer(p["other"], "other")

    def sum(self, v: int, vals: int, base: Poly, radices: list[Poly], ctx: Context, pos: Poly, at: Poly, lo: Poly = ZERO, count: Poly | None = None) -> Real:
        """Σ over the offsets l < Π radices of the values at base + l, l = at R + (the digits), the first
        radix the most significant, this level's digit running over [lo, lo + count) (count R by default):
        written out, cut by a recorded 0 <= e <= count, bound to a recorded binder, or split by a recorded R = R' k."""
        R, rest = radices[0], radices[1:]
        count = R if count is None else count

        def at_digit(d: Poly, c: Context) -> Real:
            here = at * R + lo + d
            return self.sum(v, vals, base, rest, c, pos, here) if rest else self.as_real(v, self.value(vals, base + here, c))

        k = count.constant()
        for step in self.steps.choices(v, pos, ctx, "written out"):
            if k is not None and k >= 0 and step.decision == f"{k} offsets":
                self.steps.mark(step)
                out = self._real(Form.coeff(self.K, self.K.zero))
                for e in range(k):
                    out = add(out, at_digit(Poly.const(e), ctx))
                return out
        for step in self.steps.choices(v, pos, ctx, "range cut"):
            # Σ_{l<count} f(lo + l) = Σ_{l<e} f(lo + l) + Σ_{u<count-e} f(lo + e + u), for 0 <= e <= count
            first, _, second = step.decision.partition(" and ")
            e = _remainder(first)
            if e is None or id(step) in self.steps.cuts or step.decision != f"{Rel('<=', ZERO, e).text} and {Rel('<=', e, count).text}":
                continue
            self.steps.cuts.add(id(step))
            self.steps.take(step, [Rel("<=", ZERO, e), Rel("<=", e, count)], ctx)
            head = self.sum(v, vals, base, radices, ctx, pos, at, lo, e)
            return add(head, self.sum(v, vals, base, radices, ctx, pos, at, lo + e, count - e))
        for step in self.steps.choices(v, pos, ctx, "binder"):
            name, _, bound = step.decision.partition(" < ")
            if bound != count.text():
                continue
            name = symbol_name(name, "a binder")
            if name in self.steps.binders:  # each sum binds its own name: sums at one step take them in order
                continue
            if name in ctx.names():
                raise Refusal(f"node {v}: the binder {name} is already a name of the context")
            self.steps.binders.add(name)
            self.steps.mark(step)
            x = at_digit(Poly.symbol(name), ctx.with_digit(name, count))
            if name in x.den.free:  # Σ_l a_l / b_l = Σ_l a_l inv(b_l), each b_l shown nonzero
                try:
                    x = Real(x.num * forms.reciprocal(x.den, self.data_rows), _one(self))
                except FormError as e:
                    raise Refusal(f"node {v}: a mean of quotients whose denominator depends on the offset: {e}") from None
            return Real(x.num.summed(name, count), x.den)
        for step in self.steps.choices(v, pos, ctx, "range split"):
            whole, _, split = step.decision.partition(" = ")
            outer, _, radix = split.partition(" * ")
            if whole != R.text() or lo != ZERO or count != R:
                continue
            outer_p, radix_p = parse_size(outer), parse_size(radix)
            if outer_p * radix_p != R or not nonnegative_polynomial(radix_p, ctx.sizes):
                raise Refusal(f"node {v}: the range split {step.decision[:80]} is not R = R' k with k >= 1")
            self.steps.mark(step)
            return self.sum(v, vals, base, [outer_p, radix_p] + rest, ctx, pos, at)
        raise Refusal(f"node {v} at {pos.text()}: no recorded way to sum over {R.text()} offsets")

    def as_real(self, v: int, x: Any) -> Real:
        if isinstance(x, Real):
            return x
        if isinstance(x, Int) and x.e.constant() is not None:
            return self._real(Form.coeff(self.K, self.K.const(x.e.constant())))
        raise Refusal(f"node {v}: an integer of the position, or a pair, used as a real value")

    # -- functions -----------------------------------------------------------------------------------
    def coefficient(self, x: Any) -> Any:
        """A size or rational parameter as a coefficient in Q(sizes)."""
        if isinstance(x, fmpq):
            return self.K.const(x)
        if isinstance(x, Poly):
            try:
                return self.K.of(x)
            except FormError as e:
                raise Refusal(str(e)) from None
        raise ParseError(f"a coefficient parameter {x!r:.30} is no size or rational")

    def apply(self, v: int, fn: dict[str, Any], xs: list[Any], pos: Poly, ctx: Context) -> Any:
        name = fn["name"]
        if name.startswith("size_case"):
            p = _params(fn, ("when", "then", "otherwise"), self.fixed)
            when = integer(p["when"], "a size case's condition")
            c = when.constant()
            zero = c == 0 if c is not None else self.steps.decide(v, pos, ctx, "size case", Rel("=", when, ZERO))
            branch = p["then" if zero else "otherwise"]
            if not isinstance(branch, dict):
                raise ParseError(f"node {v}: a size case's branches are functions")
            return self.apply(v, branch, xs, pos, ctx)
        arity = ARITY.get(name)
        if arity is None:
            raise Refusal(f"node {v}: the function {name[:40]!r} has no every-size semantics in the checker")
        if len(xs) != arity[0]:
            raise ParseError(f"node {v}: {name} takes {arity[0]} arguments, the template gives {len(xs)}")
        p = _params(fn, arity[1], self.fixed)
        if name == "radix_affine":
            if not isinstance(xs[0], Int):
                raise Refusal(f"node {v}: index arithmetic of a value that is not an integer of the position")
            return Int(self.radix_affine(v, xs[0].e, p, pos, ctx))
        if name == "pack":
            return Pair(xs[0], xs[1])
        if name == "maxmin_pick":
            packed, y = xs
            if not isinstance(packed, Pair) or not isinstance(packed.y, Int):
                raise Refusal(f"node {v}: maxmin_pick of a pair whose second part is not a position")
            even = self.steps.decide(v, pos, ctx, "parity", Rel("=", packed.y.e.mod(2), ZERO))
            a, b = (self.plain(self.as_real(v, z), v) for z in (packed.x, y))
            return self._real(forms.extremum(self.K, "max" if even else "min", a, b))
        if name == "compose":
            fns = p["fns"]
            if not isinstance(fns, tuple) or not all(isinstance(g, dict) for g in fns):
                raise ParseError(f"node {v}: compose takes a list of functions")
            x = xs[0]
            for g in fns:
                x = self.apply(v, g, [x], pos, ctx)
            return x
        if name in ("token_value", "token_tag") and isinstance(xs[0], Pair):
            return xs[0].x if name == "token_value" else xs[0].y
        reals = [self.as_real(v, x) for x in xs]
        cs = {k: self.coefficient(p[k]) for k in arity[1]}
        try:
            return REAL[name](self, v, cs, *reals)
        except FormError as e:
            raise Refusal(f"node {v} ({name}): {e}") from None

    def plain(self, x: Real, v: int) -> Form:
        if not x.plain():
            raise Refusal(f"node {v}: exp, a mask or an extremum of a quotient")
        return x.num

    def relu(self, x: Real, v: int) -> Real:
        """ReLU(a / b) = ReLU(a) / b for b positive."""
        if not positive(x.den):
            raise Refusal(f"node {v}: ReLU of a quotient whose denominator is not shown positive")
        return Real(forms.relu(self.K, x.num), x.den)

    def divide_by(self, x: Real, y: Real, v: int) -> Real:
        """x / y, y = a / b shown nonzero where the division is made: a shown positive or negative (b is nonzero, as
        every denominator is: a product of divisors each checked here, coefficients and positive forms). Not left to
        the final denominator alone: a quotient's denominator may be dropped on the way (``token_tag`` of a plain
        number is 1, of a pair its tag), and the construction would still have divided by 0."""
        self.divisor(y, v)
        return quotient(x.num * y.den, x.den * y.num)

    def divisor(self, y: Real, v: int) -> None:
        """Refusal unless the divisor y = a / b of node v is shown nonzero: a positive or negative (b is nonzero, as
        every denominator is)."""
        if not (positive(y.num, self.data_rows) or positive(-y.num, self.data_rows)):
            raise Refusal(f"node {v}: div by a value not shown nonzero at every size and input")

    def nonzero(self, c: Any, v: int) -> Any:
        """c, a divisor: nonzero at every size >= 1 (positive or negative there)."""
        if not (positive_coefficient(c) or positive_coefficient(-c)):
            raise Refusal(f"node {v}: div_const by {c}, not shown nonzero at every size")
        return c


def _params(fn: dict[str, Any], names: tuple[str, ...], fixed: dict[str, Poly]) -> dict[str, Any]:
    if set(fn["params"]) != set(names):
        raise ParseError(f"the function {fn['name'][:40]} has the parameters {', '.join(names) or 'none'}")
    return {k: decode(fn["params"][k], fixed) for k in names}


def _remainder(text: str) -> Poly | None:
    """x of a proposal ``0 <= x``."""
    try:
        r = parse_rel(text)
    except ParseError:
        return None
    return r.rhs if r.op == "<=" and r.lhs == ZERO else None


def quotient(num: Form, den: Form) -> Real:
    """num / den; a denominator of one term c e^E (c positive at every size, no sum, no other factor) is
    divided out, (num c^{-1} e^{-E}) / 1, so that proportional quotients get one form; others are kept."""
    if len(den.terms) == 1:
        c, t = next(iter(den.terms.values()))
        if not t.binders and all(f.kind == "exp" for f in t.factors) and (t.factors or c != den.K.one) and positive_coefficient(c):
            inverse = Form.coeff(den.K, 1 / c)
            for f in t.factors:
                inverse = inverse * forms.exp(den.K, -f.args[0])
            return Real(num * inverse, Form.coeff(den.K, den.K.one))
    return Real(num, den)


def mul(a: Real, b: Real) -> Real:
    return quotient(a.num * b.num, a.den * b.den)


def scaled(x: Real, c: Any) -> Real:
    return Real(x.num.scale(c), x.den)


def add(a: Real, b: Real) -> Real:
    """a + b: one denominator kept when both have the same form (a / c + b / c = (a + b) / c), else cross-multiplied."""
    if a.den.same(b.den):
        return Real(a.num + b.num, a.den)
    return quotient(a.num * b.den + b.num * a.den, a.den * b.den)


def neg(x: Real) -> Real:
    return Real(-x.num, x.den)


def _one(ev: Evaluator) -> Form:
    return Form.coeff(ev.K, ev.K.one)


#: name -> (arity, parameter names); size_case is read by its own rule.
ARITY: dict[str, tuple[int, tuple[str, ...]]] = {
    "radix_affine": (1, ("radices", "coeffs", "const", "bound", "other")),
    "pack": (2, ()),
    "maxmin_pick": (2, ()),
    "compose": (1, ("fns",)),
    "token_value": (1, ()),
    "token_tag": (1, ()),
    "mul": (2, ()),
    "mul_scaled": (2, ("c",)),
    "mul_const": (1, ("c",)),
    "div_const": (1, ("c",)),
    "add": (2, ()),
    "sub": (2, ()),
    "linear": (2, ("a", "b")),
    "div": (2, ()),
    "exp": (1, ()),
    "masked_exp": (2, ("c",)),
    "relu": (1, ()),
    "affine_relu": (2, ("c",)),
}

#: The functions on real values: (evaluator, node, coefficients, *arguments) -> Real.
REAL: dict[str, Callable[..., Real]] = {
    "token_value": lambda ev, v, c, x: x,
    "token_tag": lambda ev, v, c, x: Real(_one(ev), _one(ev)),
    "mul": lambda ev, v, c, x, y: mul(x, y),
    "mul_scaled": lambda ev, v, c, x, y: scaled(mul(x, y), c["c"]),
    "mul_const": lambda ev, v, c, x: scaled(x, c["c"]),
    "div_const": lambda ev, v, c, x: scaled(x, 1 / ev.nonzero(c["c"], v)),
    "add": lambda ev, v, c, x, y: add(x, y),
    "sub": lambda ev, v, c, x, y: add(x, neg(y)),
    "linear": lambda ev, v, c, x, y: add(scaled(x, c["a"]), scaled(y, c["b"])),
    "div": lambda ev, v, c, x, y: ev.divide_by(x, y, v),
    "exp": lambda ev, v, c, x: Real(forms.exp(ev.K, ev.plain(x, v)), _one(ev)),
    "masked_exp": lambda ev, v, c, x, m: Real(ev.plain(m, v) * forms.exp(ev.K, ev.plain(x, v).scale(c["c"])), _one(ev)),
    "relu": lambda ev, v, c, x: ev.relu(x, v),
    "affine_relu": lambda ev, v, c, x, y: ev.relu(add(scaled(x, c["c"]), y), v),
}

