"""Batched evaluation: one RASP graph on a batch of inputs of the same length, in one pass.

``evaluate_batch(g, inputs, domain)`` equals ``[evaluate_graph(g, xs, domain) for xs
in inputs]``, values and types alike (an fmpq where the single-input evaluator
gives an fmpq, an EENumber in the same normal form where it gives one), and raises
the error that the first failing input raises there. It walks the single-input
evaluator's plan (:func:`constructions.rasp.evaluate._plan`) once:

* data-independent nodes (positions, index maps, selections whose keys and
  queries are such) take their values from the plan's per-length cache, computed
  once by the single-input evaluator's own code;
* data-dependent sequences are exact arrays over the batch
  (:class:`~.batch_values.Numbers`: rationals as int64 numerators over shared
  denominators, EE values as one coefficient array per exponent, the exponents
  shared by the batch), and maps on them run once for the batch
  (:mod:`.batch_maps`);
* an Aggregate is the mean of each selected group, computed for all inputs at once
  from the selection's pairs (one gather and one segmented sum per exponent);
* a selection that depends on data is built per input, from integer codes of the
  whole batch computed at once (the rationals over one common denominator), by
  :meth:`Selection.compare`, the same function the single-input evaluator calls;
* everything else (tokens that are not numbers, Python callables, float domains,
  values too large for int64, more than a few distinct exponents) is computed per
  input by the single-input evaluator's node code: the batch is never less
  general than a loop, only faster where the arrays apply.

Only the exact domains QQ and EE are batched; other domains evaluate input by input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import networkx as nx
import numpy as np

from attncert.constructions.rasp import batch_maps
from attncert.constructions.rasp import expr as E
from attncert.constructions.rasp.batch_values import Numbers, Tokens
from attncert.constructions.rasp.evaluate import _default_domain, _Evaluator, _plan, evaluate_graph
from attncert.constructions.rasp.graph import decode_params
from attncert.constructions.rasp.selection import Selection
from attncert.exact import EE, QQ, Domain
from attncert.exact.errors import AttncertError
from attncert.exact.exparray import ExpArray
from attncert.exact.limits import current as current_limits
from attncert.exact.ratarray import Overflow, RatArray


@dataclass(frozen=True)
class Static:
    """A data-independent value, the same for every input (as the single-input evaluator holds it)."""

    value: Any


@dataclass(frozen=True)
class PerInput:
    """One value per input, as the single-input evaluator holds it (lists, arrays or Selections)."""

    values: list[Any]


Column = Static | PerInput | Numbers | Tokens


def evaluate_batch(g: nx.MultiDiGraph, inputs: Sequence[Sequence[Any]], domain: Domain | None = None) -> list[dict[str, Any]]:
    """``evaluate_graph(g, xs, domain)`` for every ``xs`` in ``inputs`` (all of one length), in one pass."""
    inputs = [list(xs) for xs in inputs]
    if not inputs:
        return []
    groups: dict[Domain, list[int]] = {}
    for i, xs in enumerate(inputs):
        groups.setdefault(domain if domain is not None else _default_domain(xs) if xs else QQ, []).append(i)
    out: list[Any] = [None] * len(inputs)
    try:
        for dom, members in groups.items():
            for i, result in zip(members, _evaluate_same_domain(g, [inputs[i] for i in members], dom)):
                out[i] = result
    except (AttncertError, TypeError, ValueError, ArithmeticError):
        if len(groups) > 1:  # each group names its own first failure; the batch names the first overall
            for xs in inputs:
                evaluate_graph(g, xs, domain)
        raise
    return out


def _evaluate_same_domain(g: nx.MultiDiGraph, inputs: list[list[Any]], domain: Domain) -> list[dict[str, Any]]:
    n = len(inputs[0])
    if domain not in (QQ, EE) or not n or any(len(xs) != n for xs in inputs) or n > current_limits().max_positions:
        return [evaluate_graph(g, xs, domain) for xs in inputs]  # as the single-input evaluator does (and refuses)
    try:
        outputs = run_batch(g, tokens_of(inputs, domain), domain)
    except (AttncertError, TypeError, ValueError, ArithmeticError):
        # Some input fails: the single-input evaluator names the node and the first such input.
        for xs in inputs:
            evaluate_graph(g, xs, domain)
        raise
    per_output = {name: rows(col, len(inputs), domain) for name, col in outputs.items()}
    return [{name: values[b] for name, values in per_output.items()} for b in range(len(inputs))]


def tokens_of(inputs: list[list[Any]], domain: Domain) -> Tokens:
    """The tokens node of a batch: each input's tokens as the single-input evaluator converts them, and
    ``token_value`` / ``token_tag`` as arrays where every token is a number or a pair of numbers."""
    ev = _Evaluator(domain, [])
    lists = [[ev.const(x) for x in xs] for xs in inputs]
    tokens = Tokens(len(inputs[0]), len(inputs), lists)
    if all(type(x) is not tuple for xs in lists for x in xs):
        tokens.plain = True
        tokens.value = Numbers.of_values(lists)
        if tokens.value is not None:
            tokens.tag = Numbers.of_ints(np.ones((1, tokens.length), dtype=np.int64), ints=False)
    elif all(type(x) is tuple and len(x) == 2 for xs in lists for x in xs):
        try:
            value = [[domain.native(x[0]) for x in xs] for xs in lists]
            tag = [[domain.native(x[1]) for x in xs] for xs in lists]
        except (AttncertError, TypeError, ValueError):
            return tokens
        tokens.value, tokens.tag = Numbers.of_values(value), Numbers.of_values(tag)
    return tokens


def rows(col: Column, size: int, domain: Domain) -> list[Any]:
    """Each input's value of a column, as ``evaluate_graph`` returns it (int64 arrays read as domain numbers)."""
    if isinstance(col, Static):
        values = [col.value] * size
    elif isinstance(col, PerInput):
        values = col.values
    elif isinstance(col, Tokens):
        values = [col.row(b) for b in range(size)]
    else:
        values = col.rows()
        values = values * size if len(values) == 1 and size > 1 else values
    return [[domain.native(k) for k in v.tolist()] if isinstance(v, np.ndarray) else v for v in values]


