r"""Theorems for every size: a construction's template proven equal to its reference for all sizes.

**The statement.** For every assignment of the quantified sizes (each >= 1; the others fixed), and
all real inputs of those sizes, the construction built at those sizes maps its input sequence to the
reference's output block, and the positions after it (up to the sequence length N) to 0.

**The proof.** The template (the builder called with size symbols) is evaluated at a symbolic
position of each *region* (:mod:`.evaluate`): the output block, t = i c + j with 0 <= i < r,
0 <= j < c, and the rest, r c <= t < N. Its value there is a quotient of Σ normal forms; the output
block's must equal the reference's (cross-multiplied: a d - b c is the zero form), the rest's
numerator must be the zero form, and every denominator is shown positive (:func:`positive`). A step
that needs a relation neither proven nor refuted splits the region by it; a size case (``size_case``,
e.g. d = 1) splits the sizes: a *case* fixes that size to its value everywhere (template, layout and
reference) or assumes it differs.

**Honesty.** A failed fact (a counter-model) or a difference of forms is "no proof", not "false":
:func:`counterexample` evaluates the construction at concrete sizes (the counter-model's, or small
ones) on exact rational inputs with the fixed-size machinery, against the reference computed straight
from the inputs, and only a difference found there makes the claim false.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from attncert.constructions.layout import Construction
from attncert.constructions.rasp.graph import graph_to_json
from attncert.constructions.rasp.template import substitute_json
from attncert.constructions.sizes.expr import SizeExpr, size
from attncert.exact.errors import AttncertError
from attncert.proofs.every_size.evaluate import ONE, Evaluator, Real, Refine, Split, Unsupported, _divide, divisor_not_nonzero
from attncert.proofs.every_size.facts import Context, FactError, Prover, Rel
from attncert.proofs.every_size.forms import Form, FormError, Sizes, positive, reset_fresh, value_at
from attncert.proofs.every_size.references import REFERENCES, Reference

#: The most regions (after splits) one case may have.
MAX_REGIONS = 32
#: The most size cases one proof may have.
MAX_CASES = 16
#: The most splits and refinements on the way to one region.
MAX_DEPTH = 8


@dataclass(frozen=True)
class Spec:
    """An every-size claim: the builder's size symbols in its order, the builder, the reference."""

    name: str
    symbols: tuple[str, ...]
    build: Callable[..., Construction]
    reference: Reference
    #: tokens are pairs (value, tag), under the hypothesis that the tags of the rows of the block (first column)
    #: are 0 or 1 and some is 1: (block, the size that counts its rows); None for plain tokens
    data_rows: tuple[str, str] | None = None
    #: zero-padded inputs (the size hierarchy): block -> (the sizes of the matrix's rows and columns in it, whether
    #: a row's tag says it is one of the matrix's rows); the entries of the output compared (rows, cols sizes),
    #: instead of the whole output block and the rest; and the relations a <= b assumed of the sizes
    padded: dict[str, tuple[str, str, bool]] | None = None
    entries: tuple[str, str] | None = None
    at_most: tuple[tuple[str, str], ...] = ()


@dataclass
class Case:
    """Sizes fixed to integers (``fixed``) and relations between sizes assumed (``assumed``)."""

    fixed: dict[str, int]
    assumed: tuple[Rel, ...] = ()
    #: how the case was split off the sizes given: {"fix": s, "value": c} or {"differs": s, "value": c}
    path: tuple[dict[str, Any], ...] = ()
    #: the facts that the output block and the inputs fit in the sequence, and that no position follows the
    #: output block (None: the rest region is proven instead)
    fits: list[int] = field(default_factory=list)
    rest_empty: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "fixed": dict(sorted(self.fixed.items())),
            "assumed": [r.text() for r in self.assumed],
            "path": list(self.path),
            "fits": self.fits,
            "rest_empty": self.rest_empty,
        }

    def text(self) -> str:
        parts = [f"{k} = {v}" for k, v in sorted(self.fixed.items())] + [r.text() for r in self.assumed]
        return " and ".join(parts) or "every size"


