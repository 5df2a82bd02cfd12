"""Evaluation of RASP graphs in any domain of the number tower.

Semantics (docs/design.md, "RASP as computation graphs"; RASP, Weiss et al. 2021;
tracr's evaluator):

* ``tokens`` are the input; numeric tokens are converted exactly into the
  domain, other hashable tokens (strings, bools) are kept: a string is a token,
  never read as a number, even ``"1/3"`` (docs/rasp.md, "Numbers and strings").
  ``indices`` are 0..n-1 and ``length`` is n, both as domain numbers.
* ``Select(keys, queries, p)`` is the boolean matrix M[q][k] = p(key_k, query_q),
  stored sparsely (:mod:`constructions.rasp.selection`). An ordered Comparison (LT, LEQ,
  GT, GEQ) orders values of one kind (numbers, strings, booleans or tuples) and is not
  defined on an input whose keys and queries hold two kinds (:func:`one_kind`); EQ and
  NEQ compare as Python does (True == 1, "1" != 1). For Comparison
  predicates it is built vectorised: keys and queries are replaced by integer
  codes that preserve equality and order (their rank among the distinct values,
  sorted exactly), and the selected keys of each query are a run of the sorted
  codes. Other callables are called n^2 times, in-process only.
* ``Aggregate(s, v, default)`` gives each query the exact mean, in the domain,
  of the values at its selected keys, or ``default`` if it selects none.
  Booleans count as 0/1 in a numerical aggregate; a categorical one treats them
  as tokens. Non-numeric values may be aggregated only when every selected value
  is the same (then the mean is that value).
* ``SelectorWidth(s)`` is the number of selected keys of each query.
* ``None`` flows through maps as in tracr.
* What a map's function returns is brought into the domain in one place
  (:meth:`_Evaluator.results`): exact numbers (int, fmpz, fmpq, Fraction, numpy
  integers) are converted, so ``Map(lambda x: x + 1, tokens)`` or
  ``lambda x: 1 if x > 0 else 0`` give domain values in every domain; booleans,
  strings, tuples and None stay tokens. A float (Python or numpy) returned while
  evaluating in QQ or EE is refused: the function rounded; so is a ball.
* Every comparison, truth test, floor and choice on a value is the three-valued
  decision of :mod:`exact.decide`: in Ball a ball decides it or UndecidedError is
  raised (kept as such, with the node named, so that a caller may evaluate again at
  a higher precision). A Python function evaluated in Ball is handed
  :class:`~exact.decide.DecidingBall` values, so its own comparisons are decisions too.

Intermediate values are freed as soon as their last consumer has run, so
memory stays near the widest layer, not the whole graph. A node that repeats an
earlier one (the same operation, parameters and encoding on the same arguments)
is computed once, and aggregates read their means from one table per selection
(:mod:`exact.groups`), so a gather costs a list lookup per position.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import time
import weakref
from collections import Counter
from fractions import Fraction
from typing import Any, Iterator, Mapping, Sequence

import networkx as nx
import numpy as np
from flint import arb, fmpq, fmpz

from attncert.constructions.rasp import expr as E
from attncert.constructions.rasp.graph import arguments, decode_params, to_graph
from attncert.constructions.rasp.selection import Selection
from attncert.exact import EE, QQ, Ball, Domain, EENumber, Float, decide
from attncert.exact.canonical import canonical_json
from attncert.exact.domains import BallField
from attncert.exact.errors import AttncertError, NotInFieldError, UndecidedError
from attncert.exact.groups import take
from attncert.exact.limits import current as current_limits
from attncert.exact.rationals import parse_rational



class EvaluationError(AttncertError):
    """A program failed on an input (type mismatch, bad aggregate, wrong length...)."""


def evaluate(program: E.RASPExpr, xs: Sequence[Any], domain: Domain | None = None, causal: bool = False) -> Any:
    """tracr-compatible: the value of ``program`` on input ``xs``.

    The domain defaults to the smallest one that holds the tokens (QQ for numbers and
    strings, EE if a token is an :class:`EENumber`). Selectors evaluate to lists of
    lists of booleans, SOps to lists. ``causal``: tracr's causal semantics
    (``tracr.rasp.causal_eval``): every selector's value is masked to the keys k <= q.
    """
    g = to_graph(program)
    out = evaluate_graph(g, xs, domain, causal=causal)["output"]
    return out.to_dense().tolist() if isinstance(out, Selection) else out


E.install_evaluator(evaluate)


def _default_domain(xs: Sequence[Any]) -> Domain:
    if any(isinstance(x, EENumber) for x in xs):
        return EE
    if any(isinstance(x, arb) for x in xs):
        return Ball(128)
    return QQ


def evaluate_graph(
    g: nx.MultiDiGraph,
    xs: Sequence[Any],
    domain: Domain | None = None,
    max_length: int | None = None,
    seconds: dict[int, float] | None = None,
    causal: bool = False,
) -> dict[str, Any]:
    """Evaluate every output of a RASP graph on the token sequence ``xs``.

    If ``seconds`` is given, it receives the wall time each computed node took (node id
    -> seconds; a static node read from the per-length cache takes none), for profiling.
    ``causal``: tracr's causal semantics, every selector masked to the keys k <= q (:data:`SELECTOR_OPS`).
    """
    outputs = g.graph["outputs"]
    values = _run(g, xs, domain, max_length, keep=set(outputs.values()), seconds=seconds, causal=causal)
    return {name: values[v] for name, v in outputs.items()}


def trace_graph(g: nx.MultiDiGraph, xs: Sequence[Any], domain: Domain | None = None, causal: bool = False) -> dict[int, Any]:
    """The value of every node of a RASP graph on ``xs`` (SOps as lists, selectors as Selections);
    ``causal``: every selector masked to the keys k <= q, as tracr's ``causal_eval``."""
    return _run(g, xs, domain, None, keep=set(g.nodes), causal=causal)


