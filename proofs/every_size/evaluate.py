r"""A template evaluated at a symbolic position: the value of a construction for every size.

The template (:mod:`constructions.rasp.template`) is read from its graph JSON. A position is an
integer polynomial in the size symbols and the *digits* of the context (:mod:`.facts`); a node's
value there is an :class:`Int` (the index arithmetic: positions, group keys) or a :class:`Real`, a
quotient of two Σ normal forms (:mod:`.forms`). Each step that depends on the sizes is decided by a
proven fact, and recorded (:class:`Step`) so that an independent checker can retrace it:

* ``radix_affine`` (index arithmetic): the digits of p in the radices R_m, ..., R_2 are proposed by
  *syntactic division* (the terms of p that the monomial R divides make the quotient, the others the
  remainder r) and checked, 0 <= r < R, which makes them the digits (the mixed-radix representation
  is unique); where that fails the digits are *defined*, fresh q, r with p = q R + r, 0 <= r < R
  (Euclid's division: they exist and are unique, so assuming them is sound). ``bound``: p < bound
  or p >= bound, proven;
* a token read at p: the input block that holds p (off <= p < off + rows cols, proven), its row and
  column by syntactic division by cols (0 <= col < cols, 0 <= row < rows, proven), or the padding
  after the inputs (p >= their length, proven), whose token is 0;
* ``Aggregate(Select(K, Q, EQ), v)``, numerical, in two shapes. A *gather*, K = indices: the query
  q = Q(p) selects the key at q if 0 <= q < N, none if q < 0 or q >= N (proven). A *group mean*,
  K(s) = s // R for s < B (else o): if q != o or B >= N, the keys are {q R + l : 0 <= l < R} when
  q >= 0 and q R + R - 1 < min(B, N), none when q < 0 or q R >= min(B, N) (proven): membership and
  completeness follow from the uniqueness of s = (s // R) R + s mod R. The mean is
  (1/R) Σ_{l<R} v(q R + l), v evaluated with the digit l in [0, R); values whose denominators depend on l are
  summed as Σ_l a_l inv(b_l), each b_l shown nonzero (:func:`.forms.reciprocal`);
* a size case (``size_case``): its condition, proven true or false.

Where neither a relation nor its negation is proven, evaluation stops with :class:`Split`, and the
region is divided in two by that relation (:mod:`.prove`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from flint import fmpq

from attncert.constructions.sizes.expr import SizeExpr, parse
from attncert.exact.errors import AttncertError, ParseError
from attncert.proofs.every_size.facts import Context, Prover, Rel
from attncert.proofs.every_size.forms import Coeff, Factor, Form, FormError, Sizes, extremum, fresh, positive, positive_coeff, read, reciprocal

ZERO, ONE = SizeExpr.const(0), SizeExpr.const(1)
#: A sum over at most this many values of a binder is written out term by term.
SMALL_SPLIT = 4
#: A region digit of at most this many values whose token lies in no single block is refined into its values.
FEW = 8


class Unsupported(AttncertError):
    """A template, function or selection outside what the every-size prover covers."""


class Split(Exception):
    """A relation the prover could neither prove nor refute where a step needs it: the region is split by it."""

    def __init__(self, rel: Rel):
        super().__init__(rel.text())
        self.rel = rel


class Refine(Exception):
    """A digit whose quotient and remainder by R a step needs: the region writes it as R q + r."""

    def __init__(self, digit: str, radix: SizeExpr):
        super().__init__(f"{digit} = {radix.text()} q + r")
        self.digit, self.radix = digit, radix


@dataclass(frozen=True)
class Int:
    """An integer value: a polynomial in the sizes and the digits."""

    e: SizeExpr


@dataclass(frozen=True)
class Real:
    """A real value num / den (forms; den is the constant 1 unless a division made it)."""

    num: Form
    den: Form

    def is_plain(self) -> bool:
        c = self.den.constant()
        return c is not None and c == self.num.sizes.const(1)


@dataclass(frozen=True)
class Pair:
    """A packed pair (``pack``): a real value and an integer of the position."""

    x: Any
    y: Any


@dataclass
class Step:
    """One decision of the evaluation: the node, the position, the context, what was decided, the facts."""

    node: int
    position: str
    context: str
    kind: str
    decision: str
    facts: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "position": self.position, "context": self.context, "kind": self.kind, "decision": self.decision, "facts": self.facts}


@dataclass(frozen=True)
class Block:
    name: str
    rows: SizeExpr
    cols: SizeExpr
    offset: SizeExpr
    #: a zero-padded block: the rows and columns of its matrix (the rest of the block holds 0), and whether a
    #: row's tag says whether it is one of the matrix's rows (1) or padding (0); None: the block is the matrix
    valid: tuple[SizeExpr, SizeExpr] | None = None
    tag_rows: bool = False


class Evaluator:
    """Values of a template's nodes at symbolic positions (module docstring), with every step recorded."""

    def __init__(
        self, graph: dict[str, Any], blocks: list[tuple[str, SizeExpr, SizeExpr]], length: SizeExpr, sizes: Sizes, prover: Prover,
        tagged: bool = False, padded: dict[str, tuple[SizeExpr, SizeExpr, bool]] | None = None, data_rows: tuple[str, SizeExpr] | None = None,
    ):
        #: tagged: every token is a pair (value, tag), the tag of M[r][c] read as ``tag(M)[r][c]``, the padding (0, 0);
        #: padded: block -> (rows, cols, tag_rows) of the matrix zero-padded into it (pairs too: see Block)
        self.tagged = tagged or bool(padded)
        #: the tags' hypothesis a divisor may use (:func:`.forms.positive`), or None
        self.data_rows = data_rows
        padded = padded or {}
        self.nodes = {n["id"]: n for n in graph["nodes"]}
        self.args: dict[int, list[int]] = {v: [] for v in self.nodes}
        for e in sorted(graph["edges"], key=lambda e: (e["target"], e["arg"])):
            self.args[e["target"]].append(e["source"])
        self.blocks, off = [], ZERO
        for name, r, c in blocks:
            rr, cc, rows_tagged = padded.get(name, (None, None, False))
            self.blocks.append(Block(name, r, c, off, None if rr is None else (rr, cc), rows_tagged))
            off = off + r * c
        self.inputs_end, self.N, self.sizes, self.prover = off, length, sizes, prover
        self.steps: list[Step] = []
        #: the sums' offsets (digits of the contexts made inside a value, never refined as a region's are)
        self.binders: set[str] = set()
        self._memo: dict[tuple[int, str, str], Any] = {}
        #: the nodes evaluated, and the selects and keys an aggregate read: in each case every node must be (the
        #: program computes each at every position; a node no region evaluates is never examined)
        self.examined: set[int] = set()

    # -- recording --------------------------------------------------------------------------------
    def decide_step(self, node: int, pos: SizeExpr, ctx: Context, kind: str, rel: Rel) -> bool:
        """rel or its negation, proven, recorded as a step; Split when neither is."""
        verdict = self.prover.decide(ctx, rel)
        if verdict is None:
            raise Split(rel)
        fact = self.prover.valid(ctx, rel if verdict else rel.negated())
        self.steps.append(Step(node, pos.text(), ctx.text(), kind, (rel if verdict else rel.negated()).text(), [self.prover.index(fact)]))
        return verdict

    def _require(self, node: int, pos: SizeExpr, ctx: Context, kind: str, rels: list[Rel]) -> None:
        facts = [self.prover.index(self.prover.require(ctx, r, f"node {node} ({kind})")) for r in rels]
        self.steps.append(Step(node, pos.text(), ctx.text(), kind, " and ".join(r.text() for r in rels), facts))

    # -- evaluation -------------------------------------------------------------------------------
    def value(self, node: int, pos: SizeExpr, ctx: Context) -> Int | Real:
        key = (node, pos.text(), ctx.text())
        self.examined.add(node)
        if key not in self._memo:
            self._memo[key] = self._value(node, pos, ctx)
        return self._memo[key]

    def forget(self) -> None:
        """Forget the values computed so far (the nodes examined stay), so that the next evaluation takes and records
        every step again: a region's record must hold all of its own steps, which another region's values would hide."""
        self._memo.clear()

    def _value(self, v: int, pos: SizeExpr, ctx: Context) -> Int | Real:
        n = self.nodes[v]
        op, args = n["op"], self.args[v]
        if op == "indices":
            return Int(pos)
        if op == "tokens":
            return self._token(v, pos, ctx)
        if op == "map":
            return self._apply(v, n["params"]["fn"], [self.value(args[0], pos, ctx)], pos, ctx)
        if op == "sequence_map":
            return self._apply(v, n["params"]["fn"], [self.value(a, pos, ctx) for a in args], pos, ctx)
        if op == "aggregate":
            return self._aggregate(v, pos, ctx)
        raise Unsupported(f"node {v} ({n['label']!r}): {op} is outside the every-size prover")

    def _token(self, v: int, pos: SizeExpr, ctx: Context) -> Real | Pair:
        for b in self.blocks:
            inside = [Rel("<=", b.offset, pos), Rel("<", pos, b.offset + b.rows * b.cols)]
            if all(self.prover.valid(ctx, r) is not None for r in inside):
                row, col = self._digits(pos - b.offset, b.cols, ctx)
                rels = inside + [Rel("<=", ZERO, col), Rel("<", col, b.cols), Rel("<=", ZERO, row), Rel("<", row, b.rows)]
                self._require(v, pos, ctx, f"token of {b.name}", rels)
                if b.valid is not None:  # a zero-padded matrix: 0 outside its rows and columns, tag 1 on its rows
                    in_row = self.decide_step(v, pos, ctx, f"rows of {b.name}", Rel("<", row, b.valid[0]))
                    inside = in_row and self.decide_step(v, pos, ctx, f"columns of {b.name}", Rel("<", col, b.valid[1]))
                    value = self._real(read(self.sizes, b.name, row, col) if inside else Form.const(self.sizes, 0))
                    return Pair(value, self._real(Form.const(self.sizes, 1 if in_row or not b.tag_rows else 0)))
                value = self._real(read(self.sizes, b.name, row, col))
                return Pair(value, self._real(read(self.sizes, f"tag({b.name})", row, col))) if self.tagged else value
        if self.decide_step(v, pos, ctx, "padding", Rel("<=", self.inputs_end, pos)):
            zero = self._real(Form.const(self.sizes, 0))
            return Pair(zero, zero) if self.tagged else zero
        # a region digit of a few values (a fixed number of heads m < 2, whose blocks A1, A2 are named apart): each value
        # its own region, where the token's block is one
        few = next((d for d, B in ctx.digits if d in pos.symbols() and d not in self.binders and 2 <= (B.constant() or 0) <= FEW), None)
        if few is not None:
            raise Refine(few, dict(ctx.digits)[few])
        raise Unsupported(f"node {v}: the token at {pos.text()} is in no single input block for every size (split the region)")

    def _real(self, f: Form) -> Real:
        return Real(f, Form.const(self.sizes, 1))

    # -- index arithmetic ---------------------------------------------------------------------------
    def radix_affine(self, v: int, p: SizeExpr, params: dict[str, Any], pos: SizeExpr, ctx: Context) -> SizeExpr:
        radices, coeffs = params["radices"], params["coeffs"]
        const, bound, other = params["const"], params["bound"], params["other"]
        if bound is not None and not self.decide_step(v, pos, ctx, "bound", Rel("<", p, bound)):
            return other
        digits, rest = [], p
        for R in reversed(radices[1:]):
            q, r = self._digits(rest, R, ctx)
            self._require(v, pos, ctx, "digit", [Rel("<=", ZERO, r), Rel("<", r, R)])
            digits.append(r)
            rest = q
        digits.append(rest)
        digits.reverse()
        out = const
        for c, d in zip(coeffs, digits):
            out = out + c * d
        return out

    def _digits(self, p: SizeExpr, R: SizeExpr, ctx: Context) -> tuple[SizeExpr, SizeExpr]:
        """(q, r) with p = q R + r and 0 <= r < R proven: the first of the proposals of :func:`_proposals`
        that holds; a digit of the context that none fits is refined (Refine), anything else refused."""
        for q, r in _proposals(p, R):
            if self.prover.valid(ctx, Rel("<=", ZERO, r)) is not None and self.prover.valid(ctx, Rel("<", r, R)) is not None:
                return q, r
        q, r = _divide(p, R)
        digit = _digit(p, ctx) or _digit(r, ctx)  # p itself, or the remainder of its division, is one digit
        if digit is not None:
            raise Refine(digit, R)
        self.prover.counter_model(ctx, Rel("<", r, R))  # where the division's remainder leaves [0, R)
        self.prover.counter_model(ctx, Rel("<=", ZERO, r))
        raise Unsupported(f"the digits of {p.text()} in radix {R.text()} are not found by division")

    # -- attention ----------------------------------------------------------------------------------
    def _aggregate(self, v: int, pos: SizeExpr, ctx: Context) -> Real:
        sel, vals = self.args[v]
        s = self.nodes[sel]
        if s["op"] != "select" or s["params"].get("predicate") != "EQ":
            raise Unsupported(f"node {v}: only Select(K, Q, EQ) is covered")
        K, Q = self.args[sel]
        self.examined |= {sel, K, *self.args[K]}  # the keys are read from their parameters: the positions, or s // R of them
        default = self._real(_const_form(self.sizes, _decode(self.nodes[v]["params"].get("default"))))
        q = self.value(Q, pos, ctx)
        if not isinstance(q, Int):
            raise Unsupported(f"node {v}: a query that is not an integer of the position")
        q = q.e
        k = self.nodes[K]
        if k["op"] == "indices":  # a gather: the one key at q
            if not self.decide_step(v, pos, ctx, "gather low", Rel("<=", ZERO, q)):
                return default
            if not self.decide_step(v, pos, ctx, "gather high", Rel("<", q, self.N)):
                return default
            return self._as_real(v, self.value(vals, q, ctx))
        group = _group_key(k, self.args[K], self.nodes)
        if group is None:
            raise Unsupported(f"node {v}: its keys {k['label']!r} are neither the positions nor a group s // R")
        R, B, o = group
        self._require(v, pos, ctx, "group size", [Rel("<=", ONE, R)])
        tops = [self.N] if B is None else [B, self.N]  # the keys lie below B (a key past it is o) and below N
        if B is not None:  # no key is o: the query differs from o, or every key s < N lies below B (recorded either way)
            below = self.prover.valid(ctx, Rel("<=", self.N, B)) is not None
            self._require(v, pos, ctx, "group other", [Rel("<=", self.N, B) if below else Rel("!=", q, o)])
        if not self.decide_step(v, pos, ctx, "group low", Rel("<=", ZERO, q)):
            return default
        for top in tops:
            if not self.decide_step(v, pos, ctx, "group start", Rel("<", q * R, top)):
                return default
        self._require(v, pos, ctx, "group whole", [Rel("<", q * R + R - ONE, top) for top in tops])
        total = self._sum(v, vals, q * R, [R], ctx, pos)
        return Real(total.num.scale(self.sizes.of(R).inverse()), total.den)

    def _sum(
        self, v: int, vals: int, base: SizeExpr, radices: list[SizeExpr], ctx: Context, pos: SizeExpr,
        at: SizeExpr = ZERO, lo: SizeExpr = ZERO, count: SizeExpr | None = None,
    ) -> Real:
        """Σ over the offsets l < R (R the product of ``radices``, the first the most significant) of the
        values at base + l, l = at R + the mixed-radix number of the digits; at this level the digit runs
        over [lo, lo + count) (count R by default).

        When a value needs the digits of a binder's range R in a radix k that divides it (Refine), the sum
        is rewritten as a sum over the quotient and one over the remainder (Σ_{l < R' k} f(l) = Σ_{m < R'}
        Σ_{u < k} f(m k + u)). When a value needs a relation the binder decides (l < e: a zero-padded
        matrix's columns), the range is cut there (Σ_{l < count} = Σ_{l < e} + Σ_{u < count - e} f(e + u),
        0 <= e <= count proven). A range of at most SMALL_SPLIT values is written out. The values must share
        one denominator (Σ_l a_l / b = (Σ_l a_l) / b). Each choice is a step: ``written out``, ``binder``
        (its name and range), ``range split`` (R = R' k) and ``range cut`` (0 <= e <= count)."""
        R, rest = radices[0], radices[1:]
        count = R if count is None else count

        def at_digit(d: SizeExpr, c: Context) -> Real:
            here = at * R + lo + d
            return self._sum(v, vals, base, rest, c, pos, here) if rest else self._as_real(v, self.value(vals, base + here, c))

        k = count.constant()
        if k is not None and k <= SMALL_SPLIT:  # a small range: each value on its own
            self.steps.append(Step(v, pos.text(), ctx.text(), "written out", f"{k} offsets"))
            out = self._real(Form.const(self.sizes, 0))
            for e in range(k):
                out = _add(out, at_digit(SizeExpr.const(e), ctx))
            return out
        l = fresh("l")
        self.binders.add(l)
        mark = len(self.steps)
        self.steps.append(Step(v, pos.text(), ctx.text(), "binder", f"{l} < {count.text()}"))
        try:
            x = at_digit(SizeExpr.symbol(l), ctx.with_digit(l, count))
        except Refine as r:
            if r.digit != l or lo != ZERO or count != R:
                raise
            del self.steps[mark:]  # the attempt with l whole is abandoned
            outer, rem = _divide(R, r.radix)
            if not rem.terms:
                self.steps.append(Step(v, pos.text(), ctx.text(), "range split", f"{R.text()} = {outer.text()} * {r.radix.text()}"))
                return self._sum(v, vals, base, [outer, r.radix] + rest, ctx, pos, at)
            raise Unsupported(f"node {v}: the offset {l} < {R.text()} is needed in radix {r.radix.text()}, which does not divide it") from None
        except Split as sp:
            e = _cut(sp.rel, l)
            if e is None:
                raise
            del self.steps[mark:]
            self._require(v, pos, ctx, "range cut", [Rel("<=", ZERO, e), Rel("<=", e, count)])
            first = self._sum(v, vals, base, radices, ctx, pos, at, lo, e)
            return _add(first, self._sum(v, vals, base, radices, ctx, pos, at, lo + e, count - e))
        if l in x.den.free():  # Σ_l a_l / b_l = Σ_l a_l inv(b_l), each b_l shown nonzero (the heads' softmax denominators)
            try:
                x = Real(x.num * reciprocal(x.den, self.data_rows), _one(self.sizes))
            except FormError as e:
                raise Unsupported(f"node {v}: a mean of quotients whose denominator depends on the offset: {e}") from None
        return Real(x.num.summed(l, count), x.den)

    def _as_real(self, v: int, x: Int | Real) -> Real:
        if isinstance(x, Real):
            return x
        c = x.e.constant()
        if c is None:
            raise Unsupported(f"node {v}: an integer of the position used as a real value")
        return self._real(Form.const(self.sizes, c))

    def divisor(self, v: int, y: Real) -> None:
        """A div's divisor y = a / b, shown nonzero: a positive or negative (:func:`.forms.positive`, with the tags'
        hypothesis); b is nonzero as every denominator is."""
        if not (positive(y.num, self.data_rows) or positive(-y.num, self.data_rows)):
            raise Unsupported(f"node {v} (div): a division by {y.num.key()[:120]}, not shown nonzero at every size and input")

    # -- maps -----------------------------------------------------------------------------------------
    def _apply(self, v: int, fn: dict[str, Any], xs: list[Int | Real], pos: SizeExpr, ctx: Context) -> Int | Real:
        name, params = fn["name"], {k: _decode(p) for k, p in fn["params"].items()}
        if name.startswith("size_case"):
            zero = self.decide_step(v, pos, ctx, "size case", Rel("=", _size(params["when"]), ZERO))
            return self._apply(v, fn["params"]["then" if zero else "otherwise"]["fn"], xs, pos, ctx)
        if name == "radix_affine":
            if not isinstance(xs[0], Int):
                raise Unsupported(f"node {v}: index arithmetic of a real value")
            ps = {k: (tuple(_size(x) for x in p) if isinstance(p, tuple) else None if p is None else _size(p)) for k, p in params.items()}
            return Int(self.radix_affine(v, xs[0].e, ps, pos, ctx))
        if name == "pack":
            return Pair(*xs)
        if name == "maxmin_pick":
            packed, y = xs
            if not isinstance(packed, Pair) or not isinstance(packed.y, Int):
                raise Unsupported(f"node {v}: maxmin_pick of a pair whose second part is not a position")
            even = self.decide_step(v, pos, ctx, "parity", Rel("=", packed.y.e % 2, ZERO))
            a, b = (_plain(self._as_real(v, z), "an extremum") for z in (packed.x, y))
            return self._real(extremum(self.sizes, "max" if even else "min", a, b))
        if name == "compose":
            x = xs[0]
            for g in fn["params"]["fns"]["list"]:
                x = self._apply(v, g["fn"], [x], pos, ctx)
            return x
        if name in ("token_value", "token_tag") and isinstance(xs[0], Pair):
            return xs[0].x if name == "token_value" else xs[0].y
        if name == "div":  # the divisor shown nonzero where the division is made: its quotient may be dropped later (token_tag)
            self.divisor(v, self._as_real(v, xs[1]))
        f = _REAL.get(name)
        if f is None:
            raise Unsupported(f"node {v}: the function {name!r} has no every-size semantics here")
        try:
            return f(self.sizes, params, *[self._as_real(v, x) for x in xs])
        except FormError as e:
            raise Unsupported(f"node {v} ({name}): {e}") from None


