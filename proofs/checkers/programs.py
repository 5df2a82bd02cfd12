"""A recorded RASP program, as the compositional checks read it: tagged values, tables, predicates, value sets.

The compiled models' check (:mod:`.compiled.every_input`) and tracr's (:mod:`.tracr.every_input`) prove that a model
computes a recorded program on every input; both read the program the same way, here. A value is a tagged tuple
(``("n",)`` None, ``("s", str)``, ``("q", p, q)``, ``("b", bool)``, ``("t", (...))``); a map is its recorded table
(code is never executed); a Select decides as RASP's evaluation does (EQ and NEQ as Python's ==, ordered
comparisons within one kind, None where the evaluation raises).
"""

from __future__ import annotations

from typing import Any, Callable

from flint import fmpq

from attncert.exact import ParseError
from attncert.exact.rationals import rational_from_json

#: The most values a numerical mean's value set is enumerated to; past it the set is unknown.
MAX_VALUES = 4096

Value = tuple  # a RASP value, tagged: ("n",) None, ("s", str), ("q", p, q), ("b", bool), ("t", (...))
NONE: Value = ("n",)
_SELECTORS = ("select", "constant_selector", "selector_and", "selector_or", "selector_not")


class Unsupported(ParseError):
    """A program or model outside the class this proof covers."""


def value(j: Any) -> Value:
    """The tagged JSON of a RASP value, as a hashable tagged tuple."""
    if j is None:
        return NONE
    if isinstance(j, dict) and len(j) == 1:
        (tag, v), = j.items()
        if tag == "s" and isinstance(v, str):
            return ("s", v)
        if tag == "b" and isinstance(v, bool):
            return ("b", v)
        if tag == "q":
            q = rational_from_json(v)
            return ("q", int(q.p), int(q.q))
        if tag == "t" and isinstance(v, list):
            return ("t", tuple(value(x) for x in v))
    raise ParseError(f"not a recorded RASP value: {j!r:.40}")


def number(v: Value) -> fmpq | None:
    """A number or boolean as the rational it counts as (True 1, False 0); None for anything else."""
    if v[0] == "q":
        return fmpq(v[1], v[2])
    if v[0] == "b":
        return fmpq(int(v[1]))
    return None


def eq_key(v: Value) -> tuple:
    """A key equal for two values exactly when RASP's EQ calls them equal (Python's ==, as attncert's evaluator
    codes the values of a Select, and exact.decide.equal inside tuples): numbers and booleans by the number
    (True == 1), a tuple by its elements in order, a string by itself, None only to None. Every kind has its
    own tag, so no two kinds collide: None is ("none",), never a tuple."""
    n = number(v)
    if n is not None:
        return ("number", int(n.p), int(n.q))
    if v[0] == "t":
        return ("tuple", tuple(eq_key(x) for x in v[1]))
    return ("string", v[1]) if v[0] == "s" else ("none",)


def _sign(a: Value, b: Value) -> int | None:
    """-1, 0 or 1 as a orders against b in an ordered Comparison of two values of one kind, as
    exact.decide.compare decides it (the evaluator sorts a Select's keys and queries with it): numbers
    (booleans as 0 and 1 inside a tuple) exactly, strings as Python orders them, tuples at their first
    elements that differ (by :func:`eq_key`), then by length. None where it raises (TypeError): two
    different elements of two kinds, or None against anything but None (which equals it)."""
    na, nb = number(a), number(b)
    if na is not None and nb is not None:
        return (na > nb) - (na < nb)
    if a[0] == "t" and b[0] == "t":
        for x, y in zip(a[1], b[1]):
            if eq_key(x) != eq_key(y):
                return _sign(x, y)
        return (len(a[1]) > len(b[1])) - (len(a[1]) < len(b[1]))
    if a[0] == "s" and b[0] == "s":
        return (a[1] > b[1]) - (a[1] < b[1])
    return None


def orderable(values: list[Value]) -> bool:
    """Whether every two values of the list have a :func:`_sign` (an ordered Comparison over them all is defined),
    without trying every pair: two different values of two kinds have none; tuples that differ first at
    element i order as their i-th elements do, so the first elements must be orderable, and within each group of
    equal first elements the rests."""
    kinds = {eq_key(v)[0] for v in values}
    if len(kinds) > 1:
        return False
    if kinds != {"tuple"}:
        return True
    groups: dict[tuple, list[Value]] = {}
    for v in values:
        if v[1]:
            groups.setdefault(eq_key(v[1][0]), []).append(("t", v[1][1:]))
    return orderable([v[1][0] for v in values if v[1]]) and all(orderable(rest) for rest in groups.values())