#: The ops whose value is a selection: under causal semantics each is masked to the keys k <= q
#: (tracr's ``causal_eval`` masks every Selector it evaluates, combined ones included).
SELECTOR_OPS = frozenset({"select", "constant_selector", "selector_and", "selector_or", "selector_not"})


def held_values(g: nx.MultiDiGraph) -> int:
    """The most values (sequences and selections, each of N entries) an evaluation of g holds at once.

    Read from the schedule alone, in the evaluation's own order: the static values are
    held throughout (they are cached for the length), a data-dependent value from the
    step that computes it until its last consumer has run, the outputs to the end.
    """
    plan = _plan(g)
    remaining = dict(plan.consumers)
    outputs = {plan.same.get(v, v) for v in g.graph["outputs"].values()}
    data: set[int] = set()
    most = 0
    for v, _, args in plan.steps:
        if v not in plan.static:
            data.add(v)
        most = max(most, len(data))
        for u in args:
            remaining[u] -= 1
            if remaining[u] == 0 and u not in outputs:
                data.discard(u)
    return len(plan.static) + most


def _run(
    g: nx.MultiDiGraph, xs: Sequence[Any], domain: Domain | None, max_length: int | None, keep: set[int],
    seconds: dict[int, float] | None = None, causal: bool = False,
) -> dict[int, Any]:
    if isinstance(xs, (str, bytes)):
        xs = list(xs)
    xs = list(xs)
    if not xs:
        raise EvaluationError("empty input: RASP programs need at least one token")
    # The limit in force (exact.limits: --max-positions), the one the claims' cost models are checked against.
    max_length = current_limits().max_positions if max_length is None else max_length
    if len(xs) > max_length:
        raise EvaluationError(f"input of length {len(xs):,}, over the limit of {max_length:,} positions (raise it with --max-positions)")
    domain = domain if domain is not None else _default_domain(xs)
    ev = _Evaluator(domain, xs, causal)
    plan = _plan(g)
    static = plan.static_values(len(xs), domain.name, causal)
    # Static values decided from balls (Ball): read from the cache, they count as decided again.
    decided = plan.decided_statics(len(xs), domain.name, causal) if not domain.exact else None
    remaining = dict(plan.consumers)
    kept, keep = keep, {plan.same.get(v, v) for v in keep}  # the nodes asked for, and the nodes computing them
    values: dict[int, Any] = {}
    with domain.context(), _no_cycle_collection():
        for v, d, args in plan.steps:
            if v in static:
                values[v] = static[v]
                if decided is not None and v in decided:
                    decide.note_enclosure()
            else:
                t0 = time.perf_counter()
                record = decide.Decisions() if decided is not None and v in plan.static else None
                try:
                    with decide.recording(record) if record is not None else contextlib.nullcontext():
                        values[v] = ev.node(d, [values[u] for u in args])
                except (AttncertError, TypeError, ValueError, ArithmeticError) as e:
                    if isinstance(e, EvaluationError) and str(e).startswith("at node"):
                        raise
                    written = f", written at {d['source']}" if "source" in d else ""
                    where = f"at node {d['label']!r} ({d['op']}{written}): {e}{_string_token_hint(e, [values[u] for u in args])}"
                    if isinstance(e, NotInFieldError):  # kept apart: the caller may move up the tower (QQ, EE, Ball)
                        raise NotInFieldError(where) from e
                    if isinstance(e, UndecidedError):  # kept apart: the caller may evaluate at a higher precision
                        raise UndecidedError(where) from e
                    raise EvaluationError(where) from e
                if v in plan.static:
                    static[v] = values[v]
                if record is not None and record.any:
                    decided.add(v)
                    decide.note_enclosure(record.from_enclosures)
                if seconds is not None:
                    seconds[v] = time.perf_counter() - t0
            for u in args:
                remaining[u] -= 1
                if remaining[u] == 0 and u not in keep:
                    del values[u]
    out = {u: ev.as_list(values[u]) if isinstance(values[u], np.ndarray) else values[u] for u in keep if u in values}
    return {v: out[plan.same.get(v, v)] for v in kept if plan.same.get(v, v) in out}