def _divide(p: SizeExpr, R: SizeExpr) -> tuple[SizeExpr, SizeExpr]:
    """(q, r) with p = q R + r: of each term k m of p whose monomial m R's monomial M divides, with R = c M,
    (k // c) m / M goes to q and (k mod c) m to r; the other terms go to r (4 i + 3 = 2 (2 i + 1) + 1). R is a
    monomial (a product of symbols times a positive integer); the caller proves 0 <= r < R, which makes q and r
    the quotient and the remainder."""
    if len(R.terms) != 1:
        raise Unsupported(f"a radix {R.text()} that is not a monomial")
    ((mono, c),) = R.terms.items()
    if c <= 0 or any(a.op != "sym" for a, _ in mono):
        raise Unsupported(f"a radix {R.text()} that is not a positive monomial in the sizes")
    need = dict(mono)
    q, r = {}, {}
    for m, k in p.terms.items():
        have = dict(m)
        if all(have.get(a, 0) >= e for a, e in need.items()):
            rest = tuple(sorted((a, e - need.get(a, 0)) for a, e in have.items() if e - need.get(a, 0) > 0))
            q[rest] = q.get(rest, 0) + k // c
            k %= c
        if k:
            r[m] = r.get(m, 0) + k
    return SizeExpr(q), SizeExpr(r)


