r"""The independent check of an every-size certificate (docs/every-size.md, "What verify does").

A certificate of ``BASE_every_size`` states: for every value >= 1 of the quantified sizes (the others
fixed) and all real inputs, the recorded template maps the inputs, laid out one after another, to
the reference's output block, and the rest of its sequence to 0. From the certificate alone, with
its own reader, arithmetic, evaluator and references, :func:`check_every_size`

1. reads the claim's definition (:mod:`.references`): its sizes, which must be the quantified and
   fixed ones, its input blocks and output shape, which the recorded layout must state;
2. writes each recorded fact's SMT-LIB script from its hypotheses and goal, requires the recorded
   text, and has cvc5 prove it (:mod:`.smtlib`);
3. checks that the cases' paths form a complete tree of size splits, each case's fixed sizes and
   relations being what its path gives, its ``fits`` facts proving that the output block and the
   inputs fit in N, and its ``rest_empty`` fact, if any, that no position follows the output block;
   and that in each case the regions' paths form complete trees over the output block and (unless
   empty) the rest, each region's digits, relations, position and entry being what its path gives
   (:mod:`.coverage`);
4. evaluates the template at each region's position (:mod:`.evaluate`), every decision a recorded
   step of that region with fitting facts, and the reference at its entry, the pins the record
   makes (a digit d = c proven in the region, substituted in both) applied; requires the recorded
   value and reference to be these forms, every denominator positive, the value's numerator zero in
   the rest, and a d - b c the zero form in the output block, for value a / b and reference c / d;
5. requires every recorded step to have been taken and every fact cited, and the result's relation,
   holds, hypotheses and counts to be what it found.

Malformed input raises ParseError; everything the checker cannot establish is a problem.
"""

from __future__ import annotations

from typing import Any

from flint import fmpq

from attncert.exact import ParseError
from attncert.proofs.checkers.every_size import smtlib
from attncert.proofs.checkers.every_size.context import Context
from attncert.proofs.checkers.every_size.coverage import Place, case_branches, complete_tree, follow, output_root, read_region_step, region_branches, rest_root
from attncert.proofs.checkers.every_size.evaluate import Block, Evaluator, Real
from attncert.proofs.checkers.every_size.examined import unexamined
from attncert.proofs.checkers.every_size.forms import Coefficients, FormError, positive, positive_coefficient, read_form
from attncert.proofs.checkers.every_size.graph import Graph, decode, function, read_graph
from attncert.proofs.checkers.every_size.record import MAX_FACTS, MAX_REGIONS, Fact, Refusal, Steps, read_fact, read_steps
from attncert.proofs.checkers.every_size.references import DEFINITIONS, Definition
from attncert.proofs.checkers.every_size.sizes import Poly, Rel, parse_rel, parse_size, symbol_name
from attncert.proofs.checkers.reading import flag, integer, items, obj, whole

SUFFIX = "_every_size"
#: How many problems a check reports at most.
SHOWN = 20
#: The largest value a size is fixed to, by the claim or by a size case (every size is >= 1, so a case fixing one to 0
#: or less is no case of the claim: the definition of the heads refuses h = 0, and a case h = 10^9 would name 2 10^9 blocks).
MAX_SIZE = 1 << 20


def check_every_size(doc: dict[str, Any]) -> list[str]:
    """Problems with the certificate (empty: the claim holds); ParseError if it is malformed."""
    claim = doc.get("claim") if isinstance(doc, dict) else None
    base = claim[: -len(SUFFIX)] if isinstance(claim, str) and claim.endswith(SUFFIX) else None
    if base not in DEFINITIONS:
        raise ParseError(f"no every-size definition for the claim {str(claim)[:40]!r}")
    try:
        return _Check(doc, DEFINITIONS[base]).run()[:SHOWN]
    except RecursionError:
        raise ParseError("the certificate nests too deeply for the every-size checker") from None


