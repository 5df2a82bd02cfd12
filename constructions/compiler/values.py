"""Stage 1: value-set inference.

Every SOp is either *static* (no path from ``tokens``: a function of the position
alone, e.g. index arithmetic) or *dynamic*. Static SOps get their exact values at
every position, computed once for the sequence length; they become columns of the
positional embedding. Dynamic SOps are numerical: one residual dimension, or two
for pairs (tagged tokens, ``pack``). Selectors must be static equality tests on
numbers, compiled with the numeric score form of :mod:`.blocks`.

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
        if g.nodes[v]["op"] == "tokens" or any(u in dynamic for u in arguments(g, v)):
            dynamic.add(v)
    static = [v for v in g.nodes if v not in dynamic]
    values = _static_values(g, static, length)
    info: dict[int, NodeInfo] = {}
    for v in nx.topological_sort(g):
        d = g.nodes[v]
        label, op = d["label"], d["op"]
        if "callable" in d:
            raise NotCompilable(label, "an unregistered Python function", "only registered functions have compiled MLPs")
        if op in ("selector_and", "selector_or", "selector_not", "constant_selector"):
            raise NotCompilable(label, op, "only Select with a numeric equality test compiles")
        if op == "selector_width":
            raise NotCompilable(label, "selector_width", "not in the compilable class yet")
        if op == "select":
            pred = decode_params(op, d.get("params", {}))["predicate"].name
            if v in dynamic:
                raise NotCompilable(label, "a data-dependent selection", "keys and queries must be functions of the position")
            if pred != "EQ":
                raise NotCompilable(label, f"predicate {pred}", "only EQ compiles to a numeric score form 2qk - k^2")
            info[v] = NodeInfo(label, op, True, 0)
        elif v not in dynamic:
            info[v] = NodeInfo(label, op, True, 1, values[v])
        elif op == "tokens":
            info[v] = NodeInfo(label, op, False, TOKEN_WIDTH[tokens])
        elif op == "aggregate":
            sel, vals = arguments(g, v)
            default = decode_params(op, d.get("params", {}))["default"]
            if not _is_number(default):
                raise NotCompilable(label, f"default {default!r}", "an aggregate's default must be a number")
            info[v] = NodeInfo(label, op, False, info[vals].width)
        elif op in ("map", "sequence_map"):
            f = decode_params(op, d.get("params", {}))["fn"]
            info[v] = NodeInfo(label, op, False, 2 if f.name == "pack" else 1)
        else:
            raise NotCompilable(label, op, "not in the compilable class")
    return info


def _static_values(g: nx.MultiDiGraph, static: list[int], length: int) -> dict[int, list[fmpq]]:
    sops = [v for v in static if g.nodes[v]["op"] not in ("select", "constant_selector", "selector_and", "selector_or", "selector_not")]
    h = g.subgraph(static).copy()
    h.graph["outputs"] = {str(v): v for v in sops}
    traced = trace_graph(h, [0] * length, QQ) if sops else {}
    out = {}
    for v in sops:
        vals = traced[v]
        if not all(_is_number(x) for x in vals):
            raise NotCompilable(g.nodes[v]["label"], "non-numeric position values", "static SOps become numeric embedding columns")
        out[v] = [QQ.convert(int(x) if isinstance(x, bool) else x) for x in vals]
    return out


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, fmpq)) or (hasattr(x, "p") and hasattr(x, "q"))
