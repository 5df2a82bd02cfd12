r"""Index facts: quantifier-free statements about integers, for every size, decided by an SMT solver.

A *context* holds what is known at a point of the proof: each size symbol is at least 1, each digit
lies in [0, B) (B a size expression), some definitions (a digit pair q, r with p = q R + r, 0 <= r
< R: Euclid's division, true by construction), and the hypotheses of the region (a case such as
d = 1). A *fact* is an implication: the context implies one relation between two integer
expressions. Every fact the proof uses is written in SMT-LIB 2.6 (logic QF_NIA: nonlinear integer
arithmetic) and proven valid by showing its negation unsatisfiable; an ``unknown`` answer is a
refusal, never a pass.

Size expressions may hold ``max``, ``min``, ``floor`` and ``mod`` atoms. Each becomes a fresh
integer with its defining constraints: ``m = max(a, b, ...)`` gives m >= a, m >= b, ... and, only
where a fact needs it, (m = a or m = b or ...) (that disjunction slows solvers down on facts that
do not need it); ``q = floor(a, k)``, ``r = mod(a, k)`` give a = k q + r, 0 <= r < k.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Iterable

from attncert.constructions.sizes.expr import Atom, SizeExpr
from attncert.exact.errors import AttncertError

#: Milliseconds one solver call may take before its answer counts as unknown.
TIMEOUT_MS = 10_000

RELATIONS = ("<", "<=", "=", "!=")


class FactError(AttncertError):
    """A fact the solver did not prove (unknown, or a counter-model), where the proof needs it."""


@dataclass(frozen=True)
class Rel:
    """lhs op rhs, op one of ``<``, ``<=``, ``=``, ``!=``."""

    op: str
    lhs: SizeExpr
    rhs: SizeExpr

    def text(self) -> str:
        return f"{self.lhs.text()} {self.op} {self.rhs.text()}"

    def negated(self) -> "Rel":
        return {"<": Rel("<=", self.rhs, self.lhs), "<=": Rel("<", self.rhs, self.lhs), "=": Rel("!=", self.lhs, self.rhs), "!=": Rel("=", self.lhs, self.rhs)}[self.op]

    def symbols(self) -> set[str]:
        return self.lhs.symbols() | self.rhs.symbols()


@dataclass(frozen=True)
class Context:
    """Sizes (each >= 1), digits (name, bound: 0 <= name < bound) and relations assumed."""

    sizes: tuple[str, ...]
    digits: tuple[tuple[str, SizeExpr], ...] = ()
    assumed: tuple[Rel, ...] = ()

    def with_digit(self, name: str, bound: SizeExpr) -> "Context":
        return Context(self.sizes, self.digits + ((name, bound),), self.assumed)

    def assuming(self, *rels: Rel) -> "Context":
        return Context(self.sizes, self.digits, self.assumed + tuple(rels))

    def substitute(self, digit: str, by: SizeExpr, new: tuple[tuple[str, SizeExpr], ...]) -> "Context":
        """The context with a digit replaced by an expression in new digits (its old range assumed of it)."""
        bound = dict(self.digits)[digit]
        m = {digit: by}
        digits = tuple((d, B) for d, B in self.digits if d != digit) + new
        assumed = tuple(Rel(r.op, r.lhs.substitute(m), r.rhs.substitute(m)) for r in self.assumed)
        return Context(self.sizes, digits, assumed + (Rel("<=", SizeExpr.const(0), by), Rel("<", by, bound)))

    def hypotheses(self) -> list[Rel]:
        one, zero = SizeExpr.const(1), SizeExpr.const(0)
        out = [Rel("<=", one, SizeExpr.symbol(s)) for s in self.sizes]
        for d, B in self.digits:
            out += [Rel("<=", zero, SizeExpr.symbol(d)), Rel("<", SizeExpr.symbol(d), B)]
        return out + list(self.assumed)

    def text(self) -> str:
        return " and ".join(r.text() for r in self.hypotheses())


@dataclass
class Fact:
    """The hypotheses (some of a context's) imply the goal; its SMT-LIB text is what is proven (and recorded)."""

    hypotheses: tuple[Rel, ...]
    goal: Rel
    extremes: bool = False  # whether each max / min atom is also one of its arguments
    smtlib: str = field(init=False)

    def __post_init__(self) -> None:
        self.smtlib = to_smtlib(list(self.hypotheses), self.goal, self.extremes)

    def to_json(self) -> dict[str, object]:
        return {"hypotheses": [h.text() for h in self.hypotheses], "goal": self.goal.text(), "extremes": self.extremes, "smtlib": self.smtlib}


def relevant(context: Context, goal: Rel) -> tuple[Rel, ...]:
    """The hypotheses of the context a fact about the goal keeps: those on sizes alone, and those on
    digits connected to the goal's digits through shared digits. Leaving the others out only weakens
    what is assumed, so a fact proven from these is proven from the whole context."""
    digits = {d for d, _ in context.digits}
    need = goal.symbols() & digits
    hyps = context.hypotheses()
    keep = [not (h.symbols() & digits) for h in hyps]
    grew = True
    while grew:
        grew = False
        for k, h in enumerate(hyps):
            if not keep[k] and h.symbols() & need:
                keep[k], grew = True, True
                need |= h.symbols() & digits
    return tuple(h for h, kept in zip(hyps, keep) if kept)


def to_smtlib(hypotheses: list[Rel], goal: Rel, extremes: bool = False, relaxed: bool = False) -> str:
    """The fact ``hypotheses => goal`` as an SMT-LIB 2.6 script whose unsat answer proves it.

    ``relaxed``: its relaxation over the reals (QF_NRA), which z3's nlsat decides much faster: a strict
    a < b becomes a + 1 <= b, a != b becomes a + 1 <= b or b + 1 <= a, the negated goal likewise (each
    equivalent over the integers), floor's and mod's strict bounds x < k become x <= k - 1 and mod's
    divisibility is left out, and the symbols range over the reals. Every integer model of the script is a
    real model of its relaxation, so unsat there proves the fact; the script recorded is the integer one."""
    atoms: dict[str, Atom] = {}
    names: list[str] = []
    for r in hypotheses + [goal]:
        for e in (r.lhs, r.rhs):
            _collect(e, atoms, names)
    symbols = sorted(set().union(*(r.symbols() for r in hypotheses + [goal])))
    sort = "Real" if relaxed else "Int"
    lines = ["(set-logic QF_NRA)" if relaxed else "(set-logic QF_NIA)"]
    lines += [f"(declare-fun {s} () {sort})" for s in symbols]
    aux = {a: f"aux{k}" for k, a in enumerate(names)}
    lines += [f"(declare-fun {aux[a]} () {sort})" for a in names]
    for a in names:
        lines += [f"(assert {c})" for c in _definition(atoms[a], aux[a], aux, extremes, relaxed)]
    lines += [f"(assert {_rel(r, aux, relaxed)})" for r in hypotheses]
    lines.append(f"(assert {_rel(goal.negated(), aux, True)})" if relaxed else f"(assert (not {_rel(goal, aux)}))")
    lines.append("(check-sat)")
    return "\n".join(lines)


def _collect(e: SizeExpr, atoms: dict[str, Atom], names: list[str]) -> None:
    for a in sorted(e.atoms()):
        if a.op == "sym":
            continue
        for x in a.args:
            if isinstance(x, SizeExpr):
                _collect(x, atoms, names)
        if a.text() not in atoms:
            atoms[a.text()] = a
            names.append(a.text())


def _definition(a: Atom, name: str, aux: dict[str, str], extremes: bool, relaxed: bool = False) -> list[str]:
    if a.op in ("max", "min"):
        args = [_term(x, aux) for x in a.args]
        op = ">=" if a.op == "max" else "<="
        out = [f"({op} {name} {x})" for x in args]
        if extremes:
            out.append("(or " + " ".join(f"(= {name} {x})" for x in args) + ")")
        return out
    x, k = _term(a.args[0], aux), a.args[1]
    if a.op == "floor":  # 0 <= x - k q < k
        upper = f"(<= (- {x} (* {k} {name})) {k - 1})" if relaxed else f"(< (- {x} (* {k} {name})) {k})"
        return [f"(<= 0 (- {x} (* {k} {name})))", upper]
    if relaxed:  # 0 <= r <= k - 1
        return [f"(<= 0 {name})", f"(<= {name} {k - 1})"]
    return [f"(<= 0 {name})", f"(< {name} {k})", f"(= (mod (- {x} {name}) {k}) 0)"]  # 0 <= r < k, k divides x - r


def _rel(r: Rel, aux: dict[str, str], relaxed: bool = False) -> str:
    lhs, rhs = _term(r.lhs, aux), _term(r.rhs, aux)
    if relaxed and r.op == "<":  # over the integers a < b is a + 1 <= b
        return f"(<= {_term(r.lhs + SizeExpr.const(1), aux)} {rhs})"
    if relaxed and r.op == "!=":
        one = SizeExpr.const(1)
        return f"(or (<= {_term(r.lhs + one, aux)} {rhs}) (<= {_term(r.rhs + one, aux)} {lhs}))"
    if r.op == "!=":
        return f"(not (= {lhs} {rhs}))"
    return f"({r.op} {lhs} {rhs})"


def _term(e: SizeExpr, aux: dict[str, str]) -> str:
    """An integer polynomial in SMT-LIB: sums of products, negative constants as (- k)."""
    parts = []
    for mono, c in sorted(e.terms.items(), key=lambda mc: (len(mc[0]), [(a.text(), k) for a, k in mc[0]])):
        factors = [_int(c)] if c != 1 or not mono else []
        for atom, k in mono:
            name = atom.args[0] if atom.op == "sym" else aux[atom.text()]
            factors += [name] * k
        parts.append(factors[0] if len(factors) == 1 else "(* " + " ".join(factors) + ")")
    if not parts:
        return "0"
    return parts[0] if len(parts) == 1 else "(+ " + " ".join(parts) + ")"


def _int(c: int) -> str:
    return str(c) if c >= 0 else f"(- {-c})"


# -- deciding ------------------------------------------------------------------------------------


def z3_answer(script: str) -> str:
    """z3's answer to an SMT-LIB script: ``unsat``, ``sat`` or ``unknown`` (a timeout included). Scripts
    that differ only in the names of their symbols (a binder l17 where another has l23) have one answer,
    so it is asked once (:func:`_canonical`)."""
    return _z3_answer(_canonical(script))


_DECLARED = re.compile(r"\(declare-fun (\S+) \(\) (Int|Real)\)")


def _canonical(script: str) -> str:
    """The script with its declared symbols renamed v0, v1, ... in the order they are first used after
    the declarations (a renaming changes no answer); its first line, the logic, kept."""
    logic = script.partition("\n")[0]
    found = _DECLARED.findall(script)
    if not found:
        return script
    names, sort = [n for n, _ in found], found[-1][1]
    head, _, body = script.rpartition(f"(declare-fun {names[-1]} () {sort})")
    order = {n: k for k, n in enumerate(sorted(names, key=lambda n: (body.find(f" {n}") if f" {n}" in body else len(body), n)))}
    rename = re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?![\w])")
    return logic + "\n" + "\n".join(f"(declare-fun v{k} () {sort})" for k in range(len(names))) + rename.sub(lambda m: f"v{order[m.group(1)]}", body)