@dataclass
class Region:
    """Where a value is compared: its kind, context, position and what was found."""

    case: str
    kind: str  # "output", "rest", or "div N": the divisor of the div node N at every position, shown nonzero
    context: Context
    position: SizeExpr
    value: Real | None = None
    reference: Real | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    equal: bool = False
    problem: str | None = None
    case_index: int = 0
    entry: tuple[SizeExpr, SizeExpr] | None = None
    #: how the region was split off its kind's whole region: {"assume": rel} or {"refine": d, "radix": R, "residue": e}
    path: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        def real(x: Real | None) -> Any:
            return None if x is None else {"num": x.num.to_json(), "den": x.den.to_json()}

        return {
            "case": self.case_index,
            "kind": self.kind,
            "path": list(self.path),
            "digits": [[d, B.text()] for d, B in self.context.digits],
            "assumed": [r.text() for r in self.context.assumed],
            "position": self.position.text(),
            "entry": None if self.entry is None else [e.text() for e in self.entry],
            "steps": self.steps,
            "value": real(self.value),
            "reference": real(self.reference),
        }


class NoProof(AttncertError):
    """The prover did not prove the claim; ``counterexample`` when a concrete run shows it false."""

    def __init__(self, message: str, counterexample: dict[str, Any] | None = None):
        super().__init__(message)
        self.counterexample = counterexample


def prove(spec: Spec, every: tuple[str, ...], fixed: Mapping[str, int]) -> dict[str, Any]:
    """The proof's record (cases, regions, steps, facts), or NoProof naming what failed."""
    if set(every) | set(fixed) != set(spec.symbols) or set(every) & set(fixed) or not every:
        raise AttncertError(f"{spec.name} has the sizes {', '.join(spec.symbols)}: name each once, quantified or fixed")
    start = time.perf_counter()
    reset_fresh()  # binder names follow the evaluation alone: the same proof twice is the same document
    prover = Prover()
    template = spec.build(*(fixed[s] if s in fixed else SizeExpr.symbol(s) for s in spec.symbols))
    cases, done, regions = [Case(dict(fixed))], [], []
    try:
        while cases:
            case = cases.pop(0)
            if len(done) + len(cases) >= MAX_CASES:
                raise NoProof(f"{spec.name}: more than {MAX_CASES} size cases")
            try:
                found = _prove_case(spec, template, case, prover)
                for r in found:
                    r.case_index = len(done)
                regions += found
                done.append(case)
            except _SizeSplit as e:
                sym, value = e.symbol, e.value
                pinned = {a: 1 for a, b in spec.at_most if b == sym and value == 1 and a not in case.fixed}  # 1 <= a <= b = 1
                cases += [
                    Case({**case.fixed, sym: value, **pinned}, case.assumed, case.path + ({"fix": sym, "value": value},)),
                    Case(case.fixed, case.assumed + (Rel("!=", SizeExpr.symbol(sym), SizeExpr.const(value)),), case.path + ({"differs": sym, "value": value},)),
                ]
        bad = [r for r in regions if not r.equal]
        if bad:
            r = bad[0]
            for b in bad:  # sizes where each unproven region is not empty: the counterexample search tries them
                prover.counter_model(b.context, Rel("<", SizeExpr.const(0), SizeExpr.const(0)))
            raise NoProof(f"{spec.name}: no proof in the {r.kind} region ({r.case}; {r.context.text()}): {r.problem}")
    except NoProof as e:
        models = prover.models + _atom_models(graph_to_json(template.graph()), template.layout, tuple(s for s in spec.symbols if s not in fixed))
        raise NoProof(str(e), counterexample(spec, models, dict(fixed))) from None
    facts = _compact(done, regions, prover)
    return {
        "template": graph_to_json(template.graph()),
        "cases": done,
        "regions": regions,
        "facts": facts,
        "seconds": time.perf_counter() - start,
    }


