"""Stage 1: value-set inference.

Every SOp is either *static* (no path from ``tokens``: a function of the position
alone, e.g. index arithmetic) or *dynamic*. A Select whose predicate is TRUE or
FALSE is static whatever its arguments, and so is a SelectorWidth of a static
selection. Static SOps get their exact values at every position, computed once
for the sequence length; the numeric ones become columns of the positional
embedding, and the values of selection keys and queries may be any hashable
tokens (they are compared through one-hot value tables). Dynamic SOps are
numerical: one residual dimension, or two for pairs (tagged tokens, ``pack``).
Selectors must be static (:mod:`.blocks` gives their score forms).

With categorical tokens, SOps computed from finite value sets are *one-hot*: a
column per value. A numerical Aggregate of a one-hot SOp with numeric values is
numerical (RASP averages the numbers, booleans as 0 and 1): one column. A
categorical Aggregate of a SOp held in one column that may hold booleans
(``NodeInfo.booleans``) is refused: RASP gives the selected boolean itself there
(booleans are tokens to a categorical Aggregate), the head the mean of 0 and 1.

Every value here is as attncert's evaluator holds it in QQ (numeric tokens and
widths as rationals, booleans as booleans, a function's result converted as the
evaluator converts it: :func:`~constructions.rasp.evaluate.as_token`,
:func:`~constructions.rasp.evaluate.as_returned`), so that the program's functions
are tabulated on the arguments its RASP evaluation calls them with.

**Finite numerical value sets.** A numerical dynamic SOp keeps one column, and
gets a finite value set (``NodeInfo.numbers``) when it is computed from finite
ones (:func:`mean_values`, :func:`table_values`):

* a numerical Map / SequenceMap of arguments with finite value sets takes the
  values of its table;
* a numerical Aggregate (a mean) of a SOp with a finite set S of numbers, under a
  selection that selects w keys at a query, takes a mean of w values of S there:
  its value set is {(s_1 + ... + s_w) / w : s_j in S, w in W} (plus the default
  where w = 0), W the widths the selection can have: decided per position for a
  static selection at this length, 0..N otherwise (a query selects at most the N
  token positions). For a 0/1 SOp that is {a/w : 0 <= a <= w, w in W};
* a numerical SelectorWidth takes the values 0..N.

The set is a superset of the values the SOp takes on any input of length N, so a
map of it compiled exactly on the set (:func:`.blocks.interpolant_block`) is exact
on every input. Sets larger than MAX_VALUES are left unknown.

Anything outside this class raises :class:`NotCompilable`, naming the node, the
feature and why.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
from flint import fmpq

from attncert.constructions.rasp.evaluate import as_returned, as_token, trace_graph
from attncert.constructions.rasp.graph import arguments, decode_params
from attncert.exact import QQ
from attncert.exact.errors import AttncertError, ParseError

#: The most values a numerical value set (or a table of one) is enumerated to; beyond it the set is unknown.
MAX_VALUES = 4096

#: Token layouts: a plain number per position, a pair (value, tag), or a symbol of a vocabulary (one-hot).
TOKEN_WIDTH = {"scalar": 1, "pair": 2}
TOKEN_MODES = ("scalar", "pair", "categorical")


class NotCompilable(ParseError):
    """A program uses a feature outside the compilable class: the program, read as one to compile, is
    refused (a ParseError, as the compositional proof's Unsupported is: one line, exit code 2)."""

    def __init__(self, label: str, feature: str, why: str):
        super().__init__(f"cannot compile node {label!r}: {feature}: {why}")


@dataclass(frozen=True)
class NodeInfo:
    label: str
    op: str
    static: bool
    width: int  # residual dimensions (0 for selectors)
    values: list[Any] | None = None  # exact values at positions 0..N-1 (static SOps)
    categories: tuple[Any, ...] | None = None  # the finite value set of a categorical dynamic SOp (one-hot)
    numbers: tuple[fmpq, ...] | None = None  # a finite superset of a numerical dynamic SOp's values, ascending
    #: whether the SOp may hold None (RASP's "no value") at some position: a static value, an Aggregate's default
    #: where a query may select nothing, a map whose function gives None or fails, and what None passes through
    none: bool = False
    #: whether the SOp, held as numbers (no one-hot columns), may hold a boolean, which its column holds as 0 or
    #: 1 while RASP keeps the boolean: a static value, or a numerical map's value (unknown without a table)
    booleans: bool = False

    def finite(self) -> tuple[Any, ...] | None:
        """The values this SOp can take, when there are finitely many known ones that have indicator
        columns (static or categorical)."""
        if self.categories is not None:
            return self.categories
        if self.values is not None:
            return tuple(sorted(set(self.values), key=repr))
        return None

    def known(self) -> tuple[Any, ...] | None:
        """The finite value set of this SOp, numerical dynamic SOps included (whose value is one column)."""
        return self.numbers if self.numbers is not None else self.finite()


#: How many lengths a model serves: exactly N, or every length 1..N.
LENGTH_MODES = ("fixed", "every")


def infer(g: nx.MultiDiGraph, length: int, tokens: str, vocab: Any = None, lengths: str = "fixed", causal: bool = False) -> dict[int, NodeInfo]:
    """NodeInfo for every node of g at sequence length ``length``.

    With ``tokens="categorical"`` the tokens are symbols of ``vocab``, one-hot
    encoded; categorical SOps computed from finite value sets get finite value sets
    (the function applied to every value or pair of values), as in tracr.

    ``lengths="every"``: one model for every length 1..``length``. A static SOp or selection
    stays static (a positional column, or a score form) only if it is *length-invariant*:
    its values at every length n are the first n of its values at ``length`` (selections:
    the top-left n x n block), decided exactly by evaluating the static part at every
    length (:func:`_length_variant`). The others (the length as SelectorWidth(Select TRUE),
    a mean over every position) and what depends on them are computed by the network, as
    dynamic SOps. ``causal``: static values and selections under tracr's causal semantics
    (every selector masked to the keys k <= q)."""
    if lengths not in LENGTH_MODES:
        raise AttncertError(f"lengths must be one of {list(LENGTH_MODES)}, got {lengths!r:.20}")
    if tokens not in TOKEN_MODES:
        raise AttncertError(f"tokens must be one of {list(TOKEN_MODES)}, got {tokens!r}")
    if (tokens == "categorical") != (vocab is not None):
        raise AttncertError("a vocabulary goes with categorical tokens, and only with them")
    if not isinstance(length, int) or length < 1:
        raise AttncertError(f"the sequence length must be a positive integer, got {length!r:.20}")
    if vocab is not None and (not symbols(vocab) or None in symbols(vocab)):
        raise AttncertError("a vocabulary has at least one symbol, and None is not one (it is RASP's 'no value')")
    dynamic: set[int] = set()
    for v in nx.topological_sort(g):
        if _constant_selection(g, v):
            continue  # TRUE / FALSE select the same keys whatever the values
        if g.nodes[v]["op"] == "tokens" or any(u in dynamic for u in arguments(g, v)):
            dynamic.add(v)
    static = [v for v in g.nodes if v not in dynamic]
    values, selections = _static_values(g, static, length, causal)
    if lengths == "every":
        for v in _length_variant(g, static, length, causal, values, selections):
            dynamic |= {u for u in {v} | nx.descendants(g, v) if not _constant_selection(g, u)}
        static = [v for v in g.nodes if v not in dynamic]
    info: dict[int, NodeInfo] = {}
    for v in nx.topological_sort(g):
        d = g.nodes[v]
        label, op = d["label"], d["op"]
        if op in ("selector_and", "selector_or", "selector_not", "constant_selector"):
            raise NotCompilable(label, op, "only Select with a numeric equality test compiles")
        if op == "select":
            if v in dynamic and not all(info[u].finite() is not None for u in arguments(g, v)):
                raise NotCompilable(label, "a data-dependent selection of numerical values", "keys and queries must be static or categorical")
            info[v] = NodeInfo(label, op, v not in dynamic, 0)
        elif v not in dynamic:
            info[v] = NodeInfo(label, op, True, 1, values[v], none=None in values[v], booleans=any(isinstance(x, bool) for x in values[v]))
        elif op == "tokens":
            cats = symbols(vocab) if tokens == "categorical" else None
            info[v] = NodeInfo(label, op, False, len(cats) if cats else TOKEN_WIDTH[tokens], categories=cats)
        elif op == "aggregate":
            sel, vals = arguments(g, v)
            default = decode_params(op, d.get("params", {}))["default"]
            widths = set(int(w) for w in selections[sel].widths()) if sel in selections else set(range(length + 1))
            cats = info[vals].categories
            none = info[vals].none or (default is None and 0 in widths)
            if numeric_mean_of_one_hot(d, cats):
                # RASP averages the numbers (booleans as 0 and 1), so the head outputs one number, not one-hot columns
                if not all(_is_number(x) for x in cats):
                    raise NotCompilable(label, "a numerical Aggregate of a SOp whose values mix numbers and symbols", f"its value set is {list(cats)!r:.60}")
                _numeric_default_needed(g, v, sel, selections, default)
                # a key whose value is None has all-0 columns, which the head reads as 0
                info[v] = NodeInfo(label, op, False, 1, numbers=mean_values(cats + (0,), widths, default), none=none)
                continue
            if cats is None:
                if d.get("encoding") == "categorical" and info[vals].booleans:
                    raise NotCompilable(
                        label, "a categorical Aggregate of a SOp held as a number that may hold booleans",
                        "RASP's evaluation treats booleans as tokens there and gives the selected boolean itself, the head the mean "
                        "of 0 and 1 (make the Aggregate numerical, or its values categorical)",
                    )
                _numeric_default_needed(g, v, sel, selections, default)
            elif default is not None and not _is_number(default):
                raise NotCompilable(label, f"a categorical Aggregate with default {default!r}", "a query that selects nothing reads BOS, whose columns hold None (all 0) or a number, not a symbol")
            known = info[vals].known() if cats is None else None
            numbers = mean_values(known, widths, default) if known is not None and all(_is_number(x) for x in known) else None
            info[v] = NodeInfo(label, op, False, info[vals].width, categories=cats, numbers=numbers, none=none)
        elif op in ("map", "sequence_map"):
            args = arguments(g, v)
            known = [info[u].known() for u in args]
            through = any(info[u].none for u in args)  # None passes through a map without a call
            if d.get("encoding") == "categorical" and any(info[u].categories is not None or info[u].numbers is not None for u in args):
                if any(f is None for f in known):
                    raise NotCompilable(label, "a categorical map of a numerical value", "its value set is not finite")
                table = list(tabulate(d, op, known).values())
                cats = tuple(sorted({x for x in table if x is not None}, key=repr))
                info[v] = NodeInfo(label, op, False, len(cats), categories=cats, none=through or None in table)
            else:
                pack = "callable" not in d and decode_params(op, d.get("params", {}))["fn"].name == "pack"
                table = None if pack else _small_table(d, op, known)
                # without a table nothing bounds where the function fails: it may give None
                info[v] = NodeInfo(
                    label, op, False, 2 if pack else 1, numbers=None if table is None else table_values(table), none=through or table is None or None in table,
                    booleans=table is None or any(isinstance(x, bool) for x in table),
                )
        elif op == "selector_width":  # of a data-dependent selection (a static one is static)
            if g.nodes[arguments(g, v)[0]]["op"] != "select":
                raise NotCompilable(label, "selector_width of a combined selector", "only Select compiles")
            cats = tuple(fmpq(w) for w in range(length + 1)) if d.get("encoding") == "categorical" else None  # the evaluator's widths are rationals
            info[v] = NodeInfo(label, op, False, len(cats) if cats else 1, categories=cats, numbers=None if cats else tuple(fmpq(w) for w in range(length + 1)))
        else:
            raise NotCompilable(label, op, "not in the compilable class")
    return info


def _numeric_default_needed(g: nx.MultiDiGraph, v: int, sel: int, selections: dict[int, Any], default: Any) -> None:
    """A numerical column holds a number at every position: an Aggregate whose value is one (a numerical
    one, or any Aggregate of a numerical SOp) needs a numeric default, unless no query selects nothing
    and the default is None.

    That is decided per position for a static selection, at the length compiled (at every length for a
    model of every length); a categorical Aggregate of a one-hot SOp needs nothing (its columns are all
    0 for None)."""
    if _is_number(default):
        return
    d = g.nodes[v]
    kind = "numerical Aggregate" if d.get("encoding") == "numerical" else "categorical Aggregate of a numerically encoded SOp (one column, e.g. scalar tokens)"
    if default is not None:
        raise NotCompilable(d["label"], f"a {kind} with default {default!r}", "a query that selects nothing reads BOS, which gives a number, and a numerical column holds numbers")
    if sel in selections:
        # a selection of one length, or (every-length models) one per length 1..N
        empty = [(i, len(s.widths())) for s in getattr(selections[sel], "by_length", [selections[sel]]) for i, w in enumerate(s.widths()) if w == 0]
        if not empty:
            return
        where = "query position {} selects no key at length {}".format(*empty[0])
    else:
        where = "its selection depends on the data, so a query may select no key"
    raise NotCompilable(
        d["label"],
        f"a {kind} with default None",
        f"{where}, where RASP gives None, and a numerical column holds a number, never None: a numeric default is needed "
        "(or categorical tokens, whose one-hot columns are all 0 for None)",
    )


def mean_values(values: tuple[Any, ...], widths: set[int], default: Any) -> tuple[fmpq, ...] | None:
    """{(s_1 + ... + s_w) / w : s_j in values, w in widths, w > 0}, with the default if 0 is a width:
    every value a mean of w values of the set can take (booleans count 0 and 1). None past MAX_VALUES."""
    numbers = {_as_number(x) for x in values}
    sums, out = {fmpq(0)}, set()
    for w in range(1, max(widths, default=0) + 1):
        if len(sums) * len(numbers) > 16 * MAX_VALUES:
            return None
        sums = {s + x for s in sums for x in numbers}  # the sums of w values of the set
        if w in widths:
            out |= {s / w for s in sums}
    if 0 in widths and _is_number(default):
        out.add(_as_number(default))
    return tuple(sorted(out)) if len(out) <= MAX_VALUES else None


def _small_table(d: dict[str, Any], op: str, known: list[tuple[Any, ...] | None]) -> list[Any] | None:
    """The values of a map's table on its arguments' finite value sets (:func:`tabulate`); None if a set is
    unknown or the table is larger than MAX_VALUES."""
    if any(k is None for k in known) or not known or math.prod(len(k) for k in known) > MAX_VALUES:
        return None
    return list(tabulate(d, op, known).values())


def table_values(table: list[Any]) -> tuple[fmpq, ...] | None:
    """The numbers a numerical map takes, from the values of its table (:func:`_small_table`), with 0 where
    the function fails (RASP's None, which its compiled table gives as 0); None if a value is not a number."""
    values = {0 if x is None else x for x in table}
    if not all(_is_number(x) for x in values):
        return None
    return tuple(sorted({_as_number(x) for x in values}))


def _as_number(x: Any) -> fmpq:
    return fmpq(int(x)) if isinstance(x, bool) else QQ.convert(x)


def symbols(vocab: Any) -> tuple[Any, ...]:
    """The token symbols in the order of their one-hot columns: distinct, sorted by repr, each as attncert's
    evaluator holds it (:func:`constructions.rasp.evaluate.as_token`: the integer 1 is the rational 1), so
    that every function of the tokens is called here with the values the RASP evaluation calls it with."""
    return tuple(sorted({as_token(x) for x in vocab}, key=repr))


def numeric_mean_of_one_hot(d: dict[str, Any], categories: tuple[Any, ...] | None) -> bool:
    """Whether an Aggregate node averages, as numbers, a SOp encoded one-hot: a numerical Aggregate of
    a categorical SOp with a numeric value (RASP's mean is a number, not one of the values)."""
    return d.get("encoding") == "numerical" and categories is not None and any(_is_number(x) for x in categories)


def apply(d: dict[str, Any], op: str, *args: Any) -> Any:
    """A map node's function on values as attncert's evaluator holds them in QQ (the value sets are so:
    :func:`symbols`, widths and means as rationals, booleans as booleans), and its value as the evaluator
    passes it on (:func:`constructions.rasp.evaluate.as_returned`: an int returned is the rational): its
    registered function in QQ, or its Python callable."""
    if "callable" in d:
        return as_returned(d["callable"](*args), d["callable"])
    return as_returned(decode_params(op, d.get("params", {}))["fn"].apply(QQ, *args))


def tabulate(d: dict[str, Any], op: str, finite: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], Any]:
    """The function on every combination of its arguments' values (None where it fails, as RASP's None)."""
    table = {}
    for combo in itertools.product(*finite):
        try:
            table[combo] = apply(d, op, *combo)
        except Exception:  # a function need not be total on the value set; such inputs never occur
            table[combo] = None
    return table