def run_batch(g: nx.MultiDiGraph, tokens: Tokens, domain: Domain) -> dict[str, Column]:
    """Every output of the graph on the batch ``tokens`` (QQ or EE), as columns (see :func:`rows`)."""
    outputs = g.graph["outputs"]
    return {name: col for name, col in zip(outputs, _Run(g, tokens, domain).columns(set(outputs.values())))}


class _Run:
    """One pass over the plan for one batch: a column per node, freed after its last consumer."""

    def __init__(self, g: nx.MultiDiGraph, tokens: Tokens, domain: Domain):
        self.g, self.tokens, self.domain = g, tokens, domain
        self.size, self.n = tokens.size, tokens.length
        self._evaluators: list[_Evaluator] | None = None
        self._rows: dict[int, tuple[Column, list[Any]]] = {}
        self._lifted: dict[int, tuple[Column, Numbers | None]] = {}

    def columns(self, keep: set[int]) -> list[Column]:
        plan = _plan(self.g)
        same = plan.same  # a node that repeats an earlier one is computed once, as there
        keep = {same.get(v, v) for v in keep}
        static = plan.static_values(self.n, self.domain.name)
        probe = _Evaluator(self.domain, [0] * self.n)  # data-independent nodes read only the length
        remaining = dict(plan.consumers)
        values: dict[int, Column] = {}
        with self.domain.context():
            for v, d, args in plan.steps:
                if v in plan.static:
                    if v not in static:  # as the single-input evaluator fills its cache
                        static[v] = probe.node(d, [values[u].value for u in args])
                    values[v] = Static(static[v])
                else:
                    values[v] = self.node(d, [values[u] for u in args])
                for u in args:
                    remaining[u] -= 1
                    if remaining[u] == 0 and u not in keep:
                        del values[u]
        return [values[same.get(v, v)] for v in self.g.graph["outputs"].values()]

    # -- one node ---------------------------------------------------------------------------
    def node(self, d: dict, args: list[Column]) -> Column:
        if "callable" not in d:
            op = d["op"]
            params = decode_params(op, d["params"])
            try:
                out = getattr(self, f"op_{op}", lambda *a: None)(params, d, *args)
            except Overflow:
                out = None
            if out is not None:
                return out
        return self.per_input(d, args)

    def per_input(self, d: dict, args: list[Column]) -> PerInput:
        """The single-input evaluator's own code for this node, input by input."""
        if self._evaluators is None:
            self._evaluators = [_Evaluator(self.domain, self.tokens.row(b)) for b in range(self.size)]
        return PerInput([ev.node(d, [self.at(a, b) for a in args]) for b, ev in enumerate(self._evaluators)])

    def at(self, col: Column, b: int) -> Any:
        if isinstance(col, Static):
            return col.value
        if isinstance(col, PerInput):
            return col.values[b]
        if isinstance(col, Tokens):
            return col.row(b)
        if id(col) not in self._rows:  # every input's row at once (the column is kept alive with them)
            self._rows[id(col)] = (col, _per_input_rows(col, self.size))
        return self._rows[id(col)][1][b]

    def numbers(self, col: Column) -> Numbers | None:
        """A column as Numbers, if its values are exact numbers of the batch's representation."""
        if isinstance(col, Numbers):
            return col
        if isinstance(col, Static):
            v = col.value
            if isinstance(v, np.ndarray):
                return Numbers.of_ints(v[None, :], ints=True)
            if isinstance(v, list):
                return Numbers.of_values([v])
            return None
        if isinstance(col, Tokens):
            return col.value if col.plain else None
        if isinstance(col, PerInput):
            if id(col) not in self._lifted:  # tried once per column (the column is kept alive with it)
                self._lifted[id(col)] = (col, _lift(col.values))
            return self._lifted[id(col)][1]
        return None

    # -- maps (MLP sublayers) ---------------------------------------------------------------
    def op_tokens(self, params, d):
        return self.tokens

    def op_map(self, params, d, x):
        fn = params["fn"]
        if isinstance(x, Tokens) and fn.name in ("token_value", "token_tag"):
            return x.value if fn.name == "token_value" else x.tag
        return self._function(fn, [x])

    def op_sequence_map(self, params, d, x, y):
        return self._function(params["fn"], [x, y])

    def _function(self, fn: Any, args: list[Column]) -> Numbers | None:
        nums = [self.numbers(a) for a in args]
        if any(a is None for a in nums):
            return None
        ints = [a.integers() for a in nums]
        if all(i is not None for i in ints):
            # What the single-input evaluator does on int64 arrays, and what the scalar form gives on
            # integers (an fmpq): the registered integer form, once for the whole batch.
            shape = np.broadcast_shapes(*(i.shape for i in ints))
            out = fn.apply_ints(*(np.broadcast_to(i, shape).ravel() for i in ints))
            if out is not None:
                return Numbers.of_ints(out.reshape(shape), ints=all(a.ints for a in nums))
        return batch_maps.apply(self.domain, fn.name, fn.params, nums)

    # -- selectors --------------------------------------------------------------------------
    def op_select(self, params, d, keys, queries):
        pred: E.Comparison = params["predicate"]
        nk, nq = self.n, self.n
        if pred in (E.Comparison.TRUE, E.Comparison.FALSE):
            sel = Selection.full(nq, nk) if pred is E.Comparison.TRUE else Selection.empty(nq, nk)
            return PerInput([sel] * self.size)
        k, q = self.numbers(keys), self.numbers(queries)
        if k is None or q is None:
            return None
        codes = _codes(k, q, self.size)
        if codes is None:
            return None
        kc, qc = codes
        return PerInput([Selection.compare(kc[b], qc[b], pred.value) for b in range(self.size)])

    def _selections(self, col: Column) -> list[Selection] | None:
        if isinstance(col, Static):
            return [col.value] * self.size
        return col.values if isinstance(col, PerInput) else None

    def op_selector_and(self, params, d, a, b):
        return PerInput([x & y for x, y in zip(self._selections(a), self._selections(b))])

    def op_selector_or(self, params, d, a, b):
        return PerInput([x | y for x, y in zip(self._selections(a), self._selections(b))])

    def op_selector_not(self, params, d, a):
        return PerInput([~x for x in self._selections(a)])

    # -- attention sublayers ----------------------------------------------------------------
    def op_selector_width(self, params, d, sel):
        sels = self._selections(sel)
        return Numbers.of_ints(np.stack([s.widths().astype(np.int64) for s in sels]), ints=True)

    def op_aggregate(self, params, d, sel, values):
        x = self.numbers(values)
        default = Numbers.constant(_Evaluator(self.domain, []).const(params.get("default")))
        if x is None or not x.plain or default is None:
            return None
        if isinstance(sel, Static):
            cols, offsets = sel.value.csr()
            return _means(x, cols, np.asarray(offsets), default, sel.value.n_queries)
        sels = self._selections(sel)
        x = _full(x, self.size)
        nk, nq = x.shape[1], sels[0].n_queries
        index, offsets = [], [np.zeros(1, dtype=np.int64)]
        for b, s in enumerate(sels):
            cols, off = s.csr()
            index.append(cols + b * nk)
            offsets.append(np.asarray(off[1:], dtype=np.int64) + offsets[-1][-1])
        flat = Numbers(_reshape(x.num, (1, self.size * nk)), np.reshape(np.broadcast_to(x.ee, x.shape), (1, -1)))
        out = _means(flat, np.concatenate(index), np.concatenate(offsets), default, self.size * nq)
        return Numbers(_reshape(out.num, (self.size, nq)), np.reshape(out.ee, (self.size, nq)))


