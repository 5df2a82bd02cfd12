"""What one run of a RASP-language program may do (docs/rasp-language.md, "Bounds"; docs/limits.md).

RASP source given to ``attncert rasp`` or recorded in a certificate is untrusted: a
verifier runs it. So every run carries a :class:`Budget` drawn from the limits in force
(:mod:`exact.limits`), and anything that would pass one is refused with one line that
names the limit and the option raising it (:class:`OverBudget`, a LimitExceeded):

* ``max_steps`` (--max-steps): statements, expression evaluations and loop iterations;
  one step per element of each list, tuple or dict built and per node visited when
  such values are compared; one step per function of a composed map built; one step
  per pair of terms when EE numbers are combined; and one step per node and
  position when a sequence is evaluated;
* ``max_recursion`` (--max-recursion): nested evaluations, i.e. statements and
  expressions under evaluation at once, which a function call and each level of a
  nested expression add to (a function that calls itself without end);
* ``max_source`` (--max-source): characters of source in one run: the program, every
  file it loads and the expression;
* ``max_entries`` (--max-entries): elements of one value (nested elements counted),
  characters of one string, and the length of a ``range`` (refused before it is built);
* ``max_digits`` (--max-digits): digits of a number's numerator or denominator;
  ``max_terms`` and ``max_exponent`` (--max-exponent) for EE numbers;
* ``max_depth``: nesting of lists, tuples and dicts (a value must fit in a certificate).

Sequence positions and selection pairs keep their own limits (--max-positions,
--max-pairs), enforced by the evaluator.
"""

from __future__ import annotations

import contextlib
import reprlib
import sys
from typing import Any, Iterator, Sequence

from flint import fmpq

from attncert.constructions import rasp
from attncert.exact import EENumber
from attncert.exact.domains import ENCLOSURE_BITS, in_smallest_domain, least_domain
from attncert.exact.errors import LimitExceeded
from attncert.exact.limits import Limits, current

#: Kinds of expression whose value already existed (a name, an element, an operand handed on): not built again.
HANDED_ON = frozenset({"var", "index", "call", "pos", "ternary", "and_", "or_"})
#: log2(10): bits per decimal digit, to compare a number's bit height with the digit limit.
BITS_PER_DIGIT = fmpq(3321928095, 1000000000)
#: Python frames one nested evaluation takes (4 measured: expr, its handler, _binary, the operands' generator).
FRAMES_PER_LEVEL = 5
#: The most Python frames a run may raise the interpreter's recursion limit to (100 000 ran safely on CPython 3.11).
MAX_PYTHON_FRAMES = 30_000


class OverBudget(LimitExceeded):
    """A RASP run would pass one of its limits (one line: what, the limit, the option that raises it)."""