def _string_token_hint(e: Exception, args: list[Any]) -> str:
    """Where a type error or a non-numeric aggregate meets a string that reads as a number (``"1/3"``):
    the rule that made it a token (docs/rasp.md, "Numbers and strings"); else nothing."""
    if not isinstance(e, (TypeError, EvaluationError)):
        return ""
    for xs in args:
        for x in xs if isinstance(xs, list) else ():
            if type(x) is str:
                try:
                    parse_rational(x)
                except AttncertError:
                    continue
                return (
                    f" (the string {x!r} is a token: in a RASP program a string is never read as a number; "
                    f"give numbers as int, Fraction or fmpq)"
                )
    return ""


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a graph is evaluated.

    The values made here (numbers, lists of them, selections) hold no reference
    cycles, so the collector would find nothing to free; it would only rescan the
    growing heap of live values (about a sixth of the time of a large exact run).
    Reference counting still frees every intermediate as soon as it is dropped.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Plan:
    """What evaluation needs of a graph, computed once per graph object.

    Nodes that no path connects to ``tokens`` are *static*: their values depend only
    on the sequence length (and domain), such as positions, index arithmetic and the
    selectors of every construction in this project. They are cached per length, so
    evaluating one program on many inputs builds its selections once. Graphs are
    treated as immutable once evaluated.
    """

    def __init__(self, g: nx.MultiDiGraph):
        #: node -> the earlier node it repeats: the same operation, parameters and encoding on
        #: the same arguments (a sequence annotated twice, one map written twice) has the same
        #: value, so it is computed once. Python callables are never merged (they may not be pure).
        self.same: dict[int, int] = {}
        first: dict[tuple[Any, ...], int] = {}
        self.steps: list[tuple[int, Mapping[str, Any], list[int]]] = []
        for v in nx.lexicographical_topological_sort(g):
            d = g.nodes[v]
            args = [self.same.get(u, u) for u in arguments(g, v)]
            if "callable" not in d:
                key = (d["op"], d.get("encoding"), canonical_json(d.get("params", {})), tuple(args))
                if first.setdefault(key, v) != v:
                    self.same[v] = first[key]
                    continue
            self.steps.append((v, d, args))
        self.consumers = Counter(u for _, _, args in self.steps for u in args)
        data = set()
        for v, d, args in self.steps:
            if d["op"] in ("tokens", "constant_sop", "constant_selector") or "callable" in d or any(u in data for u in args):
                data.add(v)
        self.static = {v for v, _, _ in self.steps} - data
        self._cache: dict[tuple[int, str, bool], dict[int, Any]] = {}
        self._decided: dict[tuple[int, str, bool], set[int]] = {}

    def static_values(self, n: int, domain: str, causal: bool = False) -> dict[int, Any]:
        key = (n, domain, causal)
        if key not in self._cache:
            if len(self._cache) >= 4:
                oldest = next(iter(self._cache))
                del self._cache[oldest]
                del self._decided[oldest]
            self._cache[key] = {}
            self._decided[key] = set()
        return self._cache[key]

    def decided_statics(self, n: int, domain: str, causal: bool = False) -> set[int]:
        """The static nodes of :meth:`static_values` whose values were decided from balls."""
        self.static_values(n, domain, causal)
        return self._decided[(n, domain, causal)]