@functools.lru_cache(maxsize=1 << 16)
def _z3_answer(script: str) -> str:
    import z3

    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.from_string(script)
    return str(s.check())


def z3_model(script: str, symbols: Iterable[str], shrink: int = 6) -> dict[str, int] | None:
    """Values of the symbols in a model of the script's assertions (the negated goal: where the fact
    fails), or None (unsat, unknown). ``shrink``: that many times, a model whose symbols sum to less is
    asked for, so that a concrete check at those sizes stays small."""
    import z3

    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.from_string(script)
    if s.check() != z3.sat:
        return None
    names = sorted(set(symbols))
    decls = {d.name(): d for d in s.model().decls()}
    best = None
    for _ in range(shrink + 1):
        m = s.model()
        values = {n: m.eval(decls[n](), model_completion=True).as_long() if n in decls else 1 for n in names}
        best = values
        if not names:
            break
        total = z3.Sum([z3.Int(n) for n in names])
        s.add(total < sum(values.values()))
        if s.check() != z3.sat:
            break
    return best


class Prover:
    """Proves facts with z3 and keeps every fact it proved, in order, for the certificate; where a fact
    the proof needed failed, a model of its negation (sizes where it fails) for the counterexample search."""

    def __init__(self) -> None:
        self.proven: list[Fact] = []
        self._index: dict[str, int] = {}
        self.models: list[dict[str, int]] = []

    def counter_model(self, context: Context, goal: Rel) -> None:
        """Keep the sizes of a model where ``context => goal`` fails, if there is one."""
        m = z3_model(Fact(tuple(context.hypotheses()), goal, True).smtlib, context.sizes)
        if m is not None and m not in self.models:
            self.models.append(m)

    def valid(self, context: Context, goal: Rel) -> Fact | None:
        """The proven fact ``context => goal``, or None when it is not proven (sat or unknown); the
        disjunction of each max and min atom is added only when the fact is not proven without it."""
        hyps = relevant(context, goal)
        if _refuted_by_sampling(context, goal):
            return None
        for extremes in (False, True):
            fact = Fact(hyps, goal, extremes)
            if fact.smtlib in self._index:
                return self.proven[self._index[fact.smtlib]]
            # the relaxation over the reals first (unsat there proves the script), then the script itself
            if z3_answer(to_smtlib(list(hyps), goal, extremes, relaxed=True)) == "unsat" or z3_answer(fact.smtlib) == "unsat":
                self._index[fact.smtlib] = len(self.proven)
                self.proven.append(fact)
                return fact
            if not _has_extremes(hyps, goal):
                break
        return None

    def require(self, context: Context, goal: Rel, why: str) -> Fact:
        fact = self.valid(context, goal)
        if fact is None:
            self.counter_model(context, goal)
            raise FactError(f"{why}: {goal.text()} is not proven from {context.text()}")
        return fact

    def decide(self, context: Context, goal: Rel) -> bool | None:
        """True if goal is proven, False if its negation is, None if neither."""
        if self.valid(context, goal) is not None:
            return True
        if self.valid(context, goal.negated()) is not None:
            return False
        return None

    def index(self, fact: Fact) -> int:
        return self._index[fact.smtlib]