def _cut(rel: Rel, l: str) -> SizeExpr | None:
    """e with the relation equivalent to l < e or to l >= e (so that it holds on exactly one side of e),
    if the relation reads the binder l with coefficient 1 or -1; None otherwise."""
    if rel.op not in ("<", "<="):
        return None
    diff = rel.lhs - rel.rhs  # the relation is diff < 0, or diff <= 0
    L = SizeExpr.symbol(l)
    rest = diff - L
    if l not in rest.symbols():
        return -rest if rel.op == "<" else ONE - rest  # l + c < 0: l < -c;  l + c <= 0: l < 1 - c
    rest = diff + L
    if l not in rest.symbols():
        return rest + ONE if rel.op == "<" else rest  # c - l < 0: l >= c + 1;  c - l <= 0: l >= c
    return None


def _proposals(p: SizeExpr, R: SizeExpr) -> list[tuple[SizeExpr, SizeExpr]]:
    """Candidate (quotient, remainder) pairs of p by R, each with p = q R + r: syntactic division
    (:func:`_divide`), the same with one R borrowed (q - 1, r + R: n - 1 = 0 n + (n - 1)), and (0, p)."""
    q, r = _divide(p, R)
    return [(q, r), (q - ONE, r + R), (ZERO, p)]


def _digit(p: SizeExpr, ctx: Context) -> str | None:
    """The name of the digit p is, if p is one digit of the context."""
    names = {d for d, _ in ctx.digits}
    if len(p.terms) == 1:
        ((mono, c),) = p.terms.items()
        if c == 1 and len(mono) == 1 and mono[0][1] == 1 and mono[0][0].op == "sym" and mono[0][0].args[0] in names:
            return mono[0][0].args[0]
    return None


