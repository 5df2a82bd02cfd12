r"""Index facts in SMT-LIB 2.6, written by the checker, and proven by cvc5.

A fact states: its hypotheses imply its goal, for all integers the symbols (sizes, digits) take.
Its script (:func:`script`) declares each symbol an ``Int``, each ``max``, ``min``, ``floor`` and
``mod`` atom a fresh integer ``auxK`` (inner atoms first, in order of appearance) with its
defining constraints, asserts the hypotheses and the negated goal, and asks ``check-sat``:
``unsat`` proves the fact. The definitions are true of the atoms:

* m = max(a_1, ..., a_p): m >= a_i for each i, and (m = a_1 or ... or m = a_p) when the fact's
  ``extremes`` flag is set (for min, <= instead of >=);
* q = floor(x, k): 0 <= x - k q < k;  r = mod(x, k): 0 <= r < k and k divides x - r.

A polynomial is written as a sum of products (``(+ ...)``, ``(* ...)``, a negative constant
``(- k)``), its monomials by number of atoms, then by their atoms' texts and powers. The checker writes each
recorded fact's script from its hypotheses and goal and requires the recorded text.

**Proving** (:func:`proven`). cvc5 decides the recorded script itself (``QF_NIA``), but its
nonlinear integer procedure is incomplete and gives up on many of these facts (a cubic
``dv i n + j n < dv n^2`` from i < n, j < dv). So cvc5 is first asked about a *relaxation* over
the reals (``QF_NRA``, where its cylindrical algebraic coverings decide): every strict relation
between integer terms a < b is first written a + 1 <= b and a != b as (a + 1 <= b or b + 1 <= a)
(equivalent over the integers), floor(x, k)'s bound x - k q < k as x - k q <= k - 1, mod's as
r <= k - 1; divisibility is left out; then the symbols range over the reals. Every integer model
of the script is a real model of the relaxation, so ``unsat`` there proves the script ``unsat``.
Each fact is first asked with its hypotheses that bound one symbol alone (:func:`_lean`, at most
:data:`TRY_MS`; fewer hypotheses only make a proof harder). A goal x < max(a_1, ..., a_k) is first proven as x < a_j for one j, x < min(...) as x < a_j for every
j (:func:`_through_extremum`): a_j <= max <= ..., and these smaller facts are much quicker for cvc5.
Where the relaxation is satisfiable (a fact that needs divisibility, say), the script itself is
given to cvc5, its logic line ``QF_NIA`` replaced by ``ALL`` (the same assertions: declared QF_NIA,
cvc5 treats ``mod`` by a constant as nonlinear and gives up on linear facts such as MaxMin's
parity). ``sat`` and ``unknown`` (a timeout) are refusals, never a pass.
"""

from __future__ import annotations

import functools
import re
from attncert.proofs.checkers.every_size.sizes import RESERVED, Atom, Poly, Rel

#: Milliseconds cvc5 may take on one script (each of the relaxation and the script itself).
TIMEOUT_MS = 20_000
NIA, ALL = "(set-logic QF_NIA)", "(set-logic ALL)"
_NAMES = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def script(hypotheses: list[Rel], goal: Rel, extremes: bool) -> str:
    """The fact's SMT-LIB script over the integers (module docstring)."""
    return _write(hypotheses, goal, extremes, relaxed=False)


def relaxed_script(hypotheses: list[Rel], goal: Rel, extremes: bool) -> str:
    """The relaxation over the reals: unsat implies the script is unsat (module docstring)."""
    return _write(hypotheses, goal, extremes, relaxed=True)


def _write(hypotheses: list[Rel], goal: Rel, extremes: bool, relaxed: bool) -> str:
    rels = hypotheses + [goal]
    names: dict[str, Atom] = {}
    for r in rels:
        for e in (r.lhs, r.rhs):
            _gather(e, names)
    aux = {t: f"aux{k}" for k, t in enumerate(names)}
    sort = "Real" if relaxed else "Int"
    lines = ["(set-logic QF_NRA)" if relaxed else NIA]
    lines += [f"(declare-fun {s} () {sort})" for s in sorted(set().union(*(r.symbols() for r in rels)))]
    lines += [f"(declare-fun {aux[t]} () {sort})" for t in names]
    for t, a in names.items():
        lines += [f"(assert {c})" for c in _defining(a, aux[t], aux, extremes, relaxed)]
    for r in hypotheses:
        lines.append(f"(assert {_relation(r, aux, relaxed)})")
    if relaxed:
        lines.append(f"(assert {_relation(goal.negated(), aux, True)})")
    else:
        lines.append(f"(assert (not {_relation(goal, aux, False)}))")
    lines.append("(check-sat)")
    return "\n".join(lines)