class _Check:
    def __init__(self, doc: dict[str, Any], definition: Definition):
        self.doc, self.d = doc, definition
        self.problems: list[str] = []
        construction = obj(doc, "construction")
        self.graph: Graph = read_graph(construction.get("template"))
        sizes = obj(construction, "sizes")
        quantified = sizes.get("quantified")
        if not isinstance(quantified, list) or not quantified:
            raise ParseError("construction.sizes.quantified must be a non-empty list of sizes")
        self.quantified = tuple(symbol_name(s, "a quantified size") for s in quantified)
        fixed = obj(sizes, "fixed")
        self.fixed = {symbol_name(s, "a fixed size"): integer(fixed, s, 1, MAX_SIZE) for s in fixed}
        outputs = obj(doc, "outputs")
        raw_facts = outputs.get("facts")
        if not isinstance(raw_facts, list) or len(raw_facts) > MAX_FACTS:
            raise ParseError(f"outputs.facts must be a list of at most {MAX_FACTS} facts")
        self.facts: list[Fact] = [read_fact(f, k) for k, f in enumerate(raw_facts)]
        self.cases = items(outputs, "cases")
        self.regions = items(outputs, "regions")
        if len(self.regions) > MAX_REGIONS:
            raise ParseError(f"at most {MAX_REGIONS} regions")
        self.cited: set[int] = set()

    def run(self) -> list[str]:
        self.statement()
        self.scripts_match = self.read_scripts()
        self.proven: dict[int, bool] = {}
        self.solver_refused = False
        paths = self.case_paths()
        self.problems += complete_tree(list(paths), case_branches, "case")
        by_case: dict[int, list[tuple[int, dict[str, Any]]]] = {}
        for k, r in enumerate(self.regions):
            if not isinstance(r, dict) or not whole(r.get("case")) or not 0 <= r["case"] < len(self.cases):
                raise ParseError(f"region {k}'s case must be the index of a case")
            by_case.setdefault(r["case"], []).append((k, r))
        for c, path in enumerate(paths):
            self.check_case(c, path, by_case.get(c, []))
        unused = [k for k in range(len(self.facts)) if k not in self.cited]
        if unused:
            self.problems.append(f"facts {unused[:10]} are cited by no step the checker took")
        self.result()
        return self.problems

    # -- the statement ------------------------------------------------------------------------------
    def statement(self) -> None:
        """The sizes are the claim's, quantified or fixed; the parameters and the layout say so."""
        if set(self.quantified) & set(self.fixed) or set(self.quantified) | set(self.fixed) != set(self.d.symbols) or len(set(self.quantified)) != len(self.quantified):
            raise ParseError(f"the sizes {', '.join(self.d.symbols)} must each be quantified or fixed, once")
        wrong = next(((a, b) for a, b in self.d.at_most if a in self.fixed and b in self.fixed and self.fixed[a] > self.fixed[b]), None)
        if wrong is not None:  # the statement assumes a <= b: fixed otherwise, it is vacuous (prove refuses it too)
            a, b = wrong
            raise ParseError(f"the claim needs {a} <= {b}, and the fixed sizes are {a} = {self.fixed[a]} > {b} = {self.fixed[b]}")
        params = obj(self.doc, "params")
        want = {"every": ",".join(sorted(self.quantified)), **self.fixed}
        if params != want or list(self.quantified) != sorted(self.quantified):
            self.problems.append(f"params {params} are not the sizes the construction records ({want})")
        layout = obj(obj(self.doc, "construction"), "layout")
        s = self.symbols({})
        try:  # a size the definition needs fixed (the heads h: the layout names A_1 .. A_h) quantified is malformed
            self.d.inputs(s)
        except Refusal as e:
            raise ParseError(f"the sizes quantified are not the claim's to quantify: {e}") from None
        inputs = layout.get("inputs")
        want_inputs = [(n, r.text(), c.text()) for n, r, c in self.d.inputs(s)]
        got = [(x.get("name"), _text(x.get("rows")), _text(x.get("cols"))) if isinstance(x, dict) else None for x in inputs] if isinstance(inputs, list) else None
        if got != want_inputs:
            self.problems.append(f"the layout's inputs {str(got)[:160]} are not the claim's {want_inputs}")
        out = obj(layout, "output")
        rows, cols = self.d.output(s)
        if (_text(out.get("rows")), _text(out.get("cols"))) != (rows.text(), cols.text()):
            self.problems.append("the layout's output shape is not the claim's")
        self.length = parse_size(layout.get("length"))

    def symbols(self, fixed: dict[str, int]) -> dict[str, Poly]:
        """Each size of the claim: its integer where fixed (by the claim or the case), else its symbol."""
        given = {**self.fixed, **fixed}
        return {s: Poly.const(given[s]) if s in given else Poly.symbol(s) for s in self.d.symbols}

    # -- facts ----------------------------------------------------------------------------------------
    def read_scripts(self) -> list[bool]:
        """Each fact's recorded script is the one its hypotheses and goal give (text only; no solver yet)."""
        out = []
        for k, f in enumerate(self.facts):
            same = smtlib.script(list(f.hypotheses), f.goal, f.extremes) == f.smtlib
            if not same:
                self.problems.append(f"fact {k}: its recorded script is not the one its hypotheses and goal give")
            out.append(same)
        return out

    def prove_fact(self, k: int) -> bool:
        """cvc5 proves fact k, asked once, only when a step cites it: an uncited fact costs no solver time, and after
        one refusal (unknown or sat: the certificate is already not OK) no further fact is asked, so that a document
        of many undecidable facts costs at most one solver timeout."""
        if k not in self.proven:
            f = self.facts[k]
            if not self.scripts_match[k]:
                self.proven[k] = False
            elif self.solver_refused:
                self.proven[k] = False
                self.problems.append(f"fact {k} not asked: an earlier fact was refused")
            else:
                answer = smtlib.proven(list(f.hypotheses), f.goal, f.extremes)
                if answer is not None:  # unknown (its time ran out) is a refusal, never a pass; sat, a counter-model
                    why = "not proven in its time: a refusal" if answer == "unknown" else "a counter-model: the fact is false"
                    self.problems.append(f"fact {k} ({f.goal.text[:80]}): cvc5 answers {answer} ({why})")
                    self.solver_refused = True
                self.proven[k] = answer is None
        return self.proven[k]

    def fact(self, k: Any, goal: Rel, ctx: Context, what: str) -> None:
        """Fact k proves goal from hypotheses of the context, or a problem."""
        if not whole(k) or not 0 <= k < len(self.facts):
            raise ParseError(f"{what} must cite a fact by its index")
        f = self.facts[k]
        self.cited.add(k)
        if f.goal.text != goal.text or any(h.text not in ctx.texts for h in f.hypotheses) or not self.prove_fact(k):
            self.problems.append(f"{what}: fact {k} does not prove {goal.text} in {ctx.text[:160]}")

    # -- cases ----------------------------------------------------------------------------------------
    def case_paths(self) -> list[tuple]:
        out = []
        for k, c in enumerate(self.cases):
            path = c.get("path") if isinstance(c, dict) else None
            if not isinstance(path, list):
                raise ParseError(f"case {k}'s path must be a list")
            steps = []
            for s in path:
                kind = next((x for x in s if x != "value"), None) if isinstance(s, dict) and len(s) == 2 and "value" in s else None
                if kind not in ("fix", "differs") or not whole(s["value"]) or not 1 <= s["value"] <= MAX_SIZE:
                    raise ParseError(f"case {k}: a path step is {{fix or differs: size, value: an integer in [1, {MAX_SIZE}]}}")
                steps.append((kind, symbol_name(s[kind], "a size"), s["value"]))
            out.append(tuple(steps))
        return out

    def check_case(self, c: int, path: tuple, regions: list[tuple[int, dict[str, Any]]]) -> None:
        case = self.cases[c]
        fixed: dict[str, int] = {}
        assumed: list[Rel] = []
        for kind, s, v in path:
            if s not in self.quantified or s in fixed:
                self.problems.append(f"case {c}: its path splits on {s}, not a quantified size still free")
                return
            if kind == "fix":
                fixed[s] = v
                if v == 1:  # 1 <= a <= s = 1 fixes a too
                    fixed |= {a: 1 for a, b in self.d.at_most if b == s and a not in fixed and a not in self.fixed}
            else:
                assumed.append(Rel("!=", Poly.symbol(s), Poly.const(v)))
        if case.get("fixed") != {**self.fixed, **fixed} or case.get("assumed") != [r.text for r in assumed]:
            self.problems.append(f"case {c}: its fixed sizes and relations are not what its path gives")
        sizes = tuple(sorted(s for s in self.quantified if s not in fixed))
        symbols = self.symbols(fixed)
        sub = {s: Poly.const(v) for s, v in fixed.items()}
        at_most = tuple(Rel("<=", symbols[a], symbols[b]) for a, b in self.d.at_most)
        base = Context(sizes, (), at_most + tuple(assumed))
        padded = self.d.padded or {}
        blocks, off = [], Poly.const(0)
        for name, r, cc in self.d.inputs(symbols):
            rows, cols, tag_rows = padded.get(name, (None, None, False))
            blocks.append(Block(name, r, cc, off, None if rows is None else (symbols[rows], symbols[cols]), tag_rows))
            off = off + r * cc
        N = self.length.substitute(sub)
        rows, cols = self.d.output(symbols)
        fits = case.get("fits")
        if not isinstance(fits, list) or len(fits) != 2:
            raise ParseError(f"case {c}: fits cites two facts")
        self.fact(fits[0], Rel("<=", rows * cols, N), base, f"case {c} (the output block fits)")
        self.fact(fits[1], Rel("<=", off, N), base, f"case {c} (the inputs fit)")
        empty = case.get("rest_empty")
        if empty is not None:
            self.fact(empty, Rel("<=", N, rows * cols), base, f"case {c} (no position follows the output block)")
        if self.d.entries is None:
            roots = {"output": output_root(base, rows, cols, cols)}
            if empty is None:
                roots["rest"] = rest_root(base, rows, cols, N)
        else:  # the entries i < r, j < c of the output block, entry (i, j) at i cols + j; nothing said of the rest
            roots = {"output": output_root(base, symbols[self.d.entries[0]], symbols[self.d.entries[1]], cols)}
        # the program computes every node at every position, read or not: each div node's divisor at every t < N,
        # shown nonzero there (Evaluator.divisor), so a quotient no query reads is examined too
        for v in division_nodes(self.graph.nodes):
            roots[f"div {v}"] = Place(base.with_digit("t", N), Poly.symbol("t"), None)
        K = Coefficients(sizes)
        for v, node in sorted(self.graph.nodes.items()):  # every div_const, evaluated or not: the program runs each node everywhere
            fn = node["params"].get("fn") if node["op"] in ("map", "sequence_map") else None
            if fn is not None and (bad := _divisor_not_nonzero(function(fn), sub, K)) is not None:
                self.problems.append(f"case {c}: node {v} divides by {bad[:60]} (div_const), not shown nonzero at every size; the program computes it at every position, read or not")
        evaluate = _Regions(self, K, blocks, N, sub, symbols)
        for kind, root in roots.items():
            mine = [(k, r) for k, r in regions if r.get("kind") == kind]
            paths = []
            for k, r in mine:
                p = r.get("path")
                if not isinstance(p, list):
                    raise ParseError(f"region {k}'s path must be a list")
                paths.append(tuple(read_region_step(s) for s in p))
            self.problems += complete_tree(paths, region_branches(sizes), f"case {c} {kind} region")
            node = int(kind.split()[1]) if kind.startswith("div ") else None
            for (k, r), p in zip(mine, paths):
                evaluate.region(k, r, root, p, node)
        self.problems += unexamined(self.graph, evaluate.examined, c)
        strays = [k for k, r in regions if r.get("kind") not in roots]
        if strays:
            self.problems.append(f"regions {strays[:10]} of case {c} are of no kind the case has")

    # -- the result -----------------------------------------------------------------------------------
    def result(self) -> None:
        res = obj(self.doc, "result")
        want = {
            "relation": "identity",
            "holds": True,
            "hypotheses": self.d.hypotheses(self.quantified),
            "cases": len(self.cases),
            "regions": len(self.regions),
            "facts": len(self.facts),
        }
        flag(res, "holds")
        for key, value in want.items():
            if res.get(key) != value:
                self.problems.append(f"result.{key} is {str(res.get(key))[:60]}, the checker found {str(value)[:60]}")