_PLANS: "weakref.WeakKeyDictionary[nx.MultiDiGraph, _Plan]" = weakref.WeakKeyDictionary()


def _plan(g: nx.MultiDiGraph) -> _Plan:
    plan = _PLANS.get(g)
    if plan is None:
        plan = _PLANS[g] = _Plan(g)
    return plan


_NON_NUMERIC = {str, tuple, type(None)}

#: Stands for "no argument yet" (None is a value a sequence may hold).
_NOTHING = object()

#: Registered functions that are the operators of RASP programs: name -> (the operator, or None for the
#: comparison in the parameter op; where its two operands come from: x, y the arguments, others parameters).
_OPERATORS: dict[str, tuple[str | None, tuple[str, str]]] = {
    **{name: (symbol, ("x", "y")) for name, symbol in (("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/"), ("power", "^"), ("mod", "%"), ("compare", None))},
    **{f"{name}_const": (symbol, ("x", "c")) for name, symbol in (("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/"), ("compare", None))},
    **{f"r{name}_const": (symbol, ("c", "x")) for name, symbol in (("sub", "-"), ("div", "/"), ("compare", None))},
    "pow_const": ("^", ("x", "k")),
    "mod_const": ("%", ("x", "k")),
    "pow_base": ("^", ("b", "x")),
}


def refused(fn: Any, args: tuple[Any, ...], domain: Domain) -> str:
    """What a registered function's TypeError on ``args`` means, in the words of RASP programs: which
    operator (or function) is not defined between which values. Of a composed map, the function in it
    that refuses (the functions are pure: applied again one by one to find it)."""
    if fn.name == "compose":
        x = args[0]
        for g in fn.params["fns"]:
            try:
                x = g.apply(domain, x)
            except TypeError:
                return refused(g, (x,), domain)
    if fn.name == "neg":
        return f"'-' is not defined for {value_words(args[0])}"
    if fn.name in _OPERATORS:
        symbol, (a, b) = _OPERATORS[fn.name]
        values = {**fn.params, "x": args[0], "y": args[-1]}
        return f"'{symbol or fn.params['op']}' is not defined between {value_words(values[a])} and {value_words(values[b])}"
    return f"the function {fn.name} is not defined on {' and '.join(map(value_words, args))}"


def value_words(v: Any) -> str:
    """A value at a position, said with its type: 'the string "h"', 'the number 1/2', 'the boolean True'."""
    if isinstance(v, str):
        return f"the string {json.dumps(v, ensure_ascii=False)}"
    if isinstance(v, bool):
        return f"the boolean {v}"
    if isinstance(v, (int, fmpz, fmpq, Fraction, float, EENumber, arb)):
        return f"the number {v}"
    return "no value" if v is None else f"the value {str(v)[:40]}"