def _gather(e: Poly, names: dict[str, Atom]) -> None:
    """The atoms of e other than symbols, each after the atoms of its arguments, in order of appearance."""
    for a in sorted(e.atoms(), key=lambda a: a.order):
        if a.op == "sym":
            continue
        for x in a.args:
            if isinstance(x, Poly):
                _gather(x, names)
        names.setdefault(a.text, a)


def _defining(a: Atom, name: str, aux: dict[str, str], extremes: bool, relaxed: bool) -> list[str]:
    if a.op in ("max", "min"):
        args = [term(x, aux) for x in a.args]
        op = ">=" if a.op == "max" else "<="
        out = [f"({op} {name} {x})" for x in args]
        if extremes:
            out.append("(or " + " ".join(f"(= {name} {x})" for x in args) + ")")
        return out
    x, k = term(a.args[0], aux), a.args[1]
    if a.op == "floor":
        upper = f"(<= (- {x} (* {k} {name})) {k - 1})" if relaxed else f"(< (- {x} (* {k} {name})) {k})"
        return [f"(<= 0 (- {x} (* {k} {name})))", upper]
    if relaxed:
        return [f"(<= 0 {name})", f"(<= {name} {k - 1})"]
    return [f"(<= 0 {name})", f"(< {name} {k})", f"(= (mod (- {x} {name}) {k}) 0)"]


def _relation(r: Rel, aux: dict[str, str], relaxed: bool) -> str:
    if relaxed and r.op == "<":
        return f"(<= {term(r.lhs + 1, aux)} {term(r.rhs, aux)})"
    if relaxed and r.op == "!=":
        return f"(or (<= {term(r.lhs + 1, aux)} {term(r.rhs, aux)}) (<= {term(r.rhs + 1, aux)} {term(r.lhs, aux)}))"
    lhs, rhs = term(r.lhs, aux), term(r.rhs, aux)
    return f"(not (= {lhs} {rhs}))" if r.op == "!=" else f"({r.op} {lhs} {rhs})"


def term(e: Poly, aux: dict[str, str]) -> str:
    """A polynomial as an SMT-LIB term: its monomials by number of atoms, then their atoms' texts and powers."""
    parts = []
    for mono, c in sorted(e.terms.items(), key=lambda mc: (len(mc[0]), [(a.text, k) for a, k in mc[0]])):
        factors = [str(c) if c >= 0 else f"(- {-c})"] if c != 1 or not mono else []
        for a, k in mono:
            factors += [a.args[0] if a.op == "sym" else aux[a.text]] * k
        parts.append(factors[0] if len(factors) == 1 else "(* " + " ".join(factors) + ")")
    if not parts:
        return "0"
    return parts[0] if len(parts) == 1 else "(+ " + " ".join(parts) + ")"


# -- cvc5 ------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1 << 14)
def cvc5_answer(text: str, ms: int = TIMEOUT_MS) -> str:
    """cvc5's answer to a script: ``unsat``, ``sat`` or ``unknown`` (past ms milliseconds, too), one solver for it."""
    import cvc5

    solver = cvc5.Solver(_manager())
    solver.setOption("tlimit-per", str(ms))
    if not text.startswith("(set-logic QF_NRA)"):  # over the integers, incremental linearization (the reals' coverings decide the relaxations, 3x faster)
        solver.setOption("nl-cov", "false")
    parser = cvc5.InputParser(solver)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "fact")
    symbols = parser.getSymbolManager()
    answer = None
    while True:
        command = parser.nextCommand()
        if command.isNull():
            break
        answer = command.invoke(solver, symbols)
    words = (answer or "").split()
    return words[0] if words and words[0] in ("unsat", "sat") else "unknown"


@functools.lru_cache(maxsize=1)
def _manager():  # type: ignore[no-untyped-def]
    import cvc5

    return cvc5.TermManager()


def proven(hypotheses: list[Rel], goal: Rel, extremes: bool) -> str | None:
    """None if cvc5 proves the fact (module docstring), else cvc5's answer. The symbols are first renamed
    v0, v1, ... in order of appearance (a renaming changes no answer), so that facts alike up to their
    names (a binder l3 where another has l17) are asked once."""
    hypotheses, goal = renamed(hypotheses, goal)
    lean = _lean(hypotheses)
    if len(lean) < len(hypotheses) and (_through_extremum(lean, goal) or cvc5_answer(relaxed_script(lean, goal, False), TRY_MS) == "unsat"):
        return None  # proven from some of its hypotheses: proven
    if _through_extremum(hypotheses, goal) or cvc5_answer(relaxed_script(hypotheses, goal, extremes)) == "unsat":
        return None
    text = script(hypotheses, goal, extremes)
    answer = cvc5_answer(ALL + text[len(NIA) :])
    return None if answer == "unsat" else answer