def _means(x: Numbers, cols: np.ndarray, offsets: np.ndarray, default: Numbers, n_queries: int) -> Numbers:
    """Row q: the mean of x at cols[offsets[q]:offsets[q+1]] (Domain.means), or the default if it selects none.

    An entry's type is the single-input evaluator's: a mean with an EENumber among its
    values is an EENumber, one of fmpqs an fmpq, a single selected value keeps its own.
    """
    widths = np.diff(offsets)
    rows = x.shape[0]
    shape = (rows, n_queries)
    selected = widths > 0
    starts, w = offsets[:-1][selected], widths[selected]
    out_num = ExpArray({q: c.broadcast(shape) for q, c in default.num.terms.items()}, shape)
    out_ee = np.array(np.broadcast_to(default.ee, shape))
    if len(starts):
        at = np.flatnonzero(selected)
        out_num = out_num.put(at, x.num.group_means(cols, starts, w))
        if not x.ee.any() or x.ee.all():  # one type throughout: the means have it too
            out_ee[..., at] = bool(x.ee.any())
        else:
            out_ee[..., at] = np.logical_or.reduceat(np.broadcast_to(x.ee, x.shape)[..., cols], starts, axis=-1)
    return Numbers(out_num, out_ee)


def _lift(values: list[Any]) -> Numbers | None:
    """Values computed input by input as Numbers again, if they are exact numbers the arrays hold."""
    if all(isinstance(v, list) for v in values):
        return Numbers.of_values(values)
    if all(isinstance(v, np.ndarray) and v.dtype == np.int64 for v in values):
        return Numbers.of_ints(np.stack(values), ints=True)
    return None