def _min(a: SizeExpr, b: SizeExpr) -> SizeExpr:
    from attncert.constructions.sizes.expr import smin

    out = smin(a, b)
    return out if isinstance(out, SizeExpr) else SizeExpr.const(out)


def _group_key(k: dict[str, Any], args: list[int], nodes: dict[int, dict[str, Any]]) -> tuple[SizeExpr, SizeExpr | None, SizeExpr] | None:
    """(R, B, o) if the node is radix_affine((*, R), (1, 0), const 0, bound B, other o) of the positions."""
    if k["op"] != "map" or nodes[args[0]]["op"] != "indices" or k["params"]["fn"]["name"] != "radix_affine":
        return None
    p = {key: _decode(x) for key, x in k["params"]["fn"]["params"].items()}
    radices, coeffs = p["radices"], p["coeffs"]
    if len(radices) != 2 or [_size(c) for c in coeffs] != [ONE, ZERO] or _size(p["const"]) != ZERO:
        return None
    return _size(radices[1]), None if p["bound"] is None else _size(p["bound"]), _size(p["other"])


def _decode(obj: Any) -> Any:
    """A parameter of the graph JSON: a size expression, a rational, a tuple, a function (JSON), None."""
    if obj is None:
        return None
    if isinstance(obj, dict) and set(obj) == {"size"}:
        return parse(obj["size"])
    if isinstance(obj, dict) and set(obj) == {"q"}:
        f = Fraction(obj["q"])
        return SizeExpr.const(int(f)) if f.denominator == 1 else fmpq(f.numerator, f.denominator)
    if isinstance(obj, dict) and set(obj) == {"list"}:
        return tuple(_decode(x) for x in obj["list"])
    if isinstance(obj, dict) and set(obj) == {"fn"}:
        return obj["fn"]
    raise ParseError(f"a template parameter {str(obj)[:60]} has no every-size meaning")