#: The kinds an ordered Comparison orders within (RASP's evaluation refuses an input whose keys and queries
#: hold two of them: constructions/rasp/evaluate.py, one_kind): by the tag of a value.
KIND = {"q": "number", "b": "boolean", "s": "string", "t": "tuple"}
ORDERED = {"LT": lambda s: s < 0, "LEQ": lambda s: s <= 0, "GT": lambda s: s > 0, "GEQ": lambda s: s >= 0}
_PREDICATES = ("EQ", "NEQ", "TRUE", "FALSE", *ORDERED)


class Program:
    """The recorded program: nodes by label, in the recorded order (arguments first)."""

    def __init__(self, record: Any, causal: bool = False):
        if not isinstance(record, dict) or not isinstance(record.get("nodes"), list) or not isinstance(record.get("output"), str):
            raise ParseError("the recorded program must be an object with a list of nodes and an output label")
        self.nodes: dict[str, dict[str, Any]] = {}
        self.tables: dict[str, dict[tuple[Value, ...], Value]] = {}
        #: the program's tokens (a node the primitive length may come before, in the recorded order)
        self._tokens = next((d.get("label") for d in record["nodes"] if isinstance(d, dict) and d.get("op") == "tokens"), None)
        for d in record["nodes"]:
            label, op, args = (d.get(k) if isinstance(d, dict) else None for k in ("label", "op", "args"))
            if not isinstance(label, str) or label in self.nodes or not isinstance(args, list) or any(a not in self.nodes for a in args):
                raise ParseError(f"malformed program node {str(d)[:60]}")
            if op == "length" and args == []:
                self._length_as_width(label, d.get("encoding"), causal)
                continue
            if op not in ("tokens", "indices", "map", "sequence_map", "select", "aggregate", "selector_width"):
                raise Unsupported(f"node {label!r}: {op!r:.20} is outside the compositional proof (tokens, indices, maps, Select, Aggregate, SelectorWidth)")
            arity = {"tokens": 0, "indices": 0, "map": 1, "sequence_map": 2, "select": 2, "aggregate": 2, "selector_width": 1}[op]
            selectors = [self.nodes[a]["op"] == "select" for a in args]  # an Aggregate's or width's first argument, and only it
            if len(args) != arity or selectors != [op in ("aggregate", "selector_width") and k == 0 for k in range(len(args))]:
                raise ParseError(f"node {label!r}: its arguments do not fit a {op}")
            if op == "select" and "predicate" in d and d["predicate"] not in _PREDICATES:
                raise ParseError(f"node {label!r}: unknown predicate {d['predicate']!r:.20}")
            if op in ("map", "sequence_map") or op == "select" and "predicate" not in d:
                table = {}
                for entry in d.get("table") if isinstance(d.get("table"), list) else _bad(label, "a table"):
                    if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], list) or len(entry[0]) != (1 if op == "map" else 2):
                        _bad(label, "table entries [[arguments], value]")
                    table[tuple(value(a) for a in entry[0])] = value(entry[1])
                self.tables[label] = table
            self.nodes[label] = {"op": op, "args": args, "encoding": d.get("encoding"), "predicate": d.get("predicate"), "default": value(d.get("default"))}
        if record["output"] not in self.nodes or self.nodes[record["output"]]["op"] == "select":
            raise ParseError("the program's output must be one of its SOps")
        self.output = record["output"]
        self.static: set[str] = set()
        self._at: dict[tuple[str, int], Value] = {}  # (static SOp, position) -> its value (:meth:`at`)
        for label, n in self.nodes.items():  # static: computed from the positions through tables and Comparisons
            if n["op"] == "indices" or n["op"] in ("map", "sequence_map", "select") and all(a in self.static for a in n["args"]):
                self.static.add(label)

    def _length_as_width(self, label: str, encoding: Any, causal: bool) -> None:
        """The primitive length as SelectorWidth(Select(tokens, tokens, TRUE)): the same value n at every
        position without a causal mask (the compiler computes it so in a model for every length)."""
        if causal:
            raise Unsupported(f"node {label!r}: the primitive length under a causal mask (a query does not see the positions after it)")
        toks = self._tokens
        if toks is None:  # a program that reads no token: its own
            toks = self._tokens = f"{label}:tokens"
            self.nodes[toks] = {"op": "tokens", "args": [], "encoding": "categorical", "predicate": None, "default": NONE}
        sel = f"{label}:all_true"
        self.nodes[sel] = {"op": "select", "args": [toks, toks], "encoding": None, "predicate": "TRUE", "default": NONE}
        self.nodes[label] = {"op": "selector_width", "args": [sel], "encoding": encoding, "predicate": None, "default": NONE}

    def apply(self, label: str, args: tuple[Value, ...]) -> Value:
        """A map's value on its arguments (None passes through without a call, as RASP's maps do)."""
        if any(a == NONE for a in args):
            return NONE
        try:
            return self.tables[label][args]
        except KeyError:
            raise Unsupported(f"the table of {label!r} has no entry for {args!r:.60}") from None

    def selects(self, label: str, k: Value, q: Value) -> bool | None:
        """Whether Select ``label`` selects a key holding k for a query holding q, as RASP's evaluation
        decides it; None where that evaluation raises (a comparison other than TRUE and FALSE on None, an
        ordered one between values of two kinds: a boolean and a number, a string and a number...), so that
        no input presenting the pair is in the program's domain. EQ and NEQ compare as Python does (True == 1).

        None is a value like any other to a callable predicate, which RASP calls on it (maps pass None
        through without a call; a predicate does not): its table must hold the pair, or the proof is
        refused. TRUE and FALSE select every key, or none, whatever the values (attncert's evaluator)."""
        n = self.nodes[label]
        if n["predicate"] is not None:
            if n["predicate"] in ("TRUE", "FALSE"):
                return n["predicate"] == "TRUE"
            if k == NONE or q == NONE:
                return None
            if n["predicate"] in ("EQ", "NEQ"):
                return (eq_key(k) == eq_key(q)) == (n["predicate"] == "EQ")
            if KIND[k[0]] != KIND[q[0]]:
                return None  # an input presenting both holds two kinds among its keys and queries: RASP raises
            s = _sign(k, q)
            # None: tuples whose first different elements have no order, on which RASP raises
            return None if s is None else ORDERED[n["predicate"]](s)
        got = self.tables[label].get((k, q))
        if got is None:
            raise Unsupported(f"the table of {label!r} has no entry for {(k, q)!r:.60}, which the proof needs")
        if got[0] != "b":
            raise Unsupported(f"the predicate of {label!r} gives {got!r:.30}, not a boolean")
        return got[1]

    def at(self, label: str, p: int) -> Value:
        """A static SOp's value at the token position p (1-based: token p - 1), computed once per node and
        position: a chain of SequenceMap(x, x) would otherwise cost 2^depth lookups."""
        key = (label, p)
        if key not in self._at:
            n = self.nodes[label]
            self._at[key] = ("q", p - 1, 1) if n["op"] == "indices" else self.apply(label, tuple(self.at(a, p) for a in n["args"]))
        return self._at[key]


def _bad(label: str, what: str) -> Any:
    raise ParseError(f"node {label!r}: expected {what}")


def means(values: list[Value] | None, N: int, default: Value, afford: Callable[[int], bool] = lambda count: True) -> list[Value] | None:
    """Every mean of w = 1..N values of a finite set of numbers (booleans as 0 and 1), and the default if it
    is a number: the values a numerical Aggregate can take; None if unknown or past MAX_VALUES, or if
    ``afford`` (the proof's count of them; every step by default) refuses a step's |sums of w - 1 values| x |values|
    additions, counted before they are made."""
    nums = None if values is None else [number(x) for x in values]
    if nums is None or any(x is None for x in nums):
        return None
    sums, out = {fmpq(0)}, set()
    for w in range(1, N + 1):
        if not afford(len(sums) * len(nums)):
            return None
        sums = {a + x for a in sums for x in nums}
        if len(sums) > MAX_VALUES:
            return None
        out |= {a / w for a in sums}
    if number(default) is not None and default[0] == "q":
        out.add(number(default))
    return [("q", int(x.p), int(x.q)) for x in sorted(out)]
