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

Anything outside this class raises :class:`NotCompilable`, naming the node, the
feature and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx
from flint import fmpq

from constructions.rasp.evaluate import trace_graph
from constructions.rasp.graph import arguments, decode_params
from exact import QQ
from exact.errors import AttncertError

#: Token layouts: a plain number per position, or a pair (value, tag).
TOKEN_WIDTH = {"scalar": 1, "pair": 2}


class NotCompilable(AttncertError):
    """A program uses a feature outside the compilable class."""

    def __init__(self, label: str, feature: str, why: str):
        super().__init__(f"cannot compile node {label!r}: {feature}: {why}")


@dataclass(frozen=True)
class NodeInfo:
    label: str
    op: str
    static: bool
    width: int  # residual dimensions (0 for selectors)
    values: list[fmpq] | None = None  # exact values at positions 0..N-1 (static SOps)


def infer(g: nx.MultiDiGraph, length: int, tokens: str) -> dict[int, NodeInfo]:
    """NodeInfo for every node of g at sequence length ``length``."""
    if tokens not in TOKEN_WIDTH:
        raise AttncertError(f"tokens must be one of {sorted(TOKEN_WIDTH)}, got {tokens!r}")
    dynamic: set[int] = set()
    for v in nx.topological_sort(g):
        if _constant_selection(g, v):
            continue  # TRUE / FALSE select the same keys whatever the values
        if g.nodes[v]["op"] == "tokens" or any(u in dynamic for u in arguments(g, v)):
            dynamic.add(v)
    static = [v for v in g.nodes if v not in dynamic]
    for v in g.nodes:
        if "callable" in g.nodes[v]:
            raise NotCompilable(g.nodes[v]["label"], "an unregistered Python function", "only registered functions have compiled MLPs")
    values, selections = _static_values(g, static, length)
    info: dict[int, NodeInfo] = {}
    for v in nx.topological_sort(g):
        d = g.nodes[v]
        label, op = d["label"], d["op"]
        if "callable" in d:
            raise NotCompilable(label, "an unregistered Python function", "only registered functions have compiled MLPs")
        if op in ("selector_and", "selector_or", "selector_not", "constant_selector"):
            raise NotCompilable(label, op, "only Select with a numeric equality test compiles")
        if op == "selector_width" and v in dynamic:
            raise NotCompilable(label, "selector_width of a data-dependent selection", "only static selections compile")
        if op == "select":
            if v in dynamic:
                raise NotCompilable(label, "a data-dependent selection", "keys and queries must be functions of the position")
            info[v] = NodeInfo(label, op, True, 0)
        elif v not in dynamic:
            info[v] = NodeInfo(label, op, True, 1, values[v])
        elif op == "tokens":
            info[v] = NodeInfo(label, op, False, TOKEN_WIDTH[tokens])
        elif op == "aggregate":
            sel, vals = arguments(g, v)
            default = decode_params(op, d.get("params", {}))["default"]
            if not _is_number(default) and not (default is None and all(selections[sel].widths() > 0)):
                raise NotCompilable(label, f"default {default!r}", "a numeric default is needed where a query selects nothing")
            info[v] = NodeInfo(label, op, False, info[vals].width)
        elif op in ("map", "sequence_map"):
            f = decode_params(op, d.get("params", {}))["fn"]
            info[v] = NodeInfo(label, op, False, 2 if f.name == "pack" else 1)
        else:
            raise NotCompilable(label, op, "not in the compilable class")
    return info


def _constant_selection(g: nx.MultiDiGraph, v: int) -> bool:
    d = g.nodes[v]
    if d["op"] != "select" or "callable" in d:
        return False
    return decode_params("select", d.get("params", {}))["predicate"].name in ("TRUE", "FALSE")


def _static_values(g: nx.MultiDiGraph, static: list[int], length: int) -> tuple[dict[int, list[Any]], dict[int, Any]]:
    """Exact values of the static SOps (numbers as fmpq, booleans as 0/1, other tokens as they are),
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
        traced = trace_graph(h, [0] * length, QQ)
    except AttncertError as e:
        raise NotCompilable("(static part)", "the data-independent SOps", f"they do not evaluate: {e}") from None
    values = {v: [QQ.convert(int(x)) if isinstance(x, bool) else (QQ.convert(x) if _is_number(x) else x) for x in traced[v]] for v in sops}
    return values, {v: traced[v] for v in sels}


def numeric(info: NodeInfo) -> list[fmpq]:
    """The values of a static SOp that becomes a positional column; NotCompilable if they are not numbers."""
    if info.values is None or not all(isinstance(x, fmpq) for x in info.values):
        raise NotCompilable(info.label, "non-numeric position values", "a positional column holds numbers (selection arguments may be tokens)")
    return info.values


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, fmpq)) or (hasattr(x, "p") and hasattr(x, "q"))