def divisor_not_nonzero(fn: dict[str, Any], sizes: Sizes) -> str | None:
    """Why a div_const in fn (through compose, and the branches of a size case its sizes do not decide) divides by a
    size not shown nonzero at every size, or None. Every one is examined, not only those the regions evaluate: the
    program computes each node at every position, read or not."""
    name, params = fn["name"], fn["params"]
    if name == "div_const":
        try:
            _nonzero(_coeff(sizes, _decode(params["c"])))
        except FormError as e:
            return str(e)
        return None
    if name == "compose":
        subs = [g for g in _decode(params["fns"]) or () if isinstance(g, dict)]
    elif name.startswith("size_case"):
        when = _decode(params["when"])
        taken = when.constant() if isinstance(when, SizeExpr) else None
        subs = [_decode(params[b]) for b in (("then", "otherwise") if taken is None else ("then" if taken == 0 else "otherwise",))]
    else:
        return None
    return next((bad for g in subs if isinstance(g, dict) and (bad := divisor_not_nonzero(g, sizes)) is not None), None)


def _size(x: Any) -> SizeExpr:
    if isinstance(x, SizeExpr):
        return x
    raise Unsupported(f"{x!r:.30} is not an integer size expression")


def _coeff(sizes: Sizes, x: Any) -> Coeff:
    if isinstance(x, SizeExpr):
        return sizes.of(x)
    return sizes.const(x)