def _reference_at(spec: Spec, sizes: dict[str, int], output: tuple[int, int], mats: dict[str, Any]) -> list[list[Any]]:
    """The claimed reference at concrete sizes and inputs: its forms evaluated entry by entry in EE."""
    from attncert.exact import EE

    sz = Sizes(())
    values = {s: SizeExpr.const(v) for s, v in sizes.items()}

    def decide(rel: Rel) -> bool:
        a, b = rel.lhs.value({}), rel.rhs.value({})
        return {"<": a < b, "<=": a <= b, "=": a == b, "!=": a != b}[rel.op]

    rows, cols = output
    out = []
    for i in range(rows):
        row = []
        for j in range(cols):
            ref = spec.reference(sz, values, SizeExpr.const(i), SizeExpr.const(j), decide)
            row.append(EE.div(value_at(ref.num, {}, mats, EE), value_at(ref.den, {}, mats, EE)))
        out.append(row)
    return out


def _atom_models(template: dict[str, Any], layout: Any, symbols: tuple[str, ...]) -> list[dict[str, int]]:
    """Sizes where each max, min, floor or mod atom of the template's size expressions leaves its value at
    small sizes: every argument of a max or min the strict extreme in turn, floor(x, k) >= 1, mod(x, k) != 0.
    A template wrong only past such a point (a bound min(n^2, 2500)) shows it there."""
    from attncert.constructions.sizes.expr import parse

    texts: list[str] = []

    def walk(obj: Any) -> None:
        if isinstance(obj, dict):
            if set(obj) == {"size"}:
                texts.append(obj["size"])
            else:
                for v in obj.values():
                    walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    walk(template)
    texts += [size(x).text() for x in (layout.length, *layout.output) + tuple(x for _, r, c in layout.inputs for x in (r, c))]
    atoms = {a.text(): a for t in texts for e in [parse(t)] for a in _atoms_of(e) if a.op != "sym"}
    base = Context(tuple(sorted(symbols)))
    goals = []
    for a in atoms.values():
        if a.op in ("max", "min"):
            for k, x in enumerate(a.args):  # where argument k is the strict extreme: the goal "it is not" fails
                others = [y for m, y in enumerate(a.args) if m != k]
                goals += [Rel("<=", x, y) if a.op == "max" else Rel("<=", y, x) for y in others][:1]
        elif a.op == "floor":
            goals.append(Rel("<", SizeExpr.of_atom(a), SizeExpr.const(1)))
        else:
            goals.append(Rel("=", SizeExpr.of_atom(a), SizeExpr.const(0)))
    out: list[dict[str, int]] = []
    for g in goals:
        scratch = Prover()
        scratch.counter_model(base, g)
        out += scratch.models
    return out


def _atoms_of(e: SizeExpr) -> set[Any]:
    out = set()
    for a in e.atoms():
        out.add(a)
        for x in a.args:
            if isinstance(x, SizeExpr):
                out |= _atoms_of(x)
    return out


def _compact(cases: list[Case], regions: list[Region], prover: Prover) -> list[Any]:
    """The facts the record uses, renumbered in order of first use (an abandoned attempt's facts are
    dropped: the record holds exactly the facts its steps cite)."""
    order: dict[int, int] = {}

    def use(k: int) -> int:
        return order.setdefault(k, len(order))

    for c in cases:
        c.fits = [use(k) for k in c.fits]
        c.rest_empty = None if c.rest_empty is None else use(c.rest_empty)
    for r in regions:
        for st in r.steps:
            st["facts"] = [use(k) for k in st["facts"]]
    return [prover.proven[k] for k in sorted(order, key=order.get)]


class _SizeSplit(Exception):
    def __init__(self, symbol: str, value: int):
        self.symbol, self.value = symbol, value