def _lean(hypotheses: list[Rel]) -> list[Rel]:
    """The hypotheses that bound one symbol by a term free of max, min, floor and mod (the sizes' 1 <= s, the digits'
    0 <= d and d < B): a fact proven from them is proven, and cvc5 decides most facts from these alone in a few
    milliseconds, where the others (a region's relations rewritten by its refinements, d < max(...)) cost it a
    second."""
    def simple(r: Rel) -> bool:
        plain = all(a.op == "sym" for e in (r.lhs, r.rhs) for a in e.atoms())
        return plain and any(e.constant() is not None or e.name() is not None for e in (r.lhs, r.rhs))

    return [r for r in hypotheses if simple(r)]


def _through_extremum(hypotheses: list[Rel], goal: Rel) -> bool:
    """Whether a goal x < max(a_1, ..., a_k) (or <=) is proven as x < a_j for one j (then it holds, a_j being
    at most the max), or x < min(a_1, ..., a_k) as x < a_j for every j; each such relation proven by cvc5
    (its relaxation, or again through an extremum). The a_j tried are those above x at every sampled point
    of the hypotheses (:func:`_points`), at most :data:`TRIED` of them, each for at most :data:`TRY_MS`:
    a choice of what to prove, never a reason to believe it. These smaller facts, free of the extremum,
    are quicker for cvc5; where none is proven, the whole fact is asked."""
    rhs = goal.rhs
    if goal.op not in ("<", "<=") or len(rhs.terms) != 1:
        return False
    ((mono, c),) = rhs.terms.items()
    if c != 1 or len(mono) != 1 or mono[0][1] != 1 or mono[0][0].op not in ("max", "min"):
        return False
    atom = mono[0][0]
    parts = [Rel(goal.op, goal.lhs, a) for a in atom.args]
    if atom.op == "min":
        return all(_through_extremum(hypotheses, r) or cvc5_answer(relaxed_script(hypotheses, r, False), TRY_MS) == "unsat" for r in parts)
    points = _points(hypotheses)
    likely = [r for r in parts if all(_holds(r, p) for p in points)][:TRIED]
    return any(_through_extremum(hypotheses, r) or cvc5_answer(relaxed_script(hypotheses, r, False), TRY_MS) == "unsat" for r in likely)


#: The most arguments of a max tried one by one, and the milliseconds cvc5 has for each.
TRIED, TRY_MS = 3, 250


def _holds(r: Rel, point: dict[str, int]) -> bool:
    try:
        return r.holds(point)
    except (KeyError, ZeroDivisionError):
        return True


def _points(hypotheses: list[Rel]) -> list[dict[str, int]]:
    """Integer points where every hypothesis holds: every size (a symbol s with 1 <= s) 30, then for each
    size s = 1, 2 or 30 and the others 30, 30 or 2; each digit (d with 0 <= d and d < B) at B - 1."""
    sizes = [str(r.rhs.name()) for r in hypotheses if r.op == "<=" and r.lhs == Poly.const(1) and r.rhs.name()]
    digits = [(str(r.lhs.name()), r.rhs) for r in hypotheses if r.op == "<" and r.lhs.name() and r.lhs.name() not in sizes]
    out = []
    for point in [{x: 30 for x in sizes}] + [{x: (low if x == s else high) for x in sizes} for s in sizes for low, high in ((1, 30), (2, 30), (30, 2))]:
        try:
            for d, B in digits:
                point[d] = B.value(point) - 1
            if all(r.holds(point) for r in hypotheses):
                out.append(point)
        except (KeyError, ZeroDivisionError):
            continue
    return out


def renamed(hypotheses: list[Rel], goal: Rel) -> tuple[list[Rel], Rel]:
    """The fact with its symbols renamed v0, v1, ... in order of first appearance (hypotheses, then goal)."""
    order: dict[str, Poly] = {}
    for r in hypotheses + [goal]:
        for name in _NAMES.findall(r.text):
            if name not in RESERVED and name not in order:
                order[name] = Poly.symbol(f"v{len(order)}")
    return [r.substitute(order) for r in hypotheses], goal.substitute(order)