def _const_form(sizes: Sizes, x: Any) -> Form:
    return Form.coeff(sizes, _coeff(sizes, x))


def _plain(x: Real, what: str) -> Form:
    if not x.is_plain():
        raise FormError(f"{what} of a quotient")
    return x.num


def _exp(sizes: Sizes, x: Form) -> Form:
    return Form.factor(sizes, Factor("exp", (x,)))


def quotient(num: Form, den: Form) -> Real:
    """num / den, where the denominator is one term c e^E (c positive at every size, no sum, no other factor)
    divided out: (num c^{-1} e^{-E}) / 1. Proportional quotients then get one form (a layer's softmax over a
    fixed n = 1 keys gives e^{s_1} / e^{s_1}, against a reference's e^{s_1 + s_2} / e^{s_1 + s_2}), also inside a
    ReLU, which takes the denominator out (ReLU(a / b) = ReLU(a) / b). Other denominators are kept."""
    if len(den.terms) == 1:
        c, t = next(iter(den.terms.values()))
        if not t.binders and all(f.kind == "exp" for f in t.factors) and (t.factors or c != den.sizes.const(1)) and positive_coeff(c):
            inverse = Form.coeff(den.sizes, c.inverse())
            for f in t.factors:
                inverse = inverse * _exp(den.sizes, -f.args[0])
            return Real(num * inverse, Form.const(den.sizes, 1))
    return Real(num, den)