def _prove_case(spec: Spec, template: Construction, case: Case, prover: Prover) -> list[Region]:
    """Every region of one size case, proven (or recorded with its problem)."""
    sub = {k: SizeExpr.const(v) for k, v in case.fixed.items()}
    symbols = tuple(s for s in spec.symbols if s not in case.fixed)
    sizes = Sizes(symbols)
    values = {s: SizeExpr.symbol(s) if s not in case.fixed else SizeExpr.const(case.fixed[s]) for s in spec.symbols}
    graph = substitute_json(graph_to_json(template.graph()), case.fixed)
    lay = template.layout
    blocks = [(name, size(r).substitute(sub), size(c).substitute(sub)) for name, r, c in lay.inputs]
    N = size(lay.length).substitute(sub)
    rows, cols = (size(x).substitute(sub) for x in lay.output)
    padded = {b: (values[r], values[c], t) for b, (r, c, t) in (spec.padded or {}).items()}
    rows_of = None if spec.data_rows is None else (spec.data_rows[0], values[spec.data_rows[1]])
    ev = Evaluator(graph, blocks, N, sizes, prover, tagged=spec.data_rows is not None, padded=padded, data_rows=rows_of)
    dev = Evaluator(graph, blocks, N, sizes, prover, tagged=spec.data_rows is not None, padded=padded, data_rows=rows_of)  # the div regions
    for v, node in sorted(ev.nodes.items()):  # every div_const, evaluated or not
        bad = divisor_not_nonzero(node["params"]["fn"], sizes) if node["op"] in ("map", "sequence_map") and isinstance(node["params"].get("fn"), dict) else None
        if bad is not None:
            raise NoProof(f"{spec.name}: node {v} (div_const, computed at every position, read or not): {bad}")
    at_most = tuple(Rel("<=", values[a], values[b]) for a, b in spec.at_most)
    base = Context(tuple(sorted(symbols)), (), at_most + case.assumed)
    # every position the regions evaluate is in the sequence: the output block and the inputs fit in N
    case.fits = []
    for what, e in (("the output block", rows * cols), ("the inputs", ev.inputs_end)):
        fact = prover.valid(base, Rel("<=", e, N))
        if fact is None:
            raise NoProof(f"{spec.name}: {what} ({e.text()} positions) is not proven to fit in the sequence of {N.text()}")
        case.fits.append(prover.index(fact))
    out = graph["outputs"]["output"]
    regions = []
    octx = base
    i, j = SizeExpr.symbol("i"), SizeExpr.symbol("j")
    er, ec = (rows, cols) if spec.entries is None else (values[spec.entries[0]], values[spec.entries[1]])
    for name, bound in (("i", er), ("j", ec)):
        if bound.constant() != 1:
            octx = octx.with_digit(name, bound)
    ival = i if er.constant() != 1 else SizeExpr.const(0)
    jval = j if ec.constant() != 1 else SizeExpr.const(0)
    todo = [_Todo("output", octx, ival * cols + jval, ival, jval)]
    empty = prover.valid(base, Rel("<=", N, rows * cols))
    case.rest_empty = None if empty is None else prover.index(empty)
    t = SizeExpr.symbol("t")
    if empty is None and spec.entries is None:  # positions after the output block may exist
        todo.append(_Todo("rest", base.with_digit("t", N).assuming(Rel("<=", rows * cols, t)), t, None, None))
    # the program computes every node at every position, read or not: each div node's divisor at every t < N, shown
    # nonzero there (a quotient no query reads still divides)
    todo += [_Todo(f"div {v}", base.with_digit("t", N), t, None, None) for v in division_nodes(ev.nodes)]
    while todo:
        item = todo.pop(0)
        if len(regions) + len(todo) >= MAX_REGIONS:
            raise NoProof(f"{spec.name}: more than {MAX_REGIONS} regions")
        region = Region(case.text(), item.kind, item.ctx, item.pos, entry=None if item.i is None else (item.i, item.j), path=item.path)
        first = len(ev.steps)
        try:
            if item.kind.startswith("div "):  # the divisor alone, shown nonzero: nothing to compare or record
                dev.forget()  # its own evaluation: every step it takes is recorded in it
                mark = len(dev.steps)
                v = int(item.kind.split()[1])
                if len(dev.args[v]) != 2:
                    raise Unsupported(f"node {v}: a division that has not two arguments")
                dev.divisor(v, dev._as_real(v, dev.value(dev.args[v][1], item.pos, item.ctx)))
                region.steps = [st.to_json() for st in dev.steps[mark:]]
                region.equal = True
                regions.append(region)
                continue
            region.value = ev.value(out, item.pos, item.ctx)
            if item.kind == "output":
                region.reference = spec.reference(sizes, values, item.i, item.j, _decider(ev, item.ctx, item.pos))
        except Split as s:
            size_split = _size_equality(s.rel, symbols)
            if size_split is not None:
                raise _SizeSplit(*size_split) from None
            if len(item.path) >= MAX_DEPTH:
                raise NoProof(f"{spec.name}: a region split more than {MAX_DEPTH} times ({item.ctx.text()}), last by {s.rel.text()}") from None
            stray = s.rel.symbols() - set(symbols) - {d for d, _ in item.ctx.digits}
            if stray:  # a binder's relation that no sum could cut: splitting the region by it would split nothing
                raise NoProof(f"{spec.name}: a step needs {s.rel.text()}, which reads the sum's offset {sorted(stray)[0]} in a way no range cut covers") from None
            digit = _mod_digit(s.rel, item.ctx)
            todo += item.refined(*digit) if digit else [item.assuming(s.rel), item.assuming(s.rel.negated())]
            continue
        except Refine as r:
            todo += item.refined(r.digit, r.radix)
            continue
        except (Unsupported, FactError, FormError) as e:
            region.problem = str(e)
            regions.append(region)
            continue
        _pin(region, prover)
        region.steps = [st.to_json() for st in ev.steps[first:]] + region.steps
        _compare(region, rows_of)
        regions.append(region)
    missing = sorted(set(ev.nodes) - ev.examined - dev.examined)
    if missing and all(r.equal and r.problem is None for r in regions):  # the program computes every node at every position, read or not
        raise NoProof(f"{spec.name}: no region evaluates the nodes {missing[:10]} ({case.text()}), which the program computes at every position")
    return regions