def _constant_selection(g: nx.MultiDiGraph, v: int) -> bool:
    d = g.nodes[v]
    if d["op"] != "select" or "callable" in d:
        return False
    return decode_params("select", d.get("params", {}))["predicate"].name in ("TRUE", "FALSE")


def _static_values(g: nx.MultiDiGraph, static: list[int], length: int, causal: bool = False) -> tuple[dict[int, list[Any]], dict[int, Any]]:
    """Exact values of the static SOps (numbers as fmpq, booleans and other tokens as they are),
    and the static selections (which keys each query selects)."""
    sops = [v for v in static if g.nodes[v]["op"] not in ("select", "constant_selector", "selector_and", "selector_or", "selector_not")]
    sels = [v for v in static if g.nodes[v]["op"] == "select"]
    if not sops and not sels:
        return {}, {}
    # TRUE / FALSE selections read their arguments only for their length: evaluate those on zeros.
    keep = set(static) | {a for v in static if _constant_selection(g, v) for a in nx.ancestors(g, v)}
    h = g.subgraph(keep).copy()
    h.graph["outputs"] = {str(v): v for v in sops + sels}
    try:
        traced = trace_graph(h, [0] * length, QQ, causal=causal)
    except AttncertError as e:
        raise NotCompilable("(static part)", "the data-independent SOps", f"they do not evaluate: {e}") from None
    # as the evaluator holds them (booleans stay booleans: a function of them is called with True, not 1);
    # a positional column reads a boolean as 0 or 1 (:func:`numeric`)
    values = {v: [x if isinstance(x, bool) or not _is_number(x) else QQ.convert(x) for x in traced[v]] for v in sops}
    return values, {v: traced[v] for v in sels}