def _per_input_rows(col: Numbers, size: int) -> list[Any]:
    """What the single-input evaluator holds for each input: int64 arrays where ``ints``, else lists."""
    ints = col.integers() if col.ints else None
    if ints is not None:
        return [np.array(ints[b if ints.shape[0] > 1 else 0], dtype=np.int64) for b in range(size)]
    values = col.rows()
    return values * size if len(values) == 1 else values


def _full(x: Numbers, size: int) -> Numbers:
    shape = (size, x.shape[1])
    return Numbers(ExpArray({q: c.broadcast(shape) for q, c in x.num.terms.items()}, shape), np.broadcast_to(x.ee, shape))


def _reshape(x: ExpArray, shape: tuple[int, ...]) -> ExpArray:
    terms = {}
    for q, c in x.terms.items():
        full = c.shape
        terms[q] = RatArray(np.broadcast_to(c.num, full).reshape(shape), np.broadcast_to(c.den, full).reshape(shape))
    return ExpArray(terms, shape)


def _codes(keys: Numbers, queries: Numbers, size: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Integer codes of rational keys and queries with their order, per input: the values over one
    common denominator (the lcm of all of them), so that codes compare as the values do."""
    k, q = keys.rational(), queries.rational()
    if k is None or q is None:
        return None
    both = [np.broadcast_to(r.num, (size, r.shape[-1])) for r in (k, q)]
    dens = [np.broadcast_to(r.den, (size, r.shape[-1])) for r in (k, q)]
    common = np.lcm.reduce(np.concatenate(dens, axis=1).astype(object).ravel())
    if common >= 1 << 62:
        raise Overflow("common denominator of a selection's keys")
    common = int(common)
    codes = []
    for num, den in zip(both, dens):
        factor = common // den
        if int(np.abs(num).max(initial=0)) * int(factor.max(initial=1)) >= 1 << 62:
            raise Overflow("selection codes")
        codes.append(num * factor)
    return codes[0], codes[1]