class Budget:
    """The steps, nesting and source one run has used, against the limits in force when it began."""

    def __init__(self, lim: Limits | None = None):
        self.lim = lim or current()
        self.steps = 0
        self.depth = 0
        self.source_chars = 0
        self._bits = int(self.lim.max_digits * BITS_PER_DIGIT)
        self._max_steps, self._max_depth = self.lim.max_steps, self.lim.max_recursion

    def charge(self, steps: int) -> None:
        self.steps += steps
        if self.steps > self.lim.max_steps:
            raise OverBudget(
                f"the RASP program runs more than {self.lim.max_steps:,} steps (statements, expressions, loop "
                f"iterations, elements built, positions evaluated), over the limit (raise it with --max-steps if you mean it)"
            )

    def enter(self) -> None:
        """One step, one level deeper; the caller leaves (``depth -= 1``) when the evaluation ends."""
        # Called for every statement and expression, so the common case is two additions and one test.
        self.steps += 1
        self.depth += 1
        if self.steps > self._max_steps or self.depth > self._max_depth:
            self._refuse_entry()

    def _refuse_entry(self) -> None:
        self.charge(0)
        if self.depth > self.lim.max_recursion:
            raise OverBudget(
                f"the RASP program nests calls and expressions more than {self.lim.max_recursion:,} deep (a function "
                f"that calls itself without end?), over the limit (raise it with --max-recursion if you mean it)"
            )

    def source(self, text: str, name: str) -> None:
        """Count a source text (the program, a loaded file, the expression) before it is parsed."""
        self.source_chars += len(text)
        if self.source_chars > self.lim.max_source:
            raise OverBudget(
                f"{name}: the RASP source of this run passes {self.lim.max_source:,} characters, over the limit "
                f"(raise it with --max-source if you mean it)"
            )

    @contextlib.contextmanager
    def python_stack(self) -> Iterator[None]:
        """Python's recursion limit raised, for the block, to what max_recursion nested evaluations need."""
        before = sys.getrecursionlimit()
        sys.setrecursionlimit(max(before, min(before + FRAMES_PER_LEVEL * self.lim.max_recursion, MAX_PYTHON_FRAMES)))
        try:
            yield
        finally:
            sys.setrecursionlimit(before)

    def items(self, n: int, what: str) -> None:
        """Refuse, before it is built, ``what`` ("a range of n elements") when n passes max_entries."""
        if n > self.lim.max_entries:
            raise OverBudget(f"{what.format(f'{n:,}')}, over the limit of {self.lim.max_entries:,} (raise it with --max-entries if you mean it)")

    def value(self, v: Any, kind: str) -> Any:
        """``v``, the value of an expression of this kind, once its size is within the limits and paid for."""
        t = type(v)
        if t is fmpq:
            if v.height_bits() > self._bits:
                raise OverBudget(
                    f"a number with more than {self.lim.max_digits:,} digits in its numerator or denominator, over the "
                    f"limit (raise it with --max-digits if you mean it)"
                )
        elif t is str:
            self.items(len(v), "a string of {} characters")
        elif t is bool or kind in HANDED_ON:
            pass
        elif t is list or t is tuple or t is dict:
            self.walk(v)
        elif isinstance(v, EENumber):
            self._ee(v)
        elif isinstance(v, rasp.Map) and getattr(v.f, "name", None) == "compose":
            self.charge(len(v.f.params["fns"]))  # composing copies every function composed so far
        return v

    def walk(self, v: Any) -> None:
        """Pay one step per element of a list, tuple or dict (nested ones counted, shared ones each time),
        which is what comparing, printing or recording it costs; refuse it past max_entries or max_depth."""
        stack: list[tuple[Any, int]] = [(v, 1)]
        seen, room = 0, self.lim.max_steps - self.steps
        while stack:
            x, depth = stack.pop()
            if depth > self.lim.max_depth:
                raise OverBudget(f"a list, tuple or dict nested more than {self.lim.max_depth} deep, over the limit")
            items = list(x.keys()) + list(x.values()) if isinstance(x, dict) else x
            seen += len(items)
            self.items(seen, "a value of more than {} elements (nested ones counted)")
            if seen > room:
                break  # charging it is already over the step limit: stop walking
            stack.extend((y, depth + 1) for y in items if isinstance(y, (list, tuple, dict)))
        self.charge(seen)

    def operands(self, a: Any, b: Any) -> None:
        """Pay for a binary operation's hidden work: comparing or joining lists, multiplying EE numbers."""
        for x in (a, b):
            if isinstance(x, (list, tuple, dict)):
                self.walk(x)
        if isinstance(a, EENumber) and isinstance(b, EENumber):
            self.charge(_terms(a) * _terms(b))

    def _ee(self, v: EENumber) -> None:
        if _terms(v) > self.lim.max_terms:
            raise OverBudget(f"an EE number of more than {self.lim.max_terms:,} terms, over the limit")
        for s in (v.num, v.den):
            for q, c in s.terms.items():
                if abs(q) > self.lim.max_exponent:
                    raise OverBudget(f"e^{q}: |q| over the limit of {self.lim.max_exponent:,} (raise it with --max-exponent if you mean it)")
                self.value(c, "ee")

    def evaluate(self, v: Any, xs: Sequence[Any], bits: int = ENCLOSURE_BITS) -> Any:
        """``rasp.evaluate(v, xs, D)`` in the first of QQ, EE, Ball(bits) that holds the tokens and the values
        (a non-integer power leaves the exact fields), each try once its work, one step per node (a composed
        map counts its functions) and position, is paid for, and a selector's dense matrix is within
        max_entries. What the evaluation decides from balls is counted in the record of decisions in force."""
        nodes, stack, seen = 0, [v], set()
        while stack:
            x = stack.pop()
            if id(x) in seen:
                continue
            seen.add(id(x))
            f = getattr(x, "f", None)
            nodes += len(f.params["fns"]) if getattr(f, "name", None) == "compose" else 1
            stack.extend(x.children)
        if isinstance(v, rasp.Selector):
            self.items(len(xs) ** 2, "a selector matrix of {} entries")

        def attempt(d: Any) -> Any:  # each domain tried is paid for
            self.charge(nodes * max(len(xs), 1))
            return rasp.evaluate(v, xs, d)

        return in_smallest_domain(attempt, bits, least_domain(xs))[0]


def _terms(v: EENumber) -> int:
    return len(v.num.terms) + len(v.den.terms)


_BRIEF = reprlib.Repr()
_BRIEF.maxlevel, _BRIEF.maxlist, _BRIEF.maxtuple, _BRIEF.maxdict, _BRIEF.maxstring, _BRIEF.maxother = 3, 6, 6, 4, 40, 40


def brief(v: Any) -> str:
    """A short description of a value for an error message, whatever its size (never its whole repr)."""
    return _BRIEF.repr(v) if isinstance(v, (list, tuple, dict, str)) else str(v)[:60]