#: Values a function may return that stay as they are (tokens and booleans).
_TOKENS = frozenset({str, tuple, type(None), bool})
#: Exact numbers a function may return; they are converted into the domain.
_EXACT_NUMBERS = (int, fmpz, fmpq, Fraction, np.integer)


def _is_number(v: Any) -> bool:
    return type(v) not in _NON_NUMERIC


class _Evaluator:
    def __init__(self, domain: Domain, xs: list[Any], causal: bool = False):
        self.domain = domain
        self.n = len(xs)
        self.causal = causal
        self._int_cache: dict[int, Any] = {}
        # The types a function result may already have: the domain's own element types, and tokens.
        self._kept = _TOKENS | frozenset({type(domain.one()), type(domain.native(1)), type(domain.native(fmpq(1, 2)))})
        # Values already in an exact domain are taken as they are (Float still checks for inf and nan).
        self.xs = xs if domain.exact and self._kept.issuperset(map(type, xs)) else [self.const(x) for x in xs]
        self._balls = isinstance(domain, BallField)

    def user(self, py: Any) -> Any:
        """A Python function as this evaluator calls it: in Ball it is handed balls whose comparisons,
        truth, int and round are decisions (:class:`exact.decide.DecidingBall`), and gives back arbs."""
        if not self._balls:
            return py
        return lambda *args: decide.plain(py(*map(decide.deciding, args)))

    def const(self, x: Any) -> Any:
        """A value from the input or the graph, in the domain (tokens stay tokens)."""
        if x is None or isinstance(x, (str, bool, tuple)):
            return x
        return self.domain.native(x)

    def integer(self, k: int) -> Any:
        v = self._int_cache.get(k)
        if v is None:
            v = self._int_cache[k] = self.domain.native(k)
        return v

    def as_list(self, xs: Any) -> list[Any]:
        """A sequence as a list of domain values (integer sequences are kept as int64 arrays)."""
        if isinstance(xs, np.ndarray):
            return [self.integer(k) for k in xs.tolist()]
        return xs

    def as_ints(self, xs: Any) -> np.ndarray | None:
        return xs if isinstance(xs, np.ndarray) else None

    def node(self, d: Mapping[str, Any], args: list[Any]) -> Any:
        op = d["op"]
        py = d.get("callable")
        params = {} if py is not None else decode_params(op, d["params"])
        if op == "aggregate":
            return self.op_aggregate(params, py, *args, categorical=d.get("encoding") == "categorical")
        out = getattr(self, f"op_{op}")(params, py, *args)
        if self.causal and op in SELECTOR_OPS:
            positions = np.arange(self.n, dtype=np.int64)
            out = out & Selection.compare(positions, positions, "<=")  # key k <= query q
        return out

    # -- primitives ---------------------------------------------------------------------
    def op_tokens(self, params, py):
        return list(self.xs)

    # Integer sequences (positions, lengths, widths, and maps of them that have an
    # integer form) are int64 arrays: index arithmetic is then vectorised.
    def op_indices(self, params, py):
        return np.arange(self.n, dtype=np.int64)

    def op_length(self, params, py):
        return np.full(self.n, self.n, dtype=np.int64)

    def op_full(self, params, py):
        fill = params["fill"]
        k = _small_int(fill)
        return np.full(self.n, k, dtype=np.int64) if k is not None else [self.const(fill)] * self.n

    def op_constant_sop(self, params, py):
        vals = params["value"]
        if params["check_length"] and len(vals) != self.n:
            raise EvaluationError(f"constant sequence of length {len(vals)} does not match input length {self.n}")
        return [self.const(v) for v in vals]

    # -- MLP sublayers ------------------------------------------------------------------
    def op_map(self, params, py, xs):
        if py is None and isinstance(xs, np.ndarray):
            out = params["fn"].apply_ints(xs)
            if out is not None:
                return out
        if py is not None:
            f = self.user(py)
            return self.results([None if x is None else f(x) for x in self.as_list(xs)], py)
        return self.results(self._registered(params["fn"], self.as_list(xs)), py)

    def op_sequence_map(self, params, py, xs, ys):
        if py is None and isinstance(xs, np.ndarray) and isinstance(ys, np.ndarray):
            out = params["fn"].apply_ints(xs, ys)
            if out is not None:
                return out
        if py is not None:
            f = self.user(py)
            return self.results([None if x is None or y is None else f(x, y) for x, y in zip(self.as_list(xs), self.as_list(ys))], py)
        return self.results(self._registered(params["fn"], self.as_list(xs), self.as_list(ys)), py)

    def _registered(self, fn: Any, xs: list[Any], ys: list[Any] | None = None) -> list[Any]:
        """A registered function at every position (None where an argument is None).

        Registered functions are pure, so where a position's arguments are the very
        objects of the position before (a default filling every position past a block,
        say) the value before is reused instead of computed again.
        """
        f = fn.bind(self.domain)
        unary = ys is None
        ys = xs if ys is None else ys
        out: list[Any] = []
        value: Any = None
        px = py = _NOTHING
        try:
            for x, y in zip(xs, ys):
                if x is not px or y is not py:
                    px, py = x, y
                    value = None if x is None or y is None else f(x) if unary else f(x, y)
                out.append(value)
        except TypeError:  # the values at this position are of types the function does not take
            raise EvaluationError(f"{refused(fn, (px,) if unary else (px, py), self.domain)} (at position {len(out)})") from None
        return out

    def results(self, out: list[Any], py: Any) -> list[Any]:
        """The values a map's function returned, brought into the domain (the one place this happens).

        Domain elements, tokens (str, tuple), booleans and None are kept. Exact numbers
        (int, fmpz, fmpq, Fraction, numpy integers) are converted with the domain's
        ``native``, so a lambda returning a plain int gives an ``fmpq`` in QQ, an
        ``arb`` in Ball and a ``float`` in Float. A float (Python or numpy) is
        refused in an exact domain and becomes a Python float in Float (an arb in
        Ball). Other values (e.g. elements of another domain) pass unchanged.
        """
        kept = self._kept
        if kept.issuperset(map(type, out)):  # the common case, checked at C speed
            return out
        return [v if type(v) in kept else self._result(v, py) for v in out]

    def _result(self, v: Any, py: Any) -> Any:
        if isinstance(v, _EXACT_NUMBERS) and not isinstance(v, bool):
            return self.domain.native(v)
        if isinstance(v, np.bool_):
            return bool(v)
        if isinstance(v, arb) and self.domain.exact:
            # A ball is an enclosure: an exact evaluation that received one would call it exact.
            name = getattr(py, "__qualname__", repr(py))
            raise EvaluationError(f"function {name} returned a ball ({v}) while evaluating exactly in {self.domain.name}; evaluate in Ball")
        if isinstance(v, (float, np.floating)):
            if self.domain.exact:
                # A float in an exact domain means a Python function rounded: refuse, never pass it on.
                name = getattr(py, "__qualname__", repr(py))
                raise EvaluationError(
                    f"function {name} returned a float ({v!r}) while evaluating exactly in {self.domain.name}; "
                    "use exact operations (ints, fmpq, Fraction, registered functions) or evaluate in Float"
                )
            return self.domain.native(v)
        return v

    # -- selectors ----------------------------------------------------------------------
    def op_select(self, params, py, keys, queries):
        nq, nk = len(queries), len(keys)
        if isinstance(keys, np.ndarray) and isinstance(queries, np.ndarray) and py is None:
            pred = params["predicate"]
            if pred in (E.Comparison.TRUE, E.Comparison.FALSE):
                return Selection.full(nq, nk) if pred is E.Comparison.TRUE else Selection.empty(nq, nk)
            return Selection.compare(keys, queries, pred.value)
        keys, queries = self.as_list(keys), self.as_list(queries)
        if py is not None:
            f = self.user(py)
            return Selection.from_dense(np.array([[decide.truth(f(k, q)) for k in keys] for q in queries], dtype=bool).reshape(nq, nk))
        pred: E.Comparison = params["predicate"]
        if pred is E.Comparison.TRUE:
            return Selection.full(nq, nk)
        if pred is E.Comparison.FALSE:
            return Selection.empty(nq, nk)
        if any(v is None for v in keys) or any(v is None for v in queries):
            raise EvaluationError("Select on a sequence that contains None (an aggregate with no default?)")
        ordered = pred not in (E.Comparison.EQ, E.Comparison.NEQ)
        if ordered:
            one_kind(keys + queries)
        kc, qc = self._codes(keys, queries, ordered=ordered)
        return Selection.compare(kc, qc, pred.value)

    def _codes(self, keys: list[Any], queries: list[Any], ordered: bool) -> tuple[np.ndarray, np.ndarray]:
        """Integer (or float, in Float) codes with the same equalities and order as the values."""
        allv = keys + queries
        if self.domain is Float and all(type(v) is float for v in allv):
            a = np.array(allv, dtype=float)
            return a[: len(keys)], a[len(keys) :]
        small = _as_small_ints(allv)
        if small is not None:
            return small[: len(keys)], small[len(keys) :]
        if isinstance(self.domain, BallField):  # arb's == and hash are not decisions: ask the domain
            a = self._codes_by_sorting(allv)
            return a[: len(keys)], a[len(keys) :]
        try:
            distinct = list(set(allv))
        except TypeError:  # unhashable (non-rational EE values): sort and merge equal neighbours
            a = self._codes_by_sorting(allv)
            return a[: len(keys)], a[len(keys) :]
        code = {v: i for i, v in enumerate(self._sorted(distinct) if ordered else distinct)}
        a = np.fromiter((code[v] for v in allv), dtype=np.int64, count=len(allv))
        return a[: len(keys)], a[len(keys) :]

    def _sorted(self, values: list[Any]) -> list[Any]:
        kinds = {type(v) for v in values}
        if kinds <= {fmpq, int} or kinds == {str}:
            return sorted(values)
        return sorted(values, key=lambda v: _SortKey(v, self.domain))

    def _codes_by_sorting(self, allv: list[Any]) -> np.ndarray:
        order = sorted(range(len(allv)), key=lambda i: _SortKey(allv[i], self.domain))
        a = np.empty(len(allv), dtype=np.int64)
        c, prev = -1, None
        for i in order:
            if prev is None or not self.domain.eq(allv[i], prev):
                c += 1
                prev = allv[i]
            a[i] = c
        return a

    def op_constant_selector(self, params, py):
        m = np.array(params["value"], dtype=bool)
        if params["check_length"] and m.shape != (self.n, self.n):
            raise EvaluationError(f"constant selector of shape {m.shape} does not match input length {self.n}")
        return Selection.from_dense(m)

    def op_selector_and(self, params, py, a, b):
        return a & b

    def op_selector_or(self, params, py, a, b):
        return a | b

    def op_selector_not(self, params, py, a):
        return ~a

    # -- attention sublayers ------------------------------------------------------------
    def op_selector_width(self, params, py, sel: Selection):
        return sel.widths().astype(np.int64)

    def op_aggregate(self, params, py, sel: Selection, values: Any, categorical: bool = False):
        values = self.as_list(values)
        default = self.const(params.get("default"))
        kinds = set(map(type, values))
        # Booleans are tokens to a categorical aggregate (a selected True stays True, as in tracr's
        # categorical aggregate and the RASP language) and 0/1 to a numerical one, which averages them.
        numeric = not (kinds & _NON_NUMERIC) and not (categorical and bool in kinds)
        if numeric:
            nums = [self.integer(int(v)) if type(v) is bool else v for v in values] if bool in kinds else values
            index, groups = sel.grouping()
            return take(nums + self.domain.group_means(nums, groups) + [default], index)
        cols, offsets = sel.csr()
        return [
            self._categorical_mean([values[i] for i in cols[a:b].tolist()]) if b > a else default
            for a, b in zip(offsets[:-1], offsets[1:])
        ]

    def _categorical_mean(self, selected: list[Any]) -> Any:
        first = selected[0]
        if not all(decide.equal(v, first) for v in selected[1:]):
            raise EvaluationError(
                f"aggregate of non-numeric values selects {len(selected)} different values "
                f"(e.g. {first!r:.20} and another); only a mean of numbers is defined"
            )
        return first