#: A digit's residue modulo a constant radix up to this is enumerated (one region per residue).
SMALL_RADIX = 8


@dataclass
class _Todo:
    """A region still to prove: kind, context, position, and the output entry (i, j) it is."""

    kind: str
    ctx: Context
    pos: SizeExpr
    i: SizeExpr | None
    j: SizeExpr | None
    path: tuple[dict[str, Any], ...] = ()

    def assuming(self, rel: Rel) -> "_Todo":
        return _Todo(self.kind, self.ctx.assuming(rel), self.pos, self.i, self.j, self.path + ({"assume": rel.text()},))

    def refined(self, digit: str, R: SizeExpr) -> list["_Todo"]:
        """The region with the digit written R q + r: q a new digit, r one too, or, for a small constant R,
        each residue in its own region."""
        q = f"{digit}q"
        old = quotient_bound(digit, dict(self.ctx.digits)[digit], R, self.ctx.assumed, self.ctx.sizes)
        k = R.constant()
        if k is not None and k <= SMALL_RADIX:
            parts = [(R * SizeExpr.symbol(q) + e, ((q, old),), e) for e in range(k)]
        else:
            parts = [(R * SizeExpr.symbol(q) + SizeExpr.symbol(f"{digit}r"), ((q, old), (f"{digit}r", R)), None)]
        out = []
        for by, new, e in parts:
            m = {digit: by}
            sub = lambda x: None if x is None else x.substitute(m)  # noqa: E731
            step = {"refine": digit, "radix": R.text(), "residue": e}
            out.append(_Todo(self.kind, self.ctx.substitute(digit, by, new), self.pos.substitute(m), sub(self.i), sub(self.j), self.path + (step,)))
        return out