def _mul(a: Real, b: Real) -> Real:
    return quotient(a.num * b.num, a.den * b.den)


def _scaled(x: Real, c: Coeff) -> Real:
    return Real(x.num.scale(c), x.den)


def _add(a: Real, b: Real) -> Real:
    """a / c + b / c = (a + b) / c over one denominator (the same form: 1, or a layer's softmax
    denominators); other quotients cross-multiplied."""
    if a.den.same(b.den):
        return Real(a.num + b.num, a.den)
    return quotient(a.num * b.den + b.num * a.den, a.den * b.den)


def _neg(x: Real) -> Real:
    return Real(-x.num, x.den)


def relu(x: Real) -> Real:
    """ReLU(a / b) = ReLU(a) / b, for b shown positive (:func:`.forms.positive`)."""
    if not positive(x.den):
        raise FormError("ReLU of a quotient whose denominator is not shown positive")
    return Real(Form.factor(x.num.sizes, Factor("relu", (x.num,))), x.den)


def _nonzero(c: Coeff) -> Coeff:
    """c, a divisor shown nonzero at every size >= 1 (positive there, or negative there)."""
    if not (positive_coeff(c) or positive_coeff(-c)):
        raise FormError(f"a division by {c.text()}, not shown nonzero at every size")
    return c