def _refuted_by_sampling(context: Context, goal: Rel, tries: int = 8) -> bool:
    """Whether a point of the context where the goal fails is found by sampling small sizes and digits
    (it then saves the solver a call it would answer sat; not finding one proves nothing)."""
    import random

    rng = random.Random(0)
    for _ in range(tries):
        env = {s: rng.randint(1, 6) for s in context.sizes}
        try:
            for d, B in context.digits:
                b = B.value({**env, **{x: 0 for x in B.symbols() if x not in env}})
                if b < 1:
                    break
                env[d] = rng.randrange(b)
            else:
                if not _holds(goal, env) and all(_holds(r, env) for r in context.hypotheses()):  # the goal first: cheaper
                    return True
        except Exception:  # a value outside the sampled point's domain: no sample here
            continue
    return False


def _holds(r: Rel, env: dict[str, int]) -> bool:
    a, b = r.lhs.value(env), r.rhs.value(env)
    return {"<": a < b, "<=": a <= b, "=": a == b, "!=": a != b}[r.op]


def _has_extremes(hyps: Iterable[Rel], goal: Rel) -> bool:
    exprs: Iterable[SizeExpr] = [e for r in list(hyps) + [goal] for e in (r.lhs, r.rhs)]
    return any(a.op in ("max", "min") for e in exprs for a in _all_atoms(e))


def _all_atoms(e: SizeExpr) -> set[Atom]:
    out = set()
    for a in e.atoms():
        out.add(a)
        for x in a.args:
            if isinstance(x, SizeExpr):
                out |= _all_atoms(x)
    return out