class _Regions:
    """The regions of one case: each followed from its root, evaluated and compared."""

    def __init__(self, check: _Check, K: Coefficients, blocks: list[Block], N: Poly, sub: dict[str, Poly], symbols: dict[str, Poly]):
        self.c, self.K, self.blocks, self.N, self.sub, self.symbols = check, K, blocks, N, sub, symbols
        rows = check.d.data_rows
        self.data_rows = None if rows is None else (rows[0], symbols[rows[1]])
        self.names = frozenset(b.name for b in blocks) | (frozenset(f"tag({b.name})" for b in blocks) if rows else frozenset())
        #: the nodes the case's regions examined (each region's, once it checks)
        self.examined: set[int] = set()

    def region(self, k: int, r: dict[str, Any], root: Place, path: tuple, node: int | None) -> None:
        """Region k followed from its root, evaluated and compared: the output's value, or (``node`` a div node's id)
        that node's divisor, shown nonzero."""
        try:
            self._region(k, r, root, path, node)
        except (Refusal, FormError) as e:
            self.c.problems.append(f"region {k}: {str(e)[:300]}")

    def _region(self, k: int, r: dict[str, Any], root: Place, path: tuple, node: int | None) -> None:
        place = root
        for step in path:
            place = follow(place, step)
        ctx = place.ctx
        digits = [[d, B.text()] for d, B in ctx.digits]
        entry = None if place.entry is None else [e.text() for e in place.entry]
        if r.get("digits") != digits or r.get("assumed") != [x.text for x in ctx.assumed] or r.get("position") != place.pos.text() or r.get("entry") != entry:
            raise Refusal("its digits, relations, position or entry are not what its path gives")
        steps = read_steps(r.get("steps"), self.c.facts, self.c.prove_fact, f"region {k}")
        ev = Evaluator(self.c.graph, self.blocks, self.N, self.sub, self.K, steps, tagged=self.data_rows is not None, data_rows=self.data_rows)
        if node is not None:  # a div node's region: its divisor (second argument) shown nonzero, nothing compared
            if r.get("value") is not None or r.get("reference") is not None:
                raise Refusal("a div node's region records a value or a reference")
            args = self.c.graph.args[node]
            if len(args) != 2:
                raise Refusal(f"the div node {node} has not two arguments")
            ev.divisor(ev.as_real(node, ev.value(args[1], place.pos, ctx)), node)
            self.finish(steps)
            self.examined |= ev.examined
            return
        value = ev.value(self.c.graph.output, place.pos, ctx)
        if not isinstance(value, Real):
            raise Refusal("the output is not a real value")
        reference = None
        if place.entry is not None:
            i, j = place.entry
            reference = self.c.d.entry(self.K, self.symbols, i, j, lambda rel: steps.decide(-1, place.pos, ctx, "reference", rel))
        value, reference = self.pins(steps, place, value, reference)
        self.compare(r, value, reference)
        self.finish(steps)
        self.examined |= ev.examined

    def finish(self, steps: Steps) -> None:
        """Every recorded step taken, and the facts cited counted."""
        untaken = steps.untaken()
        if untaken:
            raise Refusal(f"it records steps the checker did not take: {untaken[0]}")
        self.c.cited |= steps.cited

    def pins(self, steps: Steps, place: Place, value: Real, reference: Real | None) -> tuple[Real, Real | None]:
        """The recorded pins d = c (d a digit, c free of d), each proven in the region, substituted."""
        digits = {d for d, _ in place.ctx.digits}
        for step in steps.choices(-1, place.pos, place.ctx, "pin"):
            rel = parse_rel(step.decision)
            d = rel.lhs.name()
            if rel.op != "=" or d not in digits or d in rel.rhs.symbols():
                raise Refusal(f"the pin {step.decision[:80]} is not a digit equal to an expression free of it")
            steps.take(step, [rel], place.ctx)
            m = {d: rel.rhs}
            value = Real(value.num.rename(m), value.den.rename(m))
            if reference is not None:
                reference = Real(reference.num.rename(m), reference.den.rename(m))
        return value, reference

    def compare(self, r: dict[str, Any], value: Real, reference: Real | None) -> None:
        for what, mine in (("value", value), ("reference", reference)):
            rec = r.get(what)
            if mine is None:
                if rec is not None:
                    raise Refusal(f"it records a {what}, and it has none")
                continue
            if not isinstance(rec, dict) or set(rec) != {"num", "den"}:
                raise ParseError(f"a region's {what} is {{num, den}}")
            if not (read_form(self.K, rec["num"], self.names).same(mine.num) and read_form(self.K, rec["den"], self.names).same(mine.den)):
                raise Refusal(f"the recorded {what} is not the checker's")
        if not positive(value.den, self.data_rows):
            raise Refusal("the value's denominator is not shown positive")
        if reference is None:
            if value.num.terms:
                raise Refusal("the value after the output block is not the zero form")
            return
        if not positive(reference.den, self.data_rows):
            raise Refusal("the reference's denominator is not shown positive")
        # a / b = c / d: a - c is the zero form where b and d are one form (shown positive), else a d - b c
        same = value.den.same(reference.den)
        if (value.num - reference.num if same else value.num * reference.den - value.den * reference.num).terms:
            raise Refusal("the value and the reference differ as forms")