def division_nodes(nodes: Mapping[int, dict[str, Any]]) -> list[int]:
    """The nodes whose function is, or may be (a size case's branch, a composition), ``div``: a division by a value."""

    def divides(fn: Any) -> bool:
        if isinstance(fn, dict):
            return fn.get("name") == "div" or any(divides(x) for x in fn.values())
        return isinstance(fn, list) and any(divides(x) for x in fn)

    return [v for v, n in sorted(nodes.items()) if n["op"] in ("map", "sequence_map") and divides(n["params"].get("fn"))]


def quotient_bound(digit: str, bound: SizeExpr, R: SizeExpr, assumed: tuple[Rel, ...], sizes: tuple[str, ...]) -> SizeExpr:
    """The bound of q where digit = R q + r (0 <= r < R, R >= 1): E / R for the first E that R divides exactly, of the
    digit's bound and then, in their order, the relations assumed a digit < a E (a a monomial in the sizes with a
    positive coefficient, so a >= 1, and E free of the digit: digit < E), since R q <= digit < R (E / R) gives
    q < E / R; else the digit's bound (q <= digit). A tight bound keeps later facts linear in q: from t < c r, q < r,
    where c q + c - 1 < c r from c q + r' < c r is a nonlinear cancellation z3 leaves unknown."""
    tops = [bound]
    for rel in assumed:
        a = _exact(rel.lhs, SizeExpr.symbol(digit)) if rel.op == "<" and digit not in rel.rhs.symbols() else None
        if a is not None and len(a.terms) == 1 and next(iter(a.terms.values())) >= 1 and a.symbols() <= set(sizes):
            E = _exact(rel.rhs, a)
            if E is not None:
                tops.append(E)
    for E in tops:
        top = _exact(E, R)
        if top is not None and top.terms:
            return top
    return bound


def _exact(p: SizeExpr, R: SizeExpr) -> SizeExpr | None:
    """q with p = q R exactly (R a positive monomial), or None."""
    try:
        q, rest = _divide(p, R)
    except Unsupported:
        return None
    return None if rest.terms else q


def _mod_digit(rel: Rel, ctx: Context) -> tuple[str, SizeExpr] | None:
    """(digit, k) if the relation reads mod(digit, k) or floor(digit, k) of a digit of the context."""
    names = {d for d, _ in ctx.digits}
    for e in (rel.lhs, rel.rhs):
        for a in e.atoms():
            if a.op in ("mod", "floor") and a.args[0].symbols() <= names and len(a.args[0].symbols()) == 1 and a.args[0] == SizeExpr.symbol(next(iter(a.args[0].symbols()))):
                return next(iter(a.args[0].symbols())), SizeExpr.const(a.args[1])
    return None


def _decider(ev: Evaluator, ctx: Context, pos: SizeExpr) -> Callable[[Rel], bool]:
    """A piecewise reference's decisions, proven (or a split), recorded as steps of the output node."""
    return lambda rel: ev.decide_step(-1, pos, ctx, "reference", rel)


def _size_equality(rel: Rel, symbols: tuple[str, ...]) -> tuple[str, int] | None:
    """(s, c) if the relation is s - c = 0 (or s = c) for one size symbol s: a case that fixes s."""
    if rel.op != "=":
        return None
    e = rel.lhs - rel.rhs
    syms = e.symbols()
    if len(syms) != 1 or next(iter(syms)) not in symbols:
        return None
    s = next(iter(syms))
    rest = e - SizeExpr.symbol(s)
    if rest.constant() is not None and e.terms.get(((SizeExpr.symbol(s).atoms().pop(), 1),)) == 1:
        return s, -rest.constant()
    return None