class _EveryLength:
    """A static selection at every length 1..N: its ``widths`` are those of every query at every
    length, so that "no query selects nothing" and the set of widths hold for every length."""

    def __init__(self, by_length: list[Any]):
        self.by_length = by_length

    def widths(self) -> np.ndarray:
        return np.concatenate([sel.widths() for sel in self.by_length])


def _length_variant(g: nx.MultiDiGraph, static: list[int], N: int, causal: bool, values: dict[int, list[Any]], selections: dict[int, Any]) -> set[int]:
    """The static nodes whose values at some length n < N are not the first n of their values at N
    (a selection: not the top-left n x n block of its selection at N); each entry of ``selections``
    becomes the selection at every length (:class:`_EveryLength`)."""
    dense = {v: sel.to_dense() for v, sel in selections.items()}
    by_length = {v: [sel] for v, sel in selections.items()}
    variant = set()
    for n in range(1, N):
        vals, sels = _static_values(g, static, n, causal)
        variant |= {v for v, xs in vals.items() if xs != values[v][:n]}
        variant |= {v for v, sel in sels.items() if not (sel.to_dense() == dense[v][:n, :n]).all()}
        for v, sel in sels.items():
            by_length[v].append(sel)
    for v in variant:
        if g.nodes[v]["op"] == "length":
            raise NotCompilable(g.nodes[v]["label"], "the primitive length in a causal model for every length", "a causal query does not see the positions after it")
    selections.update({v: _EveryLength(sels) for v, sels in by_length.items()})
    return variant


def numeric(info: NodeInfo) -> list[fmpq]:
    """The values of a static SOp that becomes a positional column (booleans as 0 and 1); NotCompilable if
    they are not numbers."""
    if info.values is None or not all(isinstance(x, (fmpq, bool)) for x in info.values):
        raise NotCompilable(info.label, "non-numeric position values", "a positional column holds numbers (selection arguments may be tokens)")
    return [fmpq(int(x)) if isinstance(x, bool) else x for x in info.values]


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, fmpq)) or (hasattr(x, "p") and hasattr(x, "q"))