def division_nodes(nodes: dict[int, dict[str, Any]]) -> list[int]:
    """The map and sequence-map nodes whose recorded function is, or holds (a size case's branch, a composition), ``div``."""

    def divides(x: Any) -> bool:
        if isinstance(x, dict):
            return x.get("name") == "div" or any(divides(y) for y in x.values())
        return isinstance(x, list) and any(divides(y) for y in x)

    return [v for v, n in sorted(nodes.items()) if n.get("op") in ("map", "sequence_map") and divides(n.get("params"))]


def _divisor_not_nonzero(fn: dict[str, Any], sub: dict[str, Poly], K: Coefficients) -> str | None:
    """The first div_const divisor in fn (through compose, and the branches of a size case its sizes do not decide)
    not shown nonzero at every size >= 1, as text; None if there is none."""
    name, params = fn["name"], fn["params"]
    if name == "div_const":
        c = decode(params.get("c"), sub)
        try:
            k = K.const(c) if isinstance(c, fmpq) else K.of(c) if isinstance(c, Poly) else None
        except FormError:
            k = None
        return None if k is not None and (positive_coefficient(k) or positive_coefficient(-k)) else c.text() if isinstance(c, Poly) else str(c)
    if name == "compose":
        fns = decode(params.get("fns"), sub)
        subs = [g for g in fns if isinstance(g, dict)] if isinstance(fns, tuple) else []
    elif name.startswith("size_case"):
        when = decode(params.get("when"), sub)
        taken = when.constant() if isinstance(when, Poly) else None
        branches = ("then", "otherwise") if taken is None else ("then" if taken == 0 else "otherwise",)
        subs = [g for b in branches if isinstance(g := decode(params.get(b), sub), dict)]
    else:
        return None
    return next((bad for g in subs if (bad := _divisor_not_nonzero(g, sub, K)) is not None), None)


def _text(x: Any) -> str | None:
    """A size text, canonical."""
    return parse_size(x).text() if isinstance(x, str) else None