def _pin(region: Region, prover: Prover) -> None:
    """Digits the region's context fixes, substituted in its value and reference: a digit d is pinned to
    c when d = c is proven, c one of the bounds the context gives d (B - 1 for d < B; a, a - 1, a + 1 for
    an assumed relation between d and a). In the last position of an odd MaxMin row, j = n - 1."""
    ctx = region.context
    for d, B in ctx.digits:
        D = SizeExpr.symbol(d)
        cands = [B - ONE]
        for r in ctx.assumed:
            for a, b in ((r.lhs, r.rhs), (r.rhs, r.lhs)):
                if a == D and d not in b.symbols():
                    cands += [b, b - ONE, b + ONE]
        for c in cands:
            fact = prover.valid(ctx, Rel("=", D, c))
            if fact is not None:
                m = {d: c}
                if region.value is not None and isinstance(region.value, Real):
                    region.value = Real(region.value.num.rename(m), region.value.den.rename(m))
                if region.reference is not None:
                    region.reference = Real(region.reference.num.rename(m), region.reference.den.rename(m))
                region.steps.append({"node": -1, "position": region.position.text(), "context": ctx.text(), "kind": "pin", "decision": f"{d} = {c.text()}", "facts": [prover.index(fact)]})
                break


def _compare(region: Region, data_rows: tuple[str, SizeExpr] | None = None) -> None:
    v = region.value
    assert v is not None
    if not isinstance(v, Real):
        region.problem = "the output is an integer of the position"
        return
    if not positive(v.den, data_rows):
        region.problem = f"the denominator {v.den.key()[:120]} is not shown positive"
        return
    if region.kind == "rest":
        region.equal = v.num.is_zero()
        if not region.equal:
            region.problem = f"the value after the output block is {v.num.key()[:160]}, not 0"
        return
    ref = region.reference
    assert ref is not None
    if not positive(ref.den, data_rows):
        region.problem = "the reference's denominator is not shown positive"
        return
    # a / b = c / d: a - c = 0 where b and d are one form (positive), else a d - b c = 0
    diff = v.num - ref.num if v.den.same(ref.den) else v.num * ref.den - v.den * ref.num
    region.equal = diff.is_zero()
    if not region.equal:
        region.problem = f"the value and the reference differ as forms by {diff.key()[:200]}"


#: The concrete runs of a counterexample search are skipped past this sequence length.
MAX_CHECK_POSITIONS = 20_000
#: Small sizes tried (each quantified size in 1..SMALL, at most this many assignments).
SMALL, MAX_SMALL = 4, 64