@functools.lru_cache(maxsize=8)
def _bare(domain: Domain) -> "_Evaluator":
    return _Evaluator(domain, [])


def as_token(x: Any, domain: Domain = QQ) -> Any:
    """A token as this evaluator holds it in ``domain`` (numbers converted exactly, e.g. the int 1 to the
    rational 1; strings, booleans, tuples and None kept): what a function of the tokens is called with."""
    return _bare(domain).const(x)


def as_returned(v: Any, fn: Any = None, domain: Domain = QQ) -> Any:
    """What a map's function returned, as this evaluator passes it on in ``domain`` (:meth:`_Evaluator.results`:
    exact numbers converted, booleans and tokens kept; a float or ball in an exact domain is an EvaluationError)."""
    return _bare(domain).results([v], fn)[0]


#: The kinds of values an ordered Comparison keeps apart (every other value is a number).
_KINDS = {bool: "boolean", str: "string", tuple: "tuple"}


def kind(v: Any) -> str:
    """The kind of a RASP value an ordered Comparison orders within: boolean, string, tuple or number."""
    return _KINDS.get(type(v), "number")


def one_kind(values: list[Any]) -> None:
    """Refuse (EvaluationError) an ordered Comparison over keys and queries of more than one kind.

    The values are ordered within one kind (numbers exactly, strings and booleans as Python orders
    them); between kinds no order is defined, not even the one Python gives booleans (True < 2), so
    an input whose keys and queries hold two kinds is outside the program's domain. Decided from the
    kinds present, whatever their positions and whichever equal values (True == 1) meet first."""
    types = set(map(type, values))
    kinds = sorted({_KINDS.get(t, "number") for t in types}) if len(types) > 1 else []
    if len(kinds) > 1:
        raise EvaluationError(f"order comparison between {kinds[0]} and {kinds[1]} values is not defined")