def _one(sizes: Sizes) -> Form:
    return Form.const(sizes, 1)


#: The registered functions on real values, for every size: (sizes, params, *args) -> Real.
_REAL: dict[str, Callable[..., Real]] = {
    "token_value": lambda s, p, x: x,
    "token_tag": lambda s, p, x: Real(_one(s), _one(s)),  # a plain number is a data token
    "mul": lambda s, p, x, y: _mul(x, y),
    "mul_scaled": lambda s, p, x, y: _scaled(_mul(x, y), _coeff(s, p["c"])),
    "mul_const": lambda s, p, x: _scaled(x, _coeff(s, p["c"])),
    "div_const": lambda s, p, x: _scaled(x, _nonzero(_coeff(s, p["c"])).inverse()),
    "add": lambda s, p, x, y: _add(x, y),
    "sub": lambda s, p, x, y: _add(x, _neg(y)),
    "linear": lambda s, p, x, y: _add(_scaled(x, _coeff(s, p["a"])), _scaled(y, _coeff(s, p["b"]))),
    "div": lambda s, p, x, y: quotient(x.num * y.den, x.den * y.num),
    "exp": lambda s, p, x: Real(_exp(s, _plain(x, "exp")), _one(s)),
    "masked_exp": lambda s, p, x, m: Real(_plain(m, "a mask") * _exp(s, _plain(x, "exp").scale(_coeff(s, p["c"]))), _one(s)),
    "relu": lambda s, p, x: relu(x),
    "affine_relu": lambda s, p, x, y: relu(_add(_scaled(x, _coeff(s, p["c"])), y)),
}