def counterexample(spec: Spec, models: list[dict[str, int]], fixed: dict[str, int], seed: int = 0) -> dict[str, Any] | None:
    """A concrete size and input where the construction's output differs from the claimed reference:
    the construction evaluated exactly (EE) by the fixed-size machinery, the reference's forms at those
    sizes and inputs (:func:`.forms.value_at`); the sizes of the solver's counter-models first, then
    small sizes; None if none of them shows a difference (then the claim is unproven, not false)."""
    import itertools
    import random

    from attncert.constructions import rasp
    from attncert.exact import EE, QQ

    free = [s for s in spec.symbols if s not in fixed]
    candidates = [{**fixed, **{k: m.get(k, 1) for k in free}} for m in models]
    # the MAX_SMALL smallest by their sum, so that every size varies (the first ones of the product order would hold
    # the first sizes at 1: a multi-head mutant wrong only with n >= 2 and h >= 3 was never tried)
    for combo in sorted(itertools.product(range(1, SMALL + 1), repeat=len(free)), key=sum)[:MAX_SMALL]:
        candidates.append({**fixed, **dict(zip(free, combo))})
    seen = set()
    candidates.sort(key=lambda c: (sum(c.values()), sorted(c.items())))  # the smallest counterexample first
    for sizes in candidates:
        key = tuple(sorted(sizes.items()))
        if key in seen or any(v < 1 for v in sizes.values()):
            continue
        if any(sizes[a] > sizes[b] for a, b in spec.at_most):
            continue
        seen.add(key)
        con = spec.build(*(sizes[s] for s in spec.symbols))
        if con.layout.length > MAX_CHECK_POSITIONS:
            continue
        rng = random.Random(seed)
        mats = {name: [[QQ.convert(rng.randint(-3, 3)) for _ in range(c)] for _ in range(r)] for name, r, c in con.layout.inputs}
        tokens, rows, cols = None, *con.layout.output
        if spec.padded is not None:  # each matrix at its own sizes, zero-padded into its block (row tags where said)
            zero = QQ.convert(0)
            tokens = []
            for name, r, c in con.layout.inputs:
                vr, vc, tag_rows = spec.padded[name]
                mats[name] = [[QQ.convert(rng.randint(-3, 3)) for _ in range(sizes[vc])] for _ in range(sizes[vr])]
                tokens += [(mats[name][i][j] if i < sizes[vr] and j < sizes[vc] else zero, QQ.convert(int(i < sizes[vr] or not tag_rows))) for i in range(r) for j in range(c)]
            tokens += [(zero, zero)] * (con.layout.length - len(tokens))
            rows, cols = sizes[spec.entries[0]], sizes[spec.entries[1]]
        elif spec.data_rows is not None:  # tags: 0 or 1 per row of the data block (the first row data), 1 elsewhere
            block = spec.data_rows[0]
            for name, r, c in con.layout.inputs:
                mats[f"tag({name})"] = [[QQ.convert(1 if name != block or i == 0 else rng.randint(0, 1))] * c for i in range(r)]
            tokens = [(x, t) for name, r, c in con.layout.inputs for row, tags in zip(mats[name], mats[f"tag({name})"]) for x, t in zip(row, tags)]
            tokens += [(QQ.convert(0), QQ.convert(0))] * (con.layout.length - len(tokens))
        try:
            ref = _reference_at(spec, sizes, (rows, cols), mats)
        except FormError:  # the reference's forms too large to build at these sizes: no check here
            continue
        try:
            out = con.run(mats, EE) if tokens is None else rasp.evaluate_graph(con.graph(), tokens, EE)["output"]
        except AttncertError as e:  # the construction fails where the reference is defined (a division by 0)
            return {"sizes": sizes, "seed": seed, "inputs": "integers in [-3, 3] drawn by random.Random(seed), row-major per input", "position": None, "output": f"evaluation error: {e}", "reference": "defined"}
        stride = con.layout.output[1]  # entry (i, j) is at i stride + j
        compared = [(i * stride + j, ref[i][j]) for i in range(rows) for j in range(cols)]
        if spec.entries is None:
            compared += [(t, EE.convert(0)) for t in range(rows * cols, con.layout.length)]
        for t, want in compared:
            if not EE.convert(out[t]) == EE.convert(want):
                return {"sizes": sizes, "seed": seed, "inputs": "integers in [-3, 3] drawn by random.Random(seed), row-major per input", "position": t, "output": str(out[t]), "reference": str(want)}
    return None


SPECS: dict[str, Spec] = {}


def _register(name: str, symbols: tuple[str, ...], build: Callable[..., Construction], data_rows: tuple[str, str] | None = None, **more: Any) -> None:
    SPECS[name] = Spec(name, symbols, build, REFERENCES[name], data_rows, **more)


def _specs() -> None:
    from attncert.constructions import activations, linalg, simulator

    _register("transpose", ("r", "c"), linalg.transpose)
    _register("matmul", ("r", "k", "c"), linalg.matmul)
    _register("softmax", ("r", "c"), activations.softmax_rows)
    _register("relu", ("n",), activations.relu)
    _register("maxmin", ("n",), activations.maxmin)
    _register("universal", ("n", "d", "dv"), simulator.universal)
    _register("universal_tagged", ("n", "d", "dv"), simulator.universal, data_rows=("X", "n"))
    _register(
        "hierarchy", ("N", "D", "Dv", "n", "d", "dv"), lambda N, D, Dv, n, d, dv: simulator.universal(N, D, Dv),
        padded={"X": ("n", "d", True), "A": ("d", "d", False), "V": ("d", "dv", False)},
        entries=("n", "dv"), at_most=(("n", "N"), ("d", "D"), ("dv", "Dv")),
    )
    _register("multihead", ("n", "d", "dv", "h", "do"), simulator.multihead)
    _register("encoder_layer", ("n", "d", "dv", "h", "f"), simulator.encoder_layer)


_specs()