def _small_int(v: Any) -> int | None:
    """v as an int if it is an integer number (not a bool) of magnitude below 2^62."""
    if type(v) is fmpq and v.q == 1:
        v = int(v.p)
    return v if type(v) is int and -(1 << 62) < v < (1 << 62) else None


def _as_small_ints(values: list[Any]) -> np.ndarray | None:
    """int64 codes if every value is an integer (int, or fmpq with denominator 1) below 2^62."""
    out = np.empty(len(values), dtype=np.int64)
    lim = 1 << 62
    for i, v in enumerate(values):
        t = type(v)
        if t is fmpq:
            if v.q != 1:
                return None
            v = int(v.p)
        elif t is not int:
            return None
        if not -lim < v < lim:
            return None
        out[i] = v
    return out


class _SortKey:
    __slots__ = ("v", "domain")

    def __init__(self, v: Any, domain: Domain):
        self.v, self.domain = v, domain

    def __lt__(self, other: "_SortKey") -> bool:
        a, b = self.v, other.v
        if _is_number(a) and _is_number(b) and type(a) is not bool and type(b) is not bool:
            return self.domain.lt(self.domain.convert(a), self.domain.convert(b))
        if type(a) is type(b):
            return decide.compare("<", a, b)
        raise EvaluationError(
            f"order comparison between {type(a).__name__} and {type(b).__name__} values is not defined"
        )

